import type { PlainJson } from '@jobrelay/kube/plain-json';
import type { V1Job, V1JobCondition, V1JobSpec, V1JobStatus } from '@kubernetes/client-node';

// A batch/v1 Job as jobrelay reads and writes it: plain JSON, as the apiserver sends it. Its
// times (startTime, completionTime, conditions' lastTransitionTime and lastProbeTime,
// creationTimestamp) are RFC 3339 strings, never Date: client-node's V1Job claims Date only
// because its typed clients convert every object, and jobrelay does not use them for Jobs.

/** A batch/v1 Job, plain JSON. */
export type Job = PlainJson<V1Job>;
export type JobSpec = PlainJson<V1JobSpec>;
export type JobStatus = PlainJson<V1JobStatus>;
export type JobCondition = PlainJson<V1JobCondition>;

/** Whether the Job counts failures per index (spec.backoffLimitPerIndex set; 0 counts too). */
export function usesBackoffLimitPerIndex(spec: Job['spec']): boolean {
  return spec?.backoffLimitPerIndex !== undefined && spec?.backoffLimitPerIndex !== null;
}
