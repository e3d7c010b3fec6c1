import type { Resources } from '@jobrelay/resources';

/**
 * Identical pods a workload runs at once: a Job's pods are one group (its template times
 * what runs at once); a RayCluster's head and each worker group are one group each.
 */
export interface PodGroup {
  /** One pod's requests (init containers and overhead included). */
  requests: Resources;
  /** How many such pods run at once. */
  count: number;
}
