import type { V1JobCondition, V1JobSpec, V1JobStatus } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type JobStatusRuleId,
  type JobStatusTransition,
  validateJobStatusTransition,
} from '../src/job-status-rules.ts';

// A model of the moves the built-in Job controller makes, one status update at a time. Every
// update it produces must pass; one illegal edit to any of them must not.

const EPOCH_SECONDS = Date.parse('2025-03-01T10:00:00Z') / 1000;

// Whole seconds, as the API server stores them: the controller re-sends what it read.
function secondsAfterEpoch(seconds: number): Date {
  return new Date((EPOCH_SECONDS + seconds) * 1000);
}

function jobSpec(overrides: Partial<V1JobSpec> = {}): V1JobSpec {
  return {
    template: {},
    completions: 1,
    parallelism: 1,
    completionMode: 'NonIndexed',
    suspend: false,
    ...overrides,
  };
}

const specArbitrary: fc.Arbitrary<V1JobSpec> = fc.oneof(
  fc
    .record({ completions: fc.integer({ min: 1, max: 6 }), parallelism: fc.integer({ min: 1, max: 4 }) })
    .map(({ completions, parallelism }) => jobSpec({ completions, parallelism })),
  fc
    .record({
      completions: fc.integer({ min: 1, max: 6 }),
      parallelism: fc.integer({ min: 1, max: 4 }),
      elastic: fc.boolean(),
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

type ControllerMove =
  | { kind: 'start' }
  | { kind: 'resume' }
  | {
      kind: 'progress';
      active: number;
      ready: number;
      terminating: number;
      podsSucceeded: number;
      podsFailed: number;
    }
  | { kind: 'complete-index'; index: number }
  | { kind: 'fail-index'; index: number }
  | { kind: 'failure-target' }
  | { kind: 'fail' }
  | { kind: 'success-criteria-met' }
  | { kind: 'complete' }
  | { kind: 'resync' };

const moveArbitrary: fc.Arbitrary<ControllerMove> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'start' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'resume' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('progress' as const),
      active: fc.nat(4),
      ready: fc.nat(4),
      terminating: fc.nat(2),
      podsSucceeded: fc.nat(2),
      podsFailed: fc.nat(2),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('complete-index' as const), index: fc.nat(6) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('fail-index' as const), index: fc.nat(6) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'failure-target' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'fail' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'success-criteria-met' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'complete' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'resync' as const }), weight: 1 },
);

interface ControllerState {
  clock: number;
  startTime?: Date;
  completionTime?: Date;
  active: number;
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  completedIndexes: readonly number[];
  failedIndexes: readonly number[];
  uncountedSucceeded: readonly string[];
  uncountedFailed: readonly string[];
  conditions: readonly V1JobCondition[];
  nextPodNumber: number;
}

const hasTrue = (state: ControllerState, type: string): boolean =>
  state.conditions.some((condition) => condition.type === type && condition.status === 'True');

function withCondition(state: ControllerState, type: string, status: 'True' | 'False', reason: string) {
  const others = state.conditions.filter((condition) => condition.type !== type);
  return [...others, { type, status, reason, lastTransitionTime: secondsAfterEpoch(state.clock) }];
}

// The controller first records terminated pods as uncounted, then counts them in a later update.
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

function applyMove(state: ControllerState, move: ControllerMove, spec: V1JobSpec): ControllerState {
  const suspended = hasTrue(state, 'Suspended');
  const started = state.startTime !== undefined && !suspended;
  const finished = hasTrue(state, 'Complete') || hasTrue(state, 'Failed');
  const completions = spec.completions ?? 1;
  const indexed = spec.completionMode === 'Indexed';
  if (finished) return state;
  switch (move.kind) {
    case 'start':
      return state.startTime === undefined && !suspended
        ? { ...state, startTime: secondsAfterEpoch(state.clock) }
        : state;
    case 'resume':
      // On resume the controller writes Suspended=False and restarts the startTime clock.
      return suspended
        ? {
            ...state,
            conditions: withCondition(state, 'Suspended', 'False', 'JobResumed'),
            startTime: secondsAfterEpoch(state.clock),
          }
        : state;
    case 'progress': {
      if (!started) return state;
      const active = Math.min(move.active, spec.parallelism ?? 1);
      const counted = countUncountedPods(state);
      const newPods = (count: number, offset: number) =>
        Array.from({ length: count }, (_, index) => `pod-${state.nextPodNumber + offset + index}`);
      return {
        ...counted,
        active,
        ready: Math.min(move.ready, active),
        terminating: move.terminating,
        uncountedSucceeded: newPods(move.podsSucceeded, 0),
        uncountedFailed: newPods(move.podsFailed, move.podsSucceeded),
        nextPodNumber: state.nextPodNumber + move.podsSucceeded + move.podsFailed,
      };
    }
    case 'complete-index': {
      const free = !state.completedIndexes.includes(move.index) && !state.failedIndexes.includes(move.index);
      if (!started || !indexed || move.index >= completions || !free) return state;
      return {
        ...state,
        succeeded: state.succeeded + 1,
        completedIndexes: [...state.completedIndexes, move.index],
      };
    }
    case 'fail-index': {
      const free = !state.completedIndexes.includes(move.index) && !state.failedIndexes.includes(move.index);
      if (!started || spec.backoffLimitPerIndex == null || move.index >= completions || !free) return state;
      return { ...state, failed: state.failed + 1, failedIndexes: [...state.failedIndexes, move.index] };
    }
    case 'failure-target':
      return started && !hasTrue(state, 'FailureTarget') && !hasTrue(state, 'SuccessCriteriaMet')
        ? { ...state, conditions: withCondition(state, 'FailureTarget', 'True', 'BackoffLimitExceeded') }
        : state;
    case 'fail':
      return hasTrue(state, 'FailureTarget')
        ? {
            ...finishWithoutPods(state),
            conditions: withCondition(state, 'Failed', 'True', 'BackoffLimitExceeded'),
          }
        : state;
    case 'success-criteria-met':
      return started && !hasTrue(state, 'FailureTarget') && !hasTrue(state, 'SuccessCriteriaMet')
        ? { ...state, conditions: withCondition(state, 'SuccessCriteriaMet', 'True', 'CompletionsReached') }
        : state;
    case 'complete':
      return hasTrue(state, 'SuccessCriteriaMet')
        ? {
            ...finishWithoutPods(state),
            conditions: withCondition(state, 'Complete', 'True', 'CompletionsReached'),
            completionTime: secondsAfterEpoch(state.clock),
          }
        : state;
    case 'resync':
      return state;
  }
}

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

function toJobStatus(state: ControllerState, spec: V1JobSpec): V1JobStatus {
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

const ENDING_MOVES: Record<'none' | 'succeed' | 'fail', ControllerMove[]> = {
  none: [],
  succeed: [{ kind: 'resume' }, { kind: 'start' }, { kind: 'success-criteria-met' }, { kind: 'complete' }],
  fail: [{ kind: 'resume' }, { kind: 'start' }, { kind: 'failure-target' }, { kind: 'fail' }],
};

interface ControllerJourney {
  spec: V1JobSpec;
  transitions: JobStatusTransition[];
}

const journeyArbitrary: fc.Arbitrary<ControllerJourney> = fc
  .record({
    spec: specArbitrary,
    // A Job suspended earlier and since unsuspended by its user, waiting for the controller.
    initiallySuspended: fc.boolean(),
    startedBeforeSuspension: fc.boolean(),
    moves: fc.array(fc.tuple(moveArbitrary, fc.nat(90)), { minLength: 1, maxLength: 30 }),
    // Random moves alone rarely finish a Job; most journeys end by driving it to an outcome.
    ending: fc.constantFrom('none', 'succeed', 'fail'),
    afterEnding: fc.array(fc.tuple(moveArbitrary, fc.nat(90)), { maxLength: 3 }),
  })
  .map(({ spec, initiallySuspended, startedBeforeSuspension, moves, ending, afterEnding }) => {
    let state: ControllerState = {
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
    if (initiallySuspended) {
      state = {
        ...state,
        conditions: withCondition(state, 'Suspended', 'True', 'JobSuspended'),
        ...(startedBeforeSuspension ? { startTime: secondsAfterEpoch(0) } : {}),
      };
    }
    const transitions: JobStatusTransition[] = [];
    const endingMoves = ENDING_MOVES[ending];
    const timedEndingMoves = endingMoves.map((move, index): [ControllerMove, number] => [move, index * 7]);
    for (const [move, elapsedSeconds] of [...moves, ...timedEndingMoves, ...afterEnding]) {
      const before = { ...state, clock: state.clock + elapsedSeconds };
      const after = applyMove(before, move, spec);
      transitions.push({ spec, oldStatus: toJobStatus(state, spec), newStatus: toJobStatus(after, spec) });
      state = after;
    }
    return { spec, transitions };
  });

const ruleIdsOf = (transition: JobStatusTransition): JobStatusRuleId[] =>
  validateJobStatusTransition(transition).map((violation) => violation.rule);

const conditionIsTrue = (status: V1JobStatus, type: string): boolean =>
  (status.conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');

const withoutCondition = (status: V1JobStatus, type: string): V1JobCondition[] =>
  (status.conditions ?? []).filter((condition) => condition.type !== type);

const withTrueCondition = (status: V1JobStatus, type: string): V1JobCondition[] => [
  ...withoutCondition(status, type),
  { type, status: 'True', reason: 'Illegal', lastTransitionTime: status.startTime ?? secondsAfterEpoch(0) },
];

function shiftedBy(date: Date | undefined, seconds: number): Date {
  return new Date((date ?? secondsAfterEpoch(0)).getTime() + seconds * 1000);
}

interface IllegalEdit {
  name: string;
  rule: JobStatusRuleId;
  /** The edited new status, or undefined when the edit makes no sense for this transition. */
  edit(transition: JobStatusTransition, amount: number): V1JobStatus | undefined;
}

const illegalEdits: IllegalEdit[] = [
  {
    name: 'decrease failed',
    rule: 'failed-never-decreases',
    edit: ({ oldStatus, newStatus }, amount) => {
      const stored = oldStatus.failed ?? 0;
      return stored > 0 ? { ...newStatus, failed: stored - 1 - (amount % stored) } : undefined;
    },
  },
  {
    name: 'decrease succeeded of a Job that cannot scale down',
    rule: 'succeeded-never-decreases',
    edit: ({ spec, oldStatus, newStatus }, amount) => {
      const stored = oldStatus.succeeded ?? 0;
      const elastic = spec.completionMode === 'Indexed' && spec.completions === spec.parallelism;
      return stored > 0 && !elastic ? { ...newStatus, succeeded: stored - 1 - (amount % stored) } : undefined;
    },
  },
  {
    name: 'remove completionTime of a Complete Job',
    rule: 'complete-requires-completion-time',
    edit: ({ newStatus }) =>
      conditionIsTrue(newStatus, 'Complete') ? { ...newStatus, completionTime: undefined } : undefined,
  },
  {
    name: 'move completionTime once set',
    rule: 'completion-time-immutable',
    edit: ({ oldStatus, newStatus }, amount) =>
      oldStatus.completionTime
        ? { ...newStatus, completionTime: shiftedBy(oldStatus.completionTime, amount) }
        : undefined,
  },
  {
    name: 'set completionTime without Complete',
    rule: 'completion-time-requires-complete',
    edit: ({ newStatus }, amount) =>
      conditionIsTrue(newStatus, 'Complete')
        ? undefined
        : { ...newStatus, completionTime: shiftedBy(newStatus.startTime, amount) },
  },
  {
    name: 'move startTime of an unsuspended Job outside a resume',
    rule: 'start-time-immutable-unless-suspended',
    edit: ({ oldStatus, newStatus }, amount) => {
      const resuming =
        conditionIsTrue(oldStatus, 'Suspended') &&
        (newStatus.conditions ?? []).some(
          (condition) => condition.type === 'Suspended' && condition.status === 'False',
        );
      return oldStatus.startTime && !resuming
        ? { ...newStatus, startTime: shiftedBy(oldStatus.startTime, amount % 2 === 0 ? amount : -amount) }
        : undefined;
    },
  },
  {
    name: 'remove startTime of an unsuspended Job',
    rule: 'start-time-immutable-unless-suspended',
    edit: ({ oldStatus, newStatus }) =>
      oldStatus.startTime && !conditionIsTrue(oldStatus, 'Suspended')
        ? { ...newStatus, startTime: undefined }
        : undefined,
  },
  {
    name: 'add Failed without FailureTarget',
    rule: 'failed-requires-failure-target',
    edit: ({ newStatus }) =>
      conditionIsTrue(newStatus, 'FailureTarget') || conditionIsTrue(newStatus, 'Failed')
        ? undefined
        : { ...newStatus, conditions: withTrueCondition(newStatus, 'Failed') },
  },
  {
    name: 'add Complete without SuccessCriteriaMet',
    rule: 'complete-requires-success-criteria-met',
    edit: ({ newStatus }) =>
      conditionIsTrue(newStatus, 'SuccessCriteriaMet') || conditionIsTrue(newStatus, 'Complete')
        ? undefined
        : { ...newStatus, conditions: withTrueCondition(newStatus, 'Complete') },
  },
  {
    name: 'report more ready than active pods',
    rule: 'ready-not-above-active',
    edit: ({ newStatus }, amount) => ({ ...newStatus, ready: (newStatus.active ?? 0) + 1 + (amount % 5) }),
  },
  {
    name: 'report a negative counter',
    rule: 'counters-non-negative',
    edit: ({ newStatus }, amount) => {
      const counter =
        (['active', 'succeeded', 'failed', 'ready', 'terminating'] as const)[amount % 5] ?? 'active';
      return { ...newStatus, [counter]: -1 - (amount % 3) };
    },
  },
  {
    name: 'keep active pods on a finished Job',
    rule: 'finished-requires-no-active',
    edit: ({ newStatus }, amount) =>
      conditionIsTrue(newStatus, 'Complete') || conditionIsTrue(newStatus, 'Failed')
        ? { ...newStatus, active: 1 + (amount % 3) }
        : undefined,
  },
  {
    name: 'drop a terminal condition',
    rule: 'terminal-condition-stays-true',
    edit: ({ oldStatus, newStatus }) => {
      const terminal = ['Complete', 'Failed', 'FailureTarget'].find((type) =>
        conditionIsTrue(oldStatus, type),
      );
      return terminal ? { ...newStatus, conditions: withoutCondition(newStatus, terminal) } : undefined;
    },
  },
  {
    name: 'drop SuccessCriteriaMet',
    rule: 'success-criteria-met-stays-true',
    edit: ({ oldStatus, newStatus }) =>
      conditionIsTrue(oldStatus, 'SuccessCriteriaMet')
        ? { ...newStatus, conditions: withoutCondition(newStatus, 'SuccessCriteriaMet') }
        : undefined,
  },
  {
    name: 'add FailureTarget next to SuccessCriteriaMet',
    rule: 'success-criteria-met-excludes-failure-target',
    edit: ({ newStatus }) =>
      conditionIsTrue(newStatus, 'SuccessCriteriaMet')
        ? { ...newStatus, conditions: withTrueCondition(newStatus, 'FailureTarget') }
        : undefined,
  },
  {
    name: 'list one pod twice as uncounted',
    rule: 'uncounted-pod-uids-valid',
    edit: ({ newStatus }) => ({
      ...newStatus,
      uncountedTerminatedPods: {
        succeeded: [...(newStatus.uncountedTerminatedPods?.succeeded ?? []), 'pod-twice'],
        failed: [...(newStatus.uncountedTerminatedPods?.failed ?? []), 'pod-twice'],
      },
    }),
  },
  {
    name: 'report completedIndexes for a NonIndexed Job',
    rule: 'completed-indexes-require-indexed',
    edit: ({ spec, newStatus }) =>
      spec.completionMode === 'Indexed' ? undefined : { ...newStatus, completedIndexes: '0' },
  },
  {
    name: 'report a completed index at or beyond completions',
    rule: 'completed-indexes-format',
    edit: ({ spec, newStatus }, amount) => {
      if (spec.completionMode !== 'Indexed') return undefined;
      const beyond = (spec.completions ?? 1) + (amount % 3);
      return {
        ...newStatus,
        completedIndexes: newStatus.completedIndexes
          ? `${newStatus.completedIndexes},${beyond}`
          : `${beyond}`,
      };
    },
  },
  {
    name: 'report failedIndexes without backoffLimitPerIndex',
    rule: 'failed-indexes-require-backoff-limit-per-index',
    edit: ({ spec, newStatus }) =>
      spec.backoffLimitPerIndex == null ? { ...newStatus, failedIndexes: '' } : undefined,
  },
];

function timesAsStrings(status: V1JobStatus): V1JobStatus {
  const asString = (date: Date | undefined) =>
    date === undefined ? undefined : (date.toISOString().replace('.000Z', 'Z') as unknown as Date);
  return {
    ...status,
    startTime: asString(status.startTime),
    completionTime: asString(status.completionTime),
    conditions: status.conditions?.map((condition) => ({
      ...condition,
      lastTransitionTime: asString(condition.lastTransitionTime),
    })),
  };
}

describe('validateJobStatusTransition against a model of the built-in Job controller', () => {
  it('accepts every update the controller makes', () => {
    fc.assert(
      fc.property(journeyArbitrary, ({ transitions }) => {
        for (const transition of transitions) {
          expect(validateJobStatusTransition(transition)).toEqual([]);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reaches the interesting states, so the property above is not vacuous', () => {
    const reached = new Set<string>();
    for (const { transitions } of fc.sample(journeyArbitrary, { numRuns: 400, seed: 42 })) {
      for (const { oldStatus, newStatus } of transitions) {
        for (const type of ['Complete', 'Failed']) {
          if (conditionIsTrue(newStatus, type)) reached.add(type);
        }
        if (
          newStatus.conditions?.some(
            (condition) => condition.type === 'Suspended' && condition.status === 'False',
          )
        ) {
          reached.add('resumed');
        }
        if (newStatus.completedIndexes?.includes('-')) reached.add('index range');
        if (newStatus.failedIndexes) reached.add('failed index');
        if ((newStatus.uncountedTerminatedPods?.failed ?? []).length > 0) reached.add('uncounted failed pod');
        if (oldStatus.startTime && newStatus.startTime && oldStatus.startTime < newStatus.startTime) {
          reached.add('startTime reset');
        }
      }
    }
    expect([...reached].sort()).toEqual([
      'Complete',
      'Failed',
      'failed index',
      'index range',
      'resumed',
      'startTime reset',
      'uncounted failed pod',
    ]);
  });

  describe.each(illegalEdits)('rejects one illegal edit: $name', ({ rule, edit }) => {
    it(`with rule ${rule}`, () => {
      let edited = 0;
      fc.assert(
        fc.property(journeyArbitrary, fc.nat(10_000), ({ transitions }, amount) => {
          for (const transition of transitions) {
            const newStatus = edit(transition, amount + 1);
            if (newStatus === undefined) continue;
            edited++;
            expect(ruleIdsOf({ ...transition, newStatus })).toContain(rule);
          }
        }),
        { numRuns: 200 },
      );
      expect(edited, 'the edit never applied to a generated transition').toBeGreaterThan(20);
    });
  });

  it('gives the same verdict for times sent as RFC 3339 strings as for Dates', () => {
    fc.assert(
      fc.property(
        journeyArbitrary,
        fc.nat(illegalEdits.length),
        fc.nat(10_000),
        ({ transitions }, editNumber, amount) => {
          const illegalEdit = illegalEdits[editNumber];
          for (const transition of transitions) {
            const newStatus = illegalEdit?.edit(transition, amount + 1) ?? transition.newStatus;
            const asDates = { ...transition, newStatus };
            const asStrings = {
              ...transition,
              oldStatus: timesAsStrings(transition.oldStatus),
              newStatus: timesAsStrings(newStatus),
            };
            expect(ruleIdsOf(asStrings)).toEqual(ruleIdsOf(asDates));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
