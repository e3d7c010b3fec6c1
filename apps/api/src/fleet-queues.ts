// The queues over the caches: which DispatchQueue takes a workload now, every workload as queue
// membership reads it and each pending one's place in its queue, and the placement queue's
// pending list (every kind waiting for a cluster). Its own module because it is the glue between
// the caches (fleet-caches.ts) and the pure queue views (queue-views.ts): the same reads the
// controller's admission makes, taken from what the API caches, with no state of its own.
import { workloadPriority } from '@jobrelay/admission';
import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import type { CachedQueue, DispatchedWorkload, FleetCaches } from './fleet-caches.ts';
import { placementOf } from './placement-trust.ts';
import { type QueueMemberInput, type QueuePlace, queuePlaces, selectedQueue } from './queue-views.ts';
import { podCount, waitingReason, waitingSince, workloadKey } from './workload-views.ts';

export interface PendingEntry extends DispatchedWorkload {
  waitingSince: string | null;
}

export function dispatchQueueNamed(
  caches: Pick<FleetCaches, 'dispatchQueues'>,
  name: string,
): CachedQueue | undefined {
  return caches.dispatchQueues().find((queue) => queue.object.metadata?.name === name);
}

/**
 * The queue that takes this workload now, as the controller selects it (queueFor: its
 * namespace's labels against the queues' namespaceSelectors, its jobrelay.dev/queue-name label
 * among them), from the caches; undefined when none does or the choice is refused.
 */
export function queueSelectedFor(
  caches: Pick<FleetCaches, 'dispatchQueues' | 'namespaces'>,
  object: KubeObject,
): string | undefined {
  const queues = caches.dispatchQueues();
  if (queues.length === 0) return undefined;
  const namespace = object.metadata?.namespace ?? '';
  return selectedQueue(
    { namespace, labels: object.metadata?.labels },
    caches.namespaces.get(namespace)?.metadata?.labels,
    queues.map((queue) => queue.parsed),
  );
}

/** Every dispatched workload of these kinds as queue membership reads it, from the caches. */
export function queueMemberInputsOf(
  caches: Pick<FleetCaches, 'workloads' | 'priorityClasses'>,
  adapters: readonly AnyWorkloadKindAdapter[],
  now: number,
): QueueMemberInput[] {
  return caches.workloads(adapters).map(({ adapter, object }) => {
    const record = placementOf(object);
    const finished = adapter.isFinished(object);
    const placed = Boolean(record?.cluster);
    const priority = workloadPriority(adapter.podTemplates(object), caches.priorityClasses);
    return {
      kind: adapter.name,
      object,
      record,
      reason: placed ? null : waitingReason(object, now),
      waitingSince: placed ? null : waitingSince(object),
      pods: podCount(adapter, object),
      // Placed and unfinished holds quota; unplaced waits unless suspended or being deleted.
      live: placed
        ? !finished
        : !finished && !adapter.isSuspended(object) && !object.metadata?.deletionTimestamp,
      priority: priority.kind === 'ok' ? priority.priority : 0,
    };
  });
}

/** Every pending workload of these kinds' place in its queue, by UID (none without DispatchQueues). */
export function placesInQueues(
  caches: Pick<FleetCaches, 'dispatchQueues' | 'namespaces' | 'workloads' | 'priorityClasses'>,
  adapters: readonly AnyWorkloadKindAdapter[],
): Map<string, QueuePlace> {
  if (caches.dispatchQueues().length === 0) return new Map();
  return queuePlaces(queueMemberInputsOf(caches, adapters, Date.now()), (input) =>
    queueSelectedFor(caches, input.object),
  );
}

/**
 * These dispatched workloads that wait for a cluster, in the order they started waiting (then
 * by kind, namespace and name): the placement queue is one queue for every kind.
 */
export function pendingWorkloads(workloads: readonly DispatchedWorkload[]): PendingEntry[] {
  return workloads
    .filter(
      ({ adapter, object }) =>
        !adapter.isFinished(object) &&
        !adapter.isSuspended(object) &&
        !object.metadata?.deletionTimestamp &&
        !placementOf(object)?.cluster,
    )
    .map((entry) => ({ ...entry, waitingSince: waitingSince(entry.object) }))
    .sort(
      (a, b) =>
        (a.waitingSince ?? '').localeCompare(b.waitingSince ?? '') ||
        workloadKey(a.adapter, a.object).localeCompare(workloadKey(b.adapter, b.object)),
    );
}
