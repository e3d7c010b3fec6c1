export { batchJobAdapter } from './batch-job/batch-job-adapter.ts';
export { customObjectClient } from './custom-object-client.ts';
export {
  type AnyJobKindAdapter,
  apiVersionOf,
  collectionPath,
  type JobKindAdapter,
  type KindVerification,
  type KubeObject,
  type ManagedByPolicy,
  type MirrorBuildContext,
  type StatusViolation,
  type WorkloadClient,
  type WorkloadResource,
} from './job-kind-adapter.ts';
export { builtInKind, builtInKinds } from './kind-list.ts';
