// What the API shows of DispatchQueues and of the workloads in them: pure functions over the
// cached queue objects (parsed as the controller parses them) and the cached workloads. Nothing
// here knows a workload kind.

import {
  comparePendingOrder,
  type DispatchQueueStatus,
  type ParsedQueue,
  queueFor,
} from '@jobrelay/admission';
import type { DispatchQueue, QueuedWorkload, QueueResource, WorkloadQueue } from '@jobrelay/api-types';
import type { KubeObject } from '@jobrelay/kinds';
import type { PlacementRecord } from '@jobrelay/placement';
import { formatResourceAmount, resourceAmount } from '@jobrelay/resources';

/** The queue a waiting workload's reason names, when it names one. */
export interface StatedPlace {
  queue?: string;
}

// The controller's queue gates begin `queue NAME: ` (packages/admission's WaitingVerdict
// messages). They carry no position: it moves with every admission, and the controller would
// rewrite every waiting workload's note each time. The API orders a queue's pending workloads
// itself, with the controller's own order (comparePendingOrder: priority, then age).
const queuePrefix = /^queue ([a-z0-9]([-a-z0-9.]*[a-z0-9])?): /;

/** Pure: the queue a waiting reason names, if any. */
export function statedPlace(reason: string | null | undefined): StatedPlace {
  const queue = reason ? queuePrefix.exec(reason) : null;
  return queue?.[1] ? { queue: queue[1] } : {};
}

/** A status field as the controller writes it, or null when absent or of another shape. */
function statusOf(object: KubeObject): DispatchQueue['status'] {
  const status = (object as { status?: Partial<DispatchQueueStatus> }).status;
  if (!status || typeof status !== 'object' || typeof status.pendingWorkloads !== 'number') return null;
  const strings = (value: unknown): Record<string, string> =>
    value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value as Record<string, unknown>).filter(
            (entry): entry is [string, string] => typeof entry[1] === 'string',
          ),
        )
      : {};
  const columns = status.columns ?? { cpu: '-', memory: '-', gpu: '-' };
  return {
    pendingWorkloads: status.pendingWorkloads,
    admittedWorkloads: typeof status.admittedWorkloads === 'number' ? status.admittedWorkloads : 0,
    usage: strings(status.usage),
    borrowed: strings(status.borrowed),
    share: typeof status.share === 'string' ? status.share : '0',
    columns: {
      cpu: String(columns.cpu ?? '-'),
      memory: String(columns.memory ?? '-'),
      gpu: String(columns.gpu ?? '-'),
    },
    conditions: Array.isArray(status.conditions) ? status.conditions : [],
    observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : null,
  };
}

/**
 * Pure: a DispatchQueue as the API shows it: its spec as the controller reads it (parsed, with
 * every default filled in; its problems when it cannot be used) beside the status the
 * controller's leader wrote, one row per resource of its nominal quota.
 */
export function queueView(object: KubeObject, parsed: ParsedQueue): DispatchQueue {
  const status = statusOf(object);
  const spec = parsed.kind === 'ok' ? parsed.spec : undefined;
  const rawSelector = (object as { spec?: { namespaceSelector?: Record<string, unknown> } }).spec
    ?.namespaceSelector;
  const resources: QueueResource[] = spec
    ? Object.entries(spec.nominalQuota).map(([name, nominal]) => {
        const borrowing = spec.borrowingLimit?.[name];
        const lending = spec.lendingLimit?.[name];
        const used = status?.usage[name] ?? null;
        return {
          name,
          nominal: formatResourceAmount(name, nominal),
          borrowingLimit: borrowing === undefined ? null : formatResourceAmount(name, borrowing),
          lendingLimit: lending === undefined ? null : formatResourceAmount(name, lending),
          used,
          borrowed: status?.borrowed[name] ?? null,
          usedAmount: used === null ? null : (resourceAmount(name, used) ?? null),
          nominalAmount: nominal,
          borrowingLimitAmount: borrowing ?? null,
        };
      })
    : [];
  return {
    name: object.metadata?.name ?? '',
    valid: parsed.kind === 'ok',
    problems: parsed.kind === 'invalid' ? parsed.problems : [],
    cohort: spec?.cohort ?? null,
    weight: spec?.weight ?? null,
    queueingStrategy: spec?.queueingStrategy ?? null,
    preemption: spec ? { ...spec.preemption } : null,
    namespaceSelector: rawSelector && typeof rawSelector === 'object' ? rawSelector : null,
    resources,
    status,
    createdAt: object.metadata?.creationTimestamp ?? null,
  };
}

/** A workload of any kind as queue membership reads it. */
export interface QueueMemberInput {
  kind: string;
  object: KubeObject;
  record: PlacementRecord | undefined;
  /** Pending: why it waits (waitingReason), else null. */
  reason: string | null;
  waitingSince: string | null;
  pods: number;
  /** Whether it holds or waits for quota at all: unfinished, not suspended, not being deleted. */
  live: boolean;
  /** Its priority as the controller resolves it (workloadPriority; 0 when refused). */
  priority: number;
}

/** The controller's order of a queue's pending workloads: priority, then age, then UID. */
function pendingOrder(a: QueueMemberInput, b: QueueMemberInput): number {
  const ordered = (input: QueueMemberInput) => ({
    priority: input.priority,
    createdAt: Date.parse(input.object.metadata?.creationTimestamp ?? '') || 0,
    uid: input.object.metadata?.uid ?? '',
  });
  return comparePendingOrder(ordered(a), ordered(b));
}

/** A pending workload's place in its queue. */
export interface QueuePlace {
  queue: string;
  position: number;
  of: number;
}

/**
 * Pure: every pending workload's place in its queue, by UID, in the controller's order. One pass
 * over the workloads and a sort per queue, for the pending list and a workload's detail.
 */
export function queuePlaces(
  inputs: readonly QueueMemberInput[],
  selectQueue: (input: QueueMemberInput) => string | undefined,
): Map<string, QueuePlace> {
  const byQueue = new Map<string, QueueMemberInput[]>();
  for (const input of inputs) {
    if (!input.live || input.record?.cluster) continue;
    const queue = memberQueue(input, () => selectQueue(input));
    if (queue === undefined) continue;
    const members = byQueue.get(queue) ?? [];
    members.push(input);
    byQueue.set(queue, members);
  }
  const places = new Map<string, QueuePlace>();
  for (const [queue, members] of byQueue) {
    members.sort(pendingOrder);
    for (const [index, input] of members.entries())
      places.set(input.object.metadata?.uid ?? '', { queue, position: index + 1, of: members.length });
  }
  return places;
}

export interface QueueMembers {
  /** In the queue's order; position is the place among all of them. */
  pending: QueuedWorkload[];
  /** By namespace, name and kind. */
  admitted: QueuedWorkload[];
}

/**
 * Pure: the queue a workload belongs to now: while placed, the queue its placement record names
 * (whose quota it holds); while pending, the queue its waiting reason names (the controller's
 * word), else the one `selectQueue` picks (its label, its namespace), undefined when none.
 */
export function memberQueue(
  input: Pick<QueueMemberInput, 'record' | 'reason'>,
  selectQueue: () => string | undefined,
): string | undefined {
  if (input.record?.cluster) return input.record.queue;
  return statedPlace(input.reason).queue ?? selectQueue();
}

/**
 * Pure: a queue's pending and admitted workloads. Pending ones go in the controller's order
 * (priority, then age): positions 1..n.
 */
export function queueMembers(
  queue: string,
  inputs: readonly QueueMemberInput[],
  selectQueue: (input: QueueMemberInput) => string | undefined,
): QueueMembers {
  const pending: QueueMemberInput[] = [];
  const admitted: QueuedWorkload[] = [];
  for (const input of inputs) {
    if (!input.live || memberQueue(input, () => selectQueue(input)) !== queue) continue;
    const { object } = input;
    if (input.record?.cluster) {
      admitted.push({
        kind: input.kind,
        namespace: object.metadata?.namespace ?? '',
        name: object.metadata?.name ?? '',
        uid: object.metadata?.uid ?? '',
        position: null,
        reason: null,
        waitingSince: null,
        cluster: input.record.cluster,
        admittedAt: input.record.placedAt ?? null,
        pods: input.pods,
      });
    } else {
      pending.push(input);
    }
  }
  pending.sort(pendingOrder);
  admitted.sort((a, b) =>
    `${a.namespace}/${a.name}/${a.kind}`.localeCompare(`${b.namespace}/${b.name}/${b.kind}`),
  );
  return {
    pending: pending.map((input, index) => ({
      kind: input.kind,
      namespace: input.object.metadata?.namespace ?? '',
      name: input.object.metadata?.name ?? '',
      uid: input.object.metadata?.uid ?? '',
      position: index + 1,
      reason: input.reason,
      waitingSince: input.waitingSince,
      cluster: null,
      admittedAt: null,
      pods: input.pods,
    })),
    admitted,
  };
}

/**
 * Pure: a workload's queue as its detail and the pending list show it: the queue it is in, and
 * while pending its place there (`places`, from queuePlaces; null when it has none).
 */
export function workloadQueue(
  input: Pick<QueueMemberInput, 'record' | 'reason'> & { uid: string },
  selectQueue: () => string | undefined,
  places: ReadonlyMap<string, QueuePlace>,
): WorkloadQueue | null {
  const name = memberQueue(input, selectQueue);
  if (!name) return null;
  if (input.record?.cluster) return { name, position: null, of: null };
  const place = places.get(input.uid);
  return place?.queue === name
    ? { name, position: place.position, of: place.of }
    : { name, position: null, of: null };
}

/**
 * Pure: the queue a workload that is not admitted belongs to, chosen exactly as the controller
 * chooses it (queueFor, with the usable queues and the invalid ones, which hold their
 * namespaces' workloads rather than let them run unqueued); undefined when none takes it or the
 * choice is refused (the controller's waiting reason then says why).
 */
export function selectedQueue(
  workload: { namespace: string; labels?: Record<string, string> | undefined },
  namespaceLabels: Record<string, string> | undefined,
  queues: readonly ParsedQueue[],
): string | undefined {
  const choice = queueFor(
    { namespace: workload.namespace, ...(workload.labels ? { labels: workload.labels } : {}) },
    namespaceLabels,
    queues.flatMap((queue) => (queue.kind === 'ok' ? [queue.spec] : [])),
    queues.flatMap((queue) => (queue.kind === 'invalid' ? [queue] : [])),
  );
  return choice.kind === 'queued' ? choice.queue : undefined;
}
