/** What the Jobs view shows of a Job (the API's JobSummary, the fields the filters read). */
export interface FilterableJob {
  namespace: string;
  name: string;
  phase: string;
  cluster: string | null;
}

export interface JobFilter {
  namespace: string;
  phase: string;
  cluster: string;
  /** Words that must all appear in `namespace/name`, case-insensitive. */
  search: string;
}

export const emptyJobFilter: JobFilter = { namespace: '', phase: '', cluster: '', search: '' };

/** The Jobs that pass every filter set (an empty one passes all), sorted by namespace, then name. */
export function filterJobs<T extends FilterableJob>(jobs: Iterable<T>, filter: JobFilter): T[] {
  const words = filter.search.toLowerCase().split(/\s+/).filter(Boolean);
  const kept: T[] = [];
  for (const job of jobs) {
    if (filter.namespace && job.namespace !== filter.namespace) continue;
    if (filter.phase && job.phase !== filter.phase) continue;
    if (filter.cluster && (job.cluster ?? '') !== filter.cluster) continue;
    const haystack = `${job.namespace}/${job.name}`.toLowerCase();
    if (!words.every((word) => haystack.includes(word))) continue;
    kept.push(job);
  }
  return kept.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
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

/** Counts per phase, for the Jobs view's summary line. */
export function countByPhase(jobs: Iterable<FilterableJob>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const job of jobs) counts[job.phase] = (counts[job.phase] ?? 0) + 1;
  return counts;
}
