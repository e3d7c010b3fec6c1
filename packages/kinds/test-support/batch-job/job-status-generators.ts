// Builders and fast-check generators of Job statuses and /status transitions, shared by the
// status-rule properties (job-status-rules.property.test.ts), the mirror-translation properties
// (translate-mirror-status.test.ts) and the e2e agreement test against a real kube-apiserver
// (e2e/test/status-agreement.test.ts). At its heart is a model of the moves the built-in Job
// controller makes, one status update at a time: every status it produces is one the API server
// accepts as an update of the one before.
//
// Each test composes its own weighted mix of moves and its own journeys from these pieces; the
// pieces consume randomness exactly as the tests' former private copies did, so seeds replay.
import { rfc3339Seconds } from '@jobrelay/kube/plain-json';
import fc from 'fast-check';
import type { JobCondition, JobSpec, JobStatus } from '../../src/batch-job/job-object.ts';

// --- Times ---

const EPOCH_SECONDS = Date.parse('2025-03-01T10:00:00Z') / 1000;

/**
 * `seconds` whole seconds after 2025-03-01T10:00:00Z. Whole seconds, as the API server stores
 * times: a controller re-sends what it read, and a time with milliseconds would differ from it.
 */
export function secondsAfterEpoch(seconds: number): string {
  return rfc3339Seconds((EPOCH_SECONDS + seconds) * 1000);
}

/** `time` (the epoch when undefined) moved by `seconds`, which may be negative. */
export function shiftedBy(time: string | undefined, seconds: number): string {
  return rfc3339Seconds(Date.parse(time ?? secondsAfterEpoch(0)) + seconds * 1000);
}

// --- Conditions ---

/** Whether `conditions` hold a condition of `type` whose status is True. */
export function hasTrueCondition(conditions: readonly JobCondition[] | undefined, type: string): boolean {
  return (conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');
}

/** Whether `conditions` say the Job has finished: Complete or Failed is True. */
export function isFinished(conditions: readonly JobCondition[] | undefined): boolean {
  return hasTrueCondition(conditions, 'Complete') || hasTrueCondition(conditions, 'Failed');
}

/**
 * Whether going from `oldStatus` to `newStatus` resumes the Job: Suspended was True and is now
 * False (the one update that may move startTime of a started Job).
 */
export function isResume(oldStatus: JobStatus, newStatus: JobStatus): boolean {
  return (
    hasTrueCondition(oldStatus.conditions, 'Suspended') &&
    (newStatus.conditions ?? []).some(
      (condition) => condition.type === 'Suspended' && condition.status === 'False',
    )
  );
}

/** The conditions of `status` without any of type `type`. */
export function withoutCondition(status: JobStatus, type: string): JobCondition[] {
  return (status.conditions ?? []).filter((condition) => condition.type !== type);
}

/**
 * The conditions of `status` with each of `types` set True for `reason` (replacing any of that
 * type, appended last), dated at its startTime or else the epoch: how an illegal edit adds them.
 */
export function withTrueConditions(
  status: JobStatus,
  types: readonly string[],
  reason: string,
): JobCondition[] {
  let conditions = status.conditions ?? [];
  for (const type of types) {
    conditions = [
      ...conditions.filter((condition) => condition.type !== type),
      { type, status: 'True', reason, lastTransitionTime: status.startTime ?? secondsAfterEpoch(0) },
    ];
  }
  return conditions;
}

// --- Specs ---

/**
 * A Job spec the way the API server stores one created with `overrides`: one NonIndexed
 * completion at a time, not suspended, unless `overrides` say otherwise.
 */
export function jobSpec(overrides: Partial<JobSpec> = {}): JobSpec {
  return {
    template: {},
    completions: 1,
    parallelism: 1,
    completionMode: 'NonIndexed',
    suspend: false,
    ...overrides,
  };
}

/** Bounds of the specs `jobSpecArbitrary` generates. */
export interface JobSpecBounds {
  maxCompletions: number;
  maxParallelism: number;
  /**
   * Whether some Indexed Jobs are elastic (parallelism == completions: the one kind of Job whose
   * succeeded count may go down, when it is scaled down).
   */
  elasticIndexed: boolean;
}

/**
 * Specs of running (not suspended) Jobs with at least one completion: NonIndexed, or Indexed and
 * maybe with backoffLimitPerIndex (so failedIndexes) and a successPolicy, each half the time.
 */
export function jobSpecArbitrary({
  maxCompletions,
  maxParallelism,
  elasticIndexed,
}: JobSpecBounds): fc.Arbitrary<JobSpec> {
  const completions = fc.integer({ min: 1, max: maxCompletions });
  const parallelism = fc.integer({ min: 1, max: maxParallelism });
  return fc.oneof(
    fc
      .record({ completions, parallelism })
      .map(({ completions, parallelism }) => jobSpec({ completions, parallelism })),
    fc
      .record({
        completions,
        parallelism,
        // A constant draws nothing, so without elastic Jobs the other fields draw as before.
        elastic: elasticIndexed ? fc.boolean() : fc.constant(false),
        perIndexBackoff: fc.boolean(),
        withSuccessPolicy: fc.boolean(),
      })
      .map(({ completions, parallelism, elastic, perIndexBackoff, withSuccessPolicy }) =>
        jobSpec({
          completionMode: 'Indexed',
          completions,
          parallelism: elastic ? completions : parallelism,
          ...(perIndexBackoff ? { backoffLimitPerIndex: 1 } : {}),
          ...(withSuccessPolicy ? { successPolicy: { rules: [{ succeededIndexes: '0' }] } } : {}),
        }),
      ),
  );
}

// --- A model of the built-in Job controller ---

/**
 * One thing the built-in Job controller may do in a status update. Where a move is not legal in
 * the Job's present state (completing an index of a NonIndexed Job, failing an unstarted one) the
 * model leaves the state unchanged: the update then re-sends the status as it is.
 */
export type ControllerMove =
  | {
      kind:
        | 'start'
        | 'suspend'
        | 'resume'
        | 'failure-target'
        | 'fail'
        | 'success-criteria-met'
        | 'complete'
        | 'resync';
    }
  | { kind: 'complete-index' | 'fail-index'; index: number }
  | ProgressMove;

/**
 * Pods come and go: the counts of active, ready and terminating pods change, and pods that just
 * ended are recorded as uncounted (the counts of earlier uncounted pods are added to succeeded and
 * failed in the same update).
 */
export interface ProgressMove {
  kind: 'progress';
  active: number;
  ready: number;
  terminating: number;
  podsSucceeded: number;
  podsFailed: number;
}

/** The fields of a Job spec the controller model reads. */
export type ModelledJobSpec = Pick<
  JobSpec,
  'completionMode' | 'completions' | 'parallelism' | 'suspend' | 'backoffLimitPerIndex'
>;

/** What the controller model knows of one Job between status updates. */
export interface ControllerState {
  /** Seconds after the epoch: the time of the update being made. */
  clock: number;
  startTime?: string;
  completionTime?: string;
  active: number;
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  completedIndexes: readonly number[];
  failedIndexes: readonly number[];
  /** Names of ended pods not yet added to succeeded or failed. */
  uncountedSucceeded: readonly string[];
  uncountedFailed: readonly string[];
  conditions: readonly JobCondition[];
  /** Names new pods get from here on, so that no pod is recorded twice. */
  nextPodNumber: number;
}

/** How the controller model writes its conditions. */
export interface ControllerModelOptions {
  /** Give each condition a message (its reason), as a real controller does; none otherwise. */
  conditionMessages?: boolean;
}

/** A Job the controller has not written any status for yet. */
export const initialControllerState: ControllerState = {
  clock: 0,
  active: 0,
  ready: 0,
  terminating: 0,
  succeeded: 0,
  failed: 0,
  completedIndexes: [],
  failedIndexes: [],
  uncountedSucceeded: [],
  uncountedFailed: [],
  conditions: [],
  nextPodNumber: 0,
};

/**
 * The conditions of `state` with `type` set to `status` for `reason` at the state's clock
 * (replacing any condition of that type, appended last), as the controller writes one.
 */
export function withControllerCondition(
  state: ControllerState,
  type: string,
  status: 'True' | 'False',
  reason: string,
  options: ControllerModelOptions = {},
): JobCondition[] {
  const others = state.conditions.filter((condition) => condition.type !== type);
  return [
    ...others,
    {
      type,
      status,
      reason,
      ...(options.conditionMessages ? { message: reason } : {}),
      lastTransitionTime: secondsAfterEpoch(state.clock),
    },
  ];
}

/**
 * A Job the controller suspended earlier (Suspended=True), after starting it or before: the state
 * a Job is in when its user has since unsuspended it and the controller has yet to resume it.
 */
export function previouslySuspendedState(
  startedBeforeSuspension: boolean,
  options: ControllerModelOptions = {},
): ControllerState {
  const state = initialControllerState;
  return {
    ...state,
    conditions: withControllerCondition(state, 'Suspended', 'True', 'JobSuspended', options),
    ...(startedBeforeSuspension ? { startTime: secondsAfterEpoch(0) } : {}),
  };
}

// The controller first records ended pods as uncounted, then counts them in a later update.
function countUncountedPods(state: ControllerState): ControllerState {
  return {
    ...state,
    succeeded: state.succeeded + state.uncountedSucceeded.length,
    failed: state.failed + state.uncountedFailed.length,
    uncountedSucceeded: [],
    uncountedFailed: [],
  };
}

function finishWithoutPods(state: ControllerState): ControllerState {
  return { ...countUncountedPods(state), active: 0, ready: 0, terminating: 0 };
}

/**
 * The state after the built-in Job controller makes `move` at `state.clock`, or `state` itself
 * where the move is not legal now. A finished Job never changes; a suspended one neither starts
 * nor progresses; startTime is set once when the Job starts, cleared on suspend and set anew on
 * resume; FailureTarget and SuccessCriteriaMet exclude each other and precede Failed and Complete,
 * which come with all pods gone (and Complete with a completionTime).
 */
export function applyControllerMove(
  state: ControllerState,
  move: ControllerMove,
  spec: ModelledJobSpec,
  options: ControllerModelOptions = {},
): ControllerState {
  const suspended = hasTrueCondition(state.conditions, 'Suspended');
  const started = state.startTime !== undefined && !suspended;
  const isFreeIndex = (index: number) =>
    index < (spec.completions ?? 0) &&
    !state.completedIndexes.includes(index) &&
    !state.failedIndexes.includes(index);
  const failing = hasTrueCondition(state.conditions, 'FailureTarget');
  const succeeding = hasTrueCondition(state.conditions, 'SuccessCriteriaMet');
  const condition = (type: string, status: 'True' | 'False', reason: string) =>
    withControllerCondition(state, type, status, reason, options);
  if (isFinished(state.conditions)) return state;
  switch (move.kind) {
    case 'start':
      return !spec.suspend && !suspended && state.startTime === undefined
        ? { ...state, startTime: secondsAfterEpoch(state.clock) }
        : state;
    case 'suspend':
      // MutableSchedulingDirectivesForSuspendedJobs (GA): suspending clears startTime.
      return spec.suspend && !suspended
        ? {
            ...countUncountedPods(state),
            conditions: condition('Suspended', 'True', 'JobSuspended'),
            startTime: undefined,
            active: 0,
            ready: 0,
            terminating: state.active,
          }
        : state;
    case 'resume':
      // On resume the controller writes Suspended=False and restarts the startTime clock.
      return !spec.suspend && suspended
        ? {
            ...state,
            conditions: condition('Suspended', 'False', 'JobResumed'),
            startTime: secondsAfterEpoch(state.clock),
          }
        : state;
    case 'progress': {
      if (!started) return state;
      const active = Math.min(move.active, spec.parallelism ?? 1);
      const newPods = (count: number, offset: number) =>
        Array.from({ length: count }, (_, index) => `pod-${state.nextPodNumber + offset + index}`);
      return {
        ...countUncountedPods(state),
        active,
        ready: Math.min(move.ready, active),
        terminating: move.terminating,
        uncountedSucceeded: newPods(move.podsSucceeded, 0),
        uncountedFailed: newPods(move.podsFailed, move.podsSucceeded),
        nextPodNumber: state.nextPodNumber + move.podsSucceeded + move.podsFailed,
      };
    }
    case 'complete-index':
      return started && spec.completionMode === 'Indexed' && isFreeIndex(move.index)
        ? {
            ...state,
            succeeded: state.succeeded + 1,
            completedIndexes: [...state.completedIndexes, move.index],
          }
        : state;
    case 'fail-index':
      return started && spec.backoffLimitPerIndex != null && isFreeIndex(move.index)
        ? { ...state, failed: state.failed + 1, failedIndexes: [...state.failedIndexes, move.index] }
        : state;
    case 'failure-target':
      return started && !failing && !succeeding
        ? { ...state, conditions: condition('FailureTarget', 'True', 'BackoffLimitExceeded') }
        : state;
    case 'fail':
      return failing
        ? { ...finishWithoutPods(state), conditions: condition('Failed', 'True', 'BackoffLimitExceeded') }
        : state;
    case 'success-criteria-met':
      return started && !failing && !succeeding
        ? { ...state, conditions: condition('SuccessCriteriaMet', 'True', 'CompletionsReached') }
        : state;
    case 'complete':
      return succeeding
        ? {
            ...finishWithoutPods(state),
            conditions: condition('Complete', 'True', 'CompletionsReached'),
            completionTime: secondsAfterEpoch(state.clock),
          }
        : state;
    case 'resync':
      return state;
  }
}

// The interval form of an index list ("0-2,4"), written independently of the code under test.
function formatIndexes(indexes: readonly number[]): string {
  const sorted = [...indexes].sort((left, right) => left - right);
  const intervals: string[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1] === (sorted[end] ?? 0) + 1) end++;
    intervals.push(start === end ? `${sorted[start]}` : `${sorted[start]}-${sorted[end]}`);
    start = end + 1;
  }
  return intervals.join(',');
}

/**
 * The Job status the controller writes for `state`: every counter, the conditions, the uncounted
 * pods, completedIndexes for an Indexed Job and failedIndexes with backoffLimitPerIndex.
 */
export function controllerJobStatus(state: ControllerState, spec: ModelledJobSpec): JobStatus {
  return {
    active: state.active,
    ready: state.ready,
    terminating: state.terminating,
    succeeded: state.succeeded,
    failed: state.failed,
    ...(state.startTime ? { startTime: state.startTime } : {}),
    ...(state.completionTime ? { completionTime: state.completionTime } : {}),
    conditions: [...state.conditions],
    uncountedTerminatedPods: { succeeded: [...state.uncountedSucceeded], failed: [...state.uncountedFailed] },
    ...(spec.completionMode === 'Indexed' ? { completedIndexes: formatIndexes(state.completedIndexes) } : {}),
    ...(spec.backoffLimitPerIndex != null ? { failedIndexes: formatIndexes(state.failedIndexes) } : {}),
  };
}

// --- Generated moves and journeys ---

/** How a generated journey of moves ends: as it happens to, or driven to success or failure. */
export type JourneyEnding = 'none' | 'succeed' | 'fail';

/** Each ending of a journey, equally likely. */
export const journeyEndingArbitrary: fc.Arbitrary<JourneyEnding> = fc.constantFrom('none', 'succeed', 'fail');

/**
 * The moves that drive a Job to each ending (resuming and starting it first, where it needs
 * that): random moves alone seldom finish a Job.
 */
export const ENDING_MOVES: Record<JourneyEnding, readonly ControllerMove[]> = {
  none: [],
  succeed: [{ kind: 'resume' }, { kind: 'start' }, { kind: 'success-criteria-met' }, { kind: 'complete' }],
  fail: [{ kind: 'resume' }, { kind: 'start' }, { kind: 'failure-target' }, { kind: 'fail' }],
};

/** Progress moves with up to `maxActive` active pods, 4 ready, 2 terminating and 2 ended each way. */
export function progressMoveArbitrary(maxActive: number): fc.Arbitrary<ProgressMove> {
  return fc.record({
    kind: fc.constant('progress' as const),
    active: fc.nat(maxActive),
    ready: fc.nat(4),
    terminating: fc.nat(2),
    podsSucceeded: fc.nat(2),
    podsFailed: fc.nat(2),
  });
}

/** Completing or failing one of the indexes 0 to 4 (each as likely). */
export const indexMoveArbitrary: fc.Arbitrary<ControllerMove> = fc.record({
  kind: fc.constantFrom('complete-index' as const, 'fail-index' as const),
  index: fc.nat(4),
});

/** A step towards an outcome: FailureTarget, Failed, SuccessCriteriaMet or Complete (each as likely). */
export const outcomeMoveArbitrary: fc.Arbitrary<ControllerMove> = fc.constantFrom(
  { kind: 'failure-target' as const },
  { kind: 'fail' as const },
  { kind: 'success-criteria-met' as const },
  { kind: 'complete' as const },
);
