import { type Cluster, clusterSchema } from '@jobrelay/api-types';
import type { WorkerCluster } from '@jobrelay/clusters';

export { clusterSchema };
export type ClusterView = Cluster;

export function activeCondition(wc: WorkerCluster) {
  return wc.status?.conditions?.find((c) => c.type === 'Active');
}

/** A WorkerCluster as admins see it: the controller's status plus what the API counts itself. */
export function clusterView(
  wc: WorkerCluster & { metadata: { creationTimestamp?: string | Date } },
  counts: {
    /** The unfinished workloads placed there, each with its kind's adapter. */
    placed: ReadonlyArray<{ adapter: { name: string } }>;
    placementsPerMinute: number;
    /** Requests assumed on the cluster, as quantities (cpu "500m", memory "1Gi"). */
    assumed?: Record<string, string>;
  },
): ClusterView {
  const placedByKind: Record<string, number> = {};
  for (const { adapter } of counts.placed) placedByKind[adapter.name] = (placedByKind[adapter.name] ?? 0) + 1;
  const active = activeCondition(wc);
  const capacity = wc.status?.capacity;
  const created = wc.metadata.creationTimestamp;
  return {
    name: wc.metadata.name,
    labels: wc.metadata.labels ?? {},
    active: active?.status === 'True',
    reason: active?.reason ?? 'Unknown',
    message: active?.message ?? 'the controller has not reported on this cluster yet',
    kubernetesVersion: wc.status?.kubernetesVersion ?? null,
    cordoned: wc.spec.unschedulable === true || wc.spec.drain === true,
    draining: wc.spec.drain === true,
    weight: wc.spec.weight ?? 1,
    maxActiveWorkloads: wc.spec.maxActiveWorkloads ?? null,
    allowedNamespaces: wc.spec.allowedNamespaces ?? [],
    podRestrictions: wc.spec.podRestrictions ?? null,
    capacity: capacity
      ? { nodes: capacity.nodes ?? 0, allocatable: capacity.allocatable ?? {}, free: capacity.free ?? {} }
      : null,
    assumed: counts.assumed ?? {},
    workloadsPlaced: counts.placed.length,
    placedByKind,
    servedKinds: wc.status?.servedKinds ?? null,
    placementsPerMinute: counts.placementsPerMinute,
    lastHeartbeatTime: wc.status?.lastHeartbeatTime ?? null,
    createdAt: created === undefined ? null : created instanceof Date ? created.toISOString() : created,
  };
}

/** A workload placed on a cluster, as the drain status names it. */
export interface PlacedWorkloadName {
  namespace: string;
  name: string;
  /** The kind's name in this API: job, raycluster, ... */
  kind: string;
}

/**
 * How a drain goes, for one caller: every unfinished workload counts in `remaining` (a drain is
 * over only when none is left, whoever may see them), but only those `visible` to the caller
 * (its kind listable in its namespace) are named; the others are `hidden`, a count.
 */
export function drainStatus(
  cluster: string,
  draining: boolean,
  placed: readonly PlacedWorkloadName[],
  visible: (workload: PlacedWorkloadName) => boolean,
): {
  cluster: string;
  draining: boolean;
  remaining: number;
  hidden: number;
  workloads: PlacedWorkloadName[];
} {
  const workloads = placed
    .filter(visible)
    .map(({ namespace, name, kind }) => ({ namespace, name, kind }))
    .sort((a, b) => `${a.namespace}/${a.name}/${a.kind}`.localeCompare(`${b.namespace}/${b.name}/${b.kind}`));
  return { cluster, draining, remaining: placed.length, hidden: placed.length - workloads.length, workloads };
}
