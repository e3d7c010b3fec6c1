/** The queue view's placements per cluster per minute cover the last 10 minutes. */
export const placementWindowMinutes = 10;
/** What the dashboard's charts show (GET /api/v1/stats/history): the last hour. */
export const historyWindowMinutes = 60;
const historyWindowMs = historyWindowMinutes * 60_000;
/**
 * At most this many placements are remembered (about 100 bytes each, so ~5 MB): a fleet placing
 * more than 50,000 workloads an hour loses the oldest minutes of the charts, never memory.
 */
export const maxRememberedPlacements = 50_000;

/** One placement as the log keeps it. */
export interface RememberedPlacement {
  cluster: string;
  at: number;
  /** From the workload's creation to its first placement; undefined for re-placements. */
  latencyMs: number | undefined;
}

/**
 * Placements seen in the last hour, per cluster, from the origins' placement records: one
 * per (Job UID, attempt), so a record seen again (a relist, another status write) counts once,
 * and a Job deleted since still counts. Kubernetes keeps no such history and Redis holds only
 * the queue, so this is the API's own memory, rebuilt from placedAt times when it starts
 * (placements of workloads deleted before the restart are then gone).
 */
export class PlacementLog {
  private readonly seen = new Map<string, RememberedPlacement>();

  /**
   * Records a placement; older than the window or already seen is ignored. `createdAt` (the
   * workload's creation) gives the dispatch latency of a first attempt.
   */
  add(
    uid: string,
    attempt: number,
    cluster: string,
    placedAt: string | undefined,
    now: number,
    createdAt?: string,
  ): void {
    const at = placedAt ? Date.parse(placedAt) : Number.NaN;
    if (!Number.isFinite(at) || now - at > historyWindowMs) return;
    const key = `${uid}#${attempt}`;
    if (this.seen.has(key)) return;
    const created = attempt === 1 && createdAt ? Date.parse(createdAt) : Number.NaN;
    // Creation timestamps have second precision: a placement in the same second is 0, never negative.
    const latencyMs = Number.isFinite(created) ? Math.max(0, at - created) : undefined;
    if (this.seen.size >= maxRememberedPlacements) {
      // Oldest first: Map keeps insertion order.
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    this.seen.set(key, { cluster, at, latencyMs });
  }

  /** Per cluster: placements in each of the last `minutes` minutes, oldest first. */
  perMinute(now: number, minutes = placementWindowMinutes): Map<string, number[]> {
    this.prune(now);
    const byCluster = new Map<string, number[]>();
    for (const { cluster, at } of this.seen.values()) {
      const age = Math.floor((now - at) / 60_000);
      if (age < 0 || age >= minutes) continue;
      const buckets = byCluster.get(cluster) ?? new Array<number>(minutes).fill(0);
      buckets[minutes - 1 - age]! += 1;
      byCluster.set(cluster, buckets);
    }
    return byCluster;
  }

  /** Placements per minute onto each cluster, averaged over the last `minutes` minutes. */
  rate(now: number, minutes = 5): Map<string, number> {
    const rates = new Map<string, number>();
    for (const [cluster, buckets] of this.perMinute(now, minutes)) {
      const total = buckets.reduce((sum, n) => sum + n, 0);
      rates.set(cluster, Math.round((total / minutes) * 100) / 100);
    }
    return rates;
  }

  /** Every placement still in the window, in no particular order. */
  placements(now: number): RememberedPlacement[] {
    this.prune(now);
    return [...this.seen.values()];
  }

  private prune(now: number): void {
    for (const [key, { at }] of this.seen) if (now - at > historyWindowMs) this.seen.delete(key);
  }
}
