// Plain values with no zod, so the dashboard's browser bundle can import them
// (`@jobrelay/api-types/workload-phases`) without carrying zod.

/**
 * One vocabulary for every kind, derived from the kind's adapter and the placement record:
 * - `pending`: waiting for a cluster (no cluster in its placement record);
 * - `placed`: a cluster is chosen, but the API does not see its mirror there (being created,
 *   or the worker is not reachable from the API now);
 * - `running`: its mirror exists on the chosen cluster, where the kind's own controller runs it;
 * - `finished`: the adapter says it ended and will not run again;
 * - `suspended`: suspended by its author (its kind's suspend field).
 * finished wins over suspended, which wins over the rest.
 */
export const workloadPhases = ['pending', 'placed', 'running', 'finished', 'suspended'] as const;
export type WorkloadPhase = (typeof workloadPhases)[number];
