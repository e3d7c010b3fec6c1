// What the admission tests build snapshots from, and an oracle of the quota rules written
// independently of decide-admission.ts (plain maps, every sum recomputed from scratch), so the
// property tests compare the decision with the rules rather than with itself.

import type { Resources } from '@jobrelay/resources';
import {
  type AdmittedWorkload,
  type ChooseCluster,
  type QueuedWorkload,
  type QueueSpec,
  workloadCountResource,
} from '../src/queue-model.ts';

export const cores = (n: number) => n * 1000;
export const gibibytes = (n: number) => n * 2 ** 30;

export function queueSpec(name: string, overrides: Partial<QueueSpec> = {}): QueueSpec {
  return {
    name,
    nominalQuota: { cpu: cores(8) },
    weight: 1,
    queueingStrategy: 'BestEffortFIFO',
    preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
    ...overrides,
  };
}

export function pendingWorkload(
  uid: string,
  queue: string,
  demand: Resources,
  extra: Partial<QueuedWorkload> = {},
): QueuedWorkload {
  return {
    uid,
    label: `Kind team/${uid}`,
    namespace: 'team',
    queue,
    priority: 0,
    createdAt: 0,
    demand,
    ...extra,
  };
}

export function admittedWorkload(
  uid: string,
  queue: string,
  demand: Resources,
  extra: Partial<AdmittedWorkload> = {},
): AdmittedWorkload {
  return { ...pendingWorkload(uid, queue, demand), cluster: 'east', admittedAt: 0, ...extra };
}

/** Every cluster fits anything: the tests of quota alone. */
export const anyCluster: ChooseCluster = () => ({ kind: 'fits', cluster: 'east' });

/**
 * Clusters of fixed capacity: the first (by name) with room for the workload beside what is
 * already on it (`onClusters`) and what this decision assumed there. Monotone, as a real
 * placement is: more assumed never makes a cluster fit that did not.
 */
export function capacityModel(
  capacity: Record<string, Resources>,
  onClusters: readonly AdmittedWorkload[] = [],
): ChooseCluster {
  const names = Object.keys(capacity).sort();
  return (workload, assumed) => {
    const short: string[] = [];
    for (const name of names) {
      const free = { ...capacity[name] };
      for (const other of onClusters) if (other.cluster === name) subtractInto(free, other.demand);
      subtractInto(free, assumed.get(name) ?? {});
      const missing = Object.keys(workload.demand).filter(
        (resource) =>
          (workload.demand[resource] ?? 0) > 0 && (workload.demand[resource] ?? 0) > (free[resource] ?? 0),
      );
      if (missing.length === 0) return { kind: 'fits', cluster: name };
      short.push(`${name}: insufficient ${missing.sort().join(', ')}`);
    }
    return { kind: 'no-cluster', message: `0/${names.length} clusters available: ${short.join('; ')}` };
  };
}

function subtractInto(free: Resources, used: Resources): void {
  for (const [name, value] of Object.entries(used)) free[name] = (free[name] ?? 0) - value;
}

export function heldBy(workload: QueuedWorkload): Resources {
  return { ...workload.demand, [workloadCountResource]: (workload.demand[workloadCountResource] ?? 0) + 1 };
}

/** Per queue, the sum of what the given workloads hold. */
export function usageByQueue(workloads: readonly QueuedWorkload[]): Map<string, Resources> {
  const usage = new Map<string, Resources>();
  for (const workload of workloads) {
    const total = usage.get(workload.queue) ?? {};
    for (const [name, value] of Object.entries(heldBy(workload))) total[name] = (total[name] ?? 0) + value;
    usage.set(workload.queue, total);
  }
  return usage;
}

const get = (resources: Resources | undefined, name: string) => resources?.[name] ?? 0;

function lendable(spec: QueueSpec, resource: string): number {
  const nominal = get(spec.nominalQuota, resource);
  if (spec.cohort === undefined) return 0;
  if (spec.lendingLimit && resource in spec.lendingLimit)
    return Math.min(nominal, get(spec.lendingLimit, resource));
  return nominal;
}

/** Whether `usage` keeps every rule: each queue under its ceiling, each cohort within its pool. */
export function quotaHolds(queues: readonly QueueSpec[], usage: Map<string, Resources>): boolean {
  for (const spec of queues) {
    for (const resource of Object.keys(spec.nominalQuota)) {
      const used = get(usage.get(spec.name), resource);
      const nominal = get(spec.nominalQuota, resource);
      if (spec.cohort === undefined) {
        if (used > nominal) return false;
        continue;
      }
      if (spec.borrowingLimit && resource in spec.borrowingLimit) {
        if (used > nominal + get(spec.borrowingLimit, resource)) return false;
      }
      const members = queues.filter(
        (member) => member.cohort === spec.cohort && resource in member.nominalQuota,
      );
      const pool = members.reduce((sum, member) => sum + lendable(member, resource), 0);
      const aboveGuaranteed = members.reduce((sum, member) => {
        const guaranteed = get(member.nominalQuota, resource) - lendable(member, resource);
        return sum + Math.max(0, get(usage.get(member.name), resource) - guaranteed);
      }, 0);
      if (aboveGuaranteed > pool) return false;
    }
  }
  return true;
}

/**
 * Whether the workload could be added to `usage` with every rule kept (never, when it asks for
 * a resource its queue does not name). Only the queue's own
 * resources and its cohort's pool change, so a rule broken elsewhere already does not count.
 */
export function fitsQuota(
  queues: readonly QueueSpec[],
  usage: Map<string, Resources>,
  workload: QueuedWorkload,
): boolean {
  const spec = queues.find((queue) => queue.name === workload.queue);
  if (!spec) return false;
  const unnamed = Object.keys(workload.demand).some(
    (resource) =>
      resource !== workloadCountResource &&
      get(workload.demand, resource) > 0 &&
      !(resource in spec.nominalQuota),
  );
  if (unnamed) return false;
  const relevant = queues.filter(
    (queue) => queue === spec || (spec.cohort !== undefined && queue.cohort === spec.cohort),
  );
  const held = heldBy(workload);
  const named = Object.keys(held).filter((resource) => held[resource]! > 0 && resource in spec.nominalQuota);
  const restricted = (resources: Map<string, Resources>) =>
    new Map(
      [...resources].map(([queue, used]) => [queue, Object.fromEntries(named.map((r) => [r, get(used, r)]))]),
    );
  const after = new Map(usage);
  after.set(spec.name, addUp(usage.get(spec.name), held));
  return quotaHolds(
    relevant.map((queue) => ({ ...queue, nominalQuota: pick(queue.nominalQuota, named) })),
    restricted(after),
  );
}

function pick(resources: Resources, names: string[]): Resources {
  return Object.fromEntries(
    names.filter((name) => name in resources).map((name) => [name, resources[name]!]),
  );
}

export function addUp(a: Resources | undefined, b: Resources): Resources {
  const total = { ...a };
  for (const [name, value] of Object.entries(b)) total[name] = (total[name] ?? 0) + value;
  return total;
}

export function takeAway(a: Resources | undefined, b: Resources): Resources {
  const total = { ...a };
  for (const [name, value] of Object.entries(b)) total[name] = (total[name] ?? 0) - value;
  return total;
}
