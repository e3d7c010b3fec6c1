import { describe, expect, it } from 'vitest';
import type { JobCondition, JobSpec, JobStatus } from '../../src/batch-job/job-object.ts';
import {
  type JobStatusRuleId,
  type JobStatusTransition,
  jobStatusRuleIds,
  validateJobStatusTransition,
} from '../../src/batch-job/job-status-rules.ts';
import { parseJobStatus } from '../../src/batch-job/job-status-schema.ts';

const STARTED = '2025-03-01T10:00:00Z';
const FINISHED = '2025-03-01T10:05:00Z';
const LATER = '2025-03-01T10:09:00Z';
const ONE_SECOND_BEFORE_START = '2025-03-01T09:59:59Z';

function jobSpec(overrides: Partial<JobSpec> = {}): JobSpec {
  return {
    template: {},
    completions: 1,
    parallelism: 1,
    completionMode: 'NonIndexed',
    suspend: false,
    backoffLimit: 6,
    ...overrides,
  };
}

function indexedSpec(overrides: Partial<JobSpec> = {}): JobSpec {
  return jobSpec({ completionMode: 'Indexed', completions: 4, parallelism: 2, ...overrides });
}

const REASONS: Record<string, string> = {
  SuccessCriteriaMet: 'CompletionsReached',
  Complete: 'CompletionsReached',
  FailureTarget: 'BackoffLimitExceeded',
  Failed: 'BackoffLimitExceeded',
  Suspended: 'JobSuspended',
};

function condition(type: string, status: 'True' | 'False' | 'Unknown' = 'True'): JobCondition {
  return { type, status, reason: REASONS[type] ?? 'Test', lastTransitionTime: FINISHED };
}

function conditions(...types: string[]): JobCondition[] {
  return types.map((type) => condition(type));
}

function running(overrides: Partial<JobStatus> = {}): JobStatus {
  return { startTime: STARTED, active: 1, ready: 1, terminating: 0, ...overrides };
}

/** Success criteria met, pods gone, not yet Complete. */
function succeeding(overrides: Partial<JobStatus> = {}): JobStatus {
  return running({
    active: 0,
    ready: 0,
    succeeded: 1,
    conditions: conditions('SuccessCriteriaMet'),
    ...overrides,
  });
}

function complete(overrides: Partial<JobStatus> = {}): JobStatus {
  return succeeding({
    conditions: conditions('SuccessCriteriaMet', 'Complete'),
    completionTime: FINISHED,
    ...overrides,
  });
}

/** Complete without SuccessCriteriaMet: what an API server before v1.32 could store. */
function legacyComplete(overrides: Partial<JobStatus> = {}): JobStatus {
  return complete({ conditions: conditions('Complete'), ...overrides });
}

function failing(overrides: Partial<JobStatus> = {}): JobStatus {
  return running({ active: 0, ready: 0, failed: 1, conditions: conditions('FailureTarget'), ...overrides });
}

function failed(overrides: Partial<JobStatus> = {}): JobStatus {
  return failing({ conditions: conditions('FailureTarget', 'Failed'), ...overrides });
}

function update(oldStatus: JobStatus, newStatus: JobStatus, spec: JobSpec = jobSpec()): JobStatusTransition {
  return { spec, oldStatus, newStatus };
}

function ruleIdsOf(transition: JobStatusTransition): JobStatusRuleId[] {
  return validateJobStatusTransition(transition).map((violation) => violation.rule);
}

interface RuleCase {
  /** The rule this case pins down, by breaking it or by nearly breaking it. */
  rule: JobStatusRuleId;
  name: string;
  transition: JobStatusTransition;
  /** Every rule the API server reports, in its order; [] when it accepts the update. */
  expected: JobStatusRuleId[];
}

const successPolicy = { rules: [{ succeededIndexes: '0' }] };
const perIndexSpec = indexedSpec({ backoffLimitPerIndex: 1 });

const ruleCases: RuleCase[] = [
  // status-shape
  {
    rule: 'status-shape',
    name: 'a fractional counter cannot be decoded',
    transition: update(running(), running({ failed: 1.5 })),
    expected: ['status-shape'],
  },
  {
    rule: 'status-shape',
    name: 'a condition status other than True/False/Unknown',
    transition: update(running(), running({ conditions: [{ type: 'Complete', status: 'Yes' }] })),
    expected: ['status-shape'],
  },
  {
    rule: 'status-shape',
    name: 'a startTime that is not RFC 3339',
    transition: update({}, running({ startTime: 'yesterday' })),
    expected: ['status-shape'],
  },
  {
    rule: 'status-shape',
    name: 'a malformed stored status is reported too',
    transition: update({ active: 'many' as unknown as number }, running()),
    expected: ['status-shape'],
  },
  {
    rule: 'status-shape',
    name: 'a time with an offset is as good as one in UTC',
    transition: update(
      running({ startTime: '2025-03-01T10:00:00Z' }),
      complete({ startTime: '2025-03-01T11:00:00+01:00' }),
    ),
    expected: [],
  },

  // counters-non-negative
  {
    rule: 'counters-non-negative',
    name: 'negative active',
    transition: update(running(), running({ active: -1, ready: undefined })),
    expected: ['counters-non-negative'],
  },
  {
    rule: 'counters-non-negative',
    name: 'negative terminating',
    transition: update(running(), running({ terminating: -1 })),
    expected: ['counters-non-negative'],
  },
  {
    rule: 'counters-non-negative',
    name: 'checked on every update: an untouched negative counter is still rejected',
    transition: update(running({ failed: -1 }), running({ failed: -1, active: 2 })),
    expected: ['counters-non-negative'],
  },
  {
    rule: 'counters-non-negative',
    name: 'zero everywhere',
    transition: update(running(), running({ active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 0 })),
    expected: [],
  },

  // uncounted-pod-uids-valid
  {
    rule: 'uncounted-pod-uids-valid',
    name: 'one pod both succeeded and failed',
    transition: update(
      running(),
      running({ uncountedTerminatedPods: { succeeded: ['uid-a'], failed: ['uid-a'] } }),
    ),
    expected: ['uncounted-pod-uids-valid'],
  },
  {
    rule: 'uncounted-pod-uids-valid',
    name: 'an empty UID',
    transition: update(running(), running({ uncountedTerminatedPods: { succeeded: [''] } })),
    expected: ['uncounted-pod-uids-valid'],
  },
  {
    rule: 'uncounted-pod-uids-valid',
    name: 'distinct UIDs',
    transition: update(
      running(),
      running({ uncountedTerminatedPods: { succeeded: ['uid-a'], failed: ['uid-b'] } }),
    ),
    expected: [],
  },

  // complete-excludes-failed
  {
    rule: 'complete-excludes-failed',
    name: 'adding Failed to a stored Complete+FailureTarget status',
    transition: update(
      legacyComplete({ conditions: conditions('FailureTarget', 'Complete') }),
      legacyComplete({ conditions: conditions('FailureTarget', 'Complete', 'Failed') }),
    ),
    expected: ['complete-excludes-failed'],
  },
  {
    rule: 'complete-excludes-failed',
    name: 'Failed after FailureTarget, without Complete',
    transition: update(failing(), failed()),
    expected: [],
  },

  // complete-excludes-failure-target
  {
    rule: 'complete-excludes-failure-target',
    name: 'adding FailureTarget to a Complete Job',
    transition: update(
      legacyComplete(),
      legacyComplete({ conditions: conditions('Complete', 'FailureTarget') }),
    ),
    expected: ['complete-excludes-failure-target'],
  },
  {
    rule: 'complete-excludes-failure-target',
    name: 'adding FailureTarget to a running Job',
    transition: update(running(), running({ conditions: conditions('FailureTarget') })),
    expected: [],
  },

  // completion-time-requires-complete
  {
    rule: 'completion-time-requires-complete',
    name: 'completionTime on a running Job',
    transition: update(running(), running({ completionTime: FINISHED })),
    expected: ['completion-time-requires-complete'],
  },
  {
    rule: 'completion-time-requires-complete',
    name: 'completionTime on a Failed Job',
    transition: update(failing(), failed({ completionTime: FINISHED })),
    expected: ['completion-time-requires-complete'],
  },
  {
    rule: 'completion-time-requires-complete',
    name: 'completionTime together with Complete',
    transition: update(succeeding(), complete()),
    expected: [],
  },

  // complete-requires-completion-time
  {
    rule: 'complete-requires-completion-time',
    name: 'Complete without completionTime',
    transition: update(succeeding(), complete({ completionTime: undefined })),
    expected: ['complete-requires-completion-time'],
  },
  {
    rule: 'complete-requires-completion-time',
    name: 'removing completionTime from a Complete Job',
    transition: update(complete(), complete({ completionTime: undefined })),
    expected: ['complete-requires-completion-time'],
  },
  {
    rule: 'complete-requires-completion-time',
    name: 'not re-checked when neither Complete nor completionTime changes',
    transition: update(
      legacyComplete({ completionTime: undefined }),
      legacyComplete({ completionTime: undefined, failed: 2 }),
    ),
    expected: [],
  },

  // completion-time-not-before-start-time
  {
    rule: 'completion-time-not-before-start-time',
    name: 'completionTime one second before startTime',
    transition: update(succeeding(), complete({ completionTime: ONE_SECOND_BEFORE_START })),
    expected: ['completion-time-not-before-start-time'],
  },
  {
    rule: 'completion-time-not-before-start-time',
    name: 'completionTime equal to startTime',
    transition: update(succeeding(), complete({ completionTime: STARTED })),
    expected: [],
  },
  {
    rule: 'completion-time-not-before-start-time',
    name: 'not re-checked when neither time changes',
    transition: update(
      complete({ completionTime: ONE_SECOND_BEFORE_START }),
      complete({ completionTime: ONE_SECOND_BEFORE_START, failed: 1 }),
    ),
    expected: [],
  },

  // failed-requires-failure-target
  {
    rule: 'failed-requires-failure-target',
    name: 'Failed without FailureTarget',
    transition: update(
      running({ active: 0, ready: 0 }),
      running({ active: 0, ready: 0, conditions: conditions('Failed') }),
    ),
    expected: ['failed-requires-failure-target'],
  },
  {
    rule: 'failed-requires-failure-target',
    name: 'FailureTarget and Failed added in the same update',
    transition: update(running({ active: 0, ready: 0 }), failed()),
    expected: [],
  },
  {
    rule: 'failed-requires-failure-target',
    name: 're-checked when failedIndexes changes on a stored Failed-only status',
    transition: update(
      failed({ conditions: conditions('Failed'), failedIndexes: '0' }),
      failed({ conditions: conditions('Failed'), failedIndexes: '0,1' }),
      perIndexSpec,
    ),
    expected: ['failed-requires-failure-target'],
  },
  {
    rule: 'failed-requires-failure-target',
    name: 'not re-checked when only a counter of a stored Failed-only status changes',
    transition: update(
      failed({ conditions: conditions('Failed') }),
      failed({ conditions: conditions('Failed'), failed: 2 }),
    ),
    expected: [],
  },

  // complete-requires-success-criteria-met
  {
    rule: 'complete-requires-success-criteria-met',
    name: 'Complete without SuccessCriteriaMet',
    transition: update(running({ active: 0, ready: 0 }), legacyComplete()),
    expected: ['complete-requires-success-criteria-met'],
  },
  {
    rule: 'complete-requires-success-criteria-met',
    name: 'SuccessCriteriaMet and Complete added in the same update',
    transition: update(running({ active: 0, ready: 0 }), complete()),
    expected: [],
  },
  {
    rule: 'complete-requires-success-criteria-met',
    name: 'a stored Complete-only status accepts unrelated updates',
    transition: update(legacyComplete(), legacyComplete({ failed: 3 })),
    expected: [],
  },

  // finished-requires-no-active
  {
    rule: 'finished-requires-no-active',
    name: 'Complete with an active pod',
    transition: update(succeeding({ active: 1 }), complete({ active: 1 })),
    expected: ['finished-requires-no-active'],
  },
  {
    rule: 'finished-requires-no-active',
    name: 'an active pod appears on a Failed Job',
    transition: update(failed(), failed({ active: 1 })),
    expected: ['finished-requires-no-active'],
  },
  {
    rule: 'finished-requires-no-active',
    name: 'Complete with no active pod',
    transition: update(succeeding(), complete({ active: 0 })),
    expected: [],
  },

  // finished-requires-start-time
  {
    rule: 'finished-requires-start-time',
    name: 'Failed without startTime',
    transition: update(failing({ startTime: undefined }), failed({ startTime: undefined })),
    expected: ['finished-requires-start-time'],
  },
  {
    rule: 'finished-requires-start-time',
    name: 'a suspended Job with completions=0 may finish without startTime',
    transition: update(
      {},
      { conditions: conditions('SuccessCriteriaMet', 'Complete'), completionTime: FINISHED },
      jobSpec({ suspend: true, completions: 0, parallelism: 0 }),
    ),
    expected: [],
  },
  {
    rule: 'finished-requires-start-time',
    name: 'Failed with startTime',
    transition: update(failing(), failed()),
    expected: [],
  },

  // finished-requires-no-uncounted-pods
  {
    rule: 'finished-requires-no-uncounted-pods',
    name: 'Complete with an uncounted pod',
    transition: update(
      succeeding({ uncountedTerminatedPods: { succeeded: ['uid-a'] } }),
      complete({ uncountedTerminatedPods: { succeeded: ['uid-a'] } }),
    ),
    expected: ['finished-requires-no-uncounted-pods'],
  },
  {
    rule: 'finished-requires-no-uncounted-pods',
    name: 'Complete with empty uncounted lists',
    transition: update(succeeding(), complete({ uncountedTerminatedPods: { succeeded: [], failed: [] } })),
    expected: [],
  },

  // completed-indexes-format
  {
    rule: 'completed-indexes-format',
    name: 'decreasing intervals',
    transition: update(running(), running({ completedIndexes: '2,0' }), indexedSpec()),
    expected: ['completed-indexes-format'],
  },
  {
    rule: 'completed-indexes-format',
    name: 'an index at completions',
    transition: update(running(), running({ completedIndexes: '0-4' }), indexedSpec()),
    expected: ['completed-indexes-format'],
  },
  {
    rule: 'completed-indexes-format',
    name: 'a one-element range',
    transition: update(running(), running({ completedIndexes: '1-1' }), indexedSpec()),
    expected: ['completed-indexes-format'],
  },
  {
    rule: 'completed-indexes-format',
    name: 'an empty fragment',
    transition: update(running(), running({ completedIndexes: '0,,2' }), indexedSpec()),
    expected: ['completed-indexes-format'],
  },
  {
    rule: 'completed-indexes-format',
    name: 'adjacent single indexes and a range',
    transition: update(running(), running({ completedIndexes: '0,1,2-3' }), indexedSpec()),
    expected: [],
  },
  {
    rule: 'completed-indexes-format',
    name: 'strconv.Atoi accepts a plus sign and leading zeros',
    transition: update(running(), running({ completedIndexes: '+0,02' }), indexedSpec()),
    expected: [],
  },
  {
    rule: 'completed-indexes-format',
    name: 'not re-checked after a scale-down leaves indexes beyond completions',
    transition: update(
      running({ completedIndexes: '0-5' }),
      running({ completedIndexes: '0-5', active: 2, ready: 2 }),
      indexedSpec({ completions: 2, parallelism: 2 }),
    ),
    expected: [],
  },

  // failed-indexes-format
  {
    rule: 'failed-indexes-format',
    name: 'a reversed range',
    transition: update(running(), running({ failedIndexes: '3-2' }), perIndexSpec),
    expected: ['failed-indexes-format'],
  },
  {
    rule: 'failed-indexes-format',
    name: 'well-formed failed indexes',
    transition: update(running(), running({ failedIndexes: '1,3' }), perIndexSpec),
    expected: [],
  },

  // completed-indexes-require-indexed
  {
    rule: 'completed-indexes-require-indexed',
    name: 'completedIndexes on a NonIndexed Job',
    transition: update(running(), running({ completedIndexes: '0' })),
    expected: ['completed-indexes-require-indexed'],
  },
  {
    rule: 'completed-indexes-require-indexed',
    name: 'empty completedIndexes on a NonIndexed Job',
    transition: update(running(), running({ completedIndexes: '' })),
    expected: [],
  },

  // failed-indexes-require-backoff-limit-per-index
  {
    rule: 'failed-indexes-require-backoff-limit-per-index',
    name: 'an empty failedIndexes still counts as set',
    transition: update(running(), running({ failedIndexes: '' }), indexedSpec()),
    expected: ['failed-indexes-require-backoff-limit-per-index'],
  },
  {
    rule: 'failed-indexes-require-backoff-limit-per-index',
    name: 'failedIndexes left out',
    transition: update(running(), running({ completedIndexes: '0' }), indexedSpec()),
    expected: [],
  },

  // failed-indexes-not-overlapping-completed
  {
    rule: 'failed-indexes-not-overlapping-completed',
    name: 'index 2 both completed and failed',
    transition: update(running(), running({ completedIndexes: '0-2', failedIndexes: '2' }), perIndexSpec),
    expected: ['failed-indexes-not-overlapping-completed'],
  },
  {
    rule: 'failed-indexes-not-overlapping-completed',
    name: 'disjoint completed and failed indexes',
    transition: update(running(), running({ completedIndexes: '0-1', failedIndexes: '2' }), perIndexSpec),
    expected: [],
  },

  // finished-requires-no-terminating
  {
    rule: 'finished-requires-no-terminating',
    name: 'Failed while a pod is terminating',
    transition: update(failing({ terminating: 1 }), failed({ terminating: 1 })),
    expected: ['finished-requires-no-terminating'],
  },
  {
    rule: 'finished-requires-no-terminating',
    name: 'Failed once no pod is terminating',
    transition: update(failing({ terminating: 1 }), failed({ terminating: 0 })),
    expected: [],
  },

  // ready-not-above-active
  {
    rule: 'ready-not-above-active',
    name: 'more ready than active pods',
    transition: update(running(), running({ active: 1, ready: 2 })),
    expected: ['ready-not-above-active'],
  },
  {
    rule: 'ready-not-above-active',
    name: 'as many ready as active pods',
    transition: update(running(), running({ active: 2, ready: 2 })),
    expected: [],
  },
  {
    rule: 'ready-not-above-active',
    name: 'a stored ready > active does not block a failed-counter update',
    transition: update(running({ active: 0, ready: 1 }), running({ active: 0, ready: 1, failed: 1 })),
    expected: [],
  },

  // success-criteria-met-excludes-failed
  {
    rule: 'success-criteria-met-excludes-failed',
    name: 'checked on every update, even one touching only a counter',
    transition: update(
      failed({ conditions: conditions('SuccessCriteriaMet', 'Failed') }),
      failed({ conditions: conditions('SuccessCriteriaMet', 'Failed'), failed: 2 }),
    ),
    expected: ['success-criteria-met-excludes-failed'],
  },
  {
    rule: 'success-criteria-met-excludes-failed',
    name: 'SuccessCriteriaMet alone',
    transition: update(running(), succeeding()),
    expected: [],
  },

  // success-criteria-met-excludes-failure-target
  {
    rule: 'success-criteria-met-excludes-failure-target',
    name: 'SuccessCriteriaMet added to a Job with FailureTarget',
    transition: update(failing(), failing({ conditions: conditions('FailureTarget', 'SuccessCriteriaMet') })),
    expected: ['success-criteria-met-excludes-failure-target'],
  },
  {
    rule: 'success-criteria-met-excludes-failure-target',
    name: 'FailureTarget alone',
    transition: update(running(), failing()),
    expected: [],
  },

  // success-policy-complete-requires-success-criteria-met
  {
    rule: 'success-policy-complete-requires-success-criteria-met',
    name: 'a stored Complete-only status with a successPolicy blocks every update',
    transition: update(legacyComplete(), legacyComplete({ failed: 1 }), indexedSpec({ successPolicy })),
    expected: ['success-policy-complete-requires-success-criteria-met'],
  },
  {
    rule: 'success-policy-complete-requires-success-criteria-met',
    name: 'the same update without a successPolicy',
    transition: update(legacyComplete(), legacyComplete({ failed: 1 }), indexedSpec()),
    expected: [],
  },

  // terminal-condition-stays-true
  {
    rule: 'terminal-condition-stays-true',
    name: 'removing Failed',
    transition: update(failed(), failing()),
    expected: ['terminal-condition-stays-true'],
  },
  {
    rule: 'terminal-condition-stays-true',
    name: 'turning Complete to False',
    transition: update(
      complete(),
      complete({ conditions: [condition('SuccessCriteriaMet'), condition('Complete', 'False')] }),
    ),
    expected: ['completion-time-requires-complete', 'terminal-condition-stays-true'],
  },
  {
    rule: 'terminal-condition-stays-true',
    name: 'removing FailureTarget',
    transition: update(failing(), running({ active: 0, ready: 0, failed: 1 })),
    expected: ['terminal-condition-stays-true'],
  },
  {
    rule: 'terminal-condition-stays-true',
    name: 'rewording the Complete condition keeps it True',
    transition: update(
      complete(),
      complete({
        conditions: [condition('SuccessCriteriaMet'), { ...condition('Complete'), message: 'done' }],
      }),
    ),
    expected: [],
  },

  // failed-never-decreases
  {
    rule: 'failed-never-decreases',
    name: 'failed from 3 to 2',
    transition: update(running({ failed: 3 }), running({ failed: 2 })),
    expected: ['failed-never-decreases'],
  },
  {
    rule: 'failed-never-decreases',
    name: 'failed from 3 to absent',
    transition: update(running({ failed: 3 }), running({ failed: undefined })),
    expected: ['failed-never-decreases'],
  },
  {
    rule: 'failed-never-decreases',
    name: 'failed unchanged',
    transition: update(running({ failed: 3 }), running({ failed: 3 })),
    expected: [],
  },

  // succeeded-never-decreases
  {
    rule: 'succeeded-never-decreases',
    name: 'succeeded from 3 to 2 on a NonIndexed Job',
    transition: update(
      running({ succeeded: 3 }),
      running({ succeeded: 2 }),
      jobSpec({ completions: 5, parallelism: 2 }),
    ),
    expected: ['succeeded-never-decreases'],
  },
  {
    rule: 'succeeded-never-decreases',
    name: 'succeeded from 3 to 2 on an Indexed Job with completions != parallelism',
    transition: update(running({ succeeded: 3 }), running({ succeeded: 2 }), indexedSpec()),
    expected: ['succeeded-never-decreases'],
  },
  {
    rule: 'succeeded-never-decreases',
    name: 'an elastic Indexed Job (completions == parallelism) scales down',
    transition: update(
      running({ succeeded: 3 }),
      running({ succeeded: 2 }),
      indexedSpec({ completions: 2, parallelism: 2 }),
    ),
    expected: [],
  },
  {
    rule: 'succeeded-never-decreases',
    name: 'parallelism defaults to 1, making an Indexed Job with completions 1 elastic',
    transition: update(
      running({ succeeded: 1 }),
      running({ succeeded: 0 }),
      indexedSpec({ completions: 1, parallelism: undefined }),
    ),
    expected: [],
  },

  // completion-time-immutable
  {
    rule: 'completion-time-immutable',
    name: 'moving completionTime',
    transition: update(complete(), complete({ completionTime: LATER })),
    expected: ['completion-time-immutable'],
  },
  {
    rule: 'completion-time-immutable',
    name: 'a time with milliseconds re-sent unchanged (etcd stored whole seconds)',
    transition: update(
      complete({ completionTime: '2025-03-01T10:05:00.250Z' }),
      complete({ completionTime: '2025-03-01T10:05:00.250Z' }),
    ),
    expected: ['completion-time-immutable'],
  },
  {
    rule: 'completion-time-immutable',
    name: 'the same instant in UTC and with an offset',
    transition: update(complete(), complete({ completionTime: '2025-03-01T12:05:00+02:00' })),
    expected: [],
  },

  // start-time-immutable-unless-suspended
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'moving startTime of a running Job',
    transition: update(running(), running({ startTime: LATER })),
    expected: ['start-time-immutable-unless-suspended'],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'removing startTime of a running Job',
    transition: update(running(), running({ startTime: undefined })),
    expected: ['start-time-immutable-unless-suspended'],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'a time with milliseconds re-sent unchanged (etcd stored whole seconds)',
    transition: update(
      running({ startTime: '2025-03-01T10:00:00.400Z' }),
      running({ startTime: '2025-03-01T10:00:00.400Z' }),
    ),
    expected: ['start-time-immutable-unless-suspended'],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'dropping Suspended=True is not a resume',
    transition: update(running({ conditions: conditions('Suspended') }), running({ startTime: LATER })),
    expected: ['start-time-immutable-unless-suspended'],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'resetting startTime in the update that turns Suspended from True to False',
    transition: update(
      running({ active: 0, ready: 0, conditions: conditions('Suspended') }),
      running({ startTime: LATER, conditions: [condition('Suspended', 'False')] }),
    ),
    expected: [],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'clearing startTime while spec.suspend is true',
    transition: update(
      running(),
      running({ startTime: undefined, active: 0, ready: 0 }),
      jobSpec({ suspend: true }),
    ),
    expected: [],
  },
  {
    rule: 'start-time-immutable-unless-suspended',
    name: 'setting startTime for the first time',
    transition: update({}, running()),
    expected: [],
  },

  // success-criteria-met-stays-true
  {
    rule: 'success-criteria-met-stays-true',
    name: 'removing SuccessCriteriaMet',
    transition: update(succeeding(), succeeding({ conditions: [] })),
    expected: ['success-criteria-met-stays-true'],
  },
  {
    rule: 'success-criteria-met-stays-true',
    name: 'keeping SuccessCriteriaMet',
    transition: update(succeeding(), succeeding({ succeeded: 2 })),
    expected: [],
  },

  // success-criteria-met-not-after-complete
  {
    rule: 'success-criteria-met-not-after-complete',
    name: 'adding SuccessCriteriaMet to a stored Complete-only status',
    transition: update(legacyComplete(), complete()),
    expected: ['success-criteria-met-not-after-complete'],
  },
  {
    rule: 'success-criteria-met-not-after-complete',
    name: 'adding SuccessCriteriaMet before Complete',
    transition: update(running({ active: 0, ready: 0 }), succeeding()),
    expected: [],
  },
];

describe('validateJobStatusTransition', () => {
  it.each(ruleCases)('$rule: $name', ({ transition, expected }) => {
    expect(ruleIdsOf(transition)).toEqual(expected);
  });

  it('has a rejected and an accepted case for every rule', () => {
    for (const rule of jobStatusRuleIds) {
      const casesForRule = ruleCases.filter((ruleCase) => ruleCase.rule === rule);
      expect(
        casesForRule.some((ruleCase) => ruleCase.expected.includes(rule)),
        `${rule} has no rejected case`,
      ).toBe(true);
      expect(
        casesForRule.some((ruleCase) => ruleCase.expected.length === 0),
        `${rule} has no accepted case`,
      ).toBe(true);
    }
  });

  it('accepts an empty status becoming another empty status', () => {
    expect(validateJobStatusTransition(update({}, {}))).toEqual([]);
  });

  it('names the field and the values in its messages', () => {
    const [violation] = validateJobStatusTransition(update(running({ failed: 3 }), running({ failed: 1 })));
    expect(violation).toEqual({
      rule: 'failed-never-decreases',
      field: 'status.failed',
      message: expect.stringMatching(/from 3 to 1.*at least 3/),
    });
  });

  it('shows a stored time at the whole-second precision the API server compares against', () => {
    const [violation] = validateJobStatusTransition(
      update(
        running({ startTime: '2025-03-01T10:00:00.400Z' }),
        running({ startTime: '2025-03-01T10:00:00.400Z' }),
      ),
    );
    expect(violation?.message).toContain('stored as 2025-03-01T10:00:00Z');
    expect(violation?.message).toContain('sends 2025-03-01T10:00:00.4Z');
  });

  it('quotes the Go parser error for a malformed index list', () => {
    const [violation] = validateJobStatusTransition(
      update(running(), running({ completedIndexes: '0,3,2' }), indexedSpec()),
    );
    expect(violation).toMatchObject({ field: 'status.completedIndexes' });
    expect(violation?.message).toContain('non-increasing order, previous: 3, current: 2');
  });

  it('reports the lowest overlapping index, as Go does', () => {
    const [violation] = validateJobStatusTransition(
      update(running(), running({ completedIndexes: '1-3', failedIndexes: '0,2-3' }), perIndexSpec),
    );
    expect(violation?.message).toContain('overlap at index: 2');
  });

  it('skips unparsable intervals when looking for overlaps and reports them as format errors', () => {
    expect(
      ruleIdsOf(update(running(), running({ completedIndexes: 'x,1', failedIndexes: '1' }), perIndexSpec)),
    ).toEqual(['completed-indexes-format', 'failed-indexes-not-overlapping-completed']);
  });

  it('reports shape problems of the stored status under oldStatus', () => {
    expect(validateJobStatusTransition(update({ failed: 'x' as unknown as number }, running()))).toEqual([
      {
        rule: 'status-shape',
        field: 'oldStatus.failed',
        message: expect.stringContaining('oldStatus.failed'),
      },
    ]);
  });

  it('treats a missing status as empty', () => {
    const missing = undefined as unknown as JobStatus;
    expect(validateJobStatusTransition(update(missing, missing))).toEqual([]);
  });
});

describe('parseJobStatus', () => {
  it('accepts a full status with RFC 3339 times, fractions included', () => {
    const result = parseJobStatus({
      ...complete(),
      startTime: '2025-03-01T10:00:00.123456789Z',
      completedIndexes: '0',
      failedIndexes: '',
      uncountedTerminatedPods: { succeeded: [], failed: [] },
    });
    expect(result.ok).toBe(true);
  });

  it('treats null and undefined as the empty status', () => {
    expect(parseJobStatus(null)).toEqual({ ok: true, status: {} });
    expect(parseJobStatus(undefined)).toEqual({ ok: true, status: {} });
  });

  it.each([
    [{ failed: -1 }, 'status.failed: must be a non-negative integer, got -1'],
    [{ ready: 2.5 }, 'status.ready: must be a non-negative integer, got 2.5'],
    [{ active: 2 ** 31 }, 'status.active: must be a non-negative integer, got 2147483648'],
    [
      { conditions: [{ type: 'Complete', status: 'Yes' }] },
      "status.conditions[0].status: must be 'True', 'False' or 'Unknown', got \"Yes\"",
    ],
    [
      { conditions: [{ status: 'True' }] },
      'status.conditions[0].type: must be a condition type such as Complete or Failed, got nothing',
    ],
    [
      { startTime: '2025-02-30T00:00:00Z' },
      'status.startTime: must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z, got "2025-02-30T00:00:00Z"',
    ],
    [
      { completionTime: 1764756000 },
      'status.completionTime: must be an RFC 3339 date-time such as 2025-01-31T12:00:00Z, got 1764756000',
    ],
    [
      { uncountedTerminatedPods: { succeeded: 'uid-a' } },
      'status.uncountedTerminatedPods.succeeded: must be a list of pod UIDs, got "uid-a"',
    ],
    [{ completedIndexes: 3 }, 'status.completedIndexes: must be an index list string such as "0,2-4", got 3'],
    [5, 'status: must be a JobStatus object, got 5'],
  ])('rejects %j with an actionable message', (value, message) => {
    expect(parseJobStatus(value)).toEqual({ ok: false, problems: [message] });
  });

  it.each([
    '2025-03-01t10:00:00Z',
    '2025-03-01T10:00:00z',
    '2025-03-01 10:00:00Z',
    '2025-03-01T24:00:00Z',
    '2025-03-01T10:00:60Z',
    '2025-03-01T10:00:00+0100',
    '2025-03-01T10:00:00+25:00',
    '2025-03-01T10:00:00',
    '2025-02-29T10:00:00Z',
  ])('rejects the time %s, which Go cannot parse as RFC 3339', (startTime) => {
    expect(parseJobStatus({ startTime }).ok).toBe(false);
  });

  it.each([
    '2025-03-01T10:00:00Z',
    '2025-03-01T10:00:00.5Z',
    '2025-03-01T10:00:00,5Z',
    '2024-02-29T10:00:00-07:30',
    '2025-03-01T9:00:00Z',
    '2025-03-01T10:00:00+24:00',
  ])('accepts the time %s, as Go does', (startTime) => {
    expect(parseJobStatus({ startTime }).ok).toBe(true);
  });
});
