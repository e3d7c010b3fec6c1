import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JobSpec, JobStatus } from '../../src/batch-job/job-object.ts';
import {
  type JobStatusRuleId,
  type JobStatusTransition,
  validateJobStatusTransition,
} from '../../src/batch-job/job-status-rules.ts';
import {
  applyControllerMove,
  type ControllerMove,
  type ControllerState,
  controllerJobStatus,
  ENDING_MOVES,
  hasTrueCondition,
  initialControllerState,
  isFinished,
  isResume,
  jobSpecArbitrary,
  journeyEndingArbitrary,
  previouslySuspendedState,
  progressMoveArbitrary,
  shiftedBy,
  withoutCondition,
  withTrueConditions,
} from '../../test-support/batch-job/job-status-generators.ts';

// A model of the moves the built-in Job controller makes, one status update at a time
// (test-support/job-status-generators.ts). Every update it produces must pass; one illegal edit to
// any of them must not.

const specArbitrary = jobSpecArbitrary({ maxCompletions: 6, maxParallelism: 4, elasticIndexed: true });

const moveArbitrary: fc.Arbitrary<ControllerMove> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'start' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'resume' as const }), weight: 1 },
  { arbitrary: progressMoveArbitrary(4), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('complete-index' as const), index: fc.nat(6) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('fail-index' as const), index: fc.nat(6) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'failure-target' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'fail' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'success-criteria-met' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'complete' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'resync' as const }), weight: 1 },
);

interface ControllerJourney {
  spec: JobSpec;
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
    ending: journeyEndingArbitrary,
    afterEnding: fc.array(fc.tuple(moveArbitrary, fc.nat(90)), { maxLength: 3 }),
  })
  .map(({ spec, initiallySuspended, startedBeforeSuspension, moves, ending, afterEnding }) => {
    let state: ControllerState = initiallySuspended
      ? previouslySuspendedState(startedBeforeSuspension)
      : initialControllerState;
    const transitions: JobStatusTransition[] = [];
    const endingMoves = ENDING_MOVES[ending];
    const timedEndingMoves = endingMoves.map((move, index): [ControllerMove, number] => [move, index * 7]);
    for (const [move, elapsedSeconds] of [...moves, ...timedEndingMoves, ...afterEnding]) {
      const before = { ...state, clock: state.clock + elapsedSeconds };
      const after = applyControllerMove(before, move, spec);
      transitions.push({
        spec,
        oldStatus: controllerJobStatus(state, spec),
        newStatus: controllerJobStatus(after, spec),
      });
      state = after;
    }
    return { spec, transitions };
  });

const ruleIdsOf = (transition: JobStatusTransition): JobStatusRuleId[] =>
  validateJobStatusTransition(transition).map((violation) => violation.rule);

const withTrueCondition = (status: JobStatus, type: string) => withTrueConditions(status, [type], 'Illegal');

interface IllegalEdit {
  name: string;
  rule: JobStatusRuleId;
  /** The edited new status, or undefined when the edit makes no sense for this transition. */
  edit(transition: JobStatusTransition, amount: number): JobStatus | undefined;
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
      hasTrueCondition(newStatus.conditions, 'Complete')
        ? { ...newStatus, completionTime: undefined }
        : undefined,
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
      hasTrueCondition(newStatus.conditions, 'Complete')
        ? undefined
        : { ...newStatus, completionTime: shiftedBy(newStatus.startTime, amount) },
  },
  {
    name: 'move startTime of an unsuspended Job outside a resume',
    rule: 'start-time-immutable-unless-suspended',
    edit: ({ oldStatus, newStatus }, amount) => {
      return oldStatus.startTime && !isResume(oldStatus, newStatus)
        ? { ...newStatus, startTime: shiftedBy(oldStatus.startTime, amount % 2 === 0 ? amount : -amount) }
        : undefined;
    },
  },
  {
    name: 'remove startTime of an unsuspended Job',
    rule: 'start-time-immutable-unless-suspended',
    edit: ({ oldStatus, newStatus }) =>
      oldStatus.startTime && !hasTrueCondition(oldStatus.conditions, 'Suspended')
        ? { ...newStatus, startTime: undefined }
        : undefined,
  },
  {
    name: 'add Failed without FailureTarget',
    rule: 'failed-requires-failure-target',
    edit: ({ newStatus }) =>
      hasTrueCondition(newStatus.conditions, 'FailureTarget') ||
      hasTrueCondition(newStatus.conditions, 'Failed')
        ? undefined
        : { ...newStatus, conditions: withTrueCondition(newStatus, 'Failed') },
  },
  {
    name: 'add Complete without SuccessCriteriaMet',
    rule: 'complete-requires-success-criteria-met',
    edit: ({ newStatus }) =>
      hasTrueCondition(newStatus.conditions, 'SuccessCriteriaMet') ||
      hasTrueCondition(newStatus.conditions, 'Complete')
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
      isFinished(newStatus.conditions) ? { ...newStatus, active: 1 + (amount % 3) } : undefined,
  },
  {
    name: 'drop a terminal condition',
    rule: 'terminal-condition-stays-true',
    edit: ({ oldStatus, newStatus }) => {
      const terminal = ['Complete', 'Failed', 'FailureTarget'].find((type) =>
        hasTrueCondition(oldStatus.conditions, type),
      );
      return terminal ? { ...newStatus, conditions: withoutCondition(newStatus, terminal) } : undefined;
    },
  },
  {
    name: 'drop SuccessCriteriaMet',
    rule: 'success-criteria-met-stays-true',
    edit: ({ oldStatus, newStatus }) =>
      hasTrueCondition(oldStatus.conditions, 'SuccessCriteriaMet')
        ? { ...newStatus, conditions: withoutCondition(newStatus, 'SuccessCriteriaMet') }
        : undefined,
  },
  {
    name: 'add FailureTarget next to SuccessCriteriaMet',
    rule: 'success-criteria-met-excludes-failure-target',
    edit: ({ newStatus }) =>
      hasTrueCondition(newStatus.conditions, 'SuccessCriteriaMet')
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

/** The same instants written one hour ahead with a +01:00 offset, as RFC 3339 allows. */
function timesWithOffset(status: JobStatus): JobStatus {
  const withOffset = (time: string | undefined) =>
    time === undefined
      ? undefined
      : new Date(Date.parse(time) + 3_600_000).toISOString().replace('Z', '+01:00');
  return {
    ...status,
    startTime: withOffset(status.startTime),
    completionTime: withOffset(status.completionTime),
    conditions: status.conditions?.map((condition) => ({
      ...condition,
      lastTransitionTime: withOffset(condition.lastTransitionTime),
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
          if (hasTrueCondition(newStatus.conditions, type)) reached.add(type);
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

  it('gives the same verdict for times written with an offset as for the same times in UTC', () => {
    fc.assert(
      fc.property(
        journeyArbitrary,
        fc.nat(illegalEdits.length),
        fc.nat(10_000),
        ({ transitions }, editNumber, amount) => {
          const illegalEdit = illegalEdits[editNumber];
          for (const transition of transitions) {
            const newStatus = illegalEdit?.edit(transition, amount + 1) ?? transition.newStatus;
            const inUtc = { ...transition, newStatus };
            const withOffset = {
              ...transition,
              oldStatus: timesWithOffset(transition.oldStatus),
              newStatus: timesWithOffset(newStatus),
            };
            expect(ruleIdsOf(withOffset)).toEqual(ruleIdsOf(inUtc));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
