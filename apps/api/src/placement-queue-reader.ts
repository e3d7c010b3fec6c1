// The controller's placement queue in Redis, read only: the connection, the BullMQ queue of the
// same name and key prefix, its counts and each queued placement's state. Its own module because
// it is the API's one Redis client (readiness pings it, stop closes it): nothing else in the
// fleet view loads BullMQ or ioredis.
import { withTimeout } from '@jobrelay/kube';
import { parseRedisUrl, queuePrefix } from '@jobrelay/placement';
import { connectRedis } from '@jobrelay/placement/queue';
import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';

export type QueueState = 'waiting' | 'delayed' | 'active' | 'unknown';

export class PlacementQueueReader {
  private readonly queue: Queue;
  private readonly redis: Redis | Cluster;
  private queueStatesMemo: { at: number; states: Promise<Map<string, QueueState>> } | undefined;
  private readonly now: () => number;

  constructor(options: { redisUrl: string; originId: string; now: () => number }) {
    this.now = options.now;
    const redis = parseRedisUrl(options.redisUrl);
    this.redis = connectRedis(redis, { maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', () => {}); // readiness reports it
    // The controller's queue, read only: same name, same Redis, same key prefix.
    this.queue = new Queue(`jobrelay-placement-${options.originId}`, {
      connection: this.redis,
      prefix: queuePrefix(redis),
    });
    this.queue.on('error', () => {});
  }

  /** Whether Redis answers a ping within 2 s. */
  redisAnswers(): Promise<boolean> {
    return withTimeout(this.redis.ping(), 2_000, 'redis').then(
      (answer) => answer === 'PONG',
      () => false,
    );
  }

  async queueCounts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'delayed', 'active', 'failed', 'prioritized');
  }

  /** Each queued placement's state, by origin UID (the task id); read from Redis at most once a second. */
  queueStates(): Promise<Map<string, QueueState>> {
    const now = this.now();
    if (this.queueStatesMemo && now - this.queueStatesMemo.at < 1_000) return this.queueStatesMemo.states;
    const states = (async () => {
      const byState = await Promise.all(
        (['waiting', 'prioritized', 'delayed', 'active'] as const).map(async (state) => ({
          state: state === 'prioritized' ? ('waiting' as const) : state,
          ids: await this.queue.getRanges([state], 0, -1, true),
        })),
      );
      const map = new Map<string, QueueState>();
      for (const { state, ids } of byState) for (const id of ids) map.set(id, state);
      return map;
    })();
    states.catch(() => {
      this.queueStatesMemo = undefined;
    });
    this.queueStatesMemo = { at: now, states };
    return states;
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => {});
    this.redis.disconnect();
  }
}
