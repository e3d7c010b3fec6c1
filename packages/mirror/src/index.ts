export { buildMirrorJob, type MirrorIdentity } from './build-mirror-job.ts';
export {
  continuationFor,
  continuationProblem,
  deadlineUsedSeconds,
  hasProgress,
  isSeedApplied,
  type MirrorContinuation,
  mirrorStatusSeed,
  remainingDeadlineSeconds,
  seededProgress,
} from './continuation.ts';
export { deepCopy } from './deep-copy.ts';
export { isJobFinished } from './job-finished.ts';
export * from './jobrelay-names.ts';
export { mirrorIdentityMetadata } from './mirror-identity.ts';
export { type MirrorOwnership, mirrorOwnership } from './mirror-ownership.ts';
export { mirrorSpecUpdate } from './mirror-spec-update.ts';
