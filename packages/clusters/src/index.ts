export { classifyConnectionError } from './classify-connection-error.ts';
export { type KubeconfigLoad, loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
export {
  checkWorker,
  defaultProbeTimeoutMs,
  mirrorSelectorFor,
  probeWorkerKubeconfig,
  type WorkerCheck,
  type WorkerCheckOptions,
  type WorkerKubeconfigProbe,
  type WorkerKubeconfigProbeOptions,
} from './probe-worker.ts';
export { type CapacitySnapshot, type NodeCapacity, WorkerCapacity } from './worker-capacity.ts';
export * from './worker-cluster.ts';
export {
  WorkerClusterRegistry,
  type WorkerClusterRegistryOptions,
  type WorkerClusterView,
  type WorkerConnection,
  type WorkerConnectionState,
} from './worker-cluster-registry.ts';
export {
  deniedPermissions,
  summarizePermissions,
  type WorkerPermission,
  workerPermissions,
} from './worker-permissions.ts';
