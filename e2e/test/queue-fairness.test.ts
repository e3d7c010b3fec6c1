// Reclaim within a cohort and usage after a Redis flush (issue 30), on the sandbox with the real
// controller. Three tenant queues of weights 1, 1, 2 borrow an idle lender's whole quota in one
// cohort with Jobs of 30 s; the lender then takes its quota back by preemption within seconds,
// and the evicted Jobs, their mirrors deleted on the workers, wait and complete on a second
// attempt. After Redis is flushed, no queue admits beyond its quota and its status stays right.
// A sampler checks every queue's quota (nominal + what its cohort may lend) from the placement
// records at every instant, from the first test to the last.
//
// Fair sharing (25/25/50 of the cohort's cpu-seconds) and StrictFIFO against BestEffortFIFO are
// jobrelay's admission alone: they run over the real controller classes, clock injected, in
// apps/controller/middle/queue-fairness.test.ts (issue 43).

import { originUidLabel, placementAnnotation, placementAttemptAnnotation } from '@jobrelay/mirror';
import type { PlacementRecord } from '@jobrelay/placement';
import { CustomObjectsApi, EventsV1Api, type V1Job } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isFinished,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

let fleet: Fleet;
let controller: ControllerProcess;
const runLabel = 'e2e.jobrelay.dev/queue-fairness';
const run = uniqueName('run');
const queues: string[] = [];

const custom = () => fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };

/** The cohort's capacity: the lender's nominal quota, in cpu (each Job of the reclaim test asks for 1). */
const poolCpu = 8;

interface QueueOptions {
  namespace: string;
  cpu: number;
  cohort?: string;
  weight?: number;
  reclaimWithinCohort?: 'Never' | 'LowerPriority' | 'Any';
}

async function createQueue(name: string, options: QueueOptions): Promise<void> {
  await custom().createClusterCustomObject({
    ...queueApi,
    body: {
      apiVersion: 'jobrelay.dev/v1alpha1',
      kind: 'DispatchQueue',
      metadata: { name },
      spec: {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': options.namespace } },
        resources: [{ name: 'cpu', nominalQuota: String(options.cpu) }],
        ...(options.cohort ? { cohort: options.cohort } : {}),
        ...(options.weight ? { weight: options.weight } : {}),
        ...(options.reclaimWithinCohort
          ? { preemption: { reclaimWithinCohort: options.reclaimWithinCohort } }
          : {}),
      },
    },
  });
  queues.push(name);
}

async function queueStatus(name: string): Promise<Record<string, unknown> | undefined> {
  const queue = (await custom().getClusterCustomObject({ ...queueApi, name })) as {
    status?: Record<string, unknown>;
  };
  return queue.status;
}

function recordOf(job: V1Job): (PlacementRecord & { queue?: string }) | undefined {
  const annotation = job.metadata?.annotations?.[placementAnnotation];
  return annotation ? (JSON.parse(annotation) as PlacementRecord) : undefined;
}

/**
 * Holding its queue's quota: placed by a queue, unfinished (an evicted one holds it until its
 * mirror is gone), and its mirror not finished on its placement's cluster. That last is the
 * controller's rule (docs/queues.md): a finished mirror's pods are gone, though its origin may not
 * show it yet under load.
 */
function holdsQuota(job: V1Job, finishedOnWorker: ReadonlySet<string>): boolean {
  const record = recordOf(job);
  if (record?.cluster === undefined || record.queue === undefined || isFinished(job)) return false;
  return !finishedOnWorker.has(`${job.metadata?.uid}@${record.cluster}/${record.attempt ?? 0}`);
}

/** `originUid@cluster/attempt` of every mirror finished (and not being deleted) on its worker. */
async function finishedMirrors(): Promise<Set<string>> {
  const finished = new Set<string>();
  await Promise.all(
    [...fleet.workers].map(async ([cluster, clients]) => {
      const mirrors = await clients.batch.listJobForAllNamespaces({ labelSelector: originUidLabel });
      for (const mirror of mirrors.items) {
        if (mirror.metadata?.deletionTimestamp || !isFinished(mirror)) continue;
        const attempt = Number(mirror.metadata?.annotations?.[placementAttemptAnnotation] ?? 0);
        finished.add(`${mirror.metadata?.labels?.[originUidLabel]}@${cluster}/${attempt}`);
      }
    }),
  );
  return finished;
}

function millicores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
}

function cpuOf(job: V1Job): number {
  return (job.spec?.template.spec?.containers ?? []).reduce(
    (sum, c) => sum + millicores(String(c.resources?.requests?.cpu ?? '0')),
    0,
  );
}

async function createJob(
  namespace: string,
  name: string,
  options: { runSeconds: number; cpu: number },
): Promise<V1Job> {
  const body = sandboxJob({
    name,
    managedBy: dispatcherManagedBy,
    requests: { cpu: String(options.cpu) },
    pod: { runSeconds: options.runSeconds },
  });
  body.metadata!.labels = { [runLabel]: run };
  return fleet.management.batch.createNamespacedJob({ namespace, body });
}

async function jobsOf(namespace: string): Promise<V1Job[]> {
  return (await fleet.management.batch.listNamespacedJob({ namespace })).items;
}

/** Every Job of this file, in one request. */
async function allJobs(): Promise<V1Job[]> {
  return (await fleet.management.batch.listJobForAllNamespaces({ labelSelector: `${runLabel}=${run}` }))
    .items;
}

/** A sample: cpu (millicores) held per queue at one instant. */
interface Sample {
  at: number;
  held: Map<string, number>;
}

/**
 * Samples every Job of the file every 400 ms: what each queue holds, checked against its limit
 * (a queue or a cohort's sum) at each instant. Limits are registered by the test that creates
 * the queues.
 */
class QuotaSampler {
  private readonly samples: Sample[] = [];
  readonly violations: string[] = [];
  /** Groups of queues and the most cpu (millicores) they may hold together. */
  private readonly limits: Array<{ queues: string[]; millicores: number }> = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor() {
    this.loop = (async () => {
      while (this.running) {
        try {
          // Origins first: a Job admitted into quota freed between the two lists would otherwise
          // count beside the finished Job it replaced (the controller admits only after it saw
          // that mirror finish).
          const jobs = await allJobs();
          this.sample(jobs, await finishedMirrors());
        } catch {
          // An apiserver hiccup is one sample missed, not a failure of the quota.
        }
        await new Promise((r) => setTimeout(r, 400));
      }
    })();
  }

  limit(queueNames: string[], cpu: number): void {
    this.limits.push({ queues: queueNames, millicores: cpu * 1000 });
  }

  private sample(jobs: V1Job[], finishedOnWorker: ReadonlySet<string>): void {
    const held = new Map<string, number>();
    for (const job of jobs) {
      if (!holdsQuota(job, finishedOnWorker)) continue;
      const queue = recordOf(job)!.queue!;
      held.set(queue, (held.get(queue) ?? 0) + cpuOf(job));
    }
    const at = Date.now();
    this.samples.push({ at, held });
    for (const { queues: group, millicores: most } of this.limits) {
      const sum = group.reduce((s, q) => s + (held.get(q) ?? 0), 0);
      if (sum > most)
        this.violations.push(`${new Date(at).toISOString()}: ${group.join('+')} held ${sum}m > ${most}m`);
    }
  }

  /** The most a queue held at any sampled instant since `from`. */
  most(queue: string, from = 0): number {
    return Math.max(0, ...this.samples.filter((s) => s.at >= from).map((s) => s.held.get(queue) ?? 0));
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

let sampler: QuotaSampler;
const tenants = [
  { key: 'a', weight: 1 },
  { key: 'b', weight: 1 },
  { key: 'c', weight: 2 },
] as const;
const tenantNamespaces = new Map<string, string>();
const tenantQueues = new Map<string, string>();
let lenderNamespace: string;
const cohort = uniqueName('e2e-cohort');
const lenderQueue = uniqueName('e2e-lender');

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  lenderNamespace = await createTestNamespace(fleet.management, 'fair-lender');
  for (const tenant of tenants) {
    tenantNamespaces.set(tenant.key, await createTestNamespace(fleet.management, `fair-${tenant.key}`));
    tenantQueues.set(tenant.key, uniqueName(`e2e-tenant-${tenant.key}`));
  }
  controller = startController(fleet.sandbox);
  sampler = new QuotaSampler();
});

afterAll(async () => {
  await sampler?.stop();
  await controller?.kill('SIGTERM');
  for (const name of queues)
    await custom()
      .deleteClusterCustomObject({ ...queueApi, name })
      .catch(() => {});
  // Nothing of this file is left for the next to count.
  const leftovers = fleet ? await allJobs().catch(() => []) : [];
  for (const job of leftovers)
    await fleet.management.batch
      .deleteNamespacedJob({
        name: job.metadata!.name!,
        namespace: job.metadata!.namespace!,
        propagationPolicy: 'Background',
      })
      .catch(() => {});
  if (sampler?.violations.length)
    console.log(`[queue-fairness] quota violations:\n${sampler.violations.join('\n')}`);
});

describe('reclaim within the cohort', () => {
  it('the idle lender takes its quota back by preemption within seconds; the evicted wait and complete', async () => {
    // The tenants own nothing (nominal 0): all they run is borrowed from the lender's idle quota.
    // Their weights are those of the fair-sharing case (apps/controller/middle/queue-fairness.test.ts).
    await createQueue(lenderQueue, {
      namespace: lenderNamespace,
      cpu: poolCpu,
      cohort,
      reclaimWithinCohort: 'Any',
    });
    for (const tenant of tenants)
      await createQueue(tenantQueues.get(tenant.key)!, {
        namespace: tenantNamespaces.get(tenant.key)!,
        cpu: 0,
        cohort,
        weight: tenant.weight,
      });
    sampler.limit([lenderQueue, ...tenantQueues.values()], poolCpu);
    for (const queue of tenantQueues.values()) sampler.limit([queue], poolCpu);
    // The tenants fill the pool with Jobs of 30 s: only preemption can free quota sooner.
    const longRun = 30;
    const long: V1Job[] = [];
    for (const [t, count] of [
      ['a', 2],
      ['b', 2],
      ['c', 4],
    ] as const)
      for (let i = 0; i < count; i += 1)
        long.push(
          await createJob(tenantNamespaces.get(t)!, `long-${t}-${i}`, { runSeconds: longRun, cpu: 1 }),
        );
    const longNames = new Set(long.map((j) => `${j.metadata!.namespace}/${j.metadata!.name}`));
    const cohortQueues = new Set([lenderQueue, ...tenantQueues.values()]);
    await eventually(
      'the long Jobs to hold the whole pool',
      async () => {
        const jobs = await allJobs();
        const finished = await finishedMirrors();
        const holding = jobs.filter(
          (job) => holdsQuota(job, finished) && cohortQueues.has(recordOf(job)!.queue!),
        );
        return holding.length === poolCpu &&
          holding.every((j) => longNames.has(`${j.metadata!.namespace}/${j.metadata!.name}`))
          ? true
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const evictionsBefore = await controller.metric('jobrelay_queue_evictions_total');
    const lenderJobs = 4;
    const began = Date.now();
    const lender: V1Job[] = [];
    for (let i = 0; i < lenderJobs; i += 1)
      lender.push(await createJob(lenderNamespace, `lender-${i}`, { runSeconds: 5, cpu: 1 }));
    await eventually(
      'the lender to hold its Jobs',
      async () =>
        (await jobsOf(lenderNamespace)).filter((j) => recordOf(j)?.cluster).length === lenderJobs
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const reclaimSeconds = (Date.now() - began) / 1000;
    console.log(
      `[queue-fairness] the lender got ${lenderJobs} cpu of its nominal quota back in ${reclaimSeconds.toFixed(1)}s`,
    );
    // Well inside the long Jobs' 30 s: it was preemption, not their finishing.
    expect(reclaimSeconds).toBeLessThanOrEqual(20);
    // Exactly the borrowed quota it needed was taken back: no more.
    const evicted = await eventually('the evicted Jobs to say why', async () => {
      const jobs = await allJobs();
      const marked = jobs
        .filter((j) => longNames.has(`${j.metadata!.namespace}/${j.metadata!.name}`))
        .filter((j) => {
          const record = recordOf(j);
          return record?.preempted !== undefined || record?.lastReplacedBecause?.startsWith('preempted');
        });
      return marked.length >= lenderJobs ? marked : undefined;
    });
    expect(evicted).toHaveLength(lenderJobs);
    expect((await controller.metric('jobrelay_queue_evictions_total')) - evictionsBefore).toBe(lenderJobs);
    for (const job of evicted) {
      const events = await fleet.management.kubeConfig.makeApiClient(EventsV1Api).listNamespacedEvent({
        namespace: job.metadata!.namespace!,
        fieldSelector: `regarding.uid=${job.metadata!.uid}`,
      });
      expect(events.items.map((e) => e.reason)).toContain('Preempted');
    }
    console.log(
      `[queue-fairness] evicted: ${evicted.map((j) => `${j.metadata!.namespace!.replace(/-[0-9a-f]+$/, '')}/${j.metadata!.name}`).join(', ')}`,
    );
    // Every long Job completes, the evicted ones on a second attempt; the lender's too.
    for (const job of [...lender, ...long]) {
      const done = await waitForFinishedJob(
        fleet.management,
        job.metadata!.namespace!,
        job.metadata!.name!,
        120_000,
      );
      expect(done.status?.succeeded).toBe(1);
    }
    for (const job of evicted) {
      const done = await fleet.management.batch.readNamespacedJob({
        name: job.metadata!.name!,
        namespace: job.metadata!.namespace!,
      });
      // Re-admitted by its own queue, on a second attempt.
      expect(recordOf(done)?.attempt).toBe(2);
      const tenant = tenants.find((t) => tenantNamespaces.get(t.key) === job.metadata!.namespace)!;
      expect(recordOf(done)?.queue).toBe(tenantQueues.get(tenant.key));
    }
    expect(sampler.most(lenderQueue)).toBeLessThanOrEqual(poolCpu * 1000);
    expect(sampler.violations).toEqual([]);
  }, 200_000);
});

describe('Redis flushed while a queue holds its quota', () => {
  it('admits nothing beyond quota afterwards and its status stays right', async () => {
    const namespace = await createTestNamespace(fleet.management, 'fifo-flush');
    const queue = uniqueName('e2e-flush');
    await createQueue(queue, { namespace, cpu: 2 });
    sampler.limit([queue], 2);
    const names = [0, 1, 2, 3, 4].map((i) => `flush-${i}`);
    // The two admitted first hold the quota through the flushes; the three behind them only need
    // admitting and finishing, two turns of the queue after the flush: they run 3 s. Ordered by age,
    // to the second (creationTimestamp): the short ones are strictly younger, so they are the three
    // that wait.
    for (const name of names.slice(0, 2)) await createJob(namespace, name, { runSeconds: 12, cpu: 1 });
    await new Promise((r) => setTimeout(r, 1_200));
    for (const name of names.slice(2)) await createJob(namespace, name, { runSeconds: 3, cpu: 1 });
    await eventually('two admitted, three waiting', async () => {
      const s = await queueStatus(queue);
      return s?.admittedWorkloads === 2 && s.pendingWorkloads === 3 ? true : undefined;
    });
    const flushedAt = Date.now();
    const redis = new Redis(fleet.sandbox.redisUrl);
    try {
      // Several flushes, as the placement tasks are rebuilt in between.
      for (let i = 0; i < 5; i += 1) {
        await redis.flushall();
        await new Promise((r) => setTimeout(r, 300));
      }
    } finally {
      redis.disconnect();
    }
    // The status as the queue is drained: never more than 2 admitted or 2 cpu in use.
    const statuses: Array<Record<string, unknown>> = [];
    const watching = (async () => {
      for (;;) {
        const s = await queueStatus(queue).catch(() => undefined);
        if (s) statuses.push(s);
        const jobs = await jobsOf(namespace);
        if (jobs.length === names.length && jobs.every(isFinished)) return;
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    for (const name of names) {
      const done = await waitForFinishedJob(fleet.management, namespace, name, 120_000);
      expect(done.status?.succeeded).toBe(1);
      expect(recordOf(done)?.queue).toBe(queue);
    }
    await watching;
    expect(statuses.length).toBeGreaterThan(0);
    // The first status read after the flushes still counts the two that held the quota before it.
    expect(statuses[0]).toMatchObject({ admittedWorkloads: 2, usage: { cpu: '2' } });
    for (const s of statuses) {
      expect(s.admittedWorkloads as number).toBeLessThanOrEqual(2);
      expect(millicores((s.usage as { cpu: string }).cpu)).toBeLessThanOrEqual(2000);
      // What it says it holds is what it admitted: 1 cpu each.
      expect(millicores((s.usage as { cpu: string }).cpu)).toBe((s.admittedWorkloads as number) * 1000);
    }
    // Drained: nothing held, nothing waiting.
    const final = await eventually('the drained status', async () => {
      const s = await queueStatus(queue);
      return s?.admittedWorkloads === 0 && s.pendingWorkloads === 0 ? s : undefined;
    });
    expect(final.usage).toEqual({ cpu: '0' });
    const most = sampler.most(queue, flushedAt);
    console.log(
      `[queue-fairness] after the Redis flush: at most ${most / 1000} cpu of 2 held at any sampled instant`,
    );
    expect(most).toBe(2000);
    expect(sampler.violations).toEqual([]);
  }, 150_000);
});
