// A Job's progress: what the core carries across attempts as an opaque value (the placement
// record's `carried`), and what a re-placed mirror is seeded with. Defined once, here.

import { z } from 'zod';
import { carriedProgressReader } from '../carried-progress.ts';
import { parseIndexIntervals } from './index-intervals.ts';
import type { Job } from './job-object.ts';

/** The Job's counters and index sets (as the apiserver writes them) when an attempt began. */
export const jobProgressSchema = z.object({
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  completedIndexes: z.string().optional(),
  failedIndexes: z.string().optional(),
});

export type JobProgress = z.infer<typeof jobProgressSchema>;

/** Nothing done yet: what a first attempt continues from. */
export const noJobProgress: JobProgress = { succeeded: 0, failed: 0 };

/** The Job's progress so far, from its status. */
export function jobProgressOf(job: Job): JobProgress {
  const status = job.status ?? {};
  return {
    succeeded: status.succeeded ?? 0,
    failed: status.failed ?? 0,
    ...(status.completedIndexes ? { completedIndexes: status.completedIndexes } : {}),
    ...(status.failedIndexes ? { failedIndexes: status.failedIndexes } : {}),
  };
}

/** The Job's progress in a value the core handed back (the placement record's `carried`). */
export const carriedJob = carriedProgressReader('Job', jobProgressSchema, noJobProgress);

/** Whether any count or index was reached (a first attempt carries none). */
export function hasJobProgress(progress: JobProgress): boolean {
  return (
    progress.succeeded > 0 ||
    progress.failed > 0 ||
    parseIndexIntervals(progress.completedIndexes).length > 0 ||
    parseIndexIntervals(progress.failedIndexes).length > 0
  );
}

/**
 * Whether the Job shows progress `carried` does not hold. The Job controller adds an index to
 * completedIndexes (failedIndexes) one status update before it counts the pod: a changed index
 * list is progress too. Both lists are in the apiserver's canonical form, and `carried` was
 * taken from the origin when the attempt began.
 */
export function jobProgressMovedPast(job: Job, carried: JobProgress): boolean {
  const progress = jobProgressOf(job);
  return (
    progress.succeeded > carried.succeeded ||
    progress.failed > carried.failed ||
    (progress.completedIndexes ?? '') !== (carried.completedIndexes ?? '') ||
    (progress.failedIndexes ?? '') !== (carried.failedIndexes ?? '')
  );
}
