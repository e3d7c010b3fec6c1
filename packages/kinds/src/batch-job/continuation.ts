import { continuesFromAnnotation, deadlineUsedAnnotation } from '@jobrelay/mirror';
import { formatIndexIntervals, parseIndexIntervals } from './index-intervals.ts';
import { type Job, type JobStatus, usesBackoffLimitPerIndex } from './job-object.ts';
import { hasJobProgress, type JobProgress, jobProgressSchema } from './job-progress.ts';

/**
 * What the mirror of a re-placed Job takes over from earlier attempts, so the Job keeps the
 * limits it has on one cluster (docs/architecture.md, "Re-placement, per mode"):
 *
 * - `progress`: the origin's counters and index sets when it was re-placed. The mirror is
 *   created suspended, these are written into its status, and only then is it resumed. The
 *   worker's own Job controller reads its counters from status, so it runs only the remaining
 *   work (completions minus those succeeded; no index that already completed or failed for
 *   good), spends only the remaining backoffLimit and maxFailedIndexes, and a work queue
 *   that had a success completes at once. The mirror's status then is the whole Job's.
 * - `deadlineUsedSeconds`: how much of activeDeadlineSeconds the earlier attempts used (from
 *   the origin's startTime to this mirror's creation); the mirror gets the rest.
 */
export interface MirrorContinuation {
  progress?: JobProgress;
  deadlineUsedSeconds?: number;
}

/**
 * The continuation for a new mirror of `origin` in placement `attempt`, given the progress
 * carried from earlier attempts; undefined when there is nothing to take over. A first
 * attempt carries no progress (there was none before it), but its deadline is the origin's
 * like any other's: a first attempt's mirror created again after the Job started (it vanished
 * before counting anything, so it is not placed again) gets what is left of it. Indexes at
 * or past `completions` are dropped: the mirror's status would be invalid.
 */
export function continuationFor(
  origin: Job,
  attempt: number,
  carried: JobProgress,
  now: Date,
): MirrorContinuation | undefined {
  const spec = origin.spec;
  const continuation: MirrorContinuation = {};
  if (attempt > 1) {
    const completions = spec?.completions ?? undefined;
    const below = (text: string | undefined) =>
      formatIndexIntervals(
        parseIndexIntervals(text).filter((i) => completions === undefined || i < completions),
      );
    const indexed = spec?.completionMode === 'Indexed';
    const completedIndexes = indexed ? below(carried.completedIndexes) : '';
    const failedIndexes = indexed && usesBackoffLimitPerIndex(spec) ? below(carried.failedIndexes) : '';
    const progress: JobProgress = {
      succeeded: carried.succeeded,
      failed: carried.failed,
      ...(completedIndexes ? { completedIndexes } : {}),
      ...(failedIndexes ? { failedIndexes } : {}),
    };
    // An Indexed Job counts exactly its completed indexes as succeeded, and every failed index
    // failed at least once. The worker's controller may add an index to its set before the
    // pod shows in any counter, so a loss in between would otherwise leave a failed index with
    // no failure.
    if (indexed) progress.succeeded = parseIndexIntervals(progress.completedIndexes).length;
    progress.failed = Math.max(progress.failed, parseIndexIntervals(progress.failedIndexes).length);
    if (hasJobProgress(progress)) continuation.progress = progress;
  }

  const startTime = origin.status?.startTime;
  const suspended =
    spec?.suspend === true ||
    (origin.status?.conditions ?? []).some((c) => c.type === 'Suspended' && c.status === 'True');
  if (typeof spec?.activeDeadlineSeconds === 'number' && startTime && !suspended) {
    continuation.deadlineUsedSeconds = Math.max(
      0,
      Math.floor((now.getTime() - Date.parse(startTime)) / 1000),
    );
  }
  return continuation.progress || continuation.deadlineUsedSeconds !== undefined ? continuation : undefined;
}

/** The deadline a mirror gets: what is left of the origin's, at least 1 s (0 is invalid). */
export function remainingDeadlineSeconds(originDeadline: number, usedSeconds: number | undefined): number {
  if (usedSeconds === undefined) return originDeadline;
  return Math.max(1, originDeadline - usedSeconds);
}

/** The progress seeded into this mirror (its annotation), or undefined for a fresh mirror. */
export function seededProgress(mirror: Job): JobProgress | undefined {
  const text = mirror.metadata?.annotations?.[continuesFromAnnotation];
  if (!text) return undefined;
  try {
    const parsed = jobProgressSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the continuation a mirror carries is not one jobrelay could have given it for this
 * placement (attempt, and the progress its sealed record carried), or undefined when it could.
 * A mirror's annotations can be edited on its worker; the progress its status is seeded with,
 * and whether its status already includes the carried counts, are read from them. So they must
 * stay within what the record allows: no more succeeded or failed than were carried, no index
 * that was not carried, and present exactly when there was progress to carry.
 */
export function continuationProblem(
  origin: Job,
  mirror: Job,
  attempt: number,
  carried: JobProgress,
): string | undefined {
  const text = mirror.metadata?.annotations?.[continuesFromAnnotation];
  const claimed = seededProgress(mirror);
  if (text !== undefined && text !== '' && !claimed)
    return `annotation ${continuesFromAnnotation} does not parse`;
  const expected = continuationFor(origin, attempt, carried, new Date(0))?.progress;
  if (!claimed) return expected ? `annotation ${continuesFromAnnotation} was removed` : undefined;
  if (attempt <= 1) return `a first attempt carries no progress, yet it has ${continuesFromAnnotation}`;
  const carriedCompleted = parseIndexIntervals(carried.completedIndexes);
  const carriedFailed = parseIndexIntervals(carried.failedIndexes);
  const within =
    claimed.succeeded <= Math.max(carried.succeeded, carriedCompleted.length) &&
    claimed.failed <= Math.max(carried.failed, carriedFailed.length) &&
    includesAll(carried.completedIndexes, claimed.completedIndexes) &&
    includesAll(carried.failedIndexes, claimed.failedIndexes);
  return within ? undefined : `annotation ${continuesFromAnnotation} claims more progress than was carried`;
}

/** Seconds of the deadline that earlier attempts used, from this mirror's annotation. */
export function deadlineUsedSeconds(mirror: Job): number | undefined {
  const value = Number(mirror.metadata?.annotations?.[deadlineUsedAnnotation]);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
}

function includesAll(have: string | undefined, want: string | undefined): boolean {
  const present = new Set(parseIndexIntervals(have));
  return parseIndexIntervals(want).every((i) => present.has(i));
}

/**
 * The status fields to write into a mirror so it continues from its seeded progress, or
 * undefined when there is nothing to seed or its status already holds it (the worker's Job
 * controller only ever adds to the counters and index sets, so "holds" is "at least").
 */
export function mirrorStatusSeed(mirror: Job): JobStatus | undefined {
  const progress = seededProgress(mirror);
  if (!progress) return undefined;
  const status = mirror.status ?? {};
  const held =
    (status.succeeded ?? 0) >= progress.succeeded &&
    (status.failed ?? 0) >= progress.failed &&
    includesAll(status.completedIndexes, progress.completedIndexes) &&
    includesAll(status.failedIndexes, progress.failedIndexes);
  if (held) return undefined;
  return {
    succeeded: Math.max(status.succeeded ?? 0, progress.succeeded),
    failed: Math.max(status.failed ?? 0, progress.failed),
    ...(progress.completedIndexes !== undefined ? { completedIndexes: progress.completedIndexes } : {}),
    ...(progress.failedIndexes !== undefined ? { failedIndexes: progress.failedIndexes } : {}),
  };
}

/** Whether the mirror may run: it has no progress to take over, or its status holds it. */
export function isSeedApplied(mirror: Job): boolean {
  return mirrorStatusSeed(mirror) === undefined;
}
