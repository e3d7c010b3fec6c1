// The quota state one admission decision works on, and the rules of quota over it: each queue's
// and cohort's limits and usage as vectors over the cohort's resources, built from the snapshot
// (the admitted holding theirs), what a workload would hold, holding and giving back quota, and
// whether a workload fits. Both the admission loop (decide-admission.ts) and preemption
// (decide-preemption.ts) work on it; it knows neither.
//
// Quota follows Kueue's cohort model. Each queue's nominal quota splits, per resource, into a
// guaranteed part (nominal - lendingLimit) and a lendable part pooled in its cohort. A queue uses
// at most nominal + borrowingLimit, and per resource the cohort's members together use at most the
// pool above their guaranteed parts. A queue without a cohort is a cohort of one that lends
// nothing, so it uses at most its nominal quota: one set of rules covers both.

import type { Resources } from '@jobrelay/resources';
import {
  type AdmittedWorkload,
  type QueuedWorkload,
  type QueueSpec,
  type WaitingVerdict,
  workloadCountResource,
} from './queue-model.ts';

/** The queues sharing one pool; a queue without a cohort is alone in one that lends nothing. */
export interface CohortState {
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

export interface QueueState {
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

export interface PendingEntry {
  workload: QueuedWorkload;
  queue: QueueState | undefined;
  /** What it would hold, per cohort resource (the count resource included). */
  held: number[];
  /** 1-based place in its queue's order. */
  position: number;
  of: number;
}

export interface AdmittedEntry {
  workload: AdmittedWorkload;
  queue: QueueState;
  held: number[];
}

export type Verdicts = Map<string, WaitingVerdict>;

// ---------------------------------------------------------------------------------------------
// Building the state

export function buildQueues(specs: readonly QueueSpec[]): Map<string, QueueState> {
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

export function pushTo<K, V>(groups: Map<K, V[]>, key: K, value: V): void {
  const group = groups.get(key);
  if (group) group.push(value);
  else groups.set(key, [value]);
}

export function amount(resources: Resources, name: string): number {
  return Object.hasOwn(resources, name) ? (resources[name] ?? 0) : 0;
}

/** What a workload holds while admitted, per cohort resource: its demand plus one of the count resource. */
export function heldVector(cohort: CohortState, workload: QueuedWorkload): number[] {
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

export function holdAdmitted(
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
export function hold(
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

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Fitting

/** The first resource (cohort index) that keeps `held` out of the queue's quota, or -1 when it fits. */
export function blockingResource(
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

// ---------------------------------------------------------------------------------------------
// Shared by the admission loop and preemption

export function verdict(entry: PendingEntry, gate: WaitingVerdict['gate'], message: string): WaitingVerdict {
  return { gate, message, position: entry.position, of: entry.of };
}

/** A workload's label is `kind namespace/name`; messages name it as `namespace/name`. */
export function displayName(workload: QueuedWorkload): string {
  const space = workload.label.indexOf(' ');
  return space < 0 ? workload.label : workload.label.slice(space + 1);
}
