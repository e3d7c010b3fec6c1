// The mirrors of an origin that go, by the one rule of classifyMirror: every one of a gone
// origin (phase 1 of planOrigin), the stale ones of a present origin (phase 2), and a finished
// workload's once its retention is over (phase 3); with the lookups they rest on (the reachable
// clusters that hold an object of the origin's name, and which of them is the current mirror),
// which the placed path and eviction use as well. Its own module because what is deleted, and
// when, is one question apart from where a workload runs.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { originUidLabel } from '@jobrelay/mirror';
import type { ParsedPlacement, PlacementRecord } from '@jobrelay/placement';
import { classifyMirror } from './classify-mirror.ts';
import type { OriginAction as Action } from './origin-actions.ts';
import type { ClusterSnapshot, OriginSnapshot } from './origin-snapshot.ts';
import type { PlannerConfig } from './planner-config.ts';
import { statusFromMirror } from './status-sync.ts';

/**
 * 1. Gone or going: its mirrors go too, on every reachable cluster. An unreachable cluster's
 *    are removed on its return (returning-worker cleanup) or by garbage collection.
 */
export function planGone<T extends KubeObject>(
  snapshot: Extract<OriginSnapshot<T>, { kind: 'gone' }>,
  config: PlannerConfig,
): Action<T>[] {
  const { uid } = snapshot;
  if (!uid) return [];
  const actions: Action<T>[] = [{ type: 'forget-origin', uid }];
  for (const cluster of reachable(snapshot.clusters)) {
    const mirror = cluster.mirror!;
    const mirrorClass = classifyMirror(mirror, {
      originId: config.originId,
      cluster: cluster.name,
      origin: undefined,
    });
    // Only this origin's own mirrors: another origin's of the same name is its reconcile's business.
    if (mirrorClass.kind !== 'orphan' || mirrorOriginUid(mirror) !== uid) continue;
    actions.push({ type: 'delete-mirror', cluster: cluster.name, mirror, why: 'its origin was deleted' });
  }
  return actions;
}

/**
 * 2. Mirrors that are not the current attempt's, anywhere reachable, are stale. An
 *    unreachable cluster must never hold up work on the reachable ones. A record jobrelay
 *    did not write names no current mirror: every mirror of the origin goes.
 */
export function staleMirrors<T extends KubeObject>(
  clusters: ClusterSnapshot<T>[],
  originUid: string,
  placement: ParsedPlacement,
  config: PlannerConfig,
): Action<T>[] {
  const actions: Action<T>[] = [];
  for (const cluster of reachable(clusters)) {
    const mirrorClass = classifyMirror(cluster.mirror!, {
      originId: config.originId,
      cluster: cluster.name,
      origin: { uid: originUid, placement },
    });
    if (mirrorClass.kind === 'stale' || mirrorClass.kind === 'orphan') {
      const why =
        mirrorClass.kind === 'stale' ? mirrorClass.why : 'it belongs to an earlier object of this name';
      actions.push({ type: 'delete-mirror', cluster: cluster.name, mirror: cluster.mirror!, why });
    }
  }
  return actions;
}

/** 3. Finished: keep the mirror for the retention time, then remove it. */
export function retire<T extends KubeObject>(
  snapshot: Extract<OriginSnapshot<T>, { kind: 'present' }>,
  adapter: WorkloadKindAdapter<T>,
  record: PlacementRecord | undefined,
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  const here = record?.cluster ? snapshot.clusters.find((c) => c.name === record.cluster) : undefined;
  // An unreachable cluster's mirror is retired when it is back (its return re-queues every origin).
  if (!record || !here?.connected || !here.active) return [];
  const mirror = currentMirror(here, snapshot.origin.metadata!.uid!, snapshot.placement, config);
  if (!mirror) return [];
  // A controller may go on writing a finished mirror's status (JobSet counts its Jobs' pods
  // down after Failed): the origin keeps taking it, under the kind's rules, until the mirror
  // goes, so it ends as its mirror ended. Only from a finished mirror: an origin finished
  // without it (a decided outcome) is never rewritten from a mirror that has not finished.
  const sync = adapter.isFinished(mirror)
    ? statusFromMirror(adapter, snapshot.origin, mirror, record, now)
    : [];
  // Without a finish time (a kind that does not say) the retention counts from now, every time:
  // the mirror goes at once rather than never.
  const finishedAt = adapter.finishedAt(snapshot.origin)?.getTime();
  const wait = finishedAt === undefined ? 0 : finishedAt + config.mirrorRetentionMs - now;
  if (wait > 0) return [...sync, { type: 'requeue', afterMs: wait }];
  return [
    ...sync,
    { type: 'delete-mirror', cluster: here.name, mirror, why: `its ${adapter.resource.kind} finished` },
  ];
}

/** Reachable clusters holding an object of the origin's name. */
export function reachable<T extends KubeObject>(clusters: ClusterSnapshot<T>[]): ClusterSnapshot<T>[] {
  return clusters.filter((c) => c.connected && c.active && c.mirror !== undefined);
}

function mirrorOriginUid(mirror: KubeObject): string | undefined {
  return mirror.metadata?.labels?.[originUidLabel];
}

export function currentMirror<T extends KubeObject>(
  cluster: ClusterSnapshot<T>,
  originUid: string,
  placement: ParsedPlacement,
  config: PlannerConfig,
): T | undefined {
  if (!cluster.mirror) return undefined;
  const mirrorClass = classifyMirror(cluster.mirror, {
    originId: config.originId,
    cluster: cluster.name,
    origin: { uid: originUid, placement },
  });
  return mirrorClass.kind === 'current' ? cluster.mirror : undefined;
}
