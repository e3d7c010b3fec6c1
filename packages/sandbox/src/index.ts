export { binaryCacheDir, describePins, resolveKubeBinaries } from './kube-binaries.ts';
export { pinnedVersions } from './pinned-versions.ts';
export {
  applyObjects,
  dispatcherServiceAccount,
  installCrds,
  registerSandboxWorkers,
  serviceAccountKubeconfig,
  systemNamespace,
  workerManifests,
} from './register-workers.ts';
export {
  openSandbox,
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
