// Namespaces take turns at placement: one team's backlog of Jobs does not hold another team's
// next Job behind it (first come, first served within a namespace), through the real
// controller, Redis and clusters.

import { ResilientInformer } from '@jobrelay/kube';
import { placementAnnotation } from '@jobrelay/mirror';
import { PlacementQueue } from '@jobrelay/placement/queue';
import type { V1Job } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
} from '../src/kube-test-helpers.ts';

const backlog = 300;
let fleet: Fleet;
let controller: ControllerProcess | undefined;
let busy: string;
let late: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  busy = await createTestNamespace(fleet.management, 'turns-busy');
  late = await createTestNamespace(fleet.management, 'turns-late');
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  for (const name of [busy, late]) await fleet.management.core.deleteNamespace({ name }).catch(() => {});
});

/** Zero-padded: the controller's first LIST returns them by name, which is then creation order. */
function busyName(i: number): string {
  return `busy-${String(i).padStart(3, '0')}`;
}

/** Idle Jobs (parallelism 0: no pod) dispatched by jobrelay. */
function idleJob(name: string): V1Job {
  return sandboxJob({ name, managedBy: dispatcherManagedBy, spec: { parallelism: 0 } });
}

/**
 * Records, in the order the management apiserver shows them, the Jobs whose placement is written.
 * Through the controller's own informer: its watch resumes from the last version seen whenever it
 * ends (client-node ends one after 30 s without a byte; the apiserver closes one whose reader
 * falls behind), so no placement goes unseen on a loaded machine.
 */
async function watchPlacements(namespaces: string[]) {
  const order: Array<{ namespace: string; name: string }> = [];
  const seen = new Set<string>();
  const informers = namespaces.map(
    (namespace) =>
      new ResilientInformer<V1Job>({
        name: `placement-turns ${namespace}`,
        kubeConfig: fleet.management.kubeConfig,
        apiVersion: 'batch/v1',
        kind: 'Job',
        path: `/apis/batch/v1/namespaces/${namespace}/jobs`,
        onEvent: (event) => {
          const job = event.object;
          const key = `${namespace}/${job.metadata?.name}`;
          if (
            event.type === 'delete' ||
            seen.has(key) ||
            !job.metadata?.annotations?.[placementAnnotation]?.includes('"cluster"')
          )
            return;
          seen.add(key);
          order.push({ namespace, name: job.metadata.name! });
        },
        log: pino({ level: 'silent' }),
      }),
  );
  for (const informer of informers) informer.start();
  await Promise.all(informers.map((informer) => informer.waitForSync()));
  return {
    order,
    /** Where the recording stands, for a timeout's message. */
    describe: () =>
      `${order.length} placements seen; watches running: ${informers.filter((i) => i.watching).length} of ${informers.length}`,
    stop: () => Promise.all(informers.map((informer) => informer.stop())),
  };
}

describe('placement turns by namespace', () => {
  it('places a late namespace’s Job within a turn of a 300-Job backlog, not after it', {
    timeout: 300_000,
  }, async () => {
    // The backlog is there before the controller starts: it queues all of it at once.
    for (let i = 0; i < backlog; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, backlog - i) }, (_, j) =>
          fleet.management.batch.createNamespacedJob({ namespace: busy, body: idleJob(busyName(i + j)) }),
        ),
      );
    }
    const placements = await watchPlacements([busy, late]);
    try {
      controller = startController(fleet.sandbox);
      const explain = placements.describe;
      await eventually(
        'the backlog’s first placement',
        async () => (placements.order.length > 0 ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 50, explain },
      );
      await fleet.management.batch.createNamespacedJob({ namespace: late, body: idleJob('late-0') });
      const busyPlacedBefore = placements.order.filter((p) => p.namespace === busy).length;
      await eventually(
        'the late Job placed',
        async () => (placements.order.some((p) => p.namespace === late) ? true : undefined),
        { explain },
      );
      const position = placements.order.findIndex((p) => p.namespace === late);
      const busyBetween = position - busyPlacedBefore;
      // First come, first served placed it after the rest of the backlog (266 of 280 in a run
      // without turns). With turns it waits for the placements already running (16 at once) and
      // one turn of the backlog: 6–50 in five runs, the most in a fleet just started.
      console.log(
        `late Job placed after ${busyBetween} of the backlog's ${backlog - busyPlacedBefore} still queued when it arrived (${placements.describe()})`,
      );
      expect(busyBetween).toBeLessThanOrEqual(100);
      expect(backlog - position).toBeGreaterThan(100);
      // Within the busy namespace, first come first served: its Jobs are placed in the order they
      // were queued (the first LIST's, by name), give or take the 16 placements that run at once.
      await eventually(
        'the whole backlog placed',
        async () => (placements.order.length === backlog + 1 ? true : undefined),
        { timeoutMs: 180_000, explain },
      );
      const busyOrder = placements.order
        .filter((p) => p.namespace === busy)
        .map((p) => Number(p.name.slice('busy-'.length)));
      const outOfOrder = busyOrder.map((created, placed) => Math.abs(created - placed));
      expect(Math.max(...outOfOrder)).toBeLessThanOrEqual(32);
    } finally {
      await placements.stop();
    }
  });
});

describe('the oldest waiting placement task', () => {
  it('is checked against Redis: a task Redis lost stops counting, one it holds still counts', async () => {
    let now = Date.now();
    const queueName = `turns-oldest-${Date.now()}`;
    const queue = new PlacementQueue({
      redisUrl: fleet.sandbox.redisUrl,
      queueName,
      log: pino({ level: 'silent' }),
      now: () => now,
    });
    const redis = new Redis(fleet.sandbox.redisUrl);
    try {
      await queue.waitUntilReady();
      // No placement worker runs: both wait for their first attempt.
      await queue.enqueue({ namespace: 'team-a', name: 'lost', uid: 'uid-lost', kind: 'job' });
      now += 1000;
      await queue.enqueue({ namespace: 'team-b', name: 'kept', uid: 'uid-kept', kind: 'job' });
      now += 120_000;
      expect(await queue.oldestWaitingMs(now)).toBe(121_000);
      // Redis loses the first (as a flush would; its workload, say, finished meanwhile): its
      // hash and its place among the prioritized tasks.
      const keys = await redis.keys(`*${queueName}*uid-lost*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
      const [prioritized] = await redis.keys(`*${queueName}:prioritized`);
      expect(await redis.zrem(prioritized!, 'uid-lost')).toBe(1);
      expect(await queue.oldestWaitingMs(now)).toBe(120_000);
      expect(await queue.depth()).toMatchObject({ prioritized: 1 });
    } finally {
      redis.disconnect();
      await queue.close();
    }
  });
});
