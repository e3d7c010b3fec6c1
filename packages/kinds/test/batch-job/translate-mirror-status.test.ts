import { continuesFromAnnotation, suspendSentAnnotation } from '@jobrelay/mirror';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { finishDecidedJob } from '../../src/batch-job/finish-decided-job.ts';
import { parseIndexIntervals } from '../../src/batch-job/index-intervals.ts';
import type { Job, JobCondition, JobSpec, JobStatus } from '../../src/batch-job/job-object.ts';
import type { JobProgress } from '../../src/batch-job/job-progress.ts';
import { validateJobStatusTransition } from '../../src/batch-job/job-status-rules.ts';
import { translateMirrorStatus } from '../../src/batch-job/translate-mirror-status.ts';
import {
  applyControllerMove,
  secondsAfterEpoch as at,
  type ControllerMove,
  type ControllerState,
  controllerJobStatus,
  ENDING_MOVES,
  hasTrueCondition,
  indexMoveArbitrary,
  initialControllerState,
  isFinished,
  isResume,
  jobSpecArbitrary,
  journeyEndingArbitrary,
  outcomeMoveArbitrary,
  progressMoveArbitrary,
} from '../../test-support/batch-job/job-status-generators.ts';

// --- Builders (times: `at(seconds)`, whole seconds as the API servers store them) ---

const NOW = at(1_000);
/** The clock at NOW, as the translation is given it. */
const NOW_DATE = new Date(NOW);

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
): JobCondition {
  return { type, status, reason, message: `${type} ${status}`, lastTransitionTime: at(transitionAt) };
}

const resumed = (transitionAt = 0) => condition('Suspended', 'False', transitionAt, 'JobResumed');

const nonIndexed: JobSpec = { template: {}, completionMode: 'NonIndexed', completions: 3, parallelism: 2 };
const indexed: JobSpec = { template: {}, completionMode: 'Indexed', completions: 5, parallelism: 2 };
const perIndex: JobSpec = { ...indexed, backoffLimitPerIndex: 1 };

function job(spec: JobSpec, status?: JobStatus): Job {
  return {
    metadata: { name: 'train', namespace: 'ml' },
    spec,
    ...(status ? { status } : {}),
  };
}

const origin = job;
const mirror = (status?: JobStatus, spec: JobSpec = nonIndexed) => job(spec, status);
const firstAttempt: JobProgress = { succeeded: 0, failed: 0 };

/** Conditions as "Type=Status/Reason", in order. */
function conditionSummary(status: JobStatus): string[] {
  return (status.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
}

interface Expected {
  active?: number;
  ready?: number;
  terminating?: number;
  succeeded?: number;
  failed?: number;
  /** null: the field must be absent. */
  startTime?: string | null;
  completionTime?: string | null;
  completedIndexes?: string | null;
  failedIndexes?: string | null;
  conditions?: string[];
}

function observed(status: JobStatus, keys: ReadonlyArray<keyof Expected>): Expected {
  const view: Expected = {};
  for (const key of keys) {
    if (key === 'conditions') view.conditions = conditionSummary(status);
    else (view as Record<string, unknown>)[key] = status[key] ?? null;
  }
  return view;
}

interface TranslationCase {
  name: string;
  origin: Job;
  mirror: Job;
  carried?: JobProgress;
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
      expected: { completedIndexes: '0,1,3', succeeded: 3, startTime: at(0) },
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
        const translated = translateMirrorStatus(originJob, mirrorJob, carried ?? firstAttempt, NOW_DATE);
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
      NOW_DATE,
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
      NOW_DATE,
    );
    expect(translated.conditions).toEqual([failureTarget]);
  });

  it("counts the mirror's uncounted terminated pods, and writes uncountedTerminatedPods empty, never the mirror's pods", () => {
    const translated = translateMirrorStatus(
      origin(nonIndexed, { startTime: at(0) }),
      mirror({
        startTime: at(0),
        active: 1,
        succeeded: 1,
        failed: 1,
        uncountedTerminatedPods: { succeeded: ['pod-a'], failed: ['pod-b', 'pod-c'] },
      }),
      { succeeded: 1, failed: 0 },
      NOW_DATE,
    );
    expect(translated.uncountedTerminatedPods).toEqual({});
    expect(translated).toMatchObject({ succeeded: 3, failed: 3 });
  });

  it('finishes a Job decided while its pods were uncounted with those pods counted, as the worker would have', () => {
    // The worker's controller writes SuccessCriteriaMet in the same update that lists the
    // succeeded pods as uncounted; it counts them next. A mirror lost in between (its worker
    // gone) finishes the origin from what the origin shows, which must already count them.
    const workQueue: JobSpec = { template: {}, completionMode: 'NonIndexed', parallelism: 3 };
    const decidedMirror = mirror(
      {
        startTime: at(0),
        active: 0,
        ready: 0,
        terminating: 0,
        uncountedTerminatedPods: { succeeded: ['pod-a', 'pod-b', 'pod-c'] },
        conditions: [condition('SuccessCriteriaMet', 'True', 3, 'CompletionsReached')],
      },
      workQueue,
    );
    const was = origin(workQueue, { startTime: at(0), active: 3, ready: 3 });
    const synced = translateMirrorStatus(was, decidedMirror, firstAttempt, NOW_DATE);
    expect(
      validateJobStatusTransition({ spec: workQueue, oldStatus: was.status!, newStatus: synced }),
    ).toEqual([]);
    const finished = finishDecidedJob({ ...was, status: synced }, new Date(at(20)));
    expect(finished).toMatchObject({ succeeded: 3, failed: 0, active: 0, uncountedTerminatedPods: {} });
    expect(finished?.conditions?.at(-1)).toMatchObject({ type: 'Complete', reason: 'CompletionsReached' });
  });

  describe('a mirror its worker’s own admission holds suspended (a Kueue there)', () => {
    /** A mirror jobrelay told to run (its record says so) that the worker suspended. */
    const held = (status: JobStatus, suspend: boolean): Job => ({
      ...mirror(status),
      metadata: { name: 'train', namespace: 'ml', annotations: { [suspendSentAnnotation]: 'false' } },
      spec: { ...nonIndexed, suspend },
    });
    const origin0 = origin(nonIndexed, {});

    it('shows Suspended=True on the origin, as the same Job held on that worker alone shows', () => {
      const suspended = condition('Suspended', 'True', 10);
      const translated = translateMirrorStatus(
        origin0,
        held({ conditions: [suspended] }, true),
        firstAttempt,
        NOW_DATE,
      );
      expect(translated.conditions).toEqual([suspended]);
      expect(translated.startTime).toBeUndefined();
      expect(
        validateJobStatusTransition({ spec: origin0.spec!, oldStatus: {}, newStatus: translated }),
      ).toEqual([]);
    });

    it('then JobResumed and the startTime once the worker admits it, in a valid update', () => {
      const wasHeld = origin(nonIndexed, { conditions: [condition('Suspended', 'True', 10)] });
      const admitted = held({ startTime: at(40), active: 1, conditions: [resumed(40)] }, false);
      const translated = translateMirrorStatus(wasHeld, admitted, firstAttempt, NOW_DATE);
      expect(conditionSummary(translated)).toEqual(['Suspended=False/JobResumed']);
      expect(translated).toMatchObject({ startTime: at(40), active: 1 });
      expect(
        validateJobStatusTransition({
          spec: wasHeld.spec!,
          oldStatus: wasHeld.status!,
          newStatus: translated,
        }),
      ).toEqual([]);
    });

    it('shows the JobResumed of a hold the origin never saw (admitted before the origin synced)', () => {
      const admitted = held({ startTime: at(40), active: 1, conditions: [resumed(40)] }, false);
      const translated = translateMirrorStatus(origin0, admitted, firstAttempt, NOW_DATE);
      expect(conditionSummary(translated)).toEqual(['Suspended=False/JobResumed']);
      expect(
        validateJobStatusTransition({ spec: origin0.spec!, oldStatus: {}, newStatus: translated }),
      ).toEqual([]);
      // A re-placed mirror's resume is jobrelay's own (the hold while its progress was seeded).
      const reseeded: Job = {
        ...admitted,
        metadata: {
          ...admitted.metadata,
          annotations: {
            ...admitted.metadata?.annotations,
            [continuesFromAnnotation]: '{"succeeded":0,"failed":0}',
          },
        },
      };
      expect(translateMirrorStatus(origin0, reseeded, firstAttempt, NOW_DATE).conditions).toEqual([]);
    });

    it('shows nothing of a hold that is jobrelay’s own (a re-placed mirror waiting for its seed)', () => {
      const ownHold: Job = {
        ...held({ conditions: [condition('Suspended', 'True', 10)] }, true),
        metadata: { name: 'train', namespace: 'ml', annotations: { [suspendSentAnnotation]: 'true' } },
      };
      expect(translateMirrorStatus(origin0, ownHold, firstAttempt, NOW_DATE).conditions).toEqual([]);
    });
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
    translateMirrorStatus(originJob, mirrorJob, { succeeded: 1, failed: 0, completedIndexes: '0' }, NOW_DATE);
    expect({ originJob, mirrorJob }).toEqual(before);
  });
});

// --- Regressions from the status differential (e2e/src/status-differential.ts) ---

/**
 * A status as the API server returns it: Go leaves out zero counters that are not pointers
 * (active, succeeded, failed), an empty completedIndexes and no conditions; ready,
 * terminating, failedIndexes and uncountedTerminatedPods are pointers and stay.
 */
function asStored(status: JobStatus): JobStatus {
  const stored: JobStatus = { ...status };
  for (const counter of ['active', 'succeeded', 'failed'] as const)
    if (!stored[counter]) delete stored[counter];
  if (!stored.completedIndexes) delete stored.completedIndexes;
  if (!stored.conditions?.length) delete stored.conditions;
  return stored;
}

function finishedAt(seconds: number, type: 'Failed' | 'Complete', reason: string, message: string) {
  const first = type === 'Failed' ? 'FailureTarget' : 'SuccessCriteriaMet';
  return [first, type].map((t) => ({
    type: t,
    status: 'True',
    reason,
    message,
    lastProbeTime: at(seconds),
    lastTransitionTime: at(seconds),
  }));
}

// Final statuses the worker's built-in Job controller wrote for Jobs of seed 20261130 (times
// shifted to the epoch). Run directly, the Job ends with exactly this status; through jobrelay
// the origin must end with it too. Before the fix the origin had no uncountedTerminatedPods.
const finalStatuses: Array<{ name: string; spec: JobSpec; running: JobStatus; final: JobStatus }> = [
  {
    name: 'Indexed, backoffLimitPerIndex 1, indexes 0 and 4 failing (j009)',
    spec: { ...indexed, completions: 5, parallelism: 4, backoffLimitPerIndex: 1, maxFailedIndexes: 4 },
    running: { startTime: at(0), active: 2, ready: 2, terminating: 0, succeeded: 3, failed: 2 },
    final: {
      completedIndexes: '1-3',
      conditions: finishedAt(15, 'Failed', 'FailedIndexes', 'Job has failed indexes'),
      failed: 4,
      failedIndexes: '0,4',
      ready: 0,
      startTime: at(0),
      succeeded: 3,
      terminating: 0,
      uncountedTerminatedPods: {},
    },
  },
  {
    name: 'Indexed, successPolicy succeededCount 2, parallelism 1 (j014)',
    spec: { ...indexed, completions: 4, parallelism: 1, successPolicy: { rules: [{ succeededCount: 2 }] } },
    running: { startTime: at(0), active: 1, ready: 1, terminating: 0, succeeded: 1, completedIndexes: '0' },
    final: {
      completedIndexes: '0,1',
      completionTime: at(4),
      conditions: finishedAt(4, 'Complete', 'SuccessPolicy', 'Matched rules at index 0'),
      ready: 0,
      startTime: at(0),
      succeeded: 2,
      terminating: 0,
      uncountedTerminatedPods: {},
    },
  },
  {
    name: 'work queue of 2, podFailurePolicy FailJob on the exit code (j018)',
    spec: {
      template: {},
      parallelism: 2,
      backoffLimit: 3,
      podFailurePolicy: {
        rules: [
          { action: 'Count', onExitCodes: { containerName: 'main', operator: 'In', values: [99] } },
          { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'NotIn', values: [0, 99] } },
        ],
      },
    },
    running: { startTime: at(0), active: 2, ready: 2, terminating: 0 },
    final: {
      conditions: finishedAt(
        2,
        'Failed',
        'PodFailurePolicy',
        'Container main for pod ml/train-4fgkn failed with exit code 42 matching FailJob rule at index 1',
      ),
      failed: 2,
      ready: 0,
      startTime: at(0),
      terminating: 0,
      uncountedTerminatedPods: {},
    },
  },
];

describe('translateMirrorStatus ends the origin with the mirror’s final status, whole', () => {
  it.each(finalStatuses)('$name', ({ spec, running, final }) => {
    // The origin as jobrelay wrote it while the mirror ran, then the mirror's final status.
    const runningOrigin = translateMirrorStatus(origin(spec), mirror(running, spec), firstAttempt, NOW_DATE);
    const translated = translateMirrorStatus(
      origin(spec, runningOrigin),
      mirror(final, spec),
      firstAttempt,
      NOW_DATE,
    );
    expect(asStored(translated)).toEqual(final);
    expect(validateJobStatusTransition({ spec, oldStatus: runningOrigin, newStatus: translated })).toEqual(
      [],
    );
  });
});

// --- Property: a model of the built-in controller on the worker, and the origin it is mirrored to ---

const specArbitrary = jobSpecArbitrary({ maxCompletions: 5, maxParallelism: 3, elasticIndexed: false });

/** The user flips spec.suspend on the origin; jobrelay propagates it to the mirror. */
type UserStep = { kind: 'user-suspend' } | { kind: 'user-resume' };

/** A user's step, or a sync of the mirror's Job controller. */
type Step = UserStep | ControllerMove;

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
  { weight: 6, arbitrary: progressMoveArbitrary(3) },
  { weight: 4, arbitrary: indexMoveArbitrary },
  { weight: 2, arbitrary: outcomeMoveArbitrary },
);

type Beginning =
  /** Created running. */
  | 'running'
  /** Created suspended (jobrelay wrote Suspended=True on the origin), resumed before placement. */
  | 'resumed-before-placement'
  /** Created suspended and placed suspended: the mirror is suspended too. */
  | 'placed-suspended';

interface OriginJourney {
  /** Each origin /status update: the origin's spec then, its stored status, the translated one. */
  updates: Array<{ spec: JobSpec; oldStatus: JobStatus; newStatus: JobStatus; replaced: boolean }>;
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
    ending: journeyEndingArbitrary,
    // Where the worker is lost and the Job placed again (beyond the end: never).
    replaceAt: fc.nat(45),
  })
  .map(({ spec: chosen, beginning, steps, ending, replaceAt }) => {
    let spec: JobSpec = { ...chosen, suspend: beginning === 'placed-suspended' };
    let clock = 0;
    let originStatus: JobStatus =
      beginning === 'running'
        ? {}
        : { conditions: [{ ...condition('Suspended', 'True', 0), message: 'created suspended' }] };
    // The mirror's status, as the worker's Job controller writes it.
    let mirrorState: ControllerState = initialControllerState;
    let carried: JobProgress = firstAttempt;
    let replaced = false;
    // The user resumes the origin first, then the mirror's controller drives the Job to its end.
    const endingSteps: Step[] = ending === 'none' ? [] : [{ kind: 'user-resume' }, ...ENDING_MOVES[ending]];
    const updates: OriginJourney['updates'] = [];
    // Most mirrors start at once (a no-op for a suspended one).
    const allSteps: Array<[Step, number]> = [
      [{ kind: 'start' }, 0],
      ...steps,
      ...endingSteps.map((s): [Step, number] => [s, 5]),
    ];
    allSteps.forEach(([step, elapsed], index) => {
      clock += elapsed + 1;
      const originFinished = isFinished(originStatus.conditions);
      let replacedNow = false;
      if (index === replaceAt && !originFinished) {
        // Only an unfinished Job is placed again; what it reached so far is carried.
        carried = {
          succeeded: originStatus.succeeded ?? 0,
          failed: originStatus.failed ?? 0,
          ...(originStatus.completedIndexes ? { completedIndexes: originStatus.completedIndexes } : {}),
          ...(originStatus.failedIndexes ? { failedIndexes: originStatus.failedIndexes } : {}),
        };
        mirrorState = initialControllerState;
        replaced = replacedNow = true;
      }
      if (step.kind === 'user-suspend') spec = { ...spec, suspend: true };
      else if (step.kind === 'user-resume') spec = { ...spec, suspend: false };
      else mirrorState = applyControllerMove({ ...mirrorState, clock }, step, spec);
      const newStatus = translateMirrorStatus(
        { metadata: { name: 'train', namespace: 'ml' }, spec, status: originStatus },
        {
          metadata: { name: 'train', namespace: 'ml' },
          spec,
          status: controllerJobStatus(mirrorState, spec),
        },
        carried,
        new Date(at(clock)),
      );
      updates.push({ spec, oldStatus: originStatus, newStatus, replaced: replacedNow });
      originStatus = newStatus;
    });
    return { updates, replaced };
  });

// Hundreds of generated journeys per property: a loaded 2-core machine needs more than 5 s.
describe('translateMirrorStatus over a model of the worker and re-placement', { timeout: 60_000 }, () => {
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
        let firstStart: string | undefined;
        for (const { oldStatus, newStatus } of updates) {
          if (isResume(oldStatus, newStatus)) firstStart = newStatus.startTime;
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
        if (replaced && hasTrueCondition(oldStatus.conditions, 'FailureTarget'))
          reached.add('re-placed failing');
        if (replaced && hasTrueCondition(oldStatus.conditions, 'SuccessCriteriaMet'))
          reached.add('re-placed succeeding');
        for (const type of ['Complete', 'Failed'])
          if (hasTrueCondition(newStatus.conditions, type)) reached.add(type);
        if (
          hasTrueCondition(oldStatus.conditions, 'Suspended') &&
          !hasTrueCondition(newStatus.conditions, 'Suspended')
        ) {
          reached.add('resumed');
        }
        if (
          !hasTrueCondition(oldStatus.conditions, 'Suspended') &&
          hasTrueCondition(newStatus.conditions, 'Suspended')
        ) {
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
