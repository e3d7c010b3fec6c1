export { finishDecidedJob } from './finish-decided-job.ts';
export { formatIndexIntervals, parseIndexIntervals, unionIndexIntervals } from './index-intervals.ts';
export type { Job, JobCondition, JobSpec, JobStatus } from './job-object.ts';
export {
  type JobStatusTransition,
  jobStatusRuleIds,
  type StatusRuleViolation,
  validateJobStatusTransition,
} from './job-status-rules.ts';
export { jobStatusSchema, parseJobStatus } from './job-status-schema.ts';
export { type StatusWriteResult, sameJobStatus, writeOriginStatus } from './origin-status-writer.ts';
export {
  type CarriedProgress,
  translateMirrorStatus,
  usesBackoffLimitPerIndex,
} from './translate-mirror-status.ts';
