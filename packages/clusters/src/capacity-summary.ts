import { formatResourceAmount, type Resources, resourceAmount, subtractResources } from '@jobrelay/resources';
import type { CapacitySnapshot, NodeCapacity } from './worker-capacity.ts';

/** Resources as quantities (`"500m"`, `"4Gi"`), as a WorkerCluster's status holds them. */
export type ResourceQuantities = Record<string, string>;

/** Schedulable nodes with the same allocatable and the same requests, counted once. */
export interface NodeGroupSummary {
  count: number;
  allocatable: ResourceQuantities;
  /**
   * Requests of the non-terminal pods bound to each of them. Kept rather than `free`: a node can
   * be overcommitted (free below 0), and a quantity is never negative.
   */
  requested: ResourceQuantities;
}

/**
 * The capacity the leader publishes on a WorkerCluster's status (issue 31): enough for a
 * replica that watches no pods or nodes (a follower, the admin API) to rebuild the
 * `CapacitySnapshot` the planner reads, and no more. `nodes`, `allocatable` and `free` are the
 * summary people read (`kubectl get workerclusters` prints `free`).
 */
export interface CapacityStatus {
  /** Nodes that accept new pods. */
  nodes?: number;
  allocatable?: ResourceQuantities;
  /** Free on the schedulable nodes, minus the workloads placed here whose pods do not exist yet. */
  free?: ResourceQuantities;
  /** When the leader's watches last showed this (RFC 3339): an old one means no leader keeps it. */
  observedTime?: string;
  /** Requests of every non-terminal pod, bound or pending. */
  requested?: ResourceQuantities;
  nodeGroups?: NodeGroupSummary[];
  /**
   * Bound, non-terminal pods per jobrelay mirror (`namespace/name`), sorted by owner. Other
   * tenants' pods are never listed: their names are not jobrelay's to publish.
   */
  podsByOwner?: Array<{ owner: string; pods: number }>;
}

/** Every resource, as quantities (the amounts are whole units: millicores, bytes, counts). */
export function resourceQuantities(resources: Resources): ResourceQuantities {
  const names = Object.keys(resources).sort();
  return Object.fromEntries(names.map((name) => [name, formatResourceAmount(name, resources[name]!)]));
}

/** Quantities back into amounts; one that does not parse is left out, as `allocatableOf` does. */
export function resourcesOf(quantities: ResourceQuantities | undefined): Resources {
  const resources: Resources = {};
  for (const [name, quantity] of Object.entries(quantities ?? {})) {
    const amount = typeof quantity === 'string' ? resourceAmount(name, quantity) : undefined;
    if (amount !== undefined) resources[name] = amount;
  }
  return resources;
}

/**
 * Nodes with identical allocatable and requests merged into one group: a KWOK fleet of 1,000
 * identical idle nodes is one entry, not 1,000. Groups come in the order of their first node.
 */
export function nodeGroups(nodes: readonly NodeCapacity[]): NodeGroupSummary[] {
  const groups = new Map<string, NodeGroupSummary>();
  for (const node of nodes) {
    const allocatable = resourceQuantities(node.allocatable);
    const requested = resourceQuantities(node.requested);
    const key = JSON.stringify([allocatable, requested]);
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { count: 1, allocatable, requested });
  }
  return [...groups.values()];
}

/**
 * The capacity part of a WorkerCluster's status from the leader's snapshot. `isMirror` says
 * which owners (`namespace/name`) are jobrelay mirrors: only their pod counts are published.
 * `assumed` (requests of placed workloads without pods yet) only lowers `free`, the figure
 * people read; the planner's own view keeps them apart, as each process computes them itself.
 */
export function capacityStatusOf(
  snapshot: CapacitySnapshot,
  options: { isMirror: (owner: string) => boolean; assumed?: Resources; observedAt?: number },
): CapacityStatus {
  const readable = (resources: Resources) =>
    Object.fromEntries(
      Object.entries(resources)
        .filter(([name]) => name === 'cpu' || name === 'memory' || name.includes('/'))
        .map(([name, amount]) => [name, formatResourceAmount(name, Math.max(0, amount))]),
    );
  const free: Resources = {};
  for (const node of snapshot.nodes) {
    for (const [name, amount] of Object.entries(node.free))
      free[name] = (free[name] ?? 0) + Math.max(0, amount);
  }
  for (const [name, amount] of Object.entries(options.assumed ?? {})) free[name] = (free[name] ?? 0) - amount;
  const podsByOwner = [...snapshot.podsByOwner]
    .filter(([owner]) => options.isMirror(owner))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([owner, pods]) => ({ owner, pods }));
  return {
    nodes: snapshot.nodes.length,
    allocatable: readable(snapshot.allocatable),
    free: readable(free),
    ...(options.observedAt !== undefined ? { observedTime: new Date(options.observedAt).toISOString() } : {}),
    requested: resourceQuantities(snapshot.requested),
    nodeGroups: nodeGroups(snapshot.nodes),
    podsByOwner,
  };
}

/**
 * The `CapacitySnapshot` a published capacity status stands for, as the planner reads it: the
 * same multiset of node frees (node names are made up: placement never reads them), the same
 * cpu and memory allocatable (what scoring reads; the status keeps cpu, memory and extended
 * resources), the same requests, and the pod counts of jobrelay's mirrors (the only owners
 * placement looks up). Undefined when the status has no node groups (none published, or
 * written by a version that published only the totals).
 */
export function capacitySnapshotOf(status: CapacityStatus | null | undefined): CapacitySnapshot | undefined {
  if (!status?.nodeGroups) return undefined;
  const nodes: NodeCapacity[] = [];
  status.nodeGroups.forEach((group, index) => {
    const allocatable = resourcesOf(group.allocatable);
    const requested = resourcesOf(group.requested);
    const free = subtractResources(allocatable, requested);
    for (let i = 0; i < group.count; i++)
      nodes.push({ name: `group-${index}-${i}`, allocatable, requested, free });
  });
  const podsByOwner = new Map<string, number>();
  for (const entry of status.podsByOwner ?? []) podsByOwner.set(entry.owner, entry.pods);
  return {
    nodes,
    allocatable: resourcesOf(status.allocatable),
    requested: resourcesOf(status.requested),
    podsByOwner,
  };
}

/**
 * A merge patch of `next` over `previous`: a map merge patch keeps the keys it does not name,
 * so every key `previous` had and `next` has not is set to null (a resource gone from the
 * worker's nodes would otherwise stay in the status forever). Arrays are replaced whole.
 */
export function capacityMergePatch(
  previous: CapacityStatus | null | undefined,
  next: CapacityStatus,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const field of ['allocatable', 'free', 'requested'] as const) {
    const before = previous?.[field];
    const after = next[field];
    if (!before || !after) continue;
    const removed = Object.keys(before).filter((name) => !(name in after));
    if (removed.length > 0)
      patch[field] = { ...after, ...Object.fromEntries(removed.map((name) => [name, null])) };
  }
  return patch;
}
