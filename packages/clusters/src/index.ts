export { classifyConnectionError } from './classify-connection-error.ts';
export { type KubeconfigLoad, loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
export * from './worker-cluster.ts';
export {
  WorkerClusterRegistry,
  type WorkerClusterRegistryOptions,
  type WorkerConnection,
  type WorkerConnectionState,
} from './worker-cluster-registry.ts';
