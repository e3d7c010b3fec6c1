// Placement records jobrelay cannot act on: one it did not write (untrusted), one it sealed
// whose carried progress the kind refuses (withCarriedChecked makes it untrusted), and one
// removed from a workload that had run. Each starts over under a fresh sealed record
// (startAfresh) whose attempt is past every mirror the workload may still have, carrying
// exactly the progress its own status shows. Its own module because it is the planner's side
// of the property in test/untrusted-records.test.ts: no record jobrelay did not seal is acted on.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { mirrorOwnership } from '@jobrelay/mirror';
import type { ParsedPlacement } from '@jobrelay/placement';
import { reachable } from './mirror-cleanup.ts';
import type { OriginAction as Action } from './origin-actions.ts';
import type { OriginSnapshot } from './origin-snapshot.ts';
import type { PlannerConfig } from './planner-config.ts';
import { progressOf } from './re-placement.ts';

/**
 * A sealed record whose carried progress its kind refuses is not acted on: jobrelay wrote it,
 * so only a bug or a downgrade can have made it, and building a mirror from it would guess.
 * It is treated as a record jobrelay did not write (placed afresh from the workload's status).
 */
export function withCarriedChecked<T extends KubeObject>(
  placement: ParsedPlacement,
  adapter: WorkloadKindAdapter<T>,
): ParsedPlacement {
  if (placement.kind !== 'ok') return placement;
  const problem = adapter.progress?.problem(placement.record.carried);
  if (problem === undefined) return placement;
  return {
    kind: 'untrusted',
    problem: `its carried progress is not a ${adapter.resource.kind}'s (carried: ${problem})`,
    claimedAttempt: placement.record.attempt,
  };
}

/**
 * A fresh sealed record: no cluster, an attempt past every mirror it may still have, carrying
 * exactly the progress the workload's own status shows.
 */
export function startAfresh<T extends KubeObject>(
  snapshot: Extract<OriginSnapshot<T>, { kind: 'present' }>,
  adapter: WorkloadKindAdapter<T>,
  claimedAttempt: number | undefined,
  config: PlannerConfig,
  now: number,
): Action<T> {
  const carried = progressOf(adapter, snapshot.origin);
  // Progress carries over only into a later attempt (a first attempt's mirror is never seeded):
  // with some, the fresh attempt is at least the second, so its mirror runs only what is left.
  const first = adapter.progress?.holdsAny(carried) ? 2 : 1;
  return {
    type: 'patch-placement',
    record: {
      attempt: Math.max(first, nextAttemptAfter(snapshot, claimedAttempt, config)),
      carried,
      excludedClusters: [],
      waitingSince: new Date(now).toISOString(),
    },
  };
}

/** Whether a workload without a record shows it ran: counts in its status, or a mirror of it somewhere reachable. */
export function ranBefore<T extends KubeObject>(
  snapshot: Extract<OriginSnapshot<T>, { kind: 'present' }>,
  adapter: WorkloadKindAdapter<T>,
  config: PlannerConfig,
): boolean {
  if (adapter.progress?.holdsAny(adapter.progress.of(snapshot.origin))) return true;
  const uid = snapshot.origin.metadata!.uid!;
  return reachable(snapshot.clusters).some(
    (cluster) => mirrorOwnership(cluster.mirror!, config.originId, uid).kind === 'this-origin',
  );
}

/**
 * An attempt number above the untrusted record's claim and above every mirror of this origin
 * seen on a reachable cluster: a fresh placement's mirror is never mistaken for an old one.
 */
function nextAttemptAfter<T extends KubeObject>(
  snapshot: Extract<OriginSnapshot<T>, { kind: 'present' }>,
  claimedAttempt: number | undefined,
  config: PlannerConfig,
): number {
  let highest = claimedAttempt ?? 0;
  for (const cluster of reachable(snapshot.clusters)) {
    const ownership = mirrorOwnership(cluster.mirror!, config.originId, snapshot.origin.metadata!.uid!);
    if (ownership.kind === 'this-origin') highest = Math.max(highest, ownership.attempt ?? 0);
  }
  return highest + 1;
}
