// Phase 5 of planOrigin, a placed workload: evicted by its queue, on a cluster being drained
// or lost (it moves), or on a reachable one, where its mirror must exist: created when missing
// (the fences checked again first), with every answer the create can get planned ahead (a
// name collision, no namespace, a refusal by the worker's apiserver, which counts towards
// giving up), deleted and made again when its bookkeeping was changed on the worker, else
// synced (phase 6, status-sync.ts); and mirrorRecorded, the Event the executor records once
// the create succeeded or adopted the mirror. Its own module because it is the path of a
// running workload, between the dispatch that finds it placed and the pieces it moves or
// syncs it by.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { placementAnnotation } from '@jobrelay/mirror';
import type { ParsedPlacement, PlacementRecord } from '@jobrelay/placement';
import { eventReasons } from './event-reasons.ts';
import { currentMirror } from './mirror-cleanup.ts';
import { type OriginAction as Action, event, type MirrorRefusal } from './origin-actions.ts';
import type { ClusterSnapshot } from './origin-snapshot.ts';
import {
  defaultMirrorRefusalLimit,
  type PlannerConfig,
  unavailableClusterRetryMs,
} from './planner-config.ts';
import { evict, replace } from './re-placement.ts';
import { statusWrite, syncMirror } from './status-sync.ts';

/**
 * 5. Placed: the mirror must exist on that cluster, unless the cluster is being drained or
 *    has been lost for longer than the timeout: then the workload moves.
 */
export function planPlaced<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
  placement: ParsedPlacement,
  clusters: ClusterSnapshot<T>[],
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  const originUid = origin.metadata!.uid!;
  // Evicted by its queue's admission: its mirror goes first, then back to its queue with its progress.
  if (record.preempted !== undefined) return evict(adapter, origin, record, placement, clusters, config, now);
  const here = clusters.find((c) => c.name === record.cluster);
  if (here?.registered && here.drain) {
    return replace(adapter, origin, record, `cluster ${record.cluster} is being drained`, [], now);
  }
  if (!here?.registered || !here.connected || !here.active) {
    const lostForMs = here?.inactiveSince === undefined ? 0 : now - here.inactiveSince;
    if (!here?.registered || lostForMs >= config.workerLostTimeoutMs) {
      const why = here?.registered
        ? `cluster ${record.cluster} has not been Active for ${Math.round(lostForMs / 1000)}s (${here.reason})`
        : `cluster ${record.cluster} is no longer registered`;
      return replace(adapter, origin, record, why, [], now);
    }
    return [
      {
        type: 'requeue',
        afterMs: Math.min(unavailableClusterRetryMs, config.workerLostTimeoutMs - lostForMs),
      },
    ];
  }
  const mirror = currentMirror(here, originUid, placement, config);
  if (!mirror) return ensureMirror(adapter, origin, record, here, config, now);
  // What jobrelay put on the mirror is read back (its continuation): if it was changed on the
  // worker, nothing read from it is believed; the mirror goes and is made again.
  const tampered = adapter.mirrorBookkeepingProblem?.(origin, mirror, record);
  if (tampered !== undefined) {
    return [
      {
        type: 'delete-mirror',
        cluster: here.name,
        mirror,
        why: `its jobrelay bookkeeping was changed on the worker (${tampered})`,
      },
      event(
        'Warning',
        eventReasons.mirrorTampered,
        'Sync',
        `the mirror on ${here.name} carries bookkeeping jobrelay did not give it (${tampered}); it is deleted and made again`,
      ),
    ];
  }
  return syncMirror(adapter, origin, mirror, record, here, now);
}

/**
 * After a create (or an AlreadyExists of this attempt's own mirror): nothing to record, since
 * the mirror's labels say whose and which attempt it is. An adoption is worth an Event (a
 * restart between create and cache, or a cache that lagged); a plain creation only when asked.
 */
export function mirrorRecorded<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  record: PlacementRecord,
  cluster: string,
  how: 'created' | 'adopted',
  config: Pick<PlannerConfig, 'recordDispatchEvents'>,
): Action<T>[] {
  if (how === 'created' && !config.recordDispatchEvents) return [];
  const verb = how === 'created' ? 'created' : 'adopted existing';
  return [
    event(
      'Normal',
      how === 'created' ? eventReasons.mirrorCreated : eventReasons.mirrorAdopted,
      'Create',
      `${verb} mirror ${adapter.resource.kind} on cluster ${cluster} (attempt ${record.attempt})`,
    ),
  ];
}

/**
 * Whether the origin shows counts that only this attempt's mirror could have produced. Its
 * mirror missing then means it vanished after running: creating it again would start those
 * counts from zero and make the origin's go backwards, so the workload is placed again with
 * them carried. Without such counts a missing mirror is simply (re)created: nothing is lost.
 */
function progressedThisAttempt<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
): boolean {
  return adapter.progress?.movedPast(origin, record.carried) ?? false;
}

function ensureMirror<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
  cluster: ClusterSnapshot<T>,
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  const kind = adapter.resource.kind;
  if (progressedThisAttempt(adapter, origin, record)) {
    return [
      {
        type: 'confirm-mirror-vanished',
        cluster: cluster.name,
        attempt: record.attempt,
        ifVanished: replace(
          adapter,
          origin,
          record,
          `its mirror on ${cluster.name} vanished before the ${kind} finished`,
          [],
          now,
        ),
      },
    ];
  }
  // The fences again, just before anything is created: the record says where the workload
  // was placed, not that the cluster still takes it (cordoned since, a namespace no longer
  // allowed, its limits), so a record is never a way past them.
  if (cluster.fenced !== undefined) {
    return replace(
      adapter,
      origin,
      record,
      `cluster ${cluster.name} no longer takes it: ${cluster.fenced}`,
      [],
      now,
    );
  }
  const key = `${origin.metadata!.namespace}/${origin.metadata!.name}`;
  return [
    {
      type: 'create-mirror',
      cluster: cluster.name,
      body: adapter.buildMirror(origin, {
        originId: config.originId,
        attempt: record.attempt,
        carried: record.carried,
        now: new Date(now),
      }),
      record,
      onCollision: (owner) => [
        event(
          'Warning',
          eventReasons.nameCollision,
          'Create',
          `cluster ${cluster.name} already has a ${kind} ${key} (${owner}); it is left alone and this ${kind} is placed elsewhere`,
        ),
        ...replace(adapter, origin, record, `name collision on ${cluster.name}`, [cluster.name], now),
      ],
      onNamespaceMissing: [
        event(
          'Warning',
          eventReasons.namespaceMissing,
          'Create',
          `namespace ${origin.metadata!.namespace} does not exist on cluster ${cluster.name} and namespace creation is off; create it there`,
        ),
        { type: 'requeue', afterMs: 30_000 },
      ],
      onRefused: (refusal) => refused(adapter, origin, record, cluster.name, refusal, config, now),
    },
  ];
}

/**
 * After its n-th refusal a workload waits this long before it is placed again: a quota may
 * free up, an admin may fix a policy; 5 s, 10 s, 20 s ... at most a minute.
 */
function refusalRetryMs(refusals: number): number {
  return Math.min(60_000, 5_000 * 2 ** Math.max(0, refusals - 1));
}

/**
 * A worker's apiserver refused the mirror. The workload is placed again after a delay,
 * preferring clusters that have not refused it (another worker may run a version that knows
 * the field, or have no such policy or quota); after `mirrorRefusalLimit` refusals in all,
 * jobrelay gives up: a kind with a gaveUpStatus fails with reason MirrorRefused, others stay unplaced. The
 * count lives in the placement record, so restarts do not reset it.
 */
function refused<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  record: PlacementRecord,
  cluster: string,
  refusal: MirrorRefusal,
  config: Pick<PlannerConfig, 'mirrorRefusalLimit'>,
  now: number,
): Action<T>[] {
  const kind = adapter.resource.kind;
  const refusals = (record.refusals ?? 0) + 1;
  const limit = config.mirrorRefusalLimit ?? defaultMirrorRefusalLimit;
  const said = `cluster ${cluster} refused the mirror ${kind} (HTTP ${refusal.code}): ${refusal.message}`;
  const { cluster: _placedOn, placedAt: _placedAt, decision: _decision, ...unplaced } = record;
  const next: PlacementRecord = {
    ...unplaced,
    refusals,
    refusedBy: [...new Set([...(record.refusedBy ?? []), cluster])],
    lastReplacedBecause: said,
  };
  if (refusals >= limit) {
    const gaveUp = `its mirror was refused ${refusals} times; the last time: ${said}`;
    const failed = adapter.gaveUpStatus?.(origin, new Date(now), eventReasons.mirrorRefused, gaveUp);
    const { retryAfter: _retryAfter, waitingSince: _waitingSince, ...settled } = next;
    return [
      { type: 'patch-placement', record: { ...settled, gaveUp } },
      event(
        'Warning',
        eventReasons.mirrorRefused,
        'Create',
        failed
          ? `${said}. Giving up after ${refusals} refusals: the ${kind} fails`
          : `${said}. Giving up after ${refusals} refusals: the ${kind} stays unplaced; fix it, then remove annotation ${placementAnnotation} to place it again`,
      ),
      ...(failed ? statusWrite(adapter, origin, failed, 'gave-up') : []),
    ];
  }
  const waitMs = refusalRetryMs(refusals);
  return [
    {
      type: 'patch-placement',
      record: {
        ...next,
        retryAfter: new Date(now + waitMs).toISOString(),
        waitingSince: new Date(now).toISOString(),
      },
    },
    event(
      'Warning',
      eventReasons.mirrorRefused,
      'Create',
      `${said}. Placing it again in ${waitMs / 1000}s, preferring other clusters (refusal ${refusals} of ${limit})`,
    ),
    { type: 'requeue', afterMs: waitMs },
  ];
}
