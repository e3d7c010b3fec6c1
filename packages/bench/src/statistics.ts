/** The median, min and max of repeated runs of one figure. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function spreadOf(runs: number[]): Spread {
  if (runs.length === 0) throw new Error('no runs to summarize');
  const sorted = [...runs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, runs };
}

/** The p-th percentile (0..100) by nearest rank; undefined for no samples. */
export function percentile(samples: readonly number[], p: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/**
 * The mean of the lowest `share` of the samples (at least one); undefined for no samples. For
 * a rate sampled in buckets where a periodic pass lands in a few of them (the controller's
 * resync): those buckets are the highest and are left out. A shift of every sample by the same
 * amount shifts this by that amount, so two windows' difference keeps what differs between them.
 */
export function lowerMean(samples: readonly number[], share: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const kept = sorted.slice(0, Math.max(1, Math.floor(share * sorted.length)));
  return kept.reduce((sum, x) => sum + x, 0) / kept.length;
}
