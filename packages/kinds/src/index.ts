export { batchJobAdapter } from './batch-job/batch-job-adapter.ts';
export { buildMirrorJob } from './batch-job/build-mirror-job.ts';
export {
  formatIndexIntervals,
  parseIndexIntervals,
  unionIndexIntervals,
} from './batch-job/index-intervals.ts';
export type { Job, JobCondition, JobSpec, JobStatus } from './batch-job/job-object.ts';
export {
  jobStatusRuleIds,
  type StatusRuleViolation,
  validateJobStatusTransition,
} from './batch-job/job-status-rules.ts';
export { claimedOriginInformer } from './claimed-origins.ts';
export { customObjectClient } from './custom-object-client.ts';
export { type GenericCondition, type GenericWorkload, genericAdapter } from './generic/generic-adapter.ts';
export {
  type GenericKindConfig,
  type GenericKindConfigInput,
  type GenericKindConfigResult,
  genericKindConfig,
  genericKindConfigSchema,
  parseGenericKindConfigs,
} from './generic/generic-kind-config.ts';
export {
  appWrapperKind,
  genericKindExamples,
  jobSetKind,
  pipelineRunKind,
  trainJobKind,
} from './generic/generic-kind-examples.ts';
export { type DiscoverableKind, discoverServedKinds, kindsServedBy } from './kind-discovery.ts';
export { builtInKind, builtInKinds } from './kind-list.ts';
export {
  chooseKinds,
  dispatchableKinds,
  type KindChoice,
  type KindSelectionConfig,
  kindSelectionFields,
  knownKinds,
} from './kind-selection.ts';
export { findMultiKueue } from './multikueue-detection.ts';
export type * from './ray/ray-types.ts';
export { kuberayOperatorManagedBy, multiKueueManagedBy } from './ray/ray-types.ts';
export { rayClusterAdapter } from './ray-cluster/ray-cluster-adapter.ts';
export { rayJobAdapter } from './ray-job/ray-job-adapter.ts';
export {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  collectionPath,
  type KindVerification,
  type KubeObject,
  type ManagedByPolicy,
  type MirrorBuildContext,
  type StatusViolation,
  type WorkloadClient,
  type WorkloadKindAdapter,
  type WorkloadPods,
  type WorkloadProgressRules,
  type WorkloadResource,
} from './workload-kind-adapter.ts';
