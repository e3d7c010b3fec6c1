import { rfc3339Seconds } from '@jobrelay/kube';
import { continuesFromAnnotation, deadlineUsedAnnotation } from '@jobrelay/mirror';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildMirrorJob } from '../../src/batch-job/build-mirror-job.ts';
import {
  continuationFor,
  deadlineUsedSeconds,
  isSeedApplied,
  mirrorStatusSeed,
  remainingDeadlineSeconds,
  seededProgress,
} from '../../src/batch-job/continuation.ts';
import { formatIndexIntervals, parseIndexIntervals } from '../../src/batch-job/index-intervals.ts';
import type { Job, JobSpec, JobStatus } from '../../src/batch-job/job-object.ts';
import type { JobProgress } from '../../src/batch-job/job-progress.ts';
import { validateJobStatusTransition } from '../../src/batch-job/job-status-rules.ts';
import { mirrorSpecUpdate, mirrorSuspendRecordUpdate } from '../../src/batch-job/mirror-spec-update.ts';
import { translateMirrorStatus } from '../../src/batch-job/translate-mirror-status.ts';

const startedAt = '2026-01-01T00:00:00Z';
/** The clock `s` seconds after the origin started. */
const secondsLater = (s: number) => new Date(Date.parse(startedAt) + s * 1000);
/** The same instant as a status time: whole seconds, as the apiserver stores it. */
const timeLater = (s: number) => rfc3339Seconds(secondsLater(s));

function origin(spec: Partial<JobSpec>, status: JobStatus = { startTime: startedAt }): Job {
  return {
    metadata: { name: 'train', namespace: 'team-a', uid: 'origin-uid' },
    spec: {
      managedBy: 'jobrelay.dev/dispatcher',
      completionMode: 'NonIndexed',
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      suspend: false,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
    status,
  };
}

/** The mirror as the worker's apiserver returns it right after creation: no status yet. */
function created(origin: Job, attempt: number, carried: JobProgress, now: Date): Job {
  const continuation = continuationFor(origin, attempt, carried, now);
  return buildMirrorJob(origin, { originId: 'mgmt', attempt, continuation });
}

describe('continuationFor', () => {
  it('takes no progress over for a first placement, nor any deadline before the Job started', () => {
    const notStarted = origin({ activeDeadlineSeconds: 60 }, {});
    expect(continuationFor(notStarted, 1, { succeeded: 3, failed: 1 }, secondsLater(10))).toBe(undefined);
    expect(continuationFor(origin({}), 1, { succeeded: 3, failed: 1 }, secondsLater(10))).toBe(undefined);
  });

  it('gives a first attempt’s mirror created again after the Job started only what is left of the deadline', () => {
    // Its mirror vanished before counting anything, so the Job was not placed again: the new
    // mirror is still attempt 1, and the Job's deadline has been running since its startTime.
    expect(
      continuationFor(
        origin({ activeDeadlineSeconds: 60 }),
        1,
        { succeeded: 0, failed: 0 },
        secondsLater(15),
      ),
    ).toEqual({ deadlineUsedSeconds: 15 });
  });

  it('takes nothing over from an attempt that made no progress and has no deadline', () => {
    expect(continuationFor(origin({}), 2, { succeeded: 0, failed: 0 }, secondsLater(10))).toBe(undefined);
  });

  it('carries the counters of a NonIndexed Job', () => {
    expect(
      continuationFor(origin({ completions: 6 }), 2, { succeeded: 2, failed: 1 }, secondsLater(5)),
    ).toEqual({
      progress: { succeeded: 2, failed: 1 },
    });
  });

  it('carries the completed and finally failed indexes of an Indexed Job, and counts succeeded from them', () => {
    const spec = { completionMode: 'Indexed', completions: 6, backoffLimitPerIndex: 0, maxFailedIndexes: 3 };
    const carried = { succeeded: 3, failed: 2, completedIndexes: '0,2,4', failedIndexes: '1,3' };
    expect(continuationFor(origin(spec), 3, carried, secondsLater(1))?.progress).toEqual(carried);
  });

  it('counts at least one failure per failed index (lost before the worker counted the pod)', () => {
    const spec = { completionMode: 'Indexed', completions: 4, backoffLimitPerIndex: 0 };
    const carried = { succeeded: 1, failed: 0, completedIndexes: '0', failedIndexes: '1,3' };
    expect(continuationFor(origin(spec), 2, carried, secondsLater(1))?.progress).toEqual({
      ...carried,
      failed: 2,
    });
  });

  it('drops failedIndexes without backoffLimitPerIndex, and indexes past completions', () => {
    const spec = { completionMode: 'Indexed', completions: 3 };
    const carried = { succeeded: 3, failed: 1, completedIndexes: '1,2,5', failedIndexes: '0' };
    expect(continuationFor(origin(spec), 2, carried, secondsLater(1))?.progress).toEqual({
      succeeded: 2,
      failed: 1,
      completedIndexes: '1,2',
    });
  });

  it('records how much of the deadline the Job used, from its startTime', () => {
    const job = origin({ activeDeadlineSeconds: 30 });
    expect(continuationFor(job, 2, { succeeded: 0, failed: 0 }, secondsLater(12.7))).toEqual({
      deadlineUsedSeconds: 12,
    });
  });

  it('uses none of the deadline while the Job is suspended or not started', () => {
    const suspended = origin({ activeDeadlineSeconds: 30, suspend: true });
    expect(continuationFor(suspended, 2, { succeeded: 0, failed: 0 }, secondsLater(20))).toBe(undefined);
    const notStarted = origin({ activeDeadlineSeconds: 30 }, {});
    expect(continuationFor(notStarted, 2, { succeeded: 0, failed: 0 }, secondsLater(20))).toBe(undefined);
  });
});

describe('the mirror of a re-placed Job', () => {
  it('is created suspended, with its progress and used deadline recorded', () => {
    const job = origin({ completions: 6, activeDeadlineSeconds: 30 });
    const mirror = created(job, 2, { succeeded: 2, failed: 1 }, secondsLater(10));
    expect(mirror.spec?.suspend).toBe(true);
    expect(mirror.spec?.activeDeadlineSeconds).toBe(20);
    expect(seededProgress(mirror)).toEqual({ succeeded: 2, failed: 1 });
    expect(deadlineUsedSeconds(mirror)).toBe(10);
  });

  it('is not suspended and keeps its deadline when there is nothing to take over', () => {
    const mirror = created(origin({ completions: 6 }), 2, { succeeded: 0, failed: 0 }, secondsLater(10));
    expect(mirror.spec?.suspend).toBe(false);
    expect(mirror.metadata?.annotations?.[continuesFromAnnotation]).toBe(undefined);
    expect(mirror.metadata?.annotations?.[deadlineUsedAnnotation]).toBe(undefined);
    expect(isSeedApplied(mirror)).toBe(true);
  });

  it('gets at least one second when the deadline has passed (the worker then fails it with DeadlineExceeded)', () => {
    const mirror = created(
      origin({ activeDeadlineSeconds: 30 }),
      2,
      { succeeded: 0, failed: 0 },
      secondsLater(45),
    );
    expect(mirror.spec?.activeDeadlineSeconds).toBe(1);
  });

  it('stays suspended until its status holds the seed, then resumes', () => {
    const job = origin({ completions: 6, parallelism: 2 });
    const mirror = created(job, 2, { succeeded: 2, failed: 1 }, secondsLater(3));
    expect(mirrorStatusSeed(mirror)).toEqual({ succeeded: 2, failed: 1 });
    expect(mirrorSpecUpdate(job, mirror)).toBe(undefined);
    const seeded = { ...mirror, status: { succeeded: 2, failed: 1 } };
    expect(mirrorStatusSeed(seeded)).toBe(undefined);
    expect(mirrorSpecUpdate(job, seeded)).toEqual({ suspend: false });
  });

  it('stays suspended after seeding while its origin is suspended', () => {
    const job = origin({ completions: 6, suspend: true });
    const mirror = created(job, 2, { succeeded: 2, failed: 0 }, secondsLater(3));
    expect(mirrorSpecUpdate(job, { ...mirror, status: { succeeded: 2 } })).toBe(undefined);
  });

  it('follows a change of the origin’s deadline, minus what earlier attempts used', () => {
    const job = origin({ activeDeadlineSeconds: 30 });
    const mirror = created(job, 2, { succeeded: 0, failed: 0 }, secondsLater(10));
    expect(mirrorSpecUpdate(job, mirror)).toBe(undefined);
    const longer = origin({ activeDeadlineSeconds: 100 });
    expect(mirrorSpecUpdate(longer, mirror)).toEqual({ activeDeadlineSeconds: 90 });
  });

  it('ignores a damaged progress annotation rather than seeding nonsense', () => {
    const mirror = created(origin({ completions: 6 }), 2, { succeeded: 2, failed: 0 }, secondsLater(3));
    mirror.metadata!.annotations![continuesFromAnnotation] = '{"succeeded":"two"}';
    expect(seededProgress(mirror)).toBe(undefined);
    expect(mirrorStatusSeed(mirror)).toBe(undefined);
  });
});

// A spec and the progress an origin can have made under it when its mirror was lost.
const reachedProgress = fc
  .record({
    indexed: fc.boolean(),
    completions: fc.integer({ min: 1, max: 12 }),
    perIndex: fc.boolean(),
    backoffLimit: fc.integer({ min: 0, max: 6 }),
    seed: fc.array(fc.constantFrom('done', 'failed', 'open'), { minLength: 12, maxLength: 12 }),
    nonIndexedSucceeded: fc.nat({ max: 12 }),
    failed: fc.nat({ max: 6 }),
    deadline: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }),
    lostAfterSeconds: fc.integer({ min: 0, max: 900 }),
  })
  .map((r) => {
    const indexed = r.indexed;
    const perIndex = indexed && r.perIndex;
    const verdicts = r.seed.slice(0, r.completions);
    const done = verdicts.flatMap((v, i) => (v === 'done' ? [i] : []));
    const failedIndexes = perIndex ? verdicts.flatMap((v, i) => (v === 'failed' ? [i] : [])) : [];
    // Not yet finished: at least one index (or completion) is still open.
    if (indexed && done.length + failedIndexes.length >= r.completions) done.pop();
    const succeeded = indexed ? done.length : Math.min(r.nonIndexedSucceeded, r.completions - 1);
    const spec: Partial<JobSpec> = {
      completionMode: indexed ? 'Indexed' : 'NonIndexed',
      completions: r.completions,
      parallelism: Math.max(1, Math.ceil(r.completions / 2)),
      backoffLimit: perIndex ? 2147483647 : r.backoffLimit,
      ...(perIndex ? { backoffLimitPerIndex: 1, maxFailedIndexes: r.completions } : {}),
      ...(r.deadline !== undefined ? { activeDeadlineSeconds: r.deadline } : {}),
    };
    const failed = perIndex
      ? Math.max(r.failed, failedIndexes.length * 2)
      : Math.min(r.failed, r.backoffLimit);
    const carried: JobProgress = {
      succeeded,
      failed,
      ...(indexed && done.length > 0 ? { completedIndexes: formatIndexIntervals(done) } : {}),
      ...(failedIndexes.length > 0 ? { failedIndexes: formatIndexIntervals(failedIndexes) } : {}),
    };
    return { spec, carried, lostAfterSeconds: r.lostAfterSeconds };
  });

describe('re-placement keeps the limits of one cluster (properties)', () => {
  it('the seed is a status the worker’s apiserver accepts on the new mirror', () => {
    fc.assert(
      fc.property(reachedProgress, ({ spec, carried, lostAfterSeconds }) => {
        const job = origin(spec, {
          startTime: startedAt,
          succeeded: carried.succeeded,
          failed: carried.failed,
        });
        const mirror = created(job, 2, carried, secondsLater(lostAfterSeconds));
        const seed = mirrorStatusSeed(mirror);
        if (!seed) return;
        // The worker's controller has just marked the new Job suspended.
        const oldStatus: JobStatus = {
          conditions: [
            { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' },
          ],
        };
        const violations = validateJobStatusTransition({
          spec: mirror.spec!,
          oldStatus,
          newStatus: { ...oldStatus, ...seed },
        });
        expect(violations).toEqual([]);
      }),
    );
  });

  it('the new mirror runs only the remaining work: never more than completions, final indexes kept', () => {
    fc.assert(
      fc.property(reachedProgress, fc.nat({ max: 3 }), ({ spec, carried }, extraFailures) => {
        const job = origin(spec, {
          startTime: startedAt,
          succeeded: carried.succeeded,
          failed: carried.failed,
          ...(carried.completedIndexes ? { completedIndexes: carried.completedIndexes } : {}),
          ...(carried.failedIndexes ? { failedIndexes: carried.failedIndexes } : {}),
        });
        const mirror = created(job, 2, carried, secondsLater(1));
        const seed = mirrorStatusSeed(mirror) ?? {};
        // What the worker's Job controller then does: it starts only what its status leaves
        // open, and adds what those pods did to the status it was given.
        const completions = spec.completions!;
        const seededDone = parseIndexIntervals(seed.completedIndexes);
        const seededFailed = parseIndexIntervals(seed.failedIndexes);
        const open =
          spec.completionMode === 'Indexed'
            ? [...Array(completions).keys()].filter(
                (i) => !seededDone.includes(i) && !seededFailed.includes(i),
              )
            : [];
        const remaining =
          spec.completionMode === 'Indexed' ? open.length : completions - (seed.succeeded ?? 0);
        expect(remaining).toBeGreaterThanOrEqual(0);
        expect(remaining).toBeLessThanOrEqual(completions - carried.succeeded);
        const finalMirror: Job = {
          ...mirror,
          spec: { ...mirror.spec!, suspend: false },
          status: {
            startTime: timeLater(2),
            completionTime: timeLater(3),
            succeeded: (seed.succeeded ?? 0) + remaining,
            failed: (seed.failed ?? 0) + extraFailures,
            ...(spec.completionMode === 'Indexed'
              ? { completedIndexes: formatIndexIntervals([...seededDone, ...open]) }
              : {}),
            ...(seed.failedIndexes ? { failedIndexes: seed.failedIndexes } : {}),
            conditions: [
              { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached' },
              { type: 'Complete', status: 'True', reason: 'CompletionsReached' },
            ],
          },
        };
        // A seeded mirror's status is the whole Job's: nothing more is added to it.
        const final = translateMirrorStatus(job, finalMirror, { succeeded: 0, failed: 0 }, secondsLater(3));
        const failedIndexesNow = parseIndexIntervals(final.failedIndexes);
        expect(final.succeeded).toBe(completions - failedIndexesNow.length);
        expect(final.succeeded).toBeLessThanOrEqual(completions);
        expect(final.failed).toBe(carried.failed + extraFailures);
        // An index decided in an earlier attempt keeps its verdict.
        for (const i of parseIndexIntervals(carried.completedIndexes))
          expect(parseIndexIntervals(final.completedIndexes)).toContain(i);
        for (const i of parseIndexIntervals(carried.failedIndexes)) expect(failedIndexesNow).toContain(i);
      }),
    );
  });

  it('the deadline left plus the deadline used is the origin’s (at least one second is left)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.nat({ max: 200_000 }), (deadline, used) => {
        const left = remainingDeadlineSeconds(deadline, used);
        expect(left).toBeGreaterThanOrEqual(1);
        if (used < deadline) expect(left + used).toBe(deadline);
        else expect(left).toBe(1);
      }),
    );
  });

  it('spec propagation is stable: once applied, it proposes nothing more', () => {
    fc.assert(
      fc.property(reachedProgress, fc.boolean(), ({ spec, carried, lostAfterSeconds }, seeded) => {
        const job = origin(spec, { startTime: startedAt });
        const mirror = created(job, 2, carried, secondsLater(lostAfterSeconds));
        if (seeded) mirror.status = { ...mirror.status, ...mirrorStatusSeed(mirror) };
        const patch = mirrorSpecUpdate(job, mirror);
        // Never resumed before the seed is in its status.
        if (!isSeedApplied(mirror)) expect(patch?.suspend).not.toBe(false);
        // The executor writes the record of what was sent in the same patch.
        const record = mirrorSuspendRecordUpdate(job, mirror);
        const applied = {
          ...mirror,
          metadata: { ...mirror.metadata, annotations: { ...mirror.metadata?.annotations, ...record } },
          spec: { ...mirror.spec!, ...patch },
        };
        expect(mirrorSpecUpdate(job, applied)).toBe(undefined);
        expect(mirrorSuspendRecordUpdate(job, applied)).toBe(undefined);
      }),
    );
  });
});
