// The clusters as the views show them: each WorkerCluster with the unfinished workloads placed
// there (the caches regrouped per cluster), its placements per minute (the placement log) and
// the requests placement assumes there (assumedRequestsByCluster, a walk of every workload kept
// for a second). Its own module because it is the per-cluster side of the read model: the
// caches hold workloads one by one, and this is where they are counted against their clusters.
import type { WorkerCluster, WorkerClusterRegistry } from '@jobrelay/clusters';
import { type ClusterView, clusterView } from './cluster-views.ts';
import type { DispatchedWorkload } from './fleet-caches.ts';
import { assumedRequestsByCluster } from './fleet-placement.ts';
import type { FleetStats } from './fleet-stats.ts';
import { placementOf } from './placement-trust.ts';

/** Unfinished dispatched workloads of every kind placed on each cluster. */
export function workloadsOnClusters(
  workloads: readonly DispatchedWorkload[],
): Map<string, DispatchedWorkload[]> {
  const byCluster = new Map<string, DispatchedWorkload[]>();
  for (const entry of workloads) {
    if (entry.adapter.isFinished(entry.object)) continue;
    const cluster = placementOf(entry.object)?.cluster;
    if (!cluster) continue;
    const list = byCluster.get(cluster);
    if (list) list.push(entry);
    else byCluster.set(cluster, [entry]);
  }
  return byCluster;
}

export class FleetClusterViews {
  private readonly registry: Pick<WorkerClusterRegistry, 'clusters' | 'workerClusters'>;
  private readonly stats: Pick<FleetStats, 'placementRates'>;
  /** Every dispatched workload of every kind, from the caches. */
  private readonly workloads: () => readonly DispatchedWorkload[];
  private readonly now: () => number;
  private assumedMemo: { at: number; value: Map<string, Record<string, string>> } | undefined;

  constructor(options: {
    registry: Pick<WorkerClusterRegistry, 'clusters' | 'workerClusters'>;
    stats: Pick<FleetStats, 'placementRates'>;
    workloads: () => readonly DispatchedWorkload[];
    now: () => number;
  }) {
    this.registry = options.registry;
    this.stats = options.stats;
    this.workloads = options.workloads;
    this.now = options.now;
  }

  /** Every WorkerCluster's view. */
  views(): ClusterView[] {
    const byCluster = workloadsOnClusters(this.workloads());
    const rates = this.stats.placementRates();
    const assumed = this.assumedByCluster();
    return this.registry.workerClusters().map((wc) =>
      clusterView(wc, {
        placed: byCluster.get(wc.metadata.name) ?? [],
        placementsPerMinute: rates.get(wc.metadata.name) ?? 0,
        assumed: assumed.get(wc.metadata.name) ?? {},
      }),
    );
  }

  viewOf(wc: WorkerCluster): ClusterView {
    return clusterView(wc, {
      placed: workloadsOnClusters(this.workloads()).get(wc.metadata.name) ?? [],
      placementsPerMinute: this.stats.placementRates().get(wc.metadata.name) ?? 0,
      assumed: this.assumedByCluster().get(wc.metadata.name) ?? {},
    });
  }

  /** The placement record keys were loaded (placement-trust.ts): the requests assumed are computed anew. */
  forgetAssumed(): void {
    this.assumedMemo = undefined;
  }

  /**
   * Per cluster, the requests placement assumes there (assumedRequestsByCluster). It walks every
   * workload, so it is reused for a second: a cluster event fanned out to many watchers costs
   * one walk.
   */
  private assumedByCluster(): Map<string, Record<string, string>> {
    const now = this.now();
    if (this.assumedMemo && now - this.assumedMemo.at < 1_000) return this.assumedMemo.value;
    const value = assumedRequestsByCluster(this.registry, this.workloads);
    this.assumedMemo = { at: now, value };
    return value;
  }
}
