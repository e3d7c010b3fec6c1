// Moving a workload: `replace`, the re-placement arithmetic (next attempt, progress carried,
// clusters excluded, refusals kept; or finishing a decided outcome instead), used by every
// path that gives up on where a workload runs (a drained, lost or unregistered cluster, a
// mirror that vanished after running, a name collision, a cluster that no longer takes it);
// and eviction by a queue's admission (`planEviction` marks the record, `evict` tears the
// mirror down in the foreground before the workload goes back to its queue). Its own module
// because the attempt counter and the carried progress change here and nowhere else.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import {
  nothingCarried,
  type ParsedPlacement,
  type PlacementRecord,
  type WorkloadProgress,
} from '@jobrelay/placement';
import { eventReasons } from './event-reasons.ts';
import { currentMirror } from './mirror-cleanup.ts';
import { type OriginAction as Action, event } from './origin-actions.ts';
import type { ClusterSnapshot } from './origin-snapshot.ts';
import { type PlannerConfig, unavailableClusterRetryMs } from './planner-config.ts';
import { statusFromMirror, statusWrite } from './status-sync.ts';

/**
 * Back to the queue for another cluster, carrying the progress reached so far. An outcome
 * already decided (the kind's decidedOutcomeStatus) is final instead: the
 * workload finishes that way rather than running again elsewhere.
 */
export function replace<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
  because: string,
  exclude: readonly string[],
  now: number,
): Action<T>[] {
  const decided = adapter.decidedOutcomeStatus?.(origin, new Date(now));
  if (decided) {
    const write = statusWrite(adapter, origin, decided, 'decided');
    if (write.some((a) => a.type === 'refuse-status')) return write;
    return [
      ...write,
      event('Normal', eventReasons.finishedWithoutMirror, 'Sync', `finished as decided before: ${because}`),
    ];
  }
  const next: PlacementRecord = {
    attempt: record.attempt + 1,
    carried: progressOf(adapter, origin),
    excludedClusters: [...new Set([...record.excludedClusters, ...exclude])],
    // Refusals count over the workload's whole life, not per attempt.
    ...(record.refusals === undefined
      ? {}
      : { refusals: record.refusals, refusedBy: record.refusedBy ?? [] }),
    lastReplacedBecause: because,
    waitingSince: new Date(now).toISOString(),
  };
  return [
    { type: 'patch-placement', record: next },
    event(
      'Warning',
      eventReasons.replacing,
      'Place',
      `placing the ${adapter.resource.kind} again: ${because} (attempt ${next.attempt})`,
    ),
    { type: 'enqueue-placement' },
  ];
}

/** The workload's progress so far, to carry into its next attempt: nothing for a kind that keeps none. */
export function progressOf<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
): WorkloadProgress {
  return adapter.progress?.of(origin) ?? nothingCarried;
}

/** While an evicted workload's mirror is being deleted, look again this often (its watch events come sooner). */
export const evictionCheckMs = 5_000;

/**
 * An evicted workload (its record marked `preempted` by its queue's admission) keeps its
 * placement, and so its quota, until its pods are gone: its record names its cluster and queue
 * until the worker no longer holds its mirror, and the mirror is deleted in the foreground (the
 * worker's garbage collector deletes its pods first, and the object goes only once they are
 * gone). Only then does it go back to its queue, carrying its progress (replace). Its status
 * is synced one last time before the delete and then left as it is: what a mirror being torn
 * down shows (its pods killed, counted as failed) is not the workload's progress.
 *
 * A cluster that cannot be observed holds it as it holds any workload placed there: until the
 * worker-lost timeout, after which jobrelay takes that worker's pods as lost and places it again.
 */
export function evict<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
  placement: ParsedPlacement,
  clusters: ClusterSnapshot<T>[],
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  const because = `preempted: ${record.preempted}`;
  const here = clusters.find((c) => c.name === record.cluster);
  if (!here?.registered)
    return replace(
      adapter,
      origin,
      record,
      `${because} (cluster ${record.cluster} is no longer registered)`,
      [],
      now,
    );
  if (!here.connected || !here.active) {
    const lostForMs = here.inactiveSince === undefined ? 0 : now - here.inactiveSince;
    if (lostForMs >= config.workerLostTimeoutMs) {
      const lost = `cluster ${record.cluster} has not been Active for ${Math.round(lostForMs / 1000)}s (${here.reason})`;
      return replace(adapter, origin, record, `${because} (${lost})`, [], now);
    }
    return [
      {
        type: 'requeue',
        afterMs: Math.min(unavailableClusterRetryMs, config.workerLostTimeoutMs - lostForMs),
      },
    ];
  }
  const mirror = currentMirror(here, origin.metadata!.uid!, placement, config);
  // Not in the cache: the worker is asked (the cache may lag); gone there too, it is placed again.
  if (!mirror) {
    return [
      {
        type: 'confirm-mirror-vanished',
        cluster: here.name,
        attempt: record.attempt,
        ifVanished: replace(adapter, origin, record, because, [], now),
      },
    ];
  }
  // Being deleted: its pods are still there, and so is its hold on the quota.
  if (mirror.metadata?.deletionTimestamp) return [{ type: 'requeue', afterMs: evictionCheckMs }];
  const seeded = adapter.mirrorStatusSeed?.(mirror) === undefined;
  return [
    ...(seeded ? statusFromMirror(adapter, origin, mirror, record, now) : []),
    {
      type: 'delete-mirror',
      cluster: here.name,
      mirror,
      why: `its ${adapter.resource.kind} was ${record.preempted}`,
      propagation: 'Foreground',
    },
    { type: 'requeue', afterMs: evictionCheckMs },
  ];
}

/**
 * Its queue's admission evicts a placed workload: the record says so (sealed, so usage stays
 * counted until its pods are gone, and a restart finds it), with a `Preempted` Event. The
 * reconcile deletes its mirror in the foreground and, once the worker no longer holds it,
 * places it again from its progress (replace): the new attempt waits in its queue to be
 * admitted again.
 */
export function planEviction<T extends KubeObject>(record: PlacementRecord, message: string): Action<T>[] {
  if (!record.cluster || record.preempted !== undefined) return [];
  return [
    { type: 'patch-placement', record: { ...record, preempted: message } },
    event('Warning', eventReasons.preempted, 'Preempt', message),
  ];
}
