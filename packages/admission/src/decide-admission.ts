// One admission decision: which pending workloads take quota (and a cluster) now, which admitted
// ones to evict so that a waiting one can, and why each of the others waits. Pure: everything it
// knows is in the snapshot, and the same snapshot gives the same decision.
//
// Quota follows Kueue's cohort model. Each queue's nominal quota splits, per resource, into a
// guaranteed part (nominal - lendingLimit) and a lendable part pooled in its cohort. A queue uses
// at most nominal + borrowingLimit, and per resource the cohort's members together use at most the
// pool above their guaranteed parts. A queue without a cohort is a cohort of one that lends
// nothing, so it uses at most its nominal quota: one set of rules covers both.
//
// The decision is a loop over the heads of the queues (each queue's pending sorted once): the
// head that fits within its queue's nominal quota goes first; then the borrowing head whose queue
// is furthest below its weighted fair share. Usage only grows while the loop runs (evictions take
// effect later), so a workload that does not fit when its turn comes never fits later in the same
// decision: each is looked at once when it does not fit, which keeps the loop near O(P log P).
// Preemption runs after the loop against the final usage, so the victims it picks are enough
// even with this decision's admissions counted.

import { addResources, formatResourceAmount, type Resources } from '@jobrelay/resources';
import {
  type AdmissionDecision,
  type AdmissionSnapshot,
  type AdmittedWorkload,
  type Eviction,
  type QueuedWorkload,
  type QueueSpec,
  type QueueUsage,
  type WaitingVerdict,
  workloadCountResource,
} from './queue-model.ts';

/** The queues sharing one pool; a queue without a cohort is alone in one that lends nothing. */
interface CohortState {
  /** Resources named by any member, each with its index in the per-resource arrays below. */
  resources: string[];
  resourceIndex: Map<string, number>;
  /** Per resource: the sum of the members' lendable parts. */
  pool: number[];
  /** Per resource: sum over members naming it of max(0, used - guaranteed); never above pool when all is well. */
  aboveGuaranteed: number[];
  members: QueueState[];
  inCohort: boolean;
}

interface QueueState {
  spec: QueueSpec;
  cohort: CohortState;
  /** Per cohort resource: whether this queue's nominalQuota names it (it limits only those). */
  named: boolean[];
  nominal: number[];
  guaranteed: number[];
  /** nominal + borrowingLimit; Infinity when it borrows without limit. */
  ceiling: number[];
  used: number[];
  order: PendingEntry[];
  /** The next entry of `order` not yet decided. */
  cursor: number;
  /** StrictFIFO: the head that could not go, which everything behind waits for. */
  blockedBy?: PendingEntry;
  /** In order: those that did not fit their quota when their turn came. */
  outOfQuota: PendingEntry[];
  /** Workloads holding its quota: those of the snapshot, then this decision's too. */
  admittedCount: number;
  admittedInSnapshot: number;
}

interface PendingEntry {
  workload: QueuedWorkload;
  queue: QueueState | undefined;
  /** What it would hold, per cohort resource (the count resource included). */
  held: number[];
  /** 1-based place in its queue's order. */
  position: number;
  of: number;
}

interface AdmittedEntry {
  workload: AdmittedWorkload;
  queue: QueueState;
  held: number[];
}

type Verdicts = Map<string, WaitingVerdict>;

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
// Building the state

function buildQueues(specs: readonly QueueSpec[]): Map<string, QueueState> {
  const byCohort = new Map<string, QueueSpec[]>();
  const alone: QueueSpec[] = [];
  for (const spec of specs) {
    if (spec.cohort === undefined) alone.push(spec);
    else pushTo(byCohort, spec.cohort, spec);
  }
  const queues = new Map<string, QueueState>();
  const groups = [...byCohort.values()].map((members) => ({ members, inCohort: true }));
  for (const spec of alone) groups.push({ members: [spec], inCohort: false });
  for (const { members, inCohort } of groups) {
    const resources = [...new Set(members.flatMap((spec) => Object.keys(spec.nominalQuota)))].sort();
    const resourceIndex = new Map(resources.map((name, i) => [name, i]));
    const zeros = () => resources.map(() => 0);
    const cohort: CohortState = {
      resources,
      resourceIndex,
      pool: zeros(),
      aboveGuaranteed: zeros(),
      members: [],
      inCohort,
    };
    for (const spec of [...members].sort((a, b) => compareText(a.name, b.name))) {
      const named = resources.map((name) => Object.hasOwn(spec.nominalQuota, name));
      const nominal = resources.map((name) => amount(spec.nominalQuota, name));
      // Alone, nothing is lent: the whole nominal quota is guaranteed and the pool stays empty.
      const lendable = resources.map((name, i) =>
        !inCohort
          ? 0
          : spec.lendingLimit && Object.hasOwn(spec.lendingLimit, name)
            ? Math.min(nominal[i]!, amount(spec.lendingLimit, name))
            : nominal[i]!,
      );
      const ceiling = resources.map((name, i) =>
        !inCohort
          ? nominal[i]!
          : spec.borrowingLimit && Object.hasOwn(spec.borrowingLimit, name)
            ? nominal[i]! + amount(spec.borrowingLimit, name)
            : Number.POSITIVE_INFINITY,
      );
      const queue: QueueState = {
        spec,
        cohort,
        named,
        nominal,
        guaranteed: nominal.map((n, i) => n - lendable[i]!),
        ceiling,
        used: zeros(),
        order: [],
        cursor: 0,
        outOfQuota: [],
        admittedCount: 0,
        admittedInSnapshot: 0,
      };
      lendable.forEach((part, i) => {
        cohort.pool[i]! += part;
      });
      cohort.members.push(queue);
      queues.set(spec.name, queue);
    }
  }
  return queues;
}

function pushTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}

function amount(resources: Resources, name: string): number {
  return Object.hasOwn(resources, name) ? (resources[name] ?? 0) : 0;
}

/** What a workload holds while admitted, per cohort resource: its demand plus one of the count resource. */
function heldVector(cohort: CohortState, workload: QueuedWorkload): number[] {
  // Straight into the vector, without the intermediate map: this runs for every workload.
  const held = new Array<number>(cohort.resources.length).fill(0);
  for (const [name, value] of Object.entries(workload.demand)) {
    const i = cohort.resourceIndex.get(name);
    if (i !== undefined) held[i]! += value;
  }
  const count = cohort.resourceIndex.get(workloadCountResource);
  if (count !== undefined) held[count]! += 1;
  return held;
}

function holdAdmitted(
  admitted: readonly AdmittedWorkload[],
  queues: Map<string, QueueState>,
): AdmittedEntry[] {
  const entries: AdmittedEntry[] = [];
  for (const workload of admitted) {
    const queue = queues.get(workload.queue);
    // A workload of a queue that no longer exists holds no quota anyone can count against.
    if (!queue) continue;
    const held = heldVector(queue.cohort, workload);
    hold(queue, queue.used, queue.cohort.aboveGuaranteed, held, 1);
    queue.admittedCount += 1;
    queue.admittedInSnapshot += 1;
    entries.push({ workload, queue, held });
  }
  return entries;
}

/** Adds (sign 1) or returns (sign -1) `held` to a queue's usage, keeping the cohort's sum in step. */
function hold(
  queue: QueueState,
  used: number[],
  aboveGuaranteed: number[],
  held: number[],
  sign: 1 | -1,
): void {
  for (let i = 0; i < held.length; i += 1) {
    const change = held[i]!;
    if (change === 0) continue;
    const before = used[i]!;
    const after = before + sign * change;
    used[i] = after;
    // A queue that does not name a resource (the count, unnamed) is not limited by it.
    if (!queue.named[i]) continue;
    const g = queue.guaranteed[i]!;
    aboveGuaranteed[i]! += Math.max(0, after - g) - Math.max(0, before - g);
  }
}

/** A queue's order: priority (highest first), then age (oldest first), then UID. */
export function comparePendingOrder(
  a: Pick<QueuedWorkload, 'priority' | 'createdAt' | 'uid'>,
  b: Pick<QueuedWorkload, 'priority' | 'createdAt' | 'uid'>,
): number {
  return b.priority - a.priority || a.createdAt - b.createdAt || compareText(a.uid, b.uid);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

/** The first resource (cohort index) that keeps `held` out of the queue's quota, or -1 when it fits. */
function blockingResource(
  queue: QueueState,
  used: number[],
  aboveGuaranteed: number[],
  held: number[],
): number {
  const { pool } = queue.cohort;
  for (let i = 0; i < held.length; i += 1) {
    const wanted = held[i]!;
    if (wanted <= 0 || !queue.named[i]) continue;
    const before = used[i]!;
    const after = before + wanted;
    if (after > queue.ceiling[i]!) return i;
    const g = queue.guaranteed[i]!;
    if (aboveGuaranteed[i]! + Math.max(0, after - g) - Math.max(0, before - g) > pool[i]!) return i;
  }
  return -1;
}

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

function verdict(entry: PendingEntry, gate: WaitingVerdict['gate'], message: string): WaitingVerdict {
  return { gate, message, position: entry.position, of: entry.of };
}

/** A workload's label is `kind namespace/name`; messages name it as `namespace/name`. */
function displayName(workload: QueuedWorkload): string {
  const space = workload.label.indexOf(' ');
  return space < 0 ? workload.label : workload.label.slice(space + 1);
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
// Preemption

/** Usage of one cohort as a preemption search sees it: the real one with the evicting freed. */
interface CohortSimulation {
  used: Map<QueueState, number[]>;
  aboveGuaranteed: number[];
}

function preempt(queues: Map<string, QueueState>, admitted: AdmittedEntry[], waiting: Verdicts): Eviction[] {
  const simulations = new Map<CohortState, CohortSimulation>();
  const evictingByCohort = new Map<CohortState, number>();
  for (const queue of queues.values()) {
    if (simulations.has(queue.cohort)) continue;
    simulations.set(queue.cohort, {
      used: new Map(queue.cohort.members.map((member) => [member, [...member.used]])),
      aboveGuaranteed: [...queue.cohort.aboveGuaranteed],
    });
  }
  // Victims chosen earlier (evicting) count as gone: a second decision must not pick more for
  // the same need while the first ones are still on their way out.
  const candidates: AdmittedEntry[] = [];
  for (const entry of admitted) {
    if (entry.workload.evicting) {
      const simulation = simulations.get(entry.queue.cohort)!;
      hold(entry.queue, simulation.used.get(entry.queue)!, simulation.aboveGuaranteed, entry.held, -1);
      evictingByCohort.set(entry.queue.cohort, (evictingByCohort.get(entry.queue.cohort) ?? 0) + 1);
    } else candidates.push(entry);
  }
  // Lowest priority first, then the most recently admitted (it lost the least work).
  candidates.sort(
    (a, b) =>
      a.workload.priority - b.workload.priority ||
      b.workload.admittedAt - a.workload.admittedAt ||
      compareText(a.workload.uid, b.workload.uid),
  );
  const groupedByQueue = new Map<QueueState, AdmittedEntry[]>();
  const groupedByCohort = new Map<CohortState, AdmittedEntry[]>();
  for (const entry of candidates) {
    pushTo(groupedByQueue, entry.queue, entry);
    pushTo(groupedByCohort, entry.queue.cohort, entry);
  }
  const byQueue = new Map([...groupedByQueue].map(([queue, entries]) => [queue, indexVictims(entries)]));
  const byCohort = new Map([...groupedByCohort].map(([cohort, entries]) => [cohort, indexVictims(entries)]));

  const evict: Eviction[] = [];
  const taken = new Set<string>();
  // Queues take their turn by name, whatever order the snapshot listed them in.
  const byName = [...queues.values()].sort((a, b) => compareText(a.spec.name, b.spec.name));
  for (const queue of byName) {
    const { withinQueue, reclaimWithinCohort } = queue.spec.preemption;
    if (withinQueue === 'Never' && (reclaimWithinCohort === 'Never' || !queue.cohort.inCohort)) continue;
    const simulation = simulations.get(queue.cohort)!;
    const failed: PendingEntry[] = [];
    for (const entry of queue.outOfQuota) {
      // A larger workload of no higher priority than one that found no room finds none either:
      // its candidate victims are a subset and it needs more.
      if (failed.some((f) => f.workload.priority >= entry.workload.priority && dominates(entry.held, f.held)))
        continue;
      const found = preemptFor(entry, queue, simulation, byQueue, byCohort, taken, evictingByCohort);
      if (!found) {
        failed.push(entry);
        continue;
      }
      for (const victim of found.victims) {
        taken.add(victim.workload.uid);
        // Another workload of the cohort may find room in what this one's victims free beyond its need.
        evictingByCohort.set(queue.cohort, (evictingByCohort.get(queue.cohort) ?? 0) + 1);
        evict.push({
          uid: victim.workload.uid,
          reason: found.reason,
          for: entry.workload.uid,
          message: `preempted to admit ${displayName(entry.workload)} (priority ${entry.workload.priority}) of queue ${queue.spec.name}`,
        });
      }
      waiting.set(entry.workload.uid, verdict(entry, 'preempting', found.message));
      // The room is spoken for: later searches in the cohort see this workload as admitted.
      hold(queue, simulation.used.get(queue)!, simulation.aboveGuaranteed, entry.held, 1);
      break;
    }
  }
  return evict;
}

/** Candidate victims in eviction order, with running sums of what they hold for a quick bound. */
interface VictimIndex {
  entries: AdmittedEntry[];
  /** prefix[k]: what the first k entries hold together. */
  prefix: number[][];
}

function indexVictims(entries: AdmittedEntry[]): VictimIndex {
  const width = entries[0]?.held.length ?? 0;
  const prefix: number[][] = [new Array<number>(width).fill(0)];
  for (const entry of entries) prefix.push(prefix.at(-1)!.map((sum, i) => sum + entry.held[i]!));
  return { entries, prefix };
}

const noVictims: VictimIndex = { entries: [], prefix: [[]] };

/** What all candidates of priority below `priority` (all when undefined) hold together. */
function heldBelow(index: VictimIndex, priority: number | undefined, width: number): number[] {
  let count = index.entries.length;
  if (priority !== undefined) {
    // Entries are sorted by priority ascending: binary search for the first at or above it.
    let low = 0;
    let high = index.entries.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (index.entries[middle]!.workload.priority < priority) low = middle + 1;
      else high = middle;
    }
    count = low;
  }
  return count === 0 ? new Array<number>(width).fill(0) : index.prefix[count]!;
}

function dominates(a: number[], b: number[]): boolean {
  return a.every((value, i) => value >= b[i]!);
}

interface Preemption {
  victims: AdmittedEntry[];
  reason: Eviction['reason'];
  message: string;
}

function preemptFor(
  entry: PendingEntry,
  queue: QueueState,
  simulation: CohortSimulation,
  byQueue: Map<QueueState, VictimIndex>,
  byCohort: Map<CohortState, VictimIndex>,
  taken: Set<string>,
  evictingByCohort: Map<CohortState, number>,
): Preemption | undefined {
  const own = simulation.used.get(queue)!;
  const fits = () => blockingResource(queue, own, simulation.aboveGuaranteed, entry.held) < 0;
  if (fits()) {
    const count = evictingByCohort.get(queue.cohort) ?? 0;
    return {
      victims: [],
      reason: 'InQueuePreemption',
      message: `waiting for ${count} evicted ${plural(count, 'workload')} to release quota`,
    };
  }
  const { withinQueue, reclaimWithinCohort } = queue.spec.preemption;
  const priority = entry.workload.priority;
  const reclaimable =
    queue.cohort.inCohort &&
    reclaimWithinCohort !== 'Never' &&
    entry.held.every((wanted, i) => wanted <= 0 || !queue.named[i] || own[i]! + wanted <= queue.nominal[i]!);
  const width = entry.held.length;
  const below = reclaimWithinCohort === 'LowerPriority' ? priority : undefined;
  const cohortVictims = byCohort.get(queue.cohort) ?? noVictims;
  const ownVictims = byQueue.get(queue) ?? noVictims;
  // Quick bounds before any search (most workloads that do not fit find no room either): even
  // if every candidate left, would it fit? Victims already taken count as candidates here, so
  // the bound only ever errs on the side of searching.
  const reclaimBound = () => {
    const others = heldBelow(cohortVictims, below, width);
    const mine = heldBelow(ownVictims, below, width);
    const relaxed = simulation.aboveGuaranteed.map((sum, i) => sum - (others[i]! - mine[i]!));
    return blockingResource(queue, own, relaxed, entry.held) < 0;
  };
  const inQueueBound = () => {
    const ownAfter = [...own];
    const aboveAfter = [...simulation.aboveGuaranteed];
    hold(queue, ownAfter, aboveAfter, heldBelow(ownVictims, priority, width), -1);
    return blockingResource(queue, ownAfter, aboveAfter, entry.held) < 0;
  };
  if (reclaimable && reclaimBound()) {
    const victims = greedyVictims(entry, queue, simulation, cohortVictims.entries, (victim) => {
      if (victim.queue === queue || taken.has(victim.workload.uid)) return false;
      if (reclaimWithinCohort === 'LowerPriority' && victim.workload.priority >= priority) return false;
      // Only while its queue is above nominal in something this workload needs: a lender is
      // never made to give up what it is guaranteed.
      const used = simulation.used.get(victim.queue)!;
      return entry.held.some(
        (wanted, i) => wanted > 0 && victim.queue.named[i] && used[i]! > victim.queue.nominal[i]!,
      );
    });
    if (victims) {
      const owners = [...new Set(victims.map((victim) => victim.queue.spec.name))].sort().join(', ');
      return {
        victims,
        reason: 'ReclaimNominalQuota',
        message: `preempting ${victims.length} ${plural(victims.length, 'workload')} of ${owners} to reclaim nominal quota`,
      };
    }
  }
  if (withinQueue === 'LowerPriority' && inQueueBound()) {
    const victims = greedyVictims(
      entry,
      queue,
      simulation,
      ownVictims.entries,
      (victim) => victim.workload.priority < priority && !taken.has(victim.workload.uid),
    );
    if (victims) {
      return {
        victims,
        reason: 'InQueuePreemption',
        message: `preempting ${victims.length} lower-priority ${plural(victims.length, 'workload')} of queue ${queue.spec.name}`,
      };
    }
  }
  return undefined;
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${noun}s`;
}

/**
 * Takes candidates in order until the workload fits, then gives back (last taken first) every
 * one it still fits without: no victim in the answer could be spared. Leaves the simulation
 * with the victims returned when it finds a set, untouched when it does not.
 */
function greedyVictims(
  entry: PendingEntry,
  queue: QueueState,
  simulation: CohortSimulation,
  candidates: AdmittedEntry[],
  eligible: (victim: AdmittedEntry) => boolean,
): AdmittedEntry[] | undefined {
  const own = simulation.used.get(queue)!;
  const fits = () => blockingResource(queue, own, simulation.aboveGuaranteed, entry.held) < 0;
  const release = (victim: AdmittedEntry, sign: 1 | -1) =>
    hold(victim.queue, simulation.used.get(victim.queue)!, simulation.aboveGuaranteed, victim.held, sign);
  const chosen: AdmittedEntry[] = [];
  let fitting = false;
  for (const victim of candidates) {
    if (!eligible(victim)) continue;
    release(victim, -1);
    chosen.push(victim);
    if (fits()) {
      fitting = true;
      break;
    }
  }
  if (!fitting) {
    for (const victim of chosen) release(victim, 1);
    return undefined;
  }
  const kept: AdmittedEntry[] = [];
  for (let i = chosen.length - 1; i >= 0; i -= 1) {
    const victim = chosen[i]!;
    release(victim, 1);
    if (fits()) continue;
    release(victim, -1);
    kept.push(victim);
  }
  return kept.reverse();
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
