import type { V1Job, V1JobCondition, V1JobSpec, V1JobStatus } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIndexIntervals } from '../src/index-intervals.ts';
import { validateJobStatusTransition } from '../src/job-status-rules.ts';
import { type CarriedProgress, translateMirrorStatus } from '../src/translate-mirror-status.ts';

// --- Builders: whole-second times, as the API servers store them ---

const EPOCH_SECONDS = Date.parse('2025-03-01T10:00:00Z') / 1000;

/** `seconds` after 2025-03-01T10:00:00Z. */
function at(seconds: number): Date {
  return new Date((EPOCH_SECONDS + seconds) * 1000);
}

const NOW = at(1_000);

const REASONS: Record<string, string> = {
  Suspended: 'JobSuspended',
  FailureTarget: 'BackoffLimitExceeded',
  Failed: 'BackoffLimitExceeded',
  SuccessCriteriaMet: 'CompletionsReached',
  Complete: 'CompletionsReached',
};

function condition(
  type: string,
  status: 'True' | 'False' = 'True',
  transitionAt = 0,
  reason = REASONS[type] ?? 'Test',
): V1JobCondition {
  return { type, status, reason, message: `${type} ${status}`, lastTransitionTime: at(transitionAt) };
}

const resumed = (transitionAt = 0) => condition('Suspended', 'False', transitionAt, 'JobResumed');

const nonIndexed: V1JobSpec = { template: {}, completionMode: 'NonIndexed', completions: 3, parallelism: 2 };
const indexed: V1JobSpec = { template: {}, completionMode: 'Indexed', completions: 5, parallelism: 2 };
const perIndex: V1JobSpec = { ...indexed, backoffLimitPerIndex: 1 };

function job(spec: V1JobSpec, status?: V1JobStatus): V1Job {
  return {
    metadata: { name: 'train', namespace: 'ml' },
    spec,
    ...(status ? { status } : {}),
  };
}

const origin = job;
const mirror = (status?: V1JobStatus, spec: V1JobSpec = nonIndexed) => job(spec, status);
const firstAttempt: CarriedProgress = { succeeded: 0, failed: 0 };

/** Conditions as "Type=Status/Reason", in order. */
function conditionSummary(status: V1JobStatus): string[] {
  return (status.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
}

interface Expected {
  active?: number;
  ready?: number;
  terminating?: number;
  succeeded?: number;
  failed?: number;
  /** null: the field must be absent. */
  startTime?: Date | null;
  completionTime?: Date | null;
  completedIndexes?: string | null;
  failedIndexes?: string | null;
  conditions?: string[];
}

function observed(status: V1JobStatus, keys: ReadonlyArray<keyof Expected>): Expected {
  const view: Expected = {};
  for (const key of keys) {
    if (key === 'conditions') view.conditions = conditionSummary(status);
    else (view as Record<string, unknown>)[key] = status[key] ?? null;
  }
  return view;
}

interface TranslationCase {
  name: string;
  origin: V1Job;
  mirror: V1Job;
  carried?: CarriedProgress;
  expected: Expected;
}

// Every case also asserts that the translated status is a valid update of the origin's.
const cases: Record<string, TranslationCase[]> = {
  'first attempt': [
    {
      name: 'a running mirror: counts and startTime copied',
      origin: origin(nonIndexed),
      mirror: mirror({ startTime: at(0), active: 2, ready: 1, terminating: 1, succeeded: 1, failed: 1 }),
      expected: {
        active: 2,
        ready: 1,
        terminating: 1,
        succeeded: 1,
        failed: 1,
        startTime: at(0),
        completionTime: null,
        completedIndexes: null,
        failedIndexes: null,
        conditions: [],
      },
    },
    {
      name: 'counters the mirror leaves out are 0',
      origin: origin(nonIndexed),
      mirror: mirror({ startTime: at(0) }),
      expected: { active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 0, startTime: at(0) },
    },
    {
      name: 'a mirror not started yet: no startTime',
      origin: origin(nonIndexed),
      mirror: mirror({}),
      expected: { startTime: null, active: 0, conditions: [] },
    },
    {
      name: 'a mirror without any status',
      origin: origin(nonIndexed),
      mirror: mirror(undefined),
      expected: { startTime: null, succeeded: 0, failed: 0, conditions: [] },
    },
    {
      name: 'a later sync of the same attempt moves the counts on',
      origin: origin(nonIndexed, { startTime: at(0), active: 2, ready: 2, succeeded: 1, failed: 0 }),
      mirror: mirror({ startTime: at(0), active: 1, ready: 0, succeeded: 2, failed: 1 }),
      expected: { startTime: at(0), active: 1, ready: 0, succeeded: 2, failed: 1 },
    },
  ],
  're-placement (counters carried)': [
    {
      name: 'the new mirror starts at zero: the origin keeps its counts and first startTime',
      origin: origin(nonIndexed, { startTime: at(0), active: 1, ready: 1, succeeded: 2, failed: 1 }),
      mirror: mirror({}),
      carried: { succeeded: 2, failed: 1 },
      expected: { startTime: at(0), active: 0, ready: 0, succeeded: 2, failed: 1 },
    },
    {
      name: "the new mirror's counts are added to the carried ones",
      origin: origin(nonIndexed, { startTime: at(0), succeeded: 2, failed: 1 }),
      mirror: mirror({ startTime: at(300), active: 1, ready: 1, succeeded: 1, failed: 2 }),
      carried: { succeeded: 2, failed: 1 },
      expected: { startTime: at(0), active: 1, ready: 1, succeeded: 3, failed: 3 },
    },
    {
      name: 'the origin never goes back, even when carried + mirror is below what it shows',
      origin: origin(nonIndexed, { startTime: at(0), succeeded: 5, failed: 4 }),
      mirror: mirror({ startTime: at(300), succeeded: 1 }),
      carried: { succeeded: 2, failed: 1 },
      expected: { succeeded: 5, failed: 4, startTime: at(0) },
    },
    {
      name: "startTime stays the first one even when the new worker's clock is behind",
      origin: origin(nonIndexed, { startTime: at(100), succeeded: 1 }),
      mirror: mirror({ startTime: at(40), active: 1 }),
      carried: { succeeded: 1, failed: 0 },
      expected: { startTime: at(100), succeeded: 1, active: 1 },
    },
  ],
  'Indexed Jobs': [
    {
      name: 'an Indexed Job with nothing completed has completedIndexes ""',
      origin: origin(indexed),
      mirror: mirror({ startTime: at(0), active: 2 }, indexed),
      expected: { completedIndexes: '', failedIndexes: null, succeeded: 0 },
    },
    {
      name: 'succeeded is the number of completed indexes, not of succeeded pods',
      origin: origin(indexed, { startTime: at(0) }),
      mirror: mirror({ startTime: at(0), succeeded: 3, completedIndexes: '0,2' }, indexed),
      expected: { completedIndexes: '0,2', succeeded: 2 },
    },
    {
      name: 'completedIndexes: union of the carried and the mirror ones',
      origin: origin(indexed, { startTime: at(0), succeeded: 2, completedIndexes: '0-1' }),
      mirror: mirror({ startTime: at(300), succeeded: 2, completedIndexes: '1,3' }, indexed),
      carried: { succeeded: 2, failed: 0, completedIndexes: '0-1' },
      expected: { completedIndexes: '0-1,3', succeeded: 3, startTime: at(0) },
    },
    {
      name: 'failedIndexes: union of the carried and the mirror ones, with backoffLimitPerIndex',
      origin: origin(perIndex, { startTime: at(0), failed: 1, failedIndexes: '2' }),
      mirror: mirror({ startTime: at(300), failed: 1, failedIndexes: '4' }, perIndex),
      carried: { succeeded: 0, failed: 1, failedIndexes: '2' },
      expected: { failedIndexes: '2,4', failed: 2, completedIndexes: '' },
    },
    {
      name: 'failedIndexes is "" with backoffLimitPerIndex and nothing failed',
      origin: origin(perIndex),
      mirror: mirror({ startTime: at(0), active: 1 }, perIndex),
      expected: { failedIndexes: '', completedIndexes: '' },
    },
    {
      name: 'no failedIndexes without backoffLimitPerIndex (even "" is refused there)',
      origin: origin(indexed, { startTime: at(0) }),
      mirror: mirror({ startTime: at(0), failedIndexes: '', failed: 1 }, indexed),
      expected: { failedIndexes: null, failed: 1 },
    },
    {
      name: 'an index failed in an earlier attempt stays failed when the new mirror completes it',
      origin: origin(perIndex, {
        startTime: at(0),
        succeeded: 1,
        failed: 1,
        completedIndexes: '0',
        failedIndexes: '1',
      }),
      mirror: mirror({ startTime: at(300), succeeded: 3, completedIndexes: '0-2' }, perIndex),
      carried: { succeeded: 1, failed: 1, completedIndexes: '0', failedIndexes: '1' },
      expected: { completedIndexes: '0,2', failedIndexes: '1', succeeded: 2, failed: 1 },
    },
    {
      name: 'an index completed in an earlier attempt stays completed when the new mirror fails it',
      origin: origin(perIndex, { startTime: at(0), succeeded: 1, completedIndexes: '1', failedIndexes: '' }),
      mirror: mirror({ startTime: at(300), failed: 2, failedIndexes: '1,3' }, perIndex),
      carried: { succeeded: 1, failed: 0, completedIndexes: '1' },
      expected: { completedIndexes: '1', failedIndexes: '3', succeeded: 1, failed: 2 },
    },
  ],
  conditions: [
    {
      name: 'FailureTarget and Failed copied in order; a Failed Job has no completionTime',
      origin: origin(nonIndexed, { startTime: at(0), active: 1, ready: 1 }),
      mirror: mirror({
        startTime: at(0),
        failed: 7,
        conditions: [condition('FailureTarget', 'True', 50), condition('Failed', 'True', 60)],
      }),
      expected: {
        conditions: ['FailureTarget=True/BackoffLimitExceeded', 'Failed=True/BackoffLimitExceeded'],
        completionTime: null,
        failed: 7,
        active: 0,
      },
    },
    {
      name: 'FailureTarget seen in an earlier sync, Failed appended after it',
      origin: origin(nonIndexed, {
        startTime: at(0),
        failed: 7,
        conditions: [condition('FailureTarget', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(0),
        failed: 7,
        conditions: [condition('FailureTarget', 'True', 50), condition('Failed', 'True', 60)],
      }),
      expected: {
        conditions: ['FailureTarget=True/BackoffLimitExceeded', 'Failed=True/BackoffLimitExceeded'],
      },
    },
    {
      name: "SuccessCriteriaMet and Complete copied in order, with the mirror's completionTime",
      origin: origin(nonIndexed, { startTime: at(0), active: 1, ready: 1, succeeded: 2 }),
      mirror: mirror({
        startTime: at(0),
        completionTime: at(90),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 90), condition('Complete', 'True', 90)],
      }),
      expected: {
        conditions: ['SuccessCriteriaMet=True/CompletionsReached', 'Complete=True/CompletionsReached'],
        completionTime: at(90),
        succeeded: 3,
      },
    },
    {
      name: 'the success reason of a successPolicy is copied as it is',
      origin: origin(
        { ...indexed, successPolicy: { rules: [{ succeededIndexes: '0' }] } },
        { startTime: at(0) },
      ),
      mirror: mirror(
        {
          startTime: at(0),
          completionTime: at(30),
          succeeded: 1,
          completedIndexes: '0',
          conditions: [
            condition('SuccessCriteriaMet', 'True', 30, 'SuccessPolicy'),
            condition('Complete', 'True', 30, 'SuccessPolicy'),
          ],
        },
        indexed,
      ),
      expected: { conditions: ['SuccessCriteriaMet=True/SuccessPolicy', 'Complete=True/SuccessPolicy'] },
    },
    {
      name: 'a True terminal condition stays when the new mirror has none',
      origin: origin(nonIndexed, {
        startTime: at(0),
        failed: 3,
        conditions: [condition('FailureTarget', 'True', 50)],
      }),
      mirror: mirror({ startTime: at(300), active: 1 }),
      carried: { succeeded: 0, failed: 3 },
      expected: { conditions: ['FailureTarget=True/BackoffLimitExceeded'], failed: 3 },
    },
    {
      name: 'a True terminal condition is never flipped, nor its reason rewritten',
      origin: origin(nonIndexed, {
        startTime: at(0),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(0),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'False', 70, 'Other')],
      }),
      expected: { conditions: ['SuccessCriteriaMet=True/CompletionsReached'] },
    },
    {
      name: 'condition types the built-in controller does not mean for the origin are not copied',
      origin: origin(nonIndexed, { startTime: at(0) }),
      mirror: mirror({ startTime: at(0), active: 1, conditions: [condition('PodsStuck', 'True', 5)] }),
      expected: { conditions: [] },
    },
  ],
  pods: [
    {
      name: 'ready is clamped to active',
      origin: origin(nonIndexed, { startTime: at(0) }),
      mirror: mirror({ startTime: at(0), active: 1, ready: 3 }),
      expected: { active: 1, ready: 1 },
    },
    {
      name: 'a finished Job has no active, ready or terminating pods, whatever the mirror says',
      origin: origin(nonIndexed, { startTime: at(0), active: 1, ready: 1, terminating: 1 }),
      mirror: mirror({
        startTime: at(0),
        completionTime: at(60),
        active: 1,
        ready: 1,
        terminating: 2,
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 60), condition('Complete', 'True', 60)],
      }),
      expected: { active: 0, ready: 0, terminating: 0, succeeded: 3 },
    },
  ],
  completionTime: [
    {
      name: 'kept once set, even if the mirror reports another',
      origin: origin(nonIndexed, {
        startTime: at(0),
        completionTime: at(60),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 60), condition('Complete', 'True', 60)],
      }),
      mirror: mirror({
        startTime: at(0),
        completionTime: at(61),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 61), condition('Complete', 'True', 61)],
      }),
      expected: { completionTime: at(60) },
    },
    {
      name: 'never before startTime: a re-placed mirror on a worker whose clock is behind',
      origin: origin(nonIndexed, { startTime: at(100), succeeded: 1 }),
      mirror: mirror({
        startTime: at(20),
        completionTime: at(50),
        succeeded: 2,
        conditions: [condition('SuccessCriteriaMet', 'True', 50), condition('Complete', 'True', 50)],
      }),
      carried: { succeeded: 1, failed: 0 },
      expected: { startTime: at(100), completionTime: at(100), succeeded: 3 },
    },
    {
      name: 'none without Complete, even if the mirror sends one',
      origin: origin(nonIndexed, { startTime: at(0) }),
      mirror: mirror({ startTime: at(0), completionTime: at(30), active: 1 }),
      expected: { completionTime: null },
    },
  ],
  'suspend and resume': [
    {
      name: 'the mirror suspended: Suspended=True copied, startTime kept while suspended',
      origin: origin({ ...nonIndexed, suspend: true }, { startTime: at(0), active: 2, ready: 2 }),
      mirror: mirror({ conditions: [condition('Suspended', 'True', 40)], active: 0, terminating: 2 }),
      expected: {
        conditions: ['Suspended=True/JobSuspended'],
        startTime: at(0),
        active: 0,
        ready: 0,
        terminating: 2,
      },
    },
    {
      name: "resumed: Suspended=False and the mirror's new startTime",
      origin: origin(nonIndexed, { startTime: at(0), conditions: [condition('Suspended', 'True', 40)] }),
      mirror: mirror({ startTime: at(300), active: 2, conditions: [resumed(300)] }),
      expected: { conditions: ['Suspended=False/JobResumed'], startTime: at(300), active: 2 },
    },
    {
      name: 'resumed by the user, not yet by the mirror: nothing changes',
      origin: origin(nonIndexed, { startTime: at(0), conditions: [condition('Suspended', 'True', 40)] }),
      mirror: mirror({ conditions: [condition('Suspended', 'True', 40)] }),
      expected: { conditions: ['Suspended=True/JobSuspended'], startTime: at(0) },
    },
    {
      name: 'suspended again after a resume',
      origin: origin({ ...nonIndexed, suspend: true }, { startTime: at(300), conditions: [resumed(300)] }),
      mirror: mirror({ conditions: [condition('Suspended', 'True', 500)] }),
      expected: { conditions: ['Suspended=True/JobSuspended'], startTime: at(300) },
    },
    {
      name: 'created suspended, resumed before placement: Suspended=False JobResumed now',
      origin: origin(nonIndexed, { conditions: [condition('Suspended', 'True', 0)] }),
      mirror: mirror({ startTime: at(300), active: 1 }),
      expected: { conditions: ['Suspended=False/JobResumed'], startTime: at(300), active: 1 },
    },
    {
      name: 'created suspended, the mirror not started yet: still Suspended',
      origin: origin(nonIndexed, { conditions: [condition('Suspended', 'True', 0)] }),
      mirror: mirror({}),
      expected: { conditions: ['Suspended=True/JobSuspended'], startTime: null },
    },
    {
      name: 'created suspended and still suspended on the origin: Suspended stays True',
      origin: origin({ ...nonIndexed, suspend: true }, { conditions: [condition('Suspended', 'True', 0)] }),
      mirror: mirror({ startTime: at(300), active: 1 }),
      expected: { conditions: ['Suspended=True/JobSuspended'] },
    },
    {
      name: 'resumed earlier, then re-placed: the new mirror has no Suspended, the origin keeps False',
      origin: origin(nonIndexed, { startTime: at(300), succeeded: 1, conditions: [resumed(300)] }),
      mirror: mirror({ startTime: at(600), active: 1 }),
      carried: { succeeded: 1, failed: 0 },
      expected: { conditions: ['Suspended=False/JobResumed'], startTime: at(300), succeeded: 1 },
    },
  ],
  're-placement after a terminal condition': [
    {
      name: 'origin FailureTarget=True, new mirror meets its success criteria: not copied',
      origin: origin(nonIndexed, {
        startTime: at(0),
        failed: 6,
        conditions: [condition('FailureTarget', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(300),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 350)],
      }),
      carried: { succeeded: 0, failed: 6 },
      expected: { conditions: ['FailureTarget=True/BackoffLimitExceeded'], succeeded: 3, failed: 6 },
    },
    {
      name: 'origin FailureTarget=True, new mirror Complete: the origin ends Failed, as it must',
      origin: origin(nonIndexed, {
        startTime: at(0),
        failed: 6,
        conditions: [condition('FailureTarget', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(300),
        completionTime: at(360),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 360), condition('Complete', 'True', 360)],
      }),
      carried: { succeeded: 0, failed: 6 },
      expected: {
        conditions: ['FailureTarget=True/BackoffLimitExceeded', 'Failed=True/BackoffLimitExceeded'],
        completionTime: null,
        active: 0,
      },
    },
    {
      name: 'origin SuccessCriteriaMet=True, new mirror heads for failure: not copied',
      origin: origin(nonIndexed, {
        startTime: at(0),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(300),
        failed: 7,
        conditions: [condition('FailureTarget', 'True', 350)],
      }),
      carried: { succeeded: 3, failed: 0 },
      expected: { conditions: ['SuccessCriteriaMet=True/CompletionsReached'], failed: 7 },
    },
    {
      name: 'origin SuccessCriteriaMet=True, new mirror Failed: the origin ends Complete, completionTime now',
      origin: origin(nonIndexed, {
        startTime: at(0),
        succeeded: 3,
        conditions: [condition('SuccessCriteriaMet', 'True', 50)],
      }),
      mirror: mirror({
        startTime: at(300),
        failed: 7,
        conditions: [condition('FailureTarget', 'True', 350), condition('Failed', 'True', 350)],
      }),
      carried: { succeeded: 3, failed: 0 },
      expected: {
        conditions: ['SuccessCriteriaMet=True/CompletionsReached', 'Complete=True/CompletionsReached'],
        completionTime: NOW,
      },
    },
  ],
};

describe('translateMirrorStatus', () => {
  for (const [group, groupCases] of Object.entries(cases)) {
    describe(group, () => {
      it.each(groupCases)('$name', ({ origin: originJob, mirror: mirrorJob, carried, expected }) => {
        const translated = translateMirrorStatus(originJob, mirrorJob, carried ?? firstAttempt, NOW);
        const keys = Object.keys(expected) as Array<keyof Expected>;
        expect(observed(translated, keys)).toEqual(expected);
        expect(
          validateJobStatusTransition({
            spec: originJob.spec!,
            oldStatus: originJob.status ?? {},
            newStatus: translated,
          }),
        ).toEqual([]);
      });
    });
  }

  it('stamps the resume it infers before placement with `now`', () => {
    const translated = translateMirrorStatus(
      origin(nonIndexed, { conditions: [condition('Suspended', 'True', 0)] }),
      mirror({ startTime: at(300), active: 1 }),
      firstAttempt,
      NOW,
    );
    expect(translated.conditions).toEqual([
      expect.objectContaining({
        type: 'Suspended',
        status: 'False',
        reason: 'JobResumed',
        lastTransitionTime: NOW,
      }),
    ]);
  });

  it("copies the mirror's conditions with their reasons, messages and times", () => {
    const failureTarget = condition('FailureTarget', 'True', 50, 'PodFailurePolicy');
    const translated = translateMirrorStatus(
      origin(nonIndexed, { startTime: at(0) }),
      mirror({ startTime: at(0), conditions: [failureTarget] }),
      firstAttempt,
      NOW,
    );
    expect(translated.conditions).toEqual([failureTarget]);
  });

  it('leaves uncountedTerminatedPods out: the origin counts only counted pods', () => {
    const translated = translateMirrorStatus(
      origin(nonIndexed, { startTime: at(0) }),
      mirror({
        startTime: at(0),
        active: 1,
        uncountedTerminatedPods: { succeeded: ['pod-a'], failed: ['pod-b'] },
      }),
      firstAttempt,
      NOW,
    );
    expect(translated.uncountedTerminatedPods).toBeUndefined();
    expect(translated).toMatchObject({ succeeded: 0, failed: 0 });
  });

  it('changes neither of its inputs', () => {
    const originJob = origin(perIndex, {
      startTime: at(0),
      completedIndexes: '0',
      failedIndexes: '',
      succeeded: 1,
      conditions: [condition('Suspended', 'True', 0)],
    });
    const mirrorJob = mirror(
      {
        startTime: at(300),
        completedIndexes: '1',
        failedIndexes: '2',
        conditions: [resumed(300), condition('FailureTarget', 'True', 320)],
      },
      perIndex,
    );
    const before = structuredClone({ originJob, mirrorJob });
    translateMirrorStatus(originJob, mirrorJob, { succeeded: 1, failed: 0, completedIndexes: '0' }, NOW);
    expect({ originJob, mirrorJob }).toEqual(before);
  });
});

// --- Property: a model of the built-in controller on the worker, and the origin it is mirrored to ---

type SpecChoice = V1JobSpec & { completions: number; parallelism: number };

const specArbitrary: fc.Arbitrary<SpecChoice> = fc.oneof(
  fc
    .record({ completions: fc.integer({ min: 1, max: 5 }), parallelism: fc.integer({ min: 1, max: 3 }) })
    .map(({ completions, parallelism }) => ({ ...nonIndexed, completions, parallelism })),
  fc
    .record({
      completions: fc.integer({ min: 1, max: 5 }),
      parallelism: fc.integer({ min: 1, max: 3 }),
      perIndexBackoff: fc.boolean(),
      withSuccessPolicy: fc.boolean(),
    })
    .map(({ completions, parallelism, perIndexBackoff, withSuccessPolicy }) => ({
      ...indexed,
      completions,
      parallelism,
      ...(perIndexBackoff ? { backoffLimitPerIndex: 1 } : {}),
      ...(withSuccessPolicy ? { successPolicy: { rules: [{ succeededIndexes: '0' }] } } : {}),
    })),
);

type Step =
  /** The user flips spec.suspend on the origin; jobrelay propagates it to the mirror. */
  | { kind: 'user-suspend' | 'user-resume' }
  /** The mirror's Job controller syncs. */
  | { kind: 'start' | 'suspend' | 'resume' | 'failure-target' | 'fail' | 'success-criteria-met' | 'complete' }
  | { kind: 'complete-index' | 'fail-index'; index: number }
  | {
      kind: 'progress';
      active: number;
      ready: number;
      terminating: number;
      podsSucceeded: number;
      podsFailed: number;
    };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.constantFrom({ kind: 'user-suspend' as const }, { kind: 'user-resume' as const }),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      { kind: 'start' as const },
      { kind: 'suspend' as const },
      { kind: 'resume' as const },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('progress' as const),
      active: fc.nat(3),
      ready: fc.nat(4),
      terminating: fc.nat(2),
      podsSucceeded: fc.nat(2),
      podsFailed: fc.nat(2),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete-index' as const, 'fail-index' as const),
      index: fc.nat(4),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      { kind: 'failure-target' as const },
      { kind: 'fail' as const },
      { kind: 'success-criteria-met' as const },
      { kind: 'complete' as const },
    ),
  },
);

interface MirrorModel {
  active: number;
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  startTime?: Date;
  completionTime?: Date;
  completedIndexes: number[];
  failedIndexes: number[];
  uncountedSucceeded: string[];
  uncountedFailed: string[];
  conditions: V1JobCondition[];
}

const freshMirror = (): MirrorModel => ({
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
});

const hasTrue = (conditions: readonly V1JobCondition[] | undefined, type: string) =>
  (conditions ?? []).some((c) => c.type === type && c.status === 'True');

function setCondition(
  model: MirrorModel,
  type: string,
  status: 'True' | 'False',
  reason: string,
  clock: number,
) {
  return [
    ...model.conditions.filter((c) => c.type !== type),
    { type, status, reason, lastTransitionTime: at(clock) },
  ];
}

function counted(model: MirrorModel): MirrorModel {
  return {
    ...model,
    succeeded: model.succeeded + model.uncountedSucceeded.length,
    failed: model.failed + model.uncountedFailed.length,
    uncountedSucceeded: [],
    uncountedFailed: [],
  };
}

/** One sync of the worker's Job controller, as it would write the mirror's status. */
function controllerSync(model: MirrorModel, step: Step, spec: SpecChoice, clock: number): MirrorModel {
  const suspended = hasTrue(model.conditions, 'Suspended');
  const started = model.startTime !== undefined && !suspended;
  const finished = hasTrue(model.conditions, 'Complete') || hasTrue(model.conditions, 'Failed');
  const free = (index: number) =>
    index < spec.completions &&
    !model.completedIndexes.includes(index) &&
    !model.failedIndexes.includes(index);
  if (finished) return model;
  switch (step.kind) {
    case 'user-suspend':
    case 'user-resume':
      return model;
    case 'start':
      return !spec.suspend && !suspended && !model.startTime ? { ...model, startTime: at(clock) } : model;
    case 'suspend':
      return spec.suspend && !suspended
        ? {
            ...counted(model),
            conditions: setCondition(model, 'Suspended', 'True', 'JobSuspended', clock),
            startTime: undefined,
            active: 0,
            ready: 0,
            terminating: model.active,
          }
        : model;
    case 'resume':
      return !spec.suspend && suspended
        ? {
            ...model,
            conditions: setCondition(model, 'Suspended', 'False', 'JobResumed', clock),
            startTime: at(clock),
          }
        : model;
    case 'progress': {
      if (!started) return model;
      const active = Math.min(step.active, spec.parallelism);
      const pod = (n: number) => `pod-${clock}-${n}`;
      return {
        ...counted(model),
        active,
        ready: Math.min(step.ready, active),
        terminating: step.terminating,
        uncountedSucceeded: Array.from({ length: step.podsSucceeded }, (_, i) => pod(i)),
        uncountedFailed: Array.from({ length: step.podsFailed }, (_, i) => pod(step.podsSucceeded + i)),
      };
    }
    case 'complete-index':
      return started && spec.completionMode === 'Indexed' && free(step.index)
        ? {
            ...model,
            succeeded: model.succeeded + 1,
            completedIndexes: [...model.completedIndexes, step.index],
          }
        : model;
    case 'fail-index':
      return started && spec.backoffLimitPerIndex != null && free(step.index)
        ? { ...model, failed: model.failed + 1, failedIndexes: [...model.failedIndexes, step.index] }
        : model;
    case 'failure-target':
      return started &&
        !hasTrue(model.conditions, 'FailureTarget') &&
        !hasTrue(model.conditions, 'SuccessCriteriaMet')
        ? {
            ...model,
            conditions: setCondition(model, 'FailureTarget', 'True', 'BackoffLimitExceeded', clock),
          }
        : model;
    case 'fail':
      return hasTrue(model.conditions, 'FailureTarget')
        ? {
            ...counted(model),
            active: 0,
            ready: 0,
            terminating: 0,
            conditions: setCondition(model, 'Failed', 'True', 'BackoffLimitExceeded', clock),
          }
        : model;
    case 'success-criteria-met':
      return started &&
        !hasTrue(model.conditions, 'FailureTarget') &&
        !hasTrue(model.conditions, 'SuccessCriteriaMet')
        ? {
            ...model,
            conditions: setCondition(model, 'SuccessCriteriaMet', 'True', 'CompletionsReached', clock),
          }
        : model;
    case 'complete':
      return hasTrue(model.conditions, 'SuccessCriteriaMet')
        ? {
            ...counted(model),
            active: 0,
            ready: 0,
            terminating: 0,
            conditions: setCondition(model, 'Complete', 'True', 'CompletionsReached', clock),
            completionTime: at(clock),
          }
        : model;
  }
}

function formatIndexes(indexes: readonly number[]): string {
  const sorted = [...indexes].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

function mirrorStatus(model: MirrorModel, spec: SpecChoice): V1JobStatus {
  return {
    active: model.active,
    ready: model.ready,
    terminating: model.terminating,
    succeeded: model.succeeded,
    failed: model.failed,
    ...(model.startTime ? { startTime: model.startTime } : {}),
    ...(model.completionTime ? { completionTime: model.completionTime } : {}),
    conditions: model.conditions,
    uncountedTerminatedPods: { succeeded: model.uncountedSucceeded, failed: model.uncountedFailed },
    ...(spec.completionMode === 'Indexed' ? { completedIndexes: formatIndexes(model.completedIndexes) } : {}),
    ...(spec.backoffLimitPerIndex != null ? { failedIndexes: formatIndexes(model.failedIndexes) } : {}),
  };
}

type Beginning =
  /** Created running. */
  | 'running'
  /** Created suspended (jobrelay wrote Suspended=True on the origin), resumed before placement. */
  | 'resumed-before-placement'
  /** Created suspended and placed suspended: the mirror is suspended too. */
  | 'placed-suspended';

interface OriginJourney {
  /** Each origin /status update: the origin's spec then, its stored status, the translated one. */
  updates: Array<{ spec: V1JobSpec; oldStatus: V1JobStatus; newStatus: V1JobStatus; replaced: boolean }>;
  replaced: boolean;
}

const journeyArbitrary: fc.Arbitrary<OriginJourney> = fc
  .record({
    spec: specArbitrary,
    beginning: fc.constantFrom<Beginning>(
      'running',
      'running',
      'resumed-before-placement',
      'placed-suspended',
    ),
    steps: fc.array(fc.tuple(stepArbitrary, fc.nat(60)), { minLength: 1, maxLength: 30, size: 'medium' }),
    // Random steps alone seldom finish a Job; most journeys are driven to an end.
    ending: fc.constantFrom('none', 'succeed', 'fail'),
    // Where the worker is lost and the Job placed again (beyond the end: never).
    replaceAt: fc.nat(45),
  })
  .map(({ spec: chosen, beginning, steps, ending, replaceAt }) => {
    let spec: SpecChoice = { ...chosen, suspend: beginning === 'placed-suspended' };
    let clock = 0;
    let originStatus: V1JobStatus =
      beginning === 'running'
        ? {}
        : { conditions: [{ ...condition('Suspended', 'True', 0), message: 'created suspended' }] };
    let model = freshMirror();
    let carried: CarriedProgress = firstAttempt;
    let replaced = false;
    const endingSteps: Step[] = {
      none: [],
      succeed: [
        { kind: 'user-resume' },
        { kind: 'resume' },
        { kind: 'start' },
        { kind: 'success-criteria-met' },
        { kind: 'complete' },
      ],
      fail: [
        { kind: 'user-resume' },
        { kind: 'resume' },
        { kind: 'start' },
        { kind: 'failure-target' },
        { kind: 'fail' },
      ],
    }[ending] as Step[];
    const updates: OriginJourney['updates'] = [];
    // Most mirrors start at once (a no-op for a suspended one).
    const allSteps: Array<[Step, number]> = [
      [{ kind: 'start' }, 0],
      ...steps,
      ...endingSteps.map((s): [Step, number] => [s, 5]),
    ];
    allSteps.forEach(([step, elapsed], index) => {
      clock += elapsed + 1;
      const originFinished =
        hasTrue(originStatus.conditions, 'Complete') || hasTrue(originStatus.conditions, 'Failed');
      let replacedNow = false;
      if (index === replaceAt && !originFinished) {
        // Only an unfinished Job is placed again; what it reached so far is carried.
        carried = {
          succeeded: originStatus.succeeded ?? 0,
          failed: originStatus.failed ?? 0,
          ...(originStatus.completedIndexes ? { completedIndexes: originStatus.completedIndexes } : {}),
          ...(originStatus.failedIndexes ? { failedIndexes: originStatus.failedIndexes } : {}),
        };
        model = freshMirror();
        replaced = replacedNow = true;
      }
      if (step.kind === 'user-suspend') spec = { ...spec, suspend: true };
      if (step.kind === 'user-resume') spec = { ...spec, suspend: false };
      model = controllerSync(model, step, spec, clock);
      const newStatus = translateMirrorStatus(
        { metadata: { name: 'train', namespace: 'ml' }, spec, status: originStatus },
        { metadata: { name: 'train', namespace: 'ml' }, spec, status: mirrorStatus(model, spec) },
        carried,
        at(clock),
      );
      updates.push({ spec, oldStatus: originStatus, newStatus, replaced: replacedNow });
      originStatus = newStatus;
    });
    return { updates, replaced };
  });

describe('translateMirrorStatus over a model of the worker and re-placement', () => {
  it('writes only origin statuses the API server accepts, one after the other', () => {
    fc.assert(
      fc.property(journeyArbitrary, ({ updates }) => {
        for (const { spec, oldStatus, newStatus } of updates) {
          const violations = validateJobStatusTransition({ spec, oldStatus, newStatus });
          expect(violations, JSON.stringify({ spec, oldStatus, newStatus }, null, 1)).toEqual([]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the counts and the first startTime across a re-placement', () => {
    fc.assert(
      fc.property(journeyArbitrary, ({ updates }) => {
        let firstStart: Date | undefined;
        for (const { oldStatus, newStatus } of updates) {
          const resumed =
            hasTrue(oldStatus.conditions, 'Suspended') &&
            (newStatus.conditions ?? []).some((c) => c.type === 'Suspended' && c.status === 'False');
          if (resumed) firstStart = newStatus.startTime;
          firstStart ??= newStatus.startTime;
          if (firstStart && newStatus.startTime) expect(newStatus.startTime).toEqual(firstStart);
          expect(newStatus.succeeded ?? 0).toBeGreaterThanOrEqual(oldStatus.succeeded ?? 0);
          expect(newStatus.failed ?? 0).toBeGreaterThanOrEqual(oldStatus.failed ?? 0);
          if (newStatus.completedIndexes !== undefined) {
            expect(newStatus.succeeded).toBe(parseIndexIntervals(newStatus.completedIndexes).length);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reaches the interesting states, so the properties above are not vacuous', () => {
    const reached = new Set<string>();
    for (const { updates } of fc.sample(journeyArbitrary, { numRuns: 500, seed: 7 })) {
      for (const { oldStatus, newStatus, replaced } of updates) {
        if (replaced) reached.add('re-placed');
        if (replaced && (oldStatus.succeeded ?? 0) + (oldStatus.failed ?? 0) > 0)
          reached.add('re-placed with counts');
        if (replaced && hasTrue(oldStatus.conditions, 'FailureTarget')) reached.add('re-placed failing');
        if (replaced && hasTrue(oldStatus.conditions, 'SuccessCriteriaMet'))
          reached.add('re-placed succeeding');
        for (const type of ['Complete', 'Failed']) if (hasTrue(newStatus.conditions, type)) reached.add(type);
        if (hasTrue(oldStatus.conditions, 'Suspended') && !hasTrue(newStatus.conditions, 'Suspended')) {
          reached.add('resumed');
        }
        if (!hasTrue(oldStatus.conditions, 'Suspended') && hasTrue(newStatus.conditions, 'Suspended')) {
          reached.add('suspended');
        }
        if (newStatus.completedIndexes?.includes('-')) reached.add('index range');
        if (newStatus.failedIndexes) reached.add('failed index');
      }
    }
    expect([...reached].sort()).toEqual([
      'Complete',
      'Failed',
      'failed index',
      'index range',
      're-placed',
      're-placed failing',
      're-placed succeeding',
      're-placed with counts',
      'resumed',
      'suspended',
    ]);
  });
});
