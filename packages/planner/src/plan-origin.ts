// planOrigin, the dispatch of one origin's reconcile: which of the numbered phases a snapshot
// is in (1 gone, 2 stale mirrors, 3 finished, 4 not placed, 5 placed, 6 sync), and the
// placement records it cannot act on (unverifiable, untrusted, removed after the workload ran).
// Each phase's path is in a module of its own (mirror-cleanup.ts, plan-placed.ts,
// status-sync.ts, re-placement.ts, start-afresh.ts); this one only reads the snapshot in
// order and hands each case to its path, so the order of the phases is seen in one place.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { placementAnnotation } from '@jobrelay/mirror';
import { eventReasons } from './event-reasons.ts';
import { planGone, retire, staleMirrors } from './mirror-cleanup.ts';
import { type OriginAction as Action, event } from './origin-actions.ts';
import type { OriginSnapshot } from './origin-snapshot.ts';
import { planPlaced } from './plan-placed.ts';
import type { PlannerConfig } from './planner-config.ts';
import { ranBefore, startAfresh, withCarriedChecked } from './start-afresh.ts';
import { statusWrite } from './status-sync.ts';

/**
 * The pure core of dispatch: from a snapshot of one origin and the clusters, the actions
 * that bring the world in line with it. Same snapshot and clock, same actions. The phases
 * are numbered as the reconcile always was; the why of each is beside it, in the function
 * that plans it.
 */
export function planOrigin<T extends KubeObject>(
  snapshot: OriginSnapshot<T>,
  adapter: WorkloadKindAdapter<T>,
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  // 1. Gone or going: its mirrors go too, on every reachable cluster (mirror-cleanup.ts).
  if (snapshot.kind === 'gone') return planGone(snapshot, config);

  const { origin, clusters } = snapshot;
  const placement = withCarriedChecked(snapshot.placement, adapter);
  const kind = adapter.resource.kind;
  if (placement.kind === 'unverifiable') {
    return [
      event(
        'Warning',
        eventReasons.placementUnverifiable,
        'Sync',
        `annotation ${placementAnnotation} is sealed with a key jobrelay does not hold (key id ${placement.keyId}); nothing is done for this ${kind} until that key is back in jobrelay's record key Secret, or the annotation is removed to place it again`,
      ),
    ];
  }
  const record = placement.kind === 'ok' ? placement.record : undefined;
  const originUid = origin.metadata!.uid!;

  // 2. Mirrors that are not the current attempt's, anywhere reachable, are stale (mirror-cleanup.ts).
  const actions: Action<T>[] = staleMirrors(clusters, originUid, placement, config);

  // Not jobrelay's record (a workload's author wrote or copied it, or it is damaged): nothing in it is
  // believed. The workload starts over from what its own status shows, under a sealed record
  // whose attempt is past every mirror it may still have, so none of them is ever adopted.
  if (placement.kind === 'untrusted') {
    return [
      ...actions,
      event(
        'Warning',
        eventReasons.placementUntrusted,
        'Sync',
        `annotation ${placementAnnotation} was not written by jobrelay for this ${kind} (${placement.problem}); it is ignored and the ${kind} is placed from scratch`,
      ),
      startAfresh(snapshot, adapter, placement.claimedAttempt, config, now),
    ];
  }
  // No record, yet the workload ran somewhere (progress in its status, or a mirror of it): its
  // record was removed, by an admin to have it placed again, or by its author. A placement from
  // attempt 1 and nothing carried would count again from zero (and could adopt a mirror of the
  // first attempt), so it starts afresh as from an untrusted record, its progress kept.
  if (placement.kind === 'none' && !adapter.isFinished(origin) && ranBefore(snapshot, adapter, config)) {
    return [
      ...actions,
      event(
        'Normal',
        eventReasons.placementRemoved,
        'Sync',
        `annotation ${placementAnnotation} was removed from a ${kind} that had run; it is placed again, keeping the progress its status shows`,
      ),
      startAfresh(snapshot, adapter, undefined, config, now),
    ];
  }

  // 3. Finished: keep the mirror for the retention time, then remove it (mirror-cleanup.ts).
  if (adapter.isFinished(origin)) return [...actions, ...retire(snapshot, adapter, record, config, now)];

  // 4. Not placed: wait while suspended, else ask for a placement. A workload jobrelay gave
  //    up on stays as it is; one whose mirror was refused waits out its retry delay first.
  if (!record?.cluster) {
    if (record?.gaveUp !== undefined) return actions;
    if (adapter.isSuspended(origin)) {
      const status = adapter.suspendedBeforePlacementStatus?.(origin, new Date(now));
      if (status) actions.push(...statusWrite(adapter, origin, status, 'suspended'));
      return actions;
    }
    const retryInMs = record?.retryAfter === undefined ? 0 : Date.parse(record.retryAfter) - now;
    if (retryInMs > 0) return [...actions, { type: 'requeue', afterMs: retryInMs }];
    return [...actions, { type: 'enqueue-placement' }];
  }

  // 5. Placed: its mirror on that cluster, or the workload moves (plan-placed.ts); 6. a mirror
  //    in place is synced (status-sync.ts).
  return [...actions, ...planPlaced(adapter, origin, record, placement, clusters, config, now)];
}
