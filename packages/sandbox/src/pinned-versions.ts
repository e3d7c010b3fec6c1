/**
 * Versions of the local control-plane binaries. Changing one changes the cache key, so the
 * next `sandbox up` rebuilds from the Go module proxy; nothing else needs clearing.
 */
export const pinnedVersions = {
  /** managedBy is GA in 1.35: the Job API the dispatcher is written against. */
  kubernetes: 'v1.35.4',
  /** kwokctl pairs Kubernetes 1.34–1.36 with etcd 3.6. */
  etcd: 'v3.6.16',
  /** v0.7.0 builds with Go 1.25+; v0.8.0 needs Go 1.26. */
  kwok: 'v0.7.0',
  /**
   * KubeRay's ray-operator (github.com/ray-project/kuberay/ray-operator), built separately
   * (scripts/build-kuberay-operator.sh, its own cache key): RayCluster, RayJob, RayService.
   */
  kuberay: 'v1.5.0',
  /**
   * JobSet's controller manager (sigs.k8s.io/jobset), built separately
   * (scripts/build-jobset-manager.sh, its own cache key), checked against jobSetModuleSum.
   */
  jobset: 'v0.9.1',
  /**
   * Kueue's controller manager (sigs.k8s.io/kueue), built separately
   * (scripts/build-kueue-manager.sh, its own cache key) and started on demand on one worker:
   * the worker's own admission, which jobrelay must never fight. The only version the proxy
   * serves here; its module is in the checksum database, so `go install` checks it.
   */
  kueue: 'v0.17.0',
  /**
   * helm (helm.sh/helm/v4), built by scripts/build-go-tool.sh: lints, renders and installs the
   * chart. v4.3.2 is the vetted release for this project's machines (v3.22.0 is served by the
   * proxy but not vetted); v4.3 needs Go >= 1.26.
   */
  helm: 'v4.3.2',
  /** Prometheus's Go module (its promtool, Prometheus 3.x): checks and unit-tests the shipped alerts. */
  prometheus: 'v0.316.0',
} as const;

/**
 * The go.sum hash (h1:) of sigs.k8s.io/jobset at pinnedVersions.jobset. The checksum database
 * has no entry for it (its lookup answers 404), so the build skips the database for this one
 * module and compares the downloaded module with this hash instead.
 */
export const jobSetModuleSum = 'h1:0VWakCej3FuYFxsoTrMEibosO9PjpxgawT+U146dgjM=';

export const requiredBinaries = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
  // Not needed by the tests; built so that the demo and `sandbox env` hand users a kubectl.
  'kubectl',
] as const;

export type RequiredBinary = (typeof requiredBinaries)[number];
