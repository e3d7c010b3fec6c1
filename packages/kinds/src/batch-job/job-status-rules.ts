import type { ObjectMeta } from '@jobrelay/kube/plain-json';
import type { JobSpec, JobStatus } from './job-object.ts';
import { decodeJobStatus, type JobStatusShape, kubeTimeToEpochNanoseconds } from './job-status-schema.ts';

// The authority is kube-apiserver v1.35.4, where spec.managedBy is GA and locked on. A /status
// update runs jobStatusStrategy.ValidateUpdate -> ValidateJobUpdateStatus with the options of
// getStatusValidationOptions. Line numbers below refer to that tag:
//   validation.go = pkg/apis/batch/validation/validation.go
//   strategy.go   = pkg/registry/batch/job/strategy.go
// Where /work/shared/reference/job-api-rules.md says otherwise, the Go source wins; each such
// place carries a "Reference doc differs" comment. Over 600 lines on purpose: it follows
// ValidateJobUpdateStatus rule by rule in the Go source's order, to be read side by side with
// validation.go; cut in two, each half would lose the line-by-line correspondence.
//
// Not mirrored:
// - ValidateObjectMetaUpdate (validation.go:617) compares old and new metadata; a transition
//   carries only one metadata, and the status writer never changes it.
// - validation.go:590 and :599 (SuccessCriteriaMet only for Indexed Jobs with a successPolicy)
//   are switched off by AllowForSuccessCriteriaMetInExtendedScope: true (strategy.go:416).

/**
 * Stable ids of the rules the API server enforces on a Job /status update, in the order it
 * checks them. "Only when changed" means strategy.go re-checks the rule only if one of the
 * named fields differs between the stored and the new status, so an already-broken stored status
 * does not block unrelated updates.
 */
export const jobStatusRuleIds = [
  /** The value must decode as a batch/v1 JobStatus at all; the API server answers 400 before validating. */
  'status-shape',
  /** active, succeeded, failed, and ready/terminating when set, are >= 0. validateJobStatus, validation.go:462-470; always. */
  'counters-non-negative',
  /** uncountedTerminatedPods UIDs are non-empty and unique across both lists. validateJobStatus, validation.go:471-494; always. */
  'uncounted-pod-uids-valid',
  /** Not Complete=True with Failed=True. RejectCompleteJobWithFailedCondition, validation.go:495; only when Complete or Failed changed (strategy.go:414). */
  'complete-excludes-failed',
  /** Not Complete=True with FailureTarget=True. RejectCompleteJobWithFailureTargetCondition, validation.go:500; only when Complete or FailureTarget changed (strategy.go:415). */
  'complete-excludes-failure-target',
  /** completionTime only with Complete=True. RejectNotCompleteJobWithCompletionTime, validation.go:505; only when Complete or completionTime changed (strategy.go:412). */
  'completion-time-requires-complete',
  /** Complete=True needs completionTime. RejectCompleteJobWithoutCompletionTime, validation.go:510; only when Complete or completionTime changed (strategy.go:413). */
  'complete-requires-completion-time',
  /** completionTime >= startTime. RejectCompletionTimeBeforeStartTime, validation.go:515; only when startTime or completionTime changed (strategy.go:410). */
  'completion-time-not-before-start-time',
  /** Failed=True needs FailureTarget=True. RejectFailedJobWithoutFailureTarget, validation.go:520; only when Failed or failedIndexes changed (strategy.go:404). */
  'failed-requires-failure-target',
  /** Complete=True needs SuccessCriteriaMet=True. RejectCompleteJobWithoutSuccessCriteriaMet, validation.go:525; only when Complete or SuccessCriteriaMet changed (strategy.go:405). */
  'complete-requires-success-criteria-met',
  /** A finished Job has active == 0. RejectFinishedJobWithActivePods, validation.go:531; only when finished or active changed (strategy.go:406). */
  'finished-requires-no-active',
  /** A finished Job has a startTime. RejectFinishedJobWithoutStartTime, validation.go:536; only when finished or startTime changed, never for suspend=true with completions=0 (strategy.go:407). */
  'finished-requires-start-time',
  /** A finished Job has no uncounted terminated pods. RejectFinishedJobWithUncountedTerminatedPods, validation.go:541; only when finished or uncountedTerminatedPods changed (strategy.go:408). */
  'finished-requires-no-uncounted-pods',
  /** completedIndexes is a well-formed interval list below spec.completions. RejectInvalidCompletedIndexes, validation.go:546; only when completedIndexes changed (strategy.go:399). */
  'completed-indexes-format',
  /** failedIndexes is a well-formed interval list below spec.completions. RejectInvalidFailedIndexes, validation.go:553; only when failedIndexes changed (strategy.go:400). */
  'failed-indexes-format',
  /** completedIndexes stays empty unless completionMode is Indexed. RejectCompletedIndexesForNonIndexedJob, validation.go:561; only when completedIndexes changed (strategy.go:401). */
  'completed-indexes-require-indexed',
  /** failedIndexes stays unset unless spec.backoffLimitPerIndex is set. RejectFailedIndexesForNoBackoffLimitPerIndex, validation.go:566; only when failedIndexes changed (strategy.go:402). */
  'failed-indexes-require-backoff-limit-per-index',
  /** No index is both completed and failed. RejectFailedIndexesOverlappingCompleted, validation.go:573; only when either index list changed (strategy.go:403). */
  'failed-indexes-not-overlapping-completed',
  /** A finished Job has no terminating pods. RejectFinishedJobWithTerminatingPods, validation.go:580; only when finished or terminating changed (strategy.go:418). */
  'finished-requires-no-terminating',
  /** ready <= active. RejectMoreReadyThanActivePods, validation.go:585; only when ready or active changed (strategy.go:417). */
  'ready-not-above-active',
  /** Not SuccessCriteriaMet=True with Failed=True. validateJobStatus, validation.go:593; always. */
  'success-criteria-met-excludes-failed',
  /** Not SuccessCriteriaMet=True with FailureTarget=True. validateJobStatus, validation.go:596; always. */
  'success-criteria-met-excludes-failure-target',
  /** With spec.successPolicy, Complete=True needs SuccessCriteriaMet=True. validateJobStatus, validation.go:602; always. */
  'success-policy-complete-requires-success-criteria-met',
  /** Complete, Failed and FailureTarget stay True once True. RejectDisablingTerminalCondition, ValidateJobStatusUpdate, validation.go:715; always (strategy.go:398). */
  'terminal-condition-stays-true',
  /** failed never decreases. RejectDecreasingFailedCounter, validation.go:722; always (strategy.go:397). */
  'failed-never-decreases',
  /** succeeded never decreases, except Indexed Jobs with completions == parallelism. RejectDecreasingSucceededCounter, validation.go:727; strategy.go:396. */
  'succeeded-never-decreases',
  /** A set completionTime is not changed to another value. RejectMutatingCompletionTime, validation.go:732; always (strategy.go:411). */
  'completion-time-immutable',
  /** A set startTime is not changed or removed unless spec.suspend is true or Suspended flips True -> False. RejectStartTimeUpdateForUnsuspendedJob, validation.go:740; strategy.go:409. */
  'start-time-immutable-unless-suspended',
  /** SuccessCriteriaMet stays True once True. ValidateJobStatusUpdate, validation.go:747; always. */
  'success-criteria-met-stays-true',
  /** SuccessCriteriaMet=True is not added to a Job already Complete without it. ValidateJobStatusUpdate, validation.go:750; always. */
  'success-criteria-met-not-after-complete',
] as const;

export type JobStatusRuleId = (typeof jobStatusRuleIds)[number];

export interface JobStatusTransition {
  /** Not read: the API server's metadata checks compare old and new metadata, which a transition does not carry. */
  metadata?: ObjectMeta | undefined;
  /**
   * The Job's stored spec. A /status update cannot change the spec (the API server validates
   * against the stored one), so pass the spec as read from the API server.
   */
  spec: JobSpec;
  /** The status currently stored, as read from the API server. */
  oldStatus: JobStatus;
  /** The status about to be written to /status. */
  newStatus: JobStatus;
}

export interface StatusRuleViolation {
  rule: JobStatusRuleId;
  /** The field the API server would name, e.g. 'status.completionTime'. */
  field: string;
  message: string;
}

type TerminalConditionType = 'Complete' | 'Failed' | 'FailureTarget';

interface ConditionFlags {
  trueTypes: ReadonlySet<string>;
  falseTypes: ReadonlySet<string>;
}

interface StatusView extends ConditionFlags {
  active: number;
  succeeded: number;
  failed: number;
  ready: number | undefined;
  terminating: number | undefined;
  /** Nanoseconds since the epoch. */
  startTime: bigint | undefined;
  completionTime: bigint | undefined;
  /** Go stores completedIndexes as a plain string, so '' and absent are the same value. */
  completedIndexes: string;
  /** Go stores failedIndexes as *string, so '' and absent differ. */
  failedIndexes: string | undefined;
  uncountedSucceeded: readonly string[];
  uncountedFailed: readonly string[];
}

interface SpecView {
  indexed: boolean;
  completions: number | undefined;
  parallelism: number | undefined;
  suspend: boolean;
  hasBackoffLimitPerIndex: boolean;
  hasSuccessPolicy: boolean;
}

const NANOSECONDS_PER_SECOND = 1_000_000_000n;

function toEpochNanoseconds(time: string | null | undefined): bigint | undefined {
  return time == null ? undefined : kubeTimeToEpochNanoseconds(time);
}

// etcd keeps metav1.Time in whole seconds (the protobuf encoding drops the nanoseconds), while a
// new status is validated exactly as sent. So a time with a fraction of a second re-sent unchanged is
// "changed" in the API server's eyes.
function truncateToStoredSecond(nanoseconds: bigint | undefined): bigint | undefined {
  if (nanoseconds === undefined) return undefined;
  const remainder = nanoseconds % NANOSECONDS_PER_SECOND;
  return remainder < 0n ? nanoseconds - remainder - NANOSECONDS_PER_SECOND : nanoseconds - remainder;
}

function viewStatus(status: JobStatusShape, stored: boolean): StatusView {
  const trueTypes = new Set<string>();
  const falseTypes = new Set<string>();
  for (const condition of status.conditions ?? []) {
    if (condition.status === 'True') trueTypes.add(condition.type);
    if (condition.status === 'False') falseTypes.add(condition.type);
  }
  const startTime = toEpochNanoseconds(status.startTime);
  const completionTime = toEpochNanoseconds(status.completionTime);
  return {
    trueTypes,
    falseTypes,
    active: status.active ?? 0,
    succeeded: status.succeeded ?? 0,
    failed: status.failed ?? 0,
    ready: status.ready ?? undefined,
    terminating: status.terminating ?? undefined,
    startTime: stored ? truncateToStoredSecond(startTime) : startTime,
    completionTime: stored ? truncateToStoredSecond(completionTime) : completionTime,
    completedIndexes: status.completedIndexes ?? '',
    failedIndexes: status.failedIndexes ?? undefined,
    uncountedSucceeded: status.uncountedTerminatedPods?.succeeded ?? [],
    uncountedFailed: status.uncountedTerminatedPods?.failed ?? [],
  };
}

// Applies the batch/v1 defaults (SetDefaults_Job) the stored spec always has, so a spec built by
// hand is judged like the one the API server holds.
function viewSpec(spec: JobSpec): SpecView {
  let completions = spec.completions ?? undefined;
  let parallelism = spec.parallelism ?? undefined;
  if (completions === undefined && parallelism === undefined) completions = 1;
  parallelism ??= 1;
  return {
    indexed: spec.completionMode === 'Indexed',
    completions,
    parallelism,
    suspend: spec.suspend === true,
    hasBackoffLimitPerIndex: spec.backoffLimitPerIndex != null,
    hasSuccessPolicy: spec.successPolicy != null,
  };
}

const isTrue = (status: ConditionFlags, type: string): boolean => status.trueTypes.has(type);
const isFinished = (status: ConditionFlags): boolean =>
  isTrue(status, 'Complete') || isTrue(status, 'Failed');

function sameList(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((item, index) => item === right[index]);
}

function formatTime(nanoseconds: bigint | undefined): string {
  if (nanoseconds === undefined) return 'unset';
  const seconds = truncateToStoredSecond(nanoseconds) ?? 0n;
  const fraction = nanoseconds - seconds;
  const whole = new Date(Number(seconds / NANOSECONDS_PER_SECOND) * 1000).toISOString().slice(0, 19);
  const fractionText = fraction === 0n ? '' : `.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${whole}${fractionText}Z`;
}

// --- Index lists (completedIndexes / failedIndexes), mirroring validation.go:968-1060 ---

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// strconv.Atoi: optional sign, decimal digits, 64-bit range.
function goAtoi(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

// Parsed bounds are below spec.completions (an int32), so they fit a number.
type IndexInterval = { ok: true; first: number; last: number } | { ok: false; error: string };

function parseIndexInterval(intervalText: string, completions: number): IndexInterval {
  const limits = intervalText.split('-');
  if (limits.length > 2) {
    return {
      ok: false,
      error: `the fragment ${JSON.stringify(intervalText)} violates the requirement that an index interval can have at most two parts separated by '-'`,
    };
  }
  const [firstText = '', lastText] = limits;
  const first = goAtoi(firstText);
  if (first === undefined) {
    return { ok: false, error: `cannot convert string to integer for index: ${JSON.stringify(firstText)}` };
  }
  if (first >= BigInt(completions)) {
    return { ok: false, error: `too large index: ${JSON.stringify(firstText)}` };
  }
  if (lastText === undefined) return { ok: true, first: Number(first), last: Number(first) };
  const last = goAtoi(lastText);
  if (last === undefined) {
    return { ok: false, error: `cannot convert string to integer for index: ${JSON.stringify(lastText)}` };
  }
  if (last >= BigInt(completions)) {
    return { ok: false, error: `too large index: ${JSON.stringify(lastText)}` };
  }
  if (first >= last) {
    return { ok: false, error: `non-increasing order, previous: ${first}, current: ${last}` };
  }
  return { ok: true, first: Number(first), last: Number(last) };
}

function findIndexListError(indexes: string, completions: number): string | undefined {
  if (indexes.length === 0) return undefined;
  let previousLast: number | undefined;
  for (const intervalText of indexes.split(',')) {
    const interval = parseIndexInterval(intervalText, completions);
    if (!interval.ok) return interval.error;
    if (previousLast !== undefined && previousLast >= interval.first) {
      return `non-increasing order, previous: ${previousLast}, current: ${interval.first}`;
    }
    previousLast = interval.last;
  }
  return undefined;
}

// Intervals that do not parse are skipped here, exactly as Go does: the format rules report them.
function findIndexOverlap(
  completedIndexes: string,
  failedIndexes: string,
  completions: number,
): number | undefined {
  if (completedIndexes.length === 0 || failedIndexes.length === 0) return undefined;
  const completedIntervals = completedIndexes.split(',');
  const failedIntervals = failedIndexes.split(',');
  let completedPosition = 0;
  let failedPosition = 0;
  let completed = parseIndexInterval(completedIntervals[0] ?? '', completions);
  let failed = parseIndexInterval(failedIntervals[0] ?? '', completions);
  while (completedPosition < completedIntervals.length && failedPosition < failedIntervals.length) {
    if (!completed.ok) {
      completedPosition++;
      if (completedPosition < completedIntervals.length) {
        completed = parseIndexInterval(completedIntervals[completedPosition] ?? '', completions);
      }
    } else if (!failed.ok) {
      failedPosition++;
      if (failedPosition < failedIntervals.length) {
        failed = parseIndexInterval(failedIntervals[failedPosition] ?? '', completions);
      }
    } else {
      if (completed.first <= failed.last && failed.first <= completed.last) {
        return Math.max(completed.first, failed.first);
      }
      if (completed.first <= failed.first) {
        completedPosition++;
        if (completedPosition < completedIntervals.length) {
          completed = parseIndexInterval(completedIntervals[completedPosition] ?? '', completions);
        }
      } else {
        failedPosition++;
        if (failedPosition < failedIntervals.length) {
          failed = parseIndexInterval(failedIntervals[failedPosition] ?? '', completions);
        }
      }
    }
  }
  return undefined;
}

const INDEX_LIST_HINT =
  'write a comma-separated list of indexes or ranges "a-b" (a < b), strictly increasing, each below spec.completions';

/**
 * Checks a Job /status update the way kube-apiserver v1.35 does, so that the status writer can
 * refuse a write the API server would reject and say why. Returns no violations when the API
 * server would accept the update. Violations come in the order the API server reports them.
 */
export function validateJobStatusTransition(transition: JobStatusTransition): StatusRuleViolation[] {
  const decodedOld = decodeJobStatus(transition.oldStatus, 'oldStatus');
  const decodedNew = decodeJobStatus(transition.newStatus, 'status');
  if (!decodedOld.ok || !decodedNew.ok) {
    const problems = [
      ...(decodedOld.ok ? [] : decodedOld.problems),
      ...(decodedNew.ok ? [] : decodedNew.problems),
    ];
    return problems.map((problem) => ({
      rule: 'status-shape',
      field: problem.field,
      message: problem.message,
    }));
  }

  const spec = viewSpec(transition.spec);
  const old = viewStatus(decodedOld.status, true);
  const next = viewStatus(decodedNew.status, false);
  const violations: StatusRuleViolation[] = [];
  const report = (rule: JobStatusRuleId, field: string, message: string): void => {
    violations.push({ rule, field, message });
  };

  // strategy.go:371-391: which fields this update changes. Conditions count as changed only when
  // their True-ness flips, not when reason, message or timestamps change.
  const flipped = (type: string): boolean => isTrue(old, type) !== isTrue(next, type);
  const finishedChanged = isFinished(old) !== isFinished(next);
  const completeChanged = flipped('Complete');
  const failedChanged = flipped('Failed');
  const failureTargetChanged = flipped('FailureTarget');
  const successCriteriaMetChanged = flipped('SuccessCriteriaMet');
  const completedIndexesChanged = old.completedIndexes !== next.completedIndexes;
  const failedIndexesChanged = old.failedIndexes !== next.failedIndexes;
  const activeChanged = old.active !== next.active;
  const startTimeChanged = old.startTime !== next.startTime;
  const completionTimeChanged = old.completionTime !== next.completionTime;
  // Go compares the *UncountedTerminatedPods pointers semantically; absent and empty only differ
  // when both sides are empty, where the rule that uses this cannot fire anyway.
  const uncountedChanged =
    !sameList(old.uncountedSucceeded, next.uncountedSucceeded) ||
    !sameList(old.uncountedFailed, next.uncountedFailed);
  const readyChanged = old.ready !== next.ready;
  const terminatingChanged = old.terminating !== next.terminating;
  const suspendedWithZeroCompletions = spec.suspend && spec.completions === 0;
  // Reference doc differs: it marks the resume exemption "(check)". It is in v1.35.4 (and in
  // v1.35.0; k8s PR #134769), and it needs Suspended=False in the new status: dropping the
  // Suspended condition does not count as resuming.
  const resuming = isTrue(old, 'Suspended') && next.falseTypes.has('Suspended');

  const nextComplete = isTrue(next, 'Complete');
  const nextFailed = isTrue(next, 'Failed');
  const nextFailureTarget = isTrue(next, 'FailureTarget');
  const nextSuccessCriteriaMet = isTrue(next, 'SuccessCriteriaMet');
  const nextFinished = isFinished(next);

  // --- validateJobStatus (validation.go:459) ---

  for (const [name, value] of [
    ['active', next.active],
    ['succeeded', next.succeeded],
    ['failed', next.failed],
    ['ready', next.ready],
    ['terminating', next.terminating],
  ] as const) {
    if (value !== undefined && value < 0) {
      report(
        'counters-non-negative',
        `status.${name}`,
        `status.${name} is ${value}; pod counts cannot be negative, send 0 or more.`,
      );
    }
  }

  const seenUids = new Set<string>();
  for (const [listName, uids] of [
    ['succeeded', next.uncountedSucceeded],
    ['failed', next.uncountedFailed],
  ] as const) {
    uids.forEach((uid, index) => {
      const field = `status.uncountedTerminatedPods.${listName}[${index}]`;
      if (uid === '') {
        report('uncounted-pod-uids-valid', field, `${field} is an empty string; list only real pod UIDs.`);
      } else if (seenUids.has(uid)) {
        report(
          'uncounted-pod-uids-valid',
          field,
          `${field}: pod UID "${uid}" is already listed in uncountedTerminatedPods; each terminated pod is listed once, as succeeded or as failed.`,
        );
      } else {
        seenUids.add(uid);
      }
    });
  }

  if ((completeChanged || failedChanged) && nextComplete && nextFailed) {
    report(
      'complete-excludes-failed',
      'status.conditions',
      'Complete=True and Failed=True cannot both be set: a Job finishes one way. Keep the terminal condition it already has.',
    );
  }
  if ((completeChanged || failureTargetChanged) && nextComplete && nextFailureTarget) {
    report(
      'complete-excludes-failure-target',
      'status.conditions',
      'Complete=True and FailureTarget=True cannot both be set: a Job with FailureTarget=True must end Failed, and a Complete Job cannot start failing.',
    );
  }
  if ((completeChanged || completionTimeChanged) && next.completionTime !== undefined && !nextComplete) {
    report(
      'completion-time-requires-complete',
      'status.completionTime',
      `completionTime is ${formatTime(next.completionTime)} but there is no Complete=True condition; set completionTime only together with Complete=True (a Failed Job has none).`,
    );
  }
  if ((completeChanged || completionTimeChanged) && next.completionTime === undefined && nextComplete) {
    report(
      'complete-requires-completion-time',
      'status.completionTime',
      "Complete=True requires completionTime; set it in the same update, normally to the Complete condition's lastTransitionTime.",
    );
  }
  if (
    (startTimeChanged || completionTimeChanged) &&
    next.startTime !== undefined &&
    next.completionTime !== undefined &&
    next.completionTime < next.startTime
  ) {
    report(
      'completion-time-not-before-start-time',
      'status.completionTime',
      `completionTime ${formatTime(next.completionTime)} is before startTime ${formatTime(next.startTime)}; it must be equal to or after startTime.`,
    );
  }
  // Reference doc differs in emphasis: Go only needs FailureTarget=True in the same status, so
  // adding FailureTarget and Failed in one update is accepted, even though the built-in
  // controller writes them in two updates.
  if ((failedChanged || failedIndexesChanged) && nextFailed && !nextFailureTarget) {
    report(
      'failed-requires-failure-target',
      'status.conditions',
      'Failed=True requires FailureTarget=True; add FailureTarget=True with the same reason, in this update or an earlier one.',
    );
  }
  if ((completeChanged || successCriteriaMetChanged) && nextComplete && !nextSuccessCriteriaMet) {
    report(
      'complete-requires-success-criteria-met',
      'status.conditions',
      'Complete=True requires SuccessCriteriaMet=True; add SuccessCriteriaMet=True with the same reason (CompletionsReached or SuccessPolicy), in this update or an earlier one.',
    );
  }
  if ((finishedChanged || activeChanged) && next.active > 0 && nextFinished) {
    report(
      'finished-requires-no-active',
      'status.active',
      `active is ${next.active} but the Job is finished (Complete=True or Failed=True); report active: 0 once it finishes.`,
    );
  }
  if (
    (finishedChanged || startTimeChanged) &&
    !suspendedWithZeroCompletions &&
    next.startTime === undefined &&
    nextFinished
  ) {
    report(
      'finished-requires-start-time',
      'status.startTime',
      'the Job is finished but has no startTime; keep the startTime it has, or set one, in the update that finishes it.',
    );
  }
  const uncountedCount = next.uncountedSucceeded.length + next.uncountedFailed.length;
  if ((finishedChanged || uncountedChanged) && nextFinished && uncountedCount > 0) {
    report(
      'finished-requires-no-uncounted-pods',
      'status.uncountedTerminatedPods',
      `the Job is finished but uncountedTerminatedPods still lists ${uncountedCount} pod(s); add them to succeeded/failed and empty both lists before the Job finishes.`,
    );
  }
  if (completedIndexesChanged && spec.completions !== undefined) {
    const error = findIndexListError(next.completedIndexes, spec.completions);
    if (error !== undefined) {
      report(
        'completed-indexes-format',
        'status.completedIndexes',
        `completedIndexes ${JSON.stringify(next.completedIndexes)} is invalid (${error}); ${INDEX_LIST_HINT} (${spec.completions}).`,
      );
    }
  }
  if (
    failedIndexesChanged &&
    spec.completions !== undefined &&
    spec.hasBackoffLimitPerIndex &&
    next.failedIndexes !== undefined
  ) {
    const error = findIndexListError(next.failedIndexes, spec.completions);
    if (error !== undefined) {
      report(
        'failed-indexes-format',
        'status.failedIndexes',
        `failedIndexes ${JSON.stringify(next.failedIndexes)} is invalid (${error}); ${INDEX_LIST_HINT} (${spec.completions}).`,
      );
    }
  }
  if (completedIndexesChanged && next.completedIndexes.length > 0 && !spec.indexed) {
    report(
      'completed-indexes-require-indexed',
      'status.completedIndexes',
      `completedIndexes is ${JSON.stringify(next.completedIndexes)} but spec.completionMode is not Indexed; leave it empty.`,
    );
  }
  if (failedIndexesChanged && !spec.hasBackoffLimitPerIndex && next.failedIndexes !== undefined) {
    report(
      'failed-indexes-require-backoff-limit-per-index',
      'status.failedIndexes',
      `failedIndexes is ${JSON.stringify(next.failedIndexes)} but spec.backoffLimitPerIndex is not set; omit the field entirely (even "" counts as set).`,
    );
  }
  if (
    (failedIndexesChanged || completedIndexesChanged) &&
    spec.completions !== undefined &&
    next.failedIndexes !== undefined
  ) {
    const overlap = findIndexOverlap(next.completedIndexes, next.failedIndexes, spec.completions);
    if (overlap !== undefined) {
      report(
        'failed-indexes-not-overlapping-completed',
        'status.failedIndexes',
        `failedIndexes and completedIndexes overlap at index: ${overlap}; an index is either completed or failed, never both.`,
      );
    }
  }
  if ((finishedChanged || terminatingChanged) && (next.terminating ?? 0) > 0 && nextFinished) {
    report(
      'finished-requires-no-terminating',
      'status.terminating',
      `terminating is ${next.terminating} but the Job is finished (Complete=True or Failed=True); wait until no pod is terminating, or report terminating: 0.`,
    );
  }
  if ((readyChanged || activeChanged) && next.ready !== undefined && next.ready > next.active) {
    report(
      'ready-not-above-active',
      'status.ready',
      `ready (${next.ready}) is greater than active (${next.active}); ready pods are a subset of active ones, so cap ready at active.`,
    );
  }
  if (nextSuccessCriteriaMet && nextFailed) {
    report(
      'success-criteria-met-excludes-failed',
      'status.conditions',
      'SuccessCriteriaMet=True and Failed=True cannot both be set: a Job whose success criteria are met must end Complete.',
    );
  }
  if (nextSuccessCriteriaMet && nextFailureTarget) {
    report(
      'success-criteria-met-excludes-failure-target',
      'status.conditions',
      'SuccessCriteriaMet=True and FailureTarget=True cannot both be set: a Job heads either to Complete or to Failed.',
    );
  }
  if (spec.hasSuccessPolicy && !nextSuccessCriteriaMet && nextComplete) {
    report(
      'success-policy-complete-requires-success-criteria-met',
      'status.conditions',
      'the Job has spec.successPolicy, so Complete=True requires SuccessCriteriaMet=True in every update, even one that changes neither.',
    );
  }

  // --- ValidateJobStatusUpdate (validation.go:710) ---

  for (const type of ['Failed', 'Complete', 'FailureTarget'] satisfies TerminalConditionType[]) {
    if (isTrue(old, type) && !isTrue(next, type)) {
      report(
        'terminal-condition-stays-true',
        'status.conditions',
        `the stored status has ${type}=True and this update removes it or sets it to False/Unknown; a terminal condition stays True, copy it unchanged.`,
      );
    }
  }
  if (next.failed < old.failed) {
    report(
      'failed-never-decreases',
      'status.failed',
      `failed goes from ${old.failed} to ${next.failed}; the failed counter never decreases, so send at least ${old.failed} (a re-created mirror restarts at 0: keep the larger count).`,
    );
  }
  const succeededMayDecrease = spec.indexed && spec.completions === spec.parallelism;
  if (!succeededMayDecrease && next.succeeded < old.succeeded) {
    report(
      'succeeded-never-decreases',
      'status.succeeded',
      `succeeded goes from ${old.succeeded} to ${next.succeeded}; the succeeded counter never decreases (only Indexed Jobs with completions == parallelism may scale it down), so send at least ${old.succeeded}.`,
    );
  }
  // Reference doc differs: "completionTime, once set, never changes" is enforced only between two
  // set values. Removing it is left to 'complete-requires-completion-time'.
  if (
    next.completionTime !== undefined &&
    old.completionTime !== undefined &&
    next.completionTime !== old.completionTime
  ) {
    report(
      'completion-time-immutable',
      'status.completionTime',
      `completionTime is stored as ${formatTime(old.completionTime)} and this update sends ${formatTime(next.completionTime)}; it never changes once set. Send the stored value (whole seconds).`,
    );
  }
  if (startTimeChanged && !resuming && old.startTime !== undefined && !spec.suspend) {
    report(
      'start-time-immutable-unless-suspended',
      'status.startTime',
      `startTime is stored as ${formatTime(old.startTime)} and this update ${next.startTime === undefined ? 'removes it' : `sends ${formatTime(next.startTime)}`}; on a Job with spec.suspend unset or false it can change only in the update that turns Suspended from True to False. Send the stored value (whole seconds).`,
    );
  }
  if (isTrue(old, 'SuccessCriteriaMet') && !nextSuccessCriteriaMet) {
    report(
      'success-criteria-met-stays-true',
      'status.conditions',
      'the stored status has SuccessCriteriaMet=True and this update removes it or sets it to False/Unknown; copy it unchanged.',
    );
  }
  if (isTrue(old, 'Complete') && !isTrue(old, 'SuccessCriteriaMet') && nextSuccessCriteriaMet) {
    report(
      'success-criteria-met-not-after-complete',
      'status.conditions',
      'the Job is already Complete without SuccessCriteriaMet; SuccessCriteriaMet=True can no longer be added, leave it out.',
    );
  }
  return violations;
}
