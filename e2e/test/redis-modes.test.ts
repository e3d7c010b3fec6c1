// The placement queue on each kind of Redis an install may give it (--redis-url), each a real
// redis-server started here: Sentinels watching a master with a replica (and the queue still
// working after the Sentinels fail the master over), and a three-node Redis Cluster (the
// queue's keys hash-tagged into one slot, which BullMQ's multi-key scripts need there).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlacementTask } from '@jobrelay/placement';
import { PlacementQueue } from '@jobrelay/placement/queue';
import { findRedisServer, freeLoopbackPorts } from '@jobrelay/sandbox';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../src/kube-test-helpers.ts';

const redisServer = findRedisServer();
const dir = mkdtempSync(join(tmpdir(), 'jobrelay-redis-modes-'));
const processes: ChildProcess[] = [];
const log = pino({ level: 'silent' });
/** Uids the queues' workers were handed. */
const seen = new Set<string>();

function start(args: string[]): void {
  const child = spawn(redisServer, args, { stdio: 'ignore', cwd: dir });
  processes.push(child);
}

function plainRedis(port: number, extra: string[] = []): void {
  // A directory each: a replica writes the RDB it receives there, and another server started in
  // the same directory would load it (a cluster node then owns keys in slots it is not given).
  const own = join(dir, String(port));
  mkdirSync(own);
  start([
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    own,
    ...extra,
  ]);
}

async function answers(port: number): Promise<void> {
  await eventually(`redis on ${port} to answer`, async () => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.ping()) === 'PONG' ? true : undefined;
    } finally {
      client.disconnect();
    }
  });
}

/** Runs the queue's placement worker, which records each task it is handed and places it. */
function startPlacing(queue: PlacementQueue): void {
  queue.startWorker(async (task) => {
    seen.add(task.uid);
    return 'placed';
  });
}

/** Enqueues `count` tasks and resolves with the uids the queue's worker placed. */
async function placeThrough(queue: PlacementQueue, prefix: string, count: number): Promise<Set<string>> {
  const placed = new Set<string>();
  const uids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const uid of uids)
    await queue.enqueue({ namespace: 'default', name: uid, uid, kind: 'job' } satisfies PlacementTask);
  await eventually(
    `${count} tasks placed`,
    async () => (uids.every((uid) => seen.has(uid)) ? true : undefined),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
  for (const uid of uids) placed.add(uid);
  return placed;
}
afterAll(async () => {
  await Promise.all(
    processes.map(
      (child) =>
        new Promise((resolve) => {
          if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null)
            return resolve(undefined);
          child.once('exit', resolve);
          child.kill('SIGKILL');
        }),
    ),
  );
  // Once the servers have exited: their data, configuration and cluster node files are in it.
  rmSync(dir, { recursive: true, force: true });
});

describe('the placement queue on Redis Sentinel', () => {
  it('places through the master the Sentinels name, and again after they fail it over', {
    timeout: 120_000,
  }, async () => {
    const [master, replica, sentinel] = await freeLoopbackPorts(3);
    plainRedis(master!);
    plainRedis(replica!, ['--replicaof', '127.0.0.1', String(master)]);
    await Promise.all([answers(master!), answers(replica!)]);
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinel}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor jobrelay 127.0.0.1 ${master} 1`,
        'sentinel down-after-milliseconds jobrelay 1000',
        'sentinel failover-timeout jobrelay 5000',
        '',
      ].join('\n'),
    );
    start([conf, '--sentinel']);
    await answers(sentinel!);

    const queue = new PlacementQueue({
      redisUrl: `redis+sentinel://127.0.0.1:${sentinel}/jobrelay`,
      queueName: 'jobrelay-placement-sentinel-test',
      log,
    });
    try {
      await queue.waitUntilReady();
      startPlacing(queue);
      expect((await placeThrough(queue, 'before', 10)).size).toBe(10);

      // The replica must have caught up before it can be promoted.
      const sentinels = new Redis({ port: sentinel!, host: '127.0.0.1' });
      const promoted = new Redis({ port: replica!, host: '127.0.0.1' });
      await eventually('the replica to be in sync', async () =>
        /master_link_status:up/.test(await promoted.info('replication')) ? true : undefined,
      );
      await eventually('the Sentinel to know the replica', async () => {
        const replicas = (await sentinels.call('SENTINEL', 'REPLICAS', 'jobrelay')) as unknown[];
        return replicas.length > 0 ? true : undefined;
      });
      await sentinels.call('SENTINEL', 'FAILOVER', 'jobrelay');
      await eventually(
        'the Sentinels to name the replica as master',
        async () => {
          const [, port] = (await sentinels.call(
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            'jobrelay',
          )) as string[];
          return Number(port) === replica ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      sentinels.disconnect();
      expect((await placeThrough(queue, 'after', 10)).size).toBe(10);
      expect(await promoted.exists('bull:jobrelay-placement-sentinel-test:meta')).toBe(1);
      promoted.disconnect();
    } finally {
      await queue.close();
    }
  });
});

describe('the placement queue on a Redis Cluster', () => {
  it('places, with every key of the queue in the one slot of its {jobrelay} hash tag', {
    timeout: 120_000,
  }, async () => {
    const ports = await freeLoopbackPorts(3);
    for (const port of ports)
      plainRedis(port, [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
      ]);
    await Promise.all(ports.map(answers));
    const nodes = ports.map((port) => new Redis({ port, host: '127.0.0.1' }));
    // What `redis-cli --cluster create` does: split the 16,384 slots, then introduce the nodes.
    const share = Math.ceil(16384 / nodes.length);
    await Promise.all(
      nodes.map((node, i) =>
        node.call(
          'CLUSTER',
          'ADDSLOTSRANGE',
          String(i * share),
          String(Math.min(16383, (i + 1) * share - 1)),
        ),
      ),
    );
    for (const port of ports.slice(1)) await nodes[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(port));
    await eventually(
      'the cluster to be ok on every node',
      async () =>
        (await Promise.all(nodes.map((n) => n.cluster('INFO')))).every((info) =>
          /cluster_state:ok/.test(String(info)),
        )
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );

    const queue = new PlacementQueue({
      redisUrl: `redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`,
      queueName: 'jobrelay-placement-cluster-test',
      log,
    });
    try {
      await queue.waitUntilReady();
      startPlacing(queue);
      expect((await placeThrough(queue, 'cluster', 20)).size).toBe(20);
      expect(await queue.depth()).toMatchObject({ waiting: 0, active: 0 });
      const slot = Number(await nodes[0]!.cluster('KEYSLOT', '{jobrelay}'));
      const keys = (await Promise.all(nodes.map((n) => n.keys('*jobrelay-placement-cluster-test*')))).flat();
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key.startsWith('{jobrelay}:jobrelay-placement-cluster-test:'), key).toBe(true);
        expect(Number(await nodes[0]!.cluster('KEYSLOT', key)), key).toBe(slot);
      }
    } finally {
      await queue.close();
      for (const node of nodes) node.disconnect();
    }
  });
});
