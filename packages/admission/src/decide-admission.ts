// One admission decision: which pending workloads take quota (and a cluster) now, which admitted
// ones to evict so that a waiting one can, and why each of the others waits. Pure: everything it
// knows is in the snapshot, and the same snapshot gives the same decision.
//
// Quota follows Kueue's cohort model (quota-state.ts: the state a decision works on and the
// rules of quota over it).
//
// The decision is a loop over the heads of the queues (each queue's pending sorted once): the
// head that fits within its queue's nominal quota goes first; then the borrowing head whose queue
// is furthest below its weighted fair share. Usage only grows while the loop runs (evictions take
// effect later), so a workload that does not fit when its turn comes never fits later in the same
// decision: each is looked at once when it does not fit, which keeps the loop near O(P log P).
// Preemption (decide-preemption.ts) runs after the loop against the final usage, so the victims
// it picks are enough even with this decision's admissions counted.

import { addResources, formatResourceAmount, type Resources } from '@jobrelay/resources';
import { preempt } from './decide-preemption.ts';
import {
  type AdmissionDecision,
  type AdmissionSnapshot,
  type QueuedWorkload,
  type QueueUsage,
  type WaitingVerdict,
  workloadCountResource,
} from './queue-model.ts';
import {
  amount,
  blockingResource,
  buildQueues,
  compareText,
  displayName,
  heldVector,
  hold,
  holdAdmitted,
  type PendingEntry,
  pushTo,
  type QueueState,
  type Verdicts,
  verdict,
} from './quota-state.ts';

export function decideAdmission(snapshot: AdmissionSnapshot): AdmissionDecision {
  const queues = buildQueues(snapshot.queues);
  const admittedEntries = holdAdmitted(snapshot.admitted, queues);
  const waiting: Verdicts = new Map();
  const pendingByQueue = orderPending(snapshot.pending, queues, waiting);

  const admit: Array<{ uid: string; cluster: string; queue: string; borrowed: Resources }> = [];
  const assumed = new Map<string, Resources>();
  let active = [...queues.values()].filter((queue) => queue.order.length > 0);

  for (;;) {
    let best: { entry: PendingEntry; key: HeadKey } | undefined;
    let finished = false;
    for (const queue of active) {
      const head = nextFittingHead(queue);
      // Usage only grows: a queue with nothing that fits now has nothing that fits later.
      if (!head) {
        finished = true;
        continue;
      }
      const key = headKey(queue, head);
      if (!best || compareHeads(key, best.key) < 0) best = { entry: head, key };
    }
    if (finished) active = active.filter((queue) => !queue.blockedBy && queue.cursor < queue.order.length);
    if (!best) break;
    const { entry } = best;
    const queue = entry.queue!;
    queue.cursor += 1;
    // Quota and cluster together: the quota is held only once a cluster takes the workload.
    const choice = snapshot.chooseCluster(entry.workload, assumed);
    if (choice.kind === 'no-cluster') {
      waiting.set(entry.workload.uid, verdict(entry, 'clusters', choice.message));
      if (queue.spec.queueingStrategy === 'StrictFIFO') queue.blockedBy = entry;
      continue;
    }
    const borrowed = borrowedBy(queue, entry.held);
    hold(queue, queue.used, queue.cohort.aboveGuaranteed, entry.held, 1);
    queue.admittedCount += 1;
    // Its count too: a cluster's maxActiveWorkloads holds within one decision.
    assumed.set(
      choice.cluster,
      addResources(assumed.get(choice.cluster) ?? {}, {
        ...entry.workload.demand,
        [workloadCountResource]: 1,
      }),
    );
    admit.push({ uid: entry.workload.uid, cluster: choice.cluster, queue: queue.spec.name, borrowed });
  }

  for (const queue of queues.values()) markOrderWaits(queue, waiting);
  const evict = preempt(queues, admittedEntries, waiting);
  for (const queue of queues.values()) explainQuotaWaits(queue, waiting);

  const admittedUids = new Set(admit.map((a) => a.uid));
  const usage = usageOf(queues, snapshot, admittedUids, pendingByQueue);
  return { admit, evict, waiting, usage };
}

// ---------------------------------------------------------------------------------------------
// Ordering the pending

/** A queue's order: priority (highest first), then age (oldest first), then UID. */
export function comparePendingOrder(
  a: Pick<QueuedWorkload, 'priority' | 'createdAt' | 'uid'>,
  b: Pick<QueuedWorkload, 'priority' | 'createdAt' | 'uid'>,
): number {
  return b.priority - a.priority || a.createdAt - b.createdAt || compareText(a.uid, b.uid);
}

function orderPending(
  pending: readonly QueuedWorkload[],
  queues: Map<string, QueueState>,
  waiting: Verdicts,
): Map<string, number> {
  const byQueue = new Map<string, QueuedWorkload[]>();
  for (const workload of pending) pushTo(byQueue, workload.queue, workload);
  const counts = new Map<string, number>();
  for (const [name, workloads] of byQueue) {
    workloads.sort(comparePendingOrder);
    counts.set(name, workloads.length);
    const queue = queues.get(name);
    workloads.forEach((workload, i) => {
      const entry: PendingEntry = {
        workload,
        queue,
        held: queue ? heldVector(queue.cohort, workload) : [],
        position: i + 1,
        of: workloads.length,
      };
      if (!queue) {
        waiting.set(workload.uid, verdict(entry, 'inadmissible', `queue ${name} does not exist`));
        return;
      }
      const never = neverAdmissible(queue, workload, entry.held);
      if (never) waiting.set(workload.uid, verdict(entry, 'inadmissible', never));
      // Set aside, it blocks no one, not even in a StrictFIFO queue: it would block it forever.
      else queue.order.push(entry);
    });
  }
  return counts;
}

/** Why the queue can never admit it as it stands, if so. */
function neverAdmissible(queue: QueueState, workload: QueuedWorkload, held: number[]): string | undefined {
  const name = queue.spec.name;
  // The first missing resource by name, so the message does not depend on the demand's key order.
  let missing: string | undefined;
  for (const resource of Object.keys(workload.demand)) {
    if (resource === workloadCountResource || amount(workload.demand, resource) <= 0) continue;
    if (Object.hasOwn(queue.spec.nominalQuota, resource)) continue;
    if (missing === undefined || resource < missing) missing = resource;
  }
  if (missing !== undefined) return `queue ${name}: has no quota for ${missing}`;
  const { cohort } = queue;
  for (let i = 0; i < held.length; i += 1) {
    if (!queue.named[i] || held[i]! <= 0) continue;
    const most = Math.min(queue.ceiling[i]!, queue.guaranteed[i]! + cohort.pool[i]!);
    if (held[i]! > most) {
      const resource = cohort.resources[i]!;
      return `queue ${name}: asks ${resource} ${formatResourceAmount(resource, held[i]!)}, more than the ${formatResourceAmount(resource, most)} it could ever use`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Fitting and ordering

function withinNominal(queue: QueueState, held: number[]): boolean {
  return held.every(
    (wanted, i) => wanted <= 0 || !queue.named[i] || queue.used[i]! + wanted <= queue.nominal[i]!,
  );
}

/** Weighted dominant-resource share of what the queue uses above nominal, with `extra` added. */
function shareOf(queue: QueueState, used: number[], extra?: number[]): number {
  let dominant = 0;
  const { pool } = queue.cohort;
  for (let i = 0; i < used.length; i += 1) {
    if (!queue.named[i] || pool[i]! <= 0) continue;
    const borrowed = Math.max(0, used[i]! + (extra?.[i] ?? 0) - queue.nominal[i]!);
    dominant = Math.max(dominant, borrowed / pool[i]!);
  }
  return dominant / queue.spec.weight;
}

/** The head's turn among all queues' heads: lower sorts first. */
interface HeadKey {
  borrowing: boolean;
  priority: number;
  createdAt: number;
  share: number;
  weight: number;
  queue: string;
}

function headKey(queue: QueueState, entry: PendingEntry): HeadKey {
  const borrowing = !withinNominal(queue, entry.held);
  return {
    borrowing,
    priority: entry.workload.priority,
    createdAt: entry.workload.createdAt,
    share: borrowing ? shareOf(queue, queue.used, entry.held) : 0,
    weight: queue.spec.weight,
    queue: queue.spec.name,
  };
}

function compareHeads(a: HeadKey, b: HeadKey): number {
  if (a.borrowing !== b.borrowing) return a.borrowing ? 1 : -1;
  if (!a.borrowing)
    return b.priority - a.priority || a.createdAt - b.createdAt || compareText(a.queue, b.queue);
  // Furthest below its fair share first; on a tie the heavier queue, then the name, so it is stable.
  return a.share - b.share || b.weight - a.weight || compareText(a.queue, b.queue);
}

/**
 * The queue's next undecided workload that fits its quota now, setting aside those that do not
 * (BestEffortFIFO) or stopping at the first (StrictFIFO: all behind wait for it).
 */
function nextFittingHead(queue: QueueState): PendingEntry | undefined {
  if (queue.blockedBy) return undefined;
  while (queue.cursor < queue.order.length) {
    const entry = queue.order[queue.cursor]!;
    if (blockingResource(queue, queue.used, queue.cohort.aboveGuaranteed, entry.held) < 0) return entry;
    // Explained after the loop (unless preemption makes room), against the usage everyone then sees.
    queue.outOfQuota.push(entry);
    queue.cursor += 1;
    if (queue.spec.queueingStrategy === 'StrictFIFO') {
      queue.blockedBy = entry;
      return undefined;
    }
  }
  return undefined;
}

function borrowedBy(queue: QueueState, held: number[]): Resources {
  const borrowed: Resources = {};
  queue.cohort.resources.forEach((name, i) => {
    if (!queue.named[i] || held[i]! <= 0) return;
    const nominal = queue.nominal[i]!;
    const before = queue.used[i]!;
    const part = Math.max(0, before + held[i]! - nominal) - Math.max(0, before - nominal);
    if (part > 0) borrowed[name] = part;
  });
  return borrowed;
}

/**
 * A waiting workload's one line with its place in its queue (`...; position 3 of 17`), for
 * explain. The message alone is what is written on the workload: positions move with every
 * admission, and writing them would rewrite every waiting workload's note each time.
 */
export function waitingLine(verdict: WaitingVerdict): string {
  return `${verdict.message}; position ${verdict.position} of ${verdict.of}`;
}

function markOrderWaits(queue: QueueState, waiting: Verdicts): void {
  const head = queue.blockedBy;
  if (!head) return;
  for (let i = queue.cursor; i < queue.order.length; i += 1) {
    const entry = queue.order[i]!;
    const message = `queue ${queue.spec.name}: StrictFIFO, behind ${displayName(head.workload)}`;
    waiting.set(entry.workload.uid, verdict(entry, 'order', message));
  }
}

function explainQuotaWaits(queue: QueueState, waiting: Verdicts): void {
  const { cohort, spec } = queue;
  // Thousands waiting share a handful of messages (by blocking resource, and whether the cohort
  // is what holds them): each is formatted once.
  const messages = new Map<string, string>();
  for (const entry of queue.outOfQuota) {
    if (waiting.has(entry.workload.uid)) continue;
    const i = Math.max(0, blockingResource(queue, queue.used, cohort.aboveGuaranteed, entry.held));
    const byCohort = cohort.inCohort && queue.used[i]! + entry.held[i]! <= queue.ceiling[i]!;
    const key = `${i}:${byCohort}`;
    const known = messages.get(key);
    if (known !== undefined) {
      waiting.set(entry.workload.uid, verdict(entry, 'quota', known));
      continue;
    }
    const resource = cohort.resources[i]!;
    const format = (value: number) => formatResourceAmount(resource, value);
    const nominal = queue.nominal[i]!;
    const used = queue.used[i]!;
    const ceiling = queue.ceiling[i]!;
    const borrowing = cohort.inCohort
      ? ` (borrowing ${format(Math.max(0, used - nominal))} of ${Number.isFinite(ceiling) ? format(ceiling - nominal) : 'unlimited'} allowed)`
      : '';
    // Under its own ceiling, what holds it is the cohort: its lenders have nothing left to lend.
    const pooled = byCohort
      ? `; cohort ${spec.cohort} has ${format(Math.max(0, cohort.pool[i]! - cohort.aboveGuaranteed[i]!))} of ${format(cohort.pool[i]!)} left to lend`
      : '';
    const message = `queue ${spec.name}: ${resource} ${format(used)}/${format(nominal)} in use${borrowing}${pooled}`;
    messages.set(key, message);
    waiting.set(entry.workload.uid, verdict(entry, 'quota', message));
  }
}

// ---------------------------------------------------------------------------------------------
// Usage

function usageOf(
  queues: Map<string, QueueState>,
  snapshot: AdmissionSnapshot,
  admittedUids: Set<string>,
  pendingByQueue: Map<string, number>,
): Map<string, QueueUsage> {
  const used = new Map<string, Resources>();
  const add = (workload: QueuedWorkload) => {
    const total = used.get(workload.queue);
    if (!total) return;
    for (const [name, value] of Object.entries(workload.demand)) total[name] = amount(total, name) + value;
    total[workloadCountResource] = amount(total, workloadCountResource) + 1;
  };
  for (const name of queues.keys()) used.set(name, {});
  for (const workload of snapshot.admitted) add(workload);
  for (const workload of snapshot.pending) if (admittedUids.has(workload.uid)) add(workload);

  const usage = new Map<string, QueueUsage>();
  for (const [name, queue] of queues) {
    const borrowed: Resources = {};
    queue.cohort.resources.forEach((resource, i) => {
      const above = queue.used[i]! - queue.nominal[i]!;
      if (queue.named[i] && queue.cohort.inCohort && above > 0) borrowed[resource] = above;
    });
    const pending = (pendingByQueue.get(name) ?? 0) - (queue.admittedCount - queue.admittedInSnapshot);
    usage.set(name, {
      used: used.get(name)!,
      borrowed,
      share: queue.cohort.inCohort ? shareOf(queue, queue.used) : 0,
      admitted: queue.admittedCount,
      pending,
    });
  }
  return usage;
}
