// KubeRay ray.io/v1 RayCluster and RayJob as the apiserver sends them (plain JSON: times are
// RFC 3339 strings, quantities strings or integers), from ray-operator v1.5.0's
// apis/ray/v1/raycluster_types.go and rayjob_types.go and its CRDs
// (config/crd/bases/ray.io_rayclusters.yaml, ray.io_rayjobs.yaml). Fields the CRD defaults
// (minReplicas, maxReplicas, replicas, numOfHosts, backoffLimit, submissionMode, ...) are
// optional here: an object read back has them, one built by hand may not.
import type { ObjectMeta, PodTemplateSpec } from '@jobrelay/kube';
import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';

/** The operator's own managedBy value: objects with it (or none) are reconciled by KubeRay itself. */
export const kuberayOperatorManagedBy = 'ray.io/kuberay-operator';
/** The only other value the CRDs' CEL rule accepts; the operator skips objects that carry it. */
export const multiKueueManagedBy = 'kueue.x-k8s.io/multikueue';

export interface RayHeadGroupSpec {
  template: PodTemplateSpec;
  /** A Service object (core/v1) the operator uses as the head Service's base. */
  headService?: Record<string, unknown>;
  enableIngress?: boolean;
  resources?: Record<string, string>;
  labels?: Record<string, string>;
  rayStartParams?: Record<string, string>;
  serviceType?: string;
}

export interface RayWorkerGroupSpec {
  /** Not user-facing: set by RayJob's DeletionStrategy (DeleteWorkers) on its RayCluster. */
  suspend?: boolean;
  groupName: string;
  /** CRD default 0. */
  replicas?: number;
  /** CRD default 0. */
  minReplicas?: number;
  /** CRD default 2147483647. */
  maxReplicas?: number;
  idleTimeoutSeconds?: number;
  resources?: Record<string, string>;
  labels?: Record<string, string>;
  rayStartParams?: Record<string, string>;
  template: PodTemplateSpec;
  /** Written by the Ray autoscaler when in-tree autoscaling is on. */
  scaleStrategy?: { workersToDelete?: string[] };
  /** Pods per replica (multi-host TPU slices); CRD default 1. */
  numOfHosts?: number;
}

export interface RayAutoscalerOptions {
  /** Replaces the autoscaler container's default requests and limits (500m CPU, 512Mi memory). */
  resources?: V1ResourceRequirements;
  image?: string;
  imagePullPolicy?: string;
  securityContext?: Record<string, unknown>;
  idleTimeoutSeconds?: number;
  upscalingMode?: 'Default' | 'Aggressive' | 'Conservative';
  version?: 'v1' | 'v2';
  env?: Record<string, unknown>[];
  envFrom?: Record<string, unknown>[];
  volumeMounts?: Record<string, unknown>[];
}

export interface RayRedisCredential {
  valueFrom?: Record<string, unknown>;
  value?: string;
}

export interface RayClusterSpec {
  suspend?: boolean;
  /** Immutable; `ray.io/kuberay-operator` or `kueue.x-k8s.io/multikueue` (CEL). */
  managedBy?: string;
  autoscalerOptions?: RayAutoscalerOptions;
  headServiceAnnotations?: Record<string, string>;
  enableInTreeAutoscaling?: boolean;
  gcsFaultToleranceOptions?: {
    redisUsername?: RayRedisCredential;
    redisPassword?: RayRedisCredential;
    externalStorageNamespace?: string;
    redisAddress: string;
  };
  headGroupSpec: RayHeadGroupSpec;
  rayVersion?: string;
  workerGroupSpecs?: RayWorkerGroupSpec[];
}

/** metav1.Condition. */
export interface RayCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/**
 * `status.state` values the v1.5.0 operator writes: `ready` and `suspended` (`failed` is
 * deprecated and no longer written). The CRD itself accepts any string.
 */
export type RayClusterState = 'ready' | 'failed' | 'suspended';

/** A resource.Quantity in JSON: Go writes a string ("0", "1500m", "6Gi"); the CRD also accepts an integer. */
export type QuantityJson = string | number;

export interface RayClusterStatus {
  /** Deprecated upstream in favour of conditions, still written. */
  state?: RayClusterState;
  desiredCPU?: QuantityJson;
  desiredMemory?: QuantityJson;
  desiredGPU?: QuantityJson;
  desiredTPU?: QuantityJson;
  lastUpdateTime?: string | null;
  stateTransitionTimes?: Partial<Record<RayClusterState, string>>;
  /** Port name -> port of the head Service. */
  endpoints?: Record<string, string>;
  head?: { podIP?: string; serviceIP?: string; podName?: string; serviceName?: string };
  reason?: string;
  /** HeadPodReady, RayClusterProvisioned, ReplicaFailure, RayClusterSuspending, RayClusterSuspended. */
  conditions?: RayCondition[];
  readyWorkerReplicas?: number;
  availableWorkerReplicas?: number;
  desiredWorkerReplicas?: number;
  minWorkerReplicas?: number;
  maxWorkerReplicas?: number;
  observedGeneration?: number;
}

export interface RayCluster {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: RayClusterSpec;
  status?: RayClusterStatus;
}

export type RayJobSubmissionMode = 'K8sJobMode' | 'HTTPMode' | 'InteractiveMode' | 'SidecarMode';

/** The Ray job's own status, from the Ray dashboard ('' is "new"). */
export type RayJobAppStatus = '' | 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

/** The RayJob's lifecycle, as the v1.5.0 operator's state machine writes it ('' is "new"). */
export type RayJobDeploymentStatus =
  | ''
  | 'Initializing'
  | 'Running'
  | 'Complete'
  | 'Failed'
  | 'ValidationFailed'
  | 'Suspending'
  | 'Suspended'
  | 'Retrying'
  | 'Waiting';

export type RayJobFailedReason =
  | 'SubmissionFailed'
  | 'DeadlineExceeded'
  | 'AppFailed'
  | 'JobDeploymentStatusTransitionGracePeriodExceeded'
  | 'ValidationFailed';

export type RayDeletionPolicyType = 'DeleteCluster' | 'DeleteWorkers' | 'DeleteSelf' | 'DeleteNone';

export interface RayDeletionStrategy {
  onSuccess?: { policy?: RayDeletionPolicyType };
  onFailure?: { policy?: RayDeletionPolicyType };
  deletionRules?: {
    policy: RayDeletionPolicyType;
    condition: { jobStatus: 'SUCCEEDED' | 'FAILED'; ttlSeconds?: number };
  }[];
}

export interface RayJobSpec {
  activeDeadlineSeconds?: number;
  /** Retries, each on a new RayCluster; CRD default 0. */
  backoffLimit?: number;
  /** The cluster to create; absent when clusterSelector names an existing one. */
  rayClusterSpec?: RayClusterSpec;
  submitterPodTemplate?: PodTemplateSpec;
  metadata?: Record<string, string>;
  /** `ray.io/cluster: <name>` selects an existing RayCluster instead of creating one. */
  clusterSelector?: Record<string, string>;
  submitterConfig?: { backoffLimit?: number };
  /** Immutable; `ray.io/kuberay-operator` or `kueue.x-k8s.io/multikueue` (CEL). */
  managedBy?: string;
  deletionStrategy?: RayDeletionStrategy;
  entrypoint?: string;
  runtimeEnvYAML?: string;
  jobId?: string;
  /** CRD default K8sJobMode. */
  submissionMode?: RayJobSubmissionMode;
  entrypointResources?: string;
  entrypointNumCpus?: number;
  entrypointNumGpus?: number;
  ttlSecondsAfterFinished?: number;
  shutdownAfterJobFinishes?: boolean;
  suspend?: boolean;
}

export interface RayJobStatus {
  /** From the Ray dashboard's job info. */
  rayJobInfo?: { startTime?: string; endTime?: string };
  jobId?: string;
  rayClusterName?: string;
  dashboardURL?: string;
  jobStatus?: RayJobAppStatus;
  jobDeploymentStatus?: RayJobDeploymentStatus;
  reason?: RayJobFailedReason;
  message?: string;
  /** When the deployment status went from new to Initializing (reset on every retry and resume). */
  startTime?: string;
  /** When the deployment status became Complete or Failed. */
  endTime?: string;
  /** CRD default 0. */
  succeeded?: number;
  /** CRD default 0. */
  failed?: number;
  /** The status of the RayCluster running the job (on the worker, in jobrelay's case). */
  rayClusterStatus?: RayClusterStatus;
  /** Not written by the v1.5.0 operator. */
  observedGeneration?: number;
}

export interface RayJob {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: RayJobSpec;
  status?: RayJobStatus;
}

/** A container the operator adds to a pod; only its requests and limits matter for placement. */
export type InjectedContainer = Pick<V1Container, 'name' | 'resources' | 'restartPolicy'>;
