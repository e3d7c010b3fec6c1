import { type Job, Queue, Worker } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type PlacementOutcome, type PlacementTask, unschedulableRetryDelayMs } from './placement-task.ts';
import { PlacementTurns } from './placement-turns.ts';
import { connectRedis } from './redis-connection.ts';
import { parseRedisUrl, queuePrefix, type RedisTarget } from './redis-url.ts';

export interface PlacementQueueOptions {
  /** One Redis, its Sentinels, or a Redis Cluster (redis-url.ts). */
  redisUrl: string;
  /** Distinct per installation, so two management clusters may share one Redis. */
  queueName: string;
  log: Logger;
  /** How many placements run at once. */
  concurrency?: number;
  /** The clock tasks are stamped with (Date.now unless a test injects one). */
  now?: () => number;
}

class UnschedulableError extends Error {}

/**
 * The BullMQ queue of placements. Redis holds nothing that Kubernetes does not: the
 * controller re-enqueues every unplaced workload when it relists, so a flushed or lost Redis
 * delays placements and loses none. The job id is the origin UID, so enqueueing twice is a
 * no-op while a task is pending. Namespaces take turns (`PlacementTurns`, as the task's BullMQ
 * priority): one team's backlog does not hold another team's next workload behind it.
 */
export class PlacementQueue {
  private readonly options: PlacementQueueOptions;
  private readonly queue: Queue<PlacementTask>;
  private readonly target: RedisTarget;
  private readonly connections: Array<Redis | Cluster> = [];
  private worker: Worker<PlacementTask, PlacementOutcome> | undefined;
  private closing: Promise<void> | undefined;
  private readonly turns = new PlacementTurns();
  private readonly now: () => number;

  constructor(options: PlacementQueueOptions) {
    if (!/^[A-Za-z0-9._-]+$/.test(options.queueName)) {
      throw new Error(
        `queueName must be letters, digits, '.', '_' or '-', got ${JSON.stringify(options.queueName)}`,
      );
    }
    this.options = options;
    this.now = options.now ?? Date.now;
    this.target = parseRedisUrl(options.redisUrl);
    this.queue = new Queue<PlacementTask>(options.queueName, {
      connection: this.connection(),
      prefix: queuePrefix(this.target),
    });
    this.queue.on('error', (err) =>
      options.log.warn({ err: err.message }, 'placement queue connection error'),
    );
  }

  private connection(): Redis | Cluster {
    // BullMQ requires maxRetriesPerRequest null on connections used by workers.
    const redis = connectRedis(this.target, { maxRetriesPerRequest: null, lazyConnect: false });
    redis.on('error', () => {}); // reported through the queue/worker 'error' events
    this.connections.push(redis);
    return redis;
  }

  async waitUntilReady(): Promise<void> {
    await this.queue.waitUntilReady();
  }

  async enqueue(task: PlacementTask): Promise<void> {
    const priority = this.turns.take(task.uid, task.namespace, this.now());
    await this.queue.add('place', task, {
      jobId: task.uid,
      priority,
      attempts: Number.MAX_SAFE_INTEGER,
      backoff: { type: 'unschedulable' },
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  /** Moves delayed retries to now, e.g. when a cluster becomes Active. */
  async retryWaitingNow(): Promise<void> {
    await this.queue.promoteJobs();
  }

  async depth(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  }

  /**
   * How long the oldest task still waiting for a placement worker has waited, 0 when none
   * waits (retries delayed for capacity are not waiting for a worker). Growing: the placement
   * workers fall behind. Of the tasks this replica queued (the leader queues them all; a new
   * leader queues again every unplaced workload when it starts).
   */
  async oldestWaitingMs(now: number): Promise<number> {
    // A task Redis lost (flushed) whose workload no longer needs placing is never queued again:
    // its turn would wait forever and the alert fire. The oldest are checked against Redis
    // (a few each time, only those queued over a minute ago: an add may still be on its way).
    let checked = 0;
    for (const { uid, enqueuedAt } of this.turns.waitingOldestFirst()) {
      const waited = Math.max(0, now - enqueuedAt);
      if (waited < 60_000 || checked >= 20) return waited;
      checked += 1;
      if (await this.queue.getJob(uid)) return waited;
      this.turns.ended(uid);
    }
    return 0;
  }

  /** The workload is gone: its task, if any, will end as not needed; its turn is free now. */
  forget(uid: string): void {
    this.turns.ended(uid);
  }

  /**
   * Runs `place` for each task. It returns 'unschedulable' when no cluster fits; the task
   * is then retried with backoff until it is placed or no longer needed.
   */
  startWorker(place: (task: PlacementTask, attemptsMade: number) => Promise<PlacementOutcome>): void {
    if (this.worker) throw new Error('the placement worker is already running');
    this.worker = new Worker<PlacementTask, PlacementOutcome>(
      this.options.queueName,
      async (job: Job<PlacementTask>) => {
        this.turns.started(job.data.uid);
        const outcome = await place(job.data, job.attemptsMade);
        if (outcome === 'unschedulable') throw new UnschedulableError('no cluster fits yet');
        this.turns.ended(job.data.uid);
        return outcome;
      },
      {
        connection: this.connection(),
        prefix: queuePrefix(this.target),
        concurrency: this.options.concurrency ?? 8,
        // A controller killed mid-placement leaves an active task; pick it up again soon.
        lockDuration: 15_000,
        stalledInterval: 5_000,
        settings: { backoffStrategy: (attemptsMade: number) => unschedulableRetryDelayMs(attemptsMade) },
      },
    );
    this.worker.on('error', (err) =>
      this.options.log.warn({ err: err.message }, 'placement worker connection error'),
    );
    this.worker.on('failed', (job, err) => {
      if (!(err instanceof UnschedulableError)) {
        this.options.log.error(
          { err, job: job ? `${job.data.namespace}/${job.data.name}` : undefined },
          'placement failed',
        );
      }
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.worker?.close();
      await this.queue.close();
      await Promise.all(this.connections.map((c) => c.quit().catch(() => c.disconnect())));
    })();
    return this.closing;
  }
}
