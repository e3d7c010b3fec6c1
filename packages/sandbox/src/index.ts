export {
  apiCommandLine,
  apiManifests,
  installApiAccess,
  sandboxApiBindings,
  teamNamespace,
} from './api-access.ts';
export { applyObjects, systemNamespace } from './apply-objects.ts';
export { sandboxNode } from './cluster-bootstrap.ts';
export { simulatedLogLines } from './control-plane-processes.ts';
export { DockerfileError, dryRunDockerfile, parseDockerfile } from './dockerfile-dry-run.ts';
export { freeLoopbackPorts } from './free-ports.ts';
export { type GoToolName, goToolCacheDir, goTools, resolveGoTool } from './go-tools.ts';
export {
  installJobSet,
  type JobSetManager,
  jobSetCacheDir,
  jobSetManagerConfig,
  jobSetWebhookConfigurations,
  resolveJobSetManager,
} from './jobset-manager.ts';
export { binaryCacheDir, describePins, resolveKubeBinaries } from './kube-binaries.ts';
export type { KubeTarget } from './kube-http.ts';
export {
  installKuberayCrds,
  type KuberayOperator,
  kuberayCacheDir,
  kuberayCrdFiles,
  kuberayManagedBy,
  resolveKuberayOperator,
} from './kuberay-operator.ts';
export {
  type KueueManager,
  kueueCacheDir,
  kueueManagerConfig,
  kueueMetricsCertDir,
  kueueWebhookConfigurations,
  resolveKueueManager,
  startKueueOnWorker,
  type WorkerKueue,
} from './kueue-manager.ts';
export { pinnedVersions } from './pinned-versions.ts';
export {
  jobInfoAt,
  parseExitCode,
  parseRunMs,
  type RayJobInfo,
  type RayJobStatus,
  rayJobSimulation,
  SimulatedRayDashboards,
  simulatedRayVersion,
} from './ray-dashboard.ts';
export {
  rayApiVersion,
  type SandboxRayClusterManifest,
  type SandboxRayClusterOptions,
  type SandboxRayJobManifest,
  sandboxRayCluster,
  sandboxRayClusterSpec,
  sandboxRayImage,
  sandboxRayJob,
} from './ray-manifests.ts';
export { findRedisServer } from './redis-server.ts';
export {
  dispatcherServiceAccount,
  installCrds,
  registerSandboxWorkers,
  serviceAccountKubeconfig,
  workerManifests,
} from './register-workers.ts';
export {
  openSandbox,
  recordSandboxApi,
  type Sandbox,
  type SandboxCluster,
  type SandboxKuberay,
  sandboxDown,
  sandboxEnv,
  sandboxProcessIds,
  sandboxStatus,
  sandboxUp,
  startSandboxApp,
  startSandboxProcess,
  stopSandboxProcess,
} from './sandbox.ts';
export {
  defaultSandboxDir,
  type Identity,
  repositoryRoot,
  type ServiceAccountIdentity,
  serviceAccountIdentities,
} from './sandbox-layout.ts';
