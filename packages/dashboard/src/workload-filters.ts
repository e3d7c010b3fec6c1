/** What the Workloads view shows of a workload (the API's WorkloadSummary, the fields the filters read). */
export interface FilterableWorkload {
  kind: string;
  namespace: string;
  name: string;
  phase: string;
  cluster: string | null;
}

export interface WorkloadFilter {
  kind: string;
  namespace: string;
  phase: string;
  cluster: string;
  /** Words that must all appear in `kind/namespace/name`, case-insensitive. */
  search: string;
}

export const emptyWorkloadFilter: WorkloadFilter = {
  kind: '',
  namespace: '',
  phase: '',
  cluster: '',
  search: '',
};

/** The workloads that pass every filter set (an empty one passes all), sorted by namespace, name, then kind. */
export function filterWorkloads<T extends FilterableWorkload>(
  workloads: Iterable<T>,
  filter: WorkloadFilter,
): T[] {
  const words = filter.search.toLowerCase().split(/\s+/).filter(Boolean);
  const kept: T[] = [];
  for (const workload of workloads) {
    if (filter.kind && workload.kind !== filter.kind) continue;
    if (filter.namespace && workload.namespace !== filter.namespace) continue;
    if (filter.phase && workload.phase !== filter.phase) continue;
    if (filter.cluster && (workload.cluster ?? '') !== filter.cluster) continue;
    const haystack = `${workload.kind}/${workload.namespace}/${workload.name}`.toLowerCase();
    if (!words.every((word) => haystack.includes(word))) continue;
    kept.push(workload);
  }
  return kept.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind),
  );
}

/** The distinct values of one field, sorted, for a filter's choices. */
export function choicesOf<T>(items: Iterable<T>, field: (item: T) => string | null): string[] {
  const values = new Set<string>();
  for (const item of items) {
    const value = field(item);
    if (value) values.add(value);
  }
  return [...values].sort();
}

/** Counts per phase, for the Workloads view's summary line. */
export function countByPhase(workloads: Iterable<FilterableWorkload>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const workload of workloads) counts[workload.phase] = (counts[workload.phase] ?? 0) + 1;
  return counts;
}

/** A workload's key in the dashboard: `kind/namespace/name`, unique across kinds. */
export const workloadKey = (workload: { kind: string; namespace: string; name: string }) =>
  `${workload.kind}/${workload.namespace}/${workload.name}`;
