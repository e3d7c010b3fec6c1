// The shapes of cluster load, apart from the code that computes them (placement-inputs.ts)
// and the index that keeps them up to date (placed-load-index.ts), so neither imports the other.

import type { Resources } from '@jobrelay/resources';
import type { PodGroup } from './pod-groups.ts';

/** By cluster name: unfinished workloads jobrelay placed there, and the requests assumed on it. */
export type ClusterLoad = Map<string, { workloads: number; assumed: Resources }>;

/** What clusterLoad needs of a cluster's capacity: bound pods per workload (`namespace/name`). */
export interface PodsByOwner {
  podsByOwner: ReadonlyMap<string, number>;
}

/** A placed, unfinished workload's share of its cluster's load, digested once per version of it. */
export interface PlacedWorkload {
  cluster: string;
  /** `namespace/name`: pods are counted against it by their controlling owner's name. */
  key: string;
  suspended: boolean;
  demand: PodGroup[];
}
