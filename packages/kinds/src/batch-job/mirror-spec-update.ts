import { heldByWorker, suspendRecordUpdate, suspendTransition } from '@jobrelay/mirror';
import { deadlineUsedSeconds, isSeedApplied, remainingDeadlineSeconds } from './continuation.ts';
import type { Job, JobCondition, JobSpec } from './job-object.ts';

/** Spec fields the apiserver lets change on a running Job, so we propagate them. */
const mutableFields = [
  'suspend',
  'parallelism',
  'activeDeadlineSeconds',
  'backoffLimit',
  'maxFailedIndexes',
] as const;

/**
 * The suspend value jobrelay means its mirror to have: the origin's, or true while a
 * re-placed mirror waits for the progress it continues from (jobrelay's own hold).
 */
function intendedSuspend(origin: Job, mirror: Job): boolean {
  return (origin.spec?.suspend ?? false) || !isSeedApplied(mirror);
}

/**
 * The suspend value to send the mirror, when jobrelay's intent changed since it last sent one
 * (the origin was suspended or resumed, a seed was applied): a transition goes down once. A
 * standing value is never asserted again: a worker that holds the mirror suspended under its
 * own admission (Kueue's webhook suspends a Job naming a LocalQueue until its quota admits it)
 * keeps it held, and resumes it itself. A mirror without the record (built by an older
 * jobrelay) is brought to the intent once, and gets the record then.
 */
export function mirrorSuspendTransition(origin: Job, mirror: Job): boolean | undefined {
  return suspendTransition(intendedSuspend(origin, mirror), mirror, mirror.spec?.suspend ?? false);
}

/** The record of the suspend value sent, to write with the mirror's spec patch; undefined when it is current. */
export function mirrorSuspendRecordUpdate(origin: Job, mirror: Job): Record<string, string> | undefined {
  return suspendRecordUpdate(intendedSuspend(origin, mirror), mirror);
}

/**
 * Why the mirror is suspended though jobrelay last told it to run: its worker's own admission
 * holds it (the worker's reason, from the Job's Suspended condition when its controller wrote
 * one), or undefined when it is not held so.
 */
export function mirrorHeldByWorker(origin: Job, mirror: Job): string | undefined {
  const held = heldByWorker(origin.spec?.suspend === true, mirror, mirror.spec?.suspend === true);
  if (!held || !isSeedApplied(mirror)) return undefined;
  const suspended: JobCondition | undefined = mirror.status?.conditions?.find(
    (c) => c.type === 'Suspended' && c.status === 'True',
  );
  const said = suspended ? [suspended.reason, suspended.message].filter(Boolean).join(': ') : '';
  return said ? `its Job is suspended there (${said})` : 'its Job is suspended there';
}

/**
 * The merge patch that brings a mirror's mutable spec in line with its origin, or undefined
 * when they agree. Immutable fields are never sent: they cannot differ from creation. A
 * re-placed Job's mirror stays suspended until its status holds the progress it continues
 * from, and its deadline is what is left of the origin's. Suspend goes down only as a
 * transition (mirrorSuspendTransition).
 */
export function mirrorSpecUpdate(origin: Job, mirror: Job): Partial<JobSpec> | undefined {
  const patch: Record<string, unknown> = {};
  const want = origin.spec;
  const have = mirror.spec;
  if (!want || !have) return undefined;
  const suspend = mirrorSuspendTransition(origin, mirror);
  if (suspend !== undefined) patch.suspend = suspend;
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
