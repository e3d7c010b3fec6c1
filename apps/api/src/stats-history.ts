import type { RememberedPlacement } from './placement-log.ts';

const minuteMs = 60_000;

/**
 * The start (ms) of each of the last `minutes` clock minutes, oldest first; the last one holds
 * `now`. Clock-aligned, so a chart's minutes read 12:03, 12:04, ... whoever asks and when.
 */
export function minuteStarts(now: number, minutes: number): number[] {
  const current = Math.floor(now / minuteMs) * minuteMs;
  return Array.from({ length: minutes }, (_, i) => current - (minutes - 1 - i) * minuteMs);
}

/**
 * Puts each item in the clock minute it happened in, among the last `minutes` minutes ending
 * with `now`'s; items before that window or after `now`'s minute are left out.
 */
export function bucketByMinute<T>(
  items: Iterable<T>,
  timeOf: (item: T) => number,
  now: number,
  minutes: number,
): T[][] {
  const buckets = Array.from({ length: minutes }, () => [] as T[]);
  const first = Math.floor(now / minuteMs) - (minutes - 1);
  for (const item of items) {
    const index = Math.floor(timeOf(item) / minuteMs) - first;
    if (index >= 0 && index < minutes) buckets[index]!.push(item);
  }
  return buckets;
}

/** The q-quantile (0..1) of ascending values by the nearest-rank method; undefined when empty. */
export function nearestRank(ascending: readonly number[], q: number): number | undefined {
  if (ascending.length === 0) return undefined;
  const rank = Math.min(ascending.length, Math.max(1, Math.ceil(q * ascending.length)));
  return ascending[rank - 1];
}

export interface LatencyMinute {
  /** First placements in that minute whose latency is known. */
  count: number;
  medianSeconds: number | null;
  p95Seconds: number | null;
  maxSeconds: number | null;
}

export interface PlacementHistory {
  /** Per cluster (sorted by name): placements in each minute, oldest first. */
  placementsPerCluster: Array<{ cluster: string; perMinute: number[] }>;
  /** Per minute: how long first placements took from the workload's creation. */
  dispatchLatency: LatencyMinute[];
}

const seconds = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms) / 1000);

/** The charts' placement series from the remembered placements; `clusters` get a series even with none. */
export function placementHistory(
  placements: readonly RememberedPlacement[],
  clusters: readonly string[],
  now: number,
  minutes: number,
): PlacementHistory {
  const buckets = bucketByMinute(placements, (p) => p.at, now, minutes);
  const names = [...new Set([...clusters, ...placements.map((p) => p.cluster)])].sort();
  const placementsPerCluster = names.map((cluster) => ({
    cluster,
    perMinute: buckets.map((bucket) => bucket.filter((p) => p.cluster === cluster).length),
  }));
  const dispatchLatency = buckets.map((bucket) => {
    const latencies = bucket
      .map((p) => p.latencyMs)
      .filter((ms): ms is number => ms !== undefined)
      .sort((a, b) => a - b);
    return {
      count: latencies.length,
      medianSeconds: seconds(nearestRank(latencies, 0.5)),
      p95Seconds: seconds(nearestRank(latencies, 0.95)),
      maxSeconds: seconds(latencies.at(-1)),
    };
  });
  return { placementsPerCluster, dispatchLatency };
}

/** One reading of the queue's depth. */
export interface QueueDepthSample {
  at: number;
  /** Dispatched workloads waiting for a cluster, as their placement records say. */
  pending: number;
  /** Placement tasks in Redis (waiting, prioritized, delayed, active); null when Redis did not answer. */
  queued: number | null;
}

/**
 * The last `capacity` queue depth samples in a ring: bounded memory however long the API runs.
 * Kept in the API's memory only (Redis holds only the queue itself): a restart empties it.
 */
export class QueueDepthHistory {
  private readonly ring: QueueDepthSample[] = [];
  private next = 0;
  private readonly capacity: number;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`QueueDepthHistory capacity must be a positive integer, not ${capacity}`);
    this.capacity = capacity;
  }

  record(sample: QueueDepthSample): void {
    if (this.ring.length < this.capacity) this.ring.push(sample);
    else this.ring[this.next] = sample;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The samples taken at or after `since`, oldest first. */
  samples(since: number): QueueDepthSample[] {
    const ordered =
      this.ring.length < this.capacity
        ? this.ring
        : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return ordered.filter((sample) => sample.at >= since);
  }
}
