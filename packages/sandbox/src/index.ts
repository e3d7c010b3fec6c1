export { apiManifests, installApiAccess, sandboxApiBindings, teamNamespace } from './api-access.ts';
export { applyObjects, systemNamespace } from './apply-objects.ts';
export { simulatedLogLines } from './control-plane-processes.ts';
export { binaryCacheDir, describePins, resolveKubeBinaries } from './kube-binaries.ts';
export { pinnedVersions } from './pinned-versions.ts';
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
  sandboxDown,
  sandboxEnv,
  sandboxStatus,
  sandboxUp,
  startSandboxApp,
  stopSandboxProcess,
} from './sandbox.ts';
export { defaultSandboxDir, type Identity, repositoryRoot } from './sandbox-layout.ts';
