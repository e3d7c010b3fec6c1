import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import {
  applyMergePatch,
  mirrorOwnership,
  originUidLabel,
  placementAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import {
  describeRefusal,
  newlyRefusedAsks,
  nothingCarried,
  type ParsedPlacement,
  type PlacementRecord,
  podTemplateAsks,
  readPodRestrictions,
  type WorkloadProgress,
} from '@jobrelay/placement';
import { classifyMirror } from './classify-mirror.ts';
import { type EventAction, type EventReason, eventReasons } from './event-reasons.ts';
import type { MirrorRefusal, OriginAction } from './origin-actions.ts';
import type { ClusterSnapshot, OriginSnapshot } from './origin-snapshot.ts';

export interface PlannerConfig {
  /** This installation's `jobrelay.dev/origin` value. */
  originId: string;
  /** A placed workload whose cluster has not been Active this long moves elsewhere. */
  workerLostTimeoutMs: number;
  /** A finished workload's mirror is kept this long (for logs), then deleted. */
  mirrorRetentionMs: number;
  /** Record a Normal Event for every mirror created (off: one write less per dispatch). */
  recordDispatchEvents?: boolean;
  /** Refusals of a workload's mirror by worker apiservers before jobrelay gives up on it (default 3). */
  mirrorRefusalLimit?: number;
}

export const defaultMirrorRefusalLimit = 3;

/**
 * After its n-th refusal a workload waits this long before it is placed again: a quota may
 * free up, an admin may fix a policy; 5 s, 10 s, 20 s ... at most a minute.
 */
function refusalRetryMs(refusals: number): number {
  return Math.min(60_000, 5_000 * 2 ** Math.max(0, refusals - 1));
}

/** While a placed workload's cluster is unreachable, look again this often. */
export const unavailableClusterRetryMs = 5_000;
/** A deleted origin whose mirrors could not all be deleted yet is looked at again after this. */
export const deletionRetryMs = 2_000;
/** A conflicting write re-reads the origin and plans again after this. */
export const conflictRetryMs = 200;

type Action<T extends KubeObject> = OriginAction<T>;

/**
 * The pure core of dispatch: from a snapshot of one origin and the clusters, the actions
 * that bring the world in line with it. Same snapshot and clock, same actions. The phases
 * are numbered as the reconcile always was; the why of each is beside it.
 */
export function planOrigin<T extends KubeObject>(
  snapshot: OriginSnapshot<T>,
  adapter: WorkloadKindAdapter<T>,
  config: PlannerConfig,
  now: number,
): Action<T>[] {
  // 1. Gone or going: its mirrors go too, on every reachable cluster. An unreachable
  //    cluster's are removed on its return (returning-worker cleanup) or by garbage collection.
  if (snapshot.kind === 'gone') {
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
  const actions: Action<T>[] = [];

  // 2. Mirrors that are not the current attempt's, anywhere reachable, are stale. An
  //    unreachable cluster must never hold up work on the reachable ones. A record jobrelay
  //    did not write names no current mirror: every mirror of the origin goes.
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

  // 3. Finished: keep the mirror for the retention time, then remove it.
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

  // 5. Placed: the mirror must exist on that cluster, unless the cluster is being drained or
  //    has been lost for longer than the timeout: then the workload moves.
  // Evicted by its queue's admission: its mirror goes first, then back to its queue with its progress.
  if (record.preempted !== undefined)
    return [...actions, ...evict(adapter, origin, record, placement, clusters, config, now)];
  const here = clusters.find((c) => c.name === record.cluster);
  if (here?.registered && here.drain) {
    return [
      ...actions,
      ...replace(adapter, origin, record, `cluster ${record.cluster} is being drained`, [], now),
    ];
  }
  if (!here?.registered || !here.connected || !here.active) {
    const lostForMs = here?.inactiveSince === undefined ? 0 : now - here.inactiveSince;
    if (!here?.registered || lostForMs >= config.workerLostTimeoutMs) {
      const why = here?.registered
        ? `cluster ${record.cluster} has not been Active for ${Math.round(lostForMs / 1000)}s (${here.reason})`
        : `cluster ${record.cluster} is no longer registered`;
      return [...actions, ...replace(adapter, origin, record, why, [], now)];
    }
    return [
      ...actions,
      {
        type: 'requeue',
        afterMs: Math.min(unavailableClusterRetryMs, config.workerLostTimeoutMs - lostForMs),
      },
    ];
  }
  const mirror = currentMirror(here, originUid, placement, config);
  if (!mirror) return [...actions, ...ensureMirror(adapter, origin, record, here, config, now)];
  // What jobrelay put on the mirror is read back (its continuation): if it was changed on the
  // worker, nothing read from it is believed; the mirror goes and is made again.
  const tampered = adapter.mirrorBookkeepingProblem?.(origin, mirror, record);
  if (tampered !== undefined) {
    return [
      ...actions,
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

  // 6. Sync: progress of earlier attempts into a re-placed mirror (before it may run), spec
  //    changes down, status up.
  const seed = adapter.mirrorStatusSeed?.(mirror);
  if (seed) {
    // The mirror's watch event brings the seeded status; resume and sync from there.
    return [
      ...actions,
      { type: 'seed-mirror-status', cluster: here.name, mirror, seed },
      { type: 'requeue', afterMs: 1_000 },
    ];
  }
  const specPatch = adapter.mirrorSpecUpdate(origin, mirror);
  const annotations = adapter.mirrorRecordUpdate?.(origin, mirror);
  const refused = specPatch ? specChangeRefusal(adapter, mirror, specPatch, here) : undefined;
  if (refused) {
    actions.push(
      event(
        'Warning',
        eventReasons.specChangeRefused,
        'Sync',
        `its spec change is not sent to ${here.name}, ${refused}`,
      ),
    );
  } else if (specPatch || annotations) {
    actions.push({
      type: 'patch-mirror-spec',
      cluster: here.name,
      mirror,
      patch: specPatch ?? {},
      ...(annotations ? { annotations } : {}),
    });
  }
  return [
    ...actions,
    ...statusFromMirror(adapter, origin, mirror, record, now),
    ...heldByWorkerNote(adapter, origin, mirror, here.name, here.workerAdmission),
  ];
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
function evict<T extends KubeObject>(
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
 * A worker's own admission is a second gate, never fought: while it holds the mirror
 * suspended (the origin is not), the origin says it waits on that worker's queue, with the
 * worker's reason, where a wait for a cluster is said (annotation and Event); the note goes
 * once the worker lets it run. The reason is the worker admission's own (`admission`, a
 * Kueue's Workload message) when it was read, else the one the mirror shows. A placed origin
 * carries no other such note (placing it removed the wait for a cluster).
 */
function heldByWorkerNote<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  mirror: T,
  cluster: string,
  admission: string | undefined,
): Action<T>[] {
  const because = adapter.mirrorHeldByWorker?.(origin, mirror);
  const noted = origin.metadata?.annotations?.[unschedulableAnnotation];
  if (because === undefined) return noted === undefined ? [] : [{ type: 'note-waiting', message: null }];
  const prefix = `held suspended by ${cluster}'s own admission`;
  const message = admission === undefined ? `${prefix}: ${because}` : `${prefix} (${admission})`;
  if (noted === message) return [];
  // One Event per hold, and one more when the admission's own reason first arrives (it is read
  // from the worker after the hold is seen): the reason may still grow or change, in the note.
  const firstNote =
    !noted?.startsWith(prefix) || (admission !== undefined && !noted.startsWith(`${prefix} (`));
  return [
    { type: 'note-waiting', message },
    ...(firstNote ? [event('Normal', eventReasons.heldByWorker, 'Sync', message)] : []),
  ];
}

/** The mirror's status written to the origin, with what earlier attempts carried. */
function statusFromMirror<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  mirror: T,
  record: PlacementRecord,
  now: number,
): Action<T>[] {
  const desired = adapter.originStatus(origin, mirror, record.carried, new Date(now));
  return statusWrite(adapter, origin, desired, 'sync');
}

/**
 * A fresh sealed record: no cluster, an attempt past every mirror it may still have, carrying
 * exactly the progress the workload's own status shows.
 */
function startAfresh<T extends KubeObject>(
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
function ranBefore<T extends KubeObject>(
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

/**
 * Why a spec change must not reach the mirror (`which refuses ...`): its pod templates, once
 * patched, would ask for something the cluster's podRestrictions refuse that the mirror does
 * not ask already (a RayCluster's worker group made privileged after its placement). Placement
 * checked the templates the workload had then; templates that change later are checked here,
 * before they go down. Restrictions that cannot be read refuse any such change.
 */
function specChangeRefusal<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  mirror: T,
  patch: object,
  cluster: ClusterSnapshot<T>,
): string | undefined {
  const read = readPodRestrictions(cluster.podRestrictions);
  if (!read.ok) return `whose podRestrictions cannot be read (${read.problem})`;
  if (!read.restrictions) return undefined;
  const patched = { ...mirror, spec: applyMergePatch((mirror as { spec?: unknown }).spec, patch) } as T;
  const refusal = describeRefusal(
    newlyRefusedAsks(
      read.restrictions,
      podTemplateAsks(adapter.podTemplates(mirror)),
      podTemplateAsks(adapter.podTemplates(patched)),
    ),
  );
  return refusal === undefined ? undefined : `which ${refusal}`;
}

/** Reachable clusters holding an object of the origin's name. */
function reachable<T extends KubeObject>(clusters: ClusterSnapshot<T>[]): ClusterSnapshot<T>[] {
  return clusters.filter((c) => c.connected && c.active && c.mirror !== undefined);
}

function mirrorOriginUid(mirror: KubeObject): string | undefined {
  return mirror.metadata?.labels?.[originUidLabel];
}

function currentMirror<T extends KubeObject>(
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

function event(
  eventType: 'Normal' | 'Warning',
  reason: EventReason,
  action: EventAction,
  note: string,
): Extract<OriginAction, { type: 'record-event' }> {
  return { type: 'record-event', eventType, reason, action, note };
}

/** A status write, or its refusal when it breaks the kind's rules; nothing when it is what the origin has. */
export function statusWrite<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  desired: object,
  purpose: 'sync' | 'suspended' | 'decided' | 'gave-up',
): Action<T>[] {
  if (adapter.sameStatus(adapter.statusOf(origin), desired)) return [];
  const violations = adapter.statusViolations(origin, desired);
  if (violations.length > 0) {
    const summary = violations.map((v) => `${v.field}: ${v.message}`).join('; ');
    return [
      { type: 'refuse-status', violations },
      event('Warning', eventReasons.statusRefused, 'Sync', `not writing the mirror's status: ${summary}`),
    ];
  }
  return [{ type: 'write-status', status: desired, purpose }];
}

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

/** The workload's progress so far, to carry into its next attempt: nothing for a kind that keeps none. */
function progressOf<T extends KubeObject>(adapter: WorkloadKindAdapter<T>, origin: T): WorkloadProgress {
  return adapter.progress?.of(origin) ?? nothingCarried;
}

/**
 * A sealed record whose carried progress its kind refuses is not acted on: jobrelay wrote it,
 * so only a bug or a downgrade can have made it, and building a mirror from it would guess.
 * It is treated as a record jobrelay did not write (placed afresh from the workload's status).
 */
function withCarriedChecked<T extends KubeObject>(
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

function retire<T extends KubeObject>(
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
