import type { JobSpec } from './job-object.ts';

/**
 * How many pods of this Job run at once when it starts: parallelism (default 1), but no more
 * than completions (which defaults to parallelism, and is unset for work-queue Jobs). Never
 * negative. Whether the Job is suspended is the caller's business.
 */
export function jobPodsAtOnce(spec: JobSpec): number {
  const parallelism = spec.parallelism ?? 1;
  const completions = spec.completions ?? parallelism;
  return Math.max(0, Math.min(parallelism, completions));
}
