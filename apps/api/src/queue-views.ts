// What the API shows of DispatchQueues and of the workloads in them: pure functions over the
// cached queue objects (parsed as the controller parses them) and the cached workloads. Nothing
// here knows a workload kind.

import { type DispatchQueueStatus, type ParsedQueue, queueFor } from '@jobrelay/admission';
import type { DispatchQueue, QueuedWorkload, QueueResource, WorkloadQueue } from '@jobrelay/api-types';
import type { KubeObject } from '@jobrelay/kinds';
import { formatResourceAmount, type PlacementRecord, resourceAmount } from '@jobrelay/placement';

/** What the controller says of a waiting workload's queue in its reason, when it says it. */
export interface StatedPlace {
  queue?: string;
  position?: number;
  of?: number;
}

// The controller's queue gates begin `queue NAME: ` and end with (or contain) `position N of M`
// (packages/admission's WaitingVerdict messages): the API shows the place the controller decided
// rather than recomputing an order it could get wrong (priorities, preemptions in flight).
const queuePrefix = /^queue ([a-z0-9]([-a-z0-9.]*[a-z0-9])?): /;
const positionPart = /\bposition (\d+) of (\d+)\b/;

/** Pure: the queue and place a waiting reason states, if any. */
export function statedPlace(reason: string | null | undefined): StatedPlace {
  if (!reason) return {};
  const place: StatedPlace = {};
  const queue = queuePrefix.exec(reason);
  if (queue?.[1]) place.queue = queue[1];
  const position = positionPart.exec(reason);
  if (position?.[1] && position[2]) {
    place.position = Number(position[1]);
    place.of = Number(position[2]);
  }
  return place;
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
 * Pure: a queue's pending and admitted workloads. Pending ones go in the order the controller
 * stated (their reasons' positions); those it gave no position (waiting for a cluster with
 * quota room, or not yet looked at) follow, oldest wait first: positions are then 1..n.
 */
export function queueMembers(
  queue: string,
  inputs: readonly QueueMemberInput[],
  selectQueue: (input: QueueMemberInput) => string | undefined,
): QueueMembers {
  const pending: Array<{ input: QueueMemberInput; stated: number }> = [];
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
      pending.push({ input, stated: statedPlace(input.reason).position ?? Number.POSITIVE_INFINITY });
    }
  }
  const keyOf = (input: QueueMemberInput) =>
    `${input.object.metadata?.namespace}/${input.object.metadata?.name}/${input.kind}`;
  pending.sort(
    (a, b) =>
      a.stated - b.stated ||
      (a.input.waitingSince ?? '').localeCompare(b.input.waitingSince ?? '') ||
      keyOf(a.input).localeCompare(keyOf(b.input)),
  );
  admitted.sort((a, b) =>
    `${a.namespace}/${a.name}/${a.kind}`.localeCompare(`${b.namespace}/${b.name}/${b.kind}`),
  );
  return {
    pending: pending.map(({ input }, index) => ({
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
 * while pending its place as the controller stated it (null when it did not).
 */
export function workloadQueue(
  input: Pick<QueueMemberInput, 'record' | 'reason'>,
  selectQueue: () => string | undefined,
): WorkloadQueue | null {
  const name = memberQueue(input, selectQueue);
  if (!name) return null;
  if (input.record?.cluster) return { name, position: null, of: null };
  const place = statedPlace(input.reason);
  return { name, position: place.position ?? null, of: place.of ?? null };
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
