import type { Resources } from '@jobrelay/resources';
import type { ClusterLoad, PlacedWorkload, PodsByOwner } from './placed-load.ts';

interface ClusterShare {
  workloads: number;
  /** Every pod of every workload placed here, seen or not (integers: sums stay exact). */
  demand: Resources;
  /** The workloads placed here by `namespace/name`, to take off the pods a worker already counts. */
  byKey: Map<string, PlacedWorkload[]>;
}

function addScaled(into: Resources, requests: Resources, times: number): void {
  if (times === 0) return;
  for (const name of Object.keys(requests)) into[name] = (into[name] ?? 0) + requests[name]! * times;
}

/**
 * The placed, unfinished workloads by origin UID, with each cluster's load kept up to date as
 * they change (the rule is `loadOfPlaced`'s, which builds one of these): `load` costs time
 * proportional to the clusters and the workloads whose pods a worker already counts, not to
 * every workload placed. (Summed afresh for each placement, a backlog of n Jobs cost O(n²).)
 */
export class PlacedLoadIndex {
  private readonly byUid = new Map<string, PlacedWorkload>();
  private readonly clusters = new Map<string, ClusterShare>();

  get size(): number {
    return this.byUid.size;
  }

  get(uid: string): PlacedWorkload | undefined {
    return this.byUid.get(uid);
  }

  values(): IterableIterator<PlacedWorkload> {
    return this.byUid.values();
  }

  set(uid: string, workload: PlacedWorkload): void {
    const previous = this.byUid.get(uid);
    if (previous) this.unshare(previous);
    this.byUid.set(uid, workload);
    this.share(workload);
  }

  delete(uid: string): void {
    const workload = this.byUid.get(uid);
    if (!workload) return;
    this.byUid.delete(uid);
    this.unshare(workload);
  }

  private share(workload: PlacedWorkload): void {
    let share = this.clusters.get(workload.cluster);
    if (!share) {
      share = { workloads: 0, demand: {}, byKey: new Map() };
      this.clusters.set(workload.cluster, share);
    }
    share.workloads += 1;
    for (const group of workload.demand) addScaled(share.demand, group.requests, group.count);
    const sameKey = share.byKey.get(workload.key);
    if (sameKey) sameKey.push(workload);
    else share.byKey.set(workload.key, [workload]);
  }

  private unshare(workload: PlacedWorkload): void {
    const share = this.clusters.get(workload.cluster)!;
    share.workloads -= 1;
    if (share.workloads === 0) {
      this.clusters.delete(workload.cluster);
      return;
    }
    for (const group of workload.demand) addScaled(share.demand, group.requests, -group.count);
    const sameKey = share.byKey.get(workload.key)!;
    if (sameKey.length === 1) share.byKey.delete(workload.key);
    else sameKey.splice(sameKey.indexOf(workload), 1);
  }

  /** How many placed, unfinished workloads `cluster` has (what maxActiveWorkloads limits). */
  workloadsOn(cluster: string): number {
    return this.clusters.get(cluster)?.workloads ?? 0;
  }

  /** Per cluster: the workloads placed there and the requests of their pods not yet counted. */
  load(capacities: ReadonlyMap<string, PodsByOwner | undefined>): ClusterLoad {
    const result: ClusterLoad = new Map();
    for (const [cluster, share] of this.clusters) {
      const assumed: Resources = { ...share.demand };
      const pods = capacities.get(cluster)?.podsByOwner;
      if (pods && pods.size > 0) {
        // Walk the smaller side: a worker may count the pods of many owners that are not ours.
        if (pods.size <= share.byKey.size) {
          for (const [key, count] of pods) {
            for (const workload of share.byKey.get(key) ?? []) takeOffCounted(assumed, workload, count);
          }
        } else {
          for (const [key, workloads] of share.byKey) {
            const count = pods.get(key);
            if (count) for (const workload of workloads) takeOffCounted(assumed, workload, count);
          }
        }
      }
      for (const name of Object.keys(assumed)) if (assumed[name] === 0) delete assumed[name];
      result.set(cluster, { workloads: share.workloads, assumed });
    }
    return result;
  }
}

/** Takes the pods already counted off the workload's groups in order (a RayCluster's head first). */
function takeOffCounted(assumed: Resources, workload: PlacedWorkload, counted: number): void {
  let left = counted;
  for (const group of workload.demand) {
    if (left <= 0) return;
    const seen = Math.min(left, group.count);
    left -= seen;
    addScaled(assumed, group.requests, -seen);
  }
}
