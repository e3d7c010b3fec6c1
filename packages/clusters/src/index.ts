export { AddressGuardedKubeConfig } from './address-guarded-kube-config.ts';
export {
  type CapacityStatus,
  capacityMergePatch,
  capacitySnapshotOf,
  capacityStatusOf,
  type NodeGroupSummary,
  nodeGroups,
  type ResourceQuantities,
  resourceQuantities,
  resourcesOf,
} from './capacity-summary.ts';
export { classifyConnectionError } from './classify-connection-error.ts';
export {
  attemptDue,
  type BackoffConfig,
  backoffMs,
  type ConnectionEvent,
  type ConnectionState,
  initialConnectionState,
  nextConnectionState,
  olderRegistration,
  type RegistrationClaim,
} from './connection-state.ts';
export {
  type KubeconfigPolicySettings,
  kubeconfigPolicyFields,
  kubeconfigPolicyOf,
  kubeconfigPolicyProblem,
} from './kubeconfig-policy.ts';
export {
  type KubeconfigLoad,
  type KubeconfigPolicy,
  loadWorkerKubeconfig,
} from './load-worker-kubeconfig.ts';
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
export {
  alwaysDeniedRanges,
  cidrProblem,
  type DeniedRange,
  ServerAddressDeniedError,
  ServerAddressDenyList,
} from './server-address-deny-list.ts';
export {
  type CapacitySnapshot,
  type NodeCapacity,
  podCapacityView,
  WorkerCapacity,
} from './worker-capacity.ts';
export * from './worker-cluster.ts';
export {
  type ClusterMirrorCache,
  WorkerClusterRegistry,
  type WorkerClusterView,
} from './worker-cluster-registry.ts';
export type { WorkerClusterRegistryOptions } from './worker-cluster-registry-options.ts';
export type { WorkerConnection, WorkerConnectionState } from './worker-connection-entry.ts';
export { type Namespace, namespaceInformer, namespaceView } from './worker-namespaces.ts';
export {
  clusterPermissions,
  deniedPermissions,
  kindPermissions,
  summarizePermissions,
  type WorkerKind,
  type WorkerPermission,
  workerPermissions,
} from './worker-permissions.ts';
export { type WorkerWatchStreams, workerWatchStreamsHelp } from './worker-watches.ts';
