// Phase 6 of planOrigin, the sync between a placed workload and its current mirror: progress
// of earlier attempts seeded into a re-placed mirror, spec changes down (unless the cluster's
// podRestrictions refuse what they newly ask), status up, and the note on the origin while the
// worker's own admission holds the mirror. Its own module because its status writes are the
// one rule every other path writes a status by too (statusWrite, statusFromMirror: finishing,
// giving up, eviction, a placement task's plan), so they sit below all of them.
import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { applyMergePatch, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  describeRefusal,
  newlyRefusedAsks,
  type PlacementRecord,
  podTemplateAsks,
  readPodRestrictions,
} from '@jobrelay/placement';
import { eventReasons } from './event-reasons.ts';
import { type OriginAction as Action, event } from './origin-actions.ts';
import type { ClusterSnapshot } from './origin-snapshot.ts';

/**
 * 6. Sync: progress of earlier attempts into a re-placed mirror (before it may run), spec
 *    changes down, status up.
 */
export function syncMirror<T extends KubeObject>(
  adapter: WorkloadKindAdapter<T>,
  origin: T,
  mirror: T,
  record: PlacementRecord,
  here: ClusterSnapshot<T>,
  now: number,
): Action<T>[] {
  const actions: Action<T>[] = [];
  const seed = adapter.mirrorStatusSeed?.(mirror);
  if (seed) {
    // The mirror's watch event brings the seeded status; resume and sync from there.
    return [
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
export function statusFromMirror<T extends KubeObject>(
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
