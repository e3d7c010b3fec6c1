/** How far back placements are remembered: the queue view shows the last 10 minutes. */
export const placementWindowMinutes = 10;
const windowMs = placementWindowMinutes * 60_000;

/**
 * Placements seen in the last minutes, per cluster, from the origins' placement records: one
 * per (Job UID, attempt), so a record seen again (a relist, another status write) counts once,
 * and a Job deleted since still counts. Kubernetes keeps no such history and Redis holds only
 * the queue, so this is the API's own memory, rebuilt from placedAt times when it starts.
 */
export class PlacementLog {
  private readonly seen = new Map<string, { cluster: string; at: number }>();

  /** Records a placement; older than the window or already seen is ignored. */
  add(uid: string, attempt: number, cluster: string, placedAt: string | undefined, now: number): void {
    const at = placedAt ? Date.parse(placedAt) : Number.NaN;
    if (!Number.isFinite(at) || now - at > windowMs) return;
    const key = `${uid}#${attempt}`;
    if (!this.seen.has(key)) this.seen.set(key, { cluster, at });
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

  private prune(now: number): void {
    for (const [key, { at }] of this.seen) if (now - at > windowMs) this.seen.delete(key);
  }
}
