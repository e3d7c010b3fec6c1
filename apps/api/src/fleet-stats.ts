// The charts' memory, kept in this process: the placement log (each origin's placements as its
// informer shows them: placements per cluster per minute, dispatch latency) and the queue depth
// sampled every 15 s, read back as the last hour (GET /api/v1/stats/history). Its own module
// because it is the one part of the fleet view that is no cache of a cluster or of Redis: it is
// the API's own history, lives and dies with the process and runs its own timer.
import type { KubeObject } from '@jobrelay/kinds';
import { withTimeout } from '@jobrelay/kube';
import { historyWindowMinutes, PlacementLog } from './placement-log.ts';
import { placementOf } from './placement-trust.ts';
import {
  type PlacementHistory,
  placementHistory,
  QueueDepthHistory,
  type QueueDepthSample,
} from './stats-history.ts';

/** How often the queue depth is sampled for the charts: 240 samples cover their hour. */
const queueDepthSampleSeconds = 15;

/** The charts' last hour, as statsHistory() gives it. */
export type StatsHistory = PlacementHistory & {
  now: number;
  since: number;
  minutes: number;
  queueDepth: QueueDepthSample[];
  sampleSeconds: number;
};

/** What a queue depth sample counts: the pending workloads (from the caches) and the tasks in Redis. */
export interface QueueDepthSources {
  pending: () => number;
  queueCounts: () => Promise<Record<string, number>>;
}

export class FleetStats {
  private readonly placements = new PlacementLog();
  private readonly queueDepths = new QueueDepthHistory(
    Math.ceil((historyWindowMinutes * 60) / queueDepthSampleSeconds),
  );
  private queueDepthTimer: NodeJS.Timeout | undefined;
  private readonly startedAt: number;
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
    this.startedAt = now();
  }

  /** An origin added or updated: the placement its record names, if any, goes to the log. */
  notePlacement(object: KubeObject): void {
    const record = placementOf(object);
    if (record?.cluster && object.metadata?.uid)
      this.placements.add(
        object.metadata.uid,
        record.attempt,
        record.cluster,
        record.placedAt,
        this.now(),
        object.metadata.creationTimestamp,
      );
  }

  /** Placements per minute onto each cluster now, averaged over the last minutes (PlacementLog.rate). */
  placementRates(): Map<string, number> {
    return this.placements.rate(this.now());
  }

  placementsPerMinute(): Map<string, number[]> {
    return this.placements.perMinute(this.now());
  }

  /**
   * The charts' last hour: placements per cluster per minute and dispatch latency (from the
   * placement log), and the queue depth samples. Both live in this process's memory.
   */
  history(clusterNames: () => string[]): StatsHistory {
    const now = this.now();
    const since = now - historyWindowMinutes * 60_000;
    return {
      now,
      since: Math.max(since, this.startedAt),
      minutes: historyWindowMinutes,
      ...placementHistory(this.placements.placements(now), clusterNames(), now, historyWindowMinutes),
      queueDepth: this.queueDepths.samples(since),
      sampleSeconds: queueDepthSampleSeconds,
    };
  }

  /** Samples the queue depth now, then every queueDepthSampleSeconds until stopSampling(). */
  startSampling(sources: QueueDepthSources): void {
    void this.sampleQueueDepth(sources);
    this.queueDepthTimer = setInterval(
      () => void this.sampleQueueDepth(sources),
      queueDepthSampleSeconds * 1000,
    );
    this.queueDepthTimer.unref();
  }

  stopSampling(): void {
    clearInterval(this.queueDepthTimer);
  }

  /** One queue depth sample: the pending workloads from the caches, the tasks from Redis (if it answers). */
  private async sampleQueueDepth(sources: QueueDepthSources): Promise<void> {
    const at = this.now();
    const pending = sources.pending();
    const queued = await withTimeout(sources.queueCounts(), 2_000, 'redis').then(
      (counts) => Object.values(counts).reduce((sum, n) => sum + n, 0) - (counts.failed ?? 0),
      () => null,
    );
    this.queueDepths.record({ at, pending, queued });
  }
}
