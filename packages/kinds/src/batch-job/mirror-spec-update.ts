import { deadlineUsedSeconds, isSeedApplied, remainingDeadlineSeconds } from './continuation.ts';
import type { Job, JobSpec } from './job-object.ts';

/** Spec fields the apiserver lets change on a running Job, so we propagate them. */
const mutableFields = [
  'suspend',
  'parallelism',
  'activeDeadlineSeconds',
  'backoffLimit',
  'maxFailedIndexes',
] as const;

/**
 * The merge patch that brings a mirror's mutable spec in line with its origin, or undefined
 * when they agree. Immutable fields are never sent: they cannot differ from creation. A
 * re-placed Job's mirror stays suspended until its status holds the progress it continues
 * from, and its deadline is what is left of the origin's.
 */
export function mirrorSpecUpdate(origin: Job, mirror: Job): Partial<JobSpec> | undefined {
  const patch: Record<string, unknown> = {};
  const want = origin.spec;
  const have = mirror.spec;
  if (!want || !have) return undefined;
  const suspend = (want.suspend ?? false) || !isSeedApplied(mirror);
  if (suspend !== (have.suspend ?? false)) patch.suspend = suspend;
  for (const field of mutableFields) {
    // Both objects come from apiservers with defaults applied; an absent field has no opinion.
    if (field === 'suspend' || want[field] === undefined) continue;
    const wanted =
      field === 'activeDeadlineSeconds' && typeof want.activeDeadlineSeconds === 'number'
        ? remainingDeadlineSeconds(want.activeDeadlineSeconds, deadlineUsedSeconds(mirror))
        : want[field];
    if (wanted !== have[field]) patch[field] = wanted;
  }
  // Indexed Jobs may change completions, but only together with parallelism, kept equal.
  if (
    want.completionMode === 'Indexed' &&
    want.completions !== have.completions &&
    want.completions === want.parallelism
  ) {
    patch.completions = want.completions;
    patch.parallelism = want.parallelism;
  }
  return Object.keys(patch).length > 0 ? (patch as Partial<JobSpec>) : undefined;
}
