// Two controller replicas on one Lease. The leader reconciles and places; the follower keeps its
// caches warm and writes nothing (the placement queue waits in Redis for whoever leads). SIGKILL the leader mid-burst: the follower takes over
// within the lease duration, no Job is lost, none ever has a second mirror, and every Job
// completes with its mirror's status. SIGTERM the new leader: it finishes in-flight work,
// releases the Lease, and the restarted replica takes over at its next attempt.

import { CoordinationV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { comparableStatus, type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import { type FleetSampler, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const leaseName = 'jobrelay-controller';
const systemNamespace = 'jobrelay-system';
/** The controller's defaults (client-go's): a lease of 15 s, renewed every 2 s. */
const leaseDurationMs = 15_000;
const retryPeriodMs = 2_000;
const burst = 90;

let fleet: Fleet;
let namespace: string;
let sampler: FleetSampler;
let leases: CoordinationV1Api;
let control: ReturnType<typeof comparableStatus>;
const replicas: ControllerProcess[] = [];

function replica(identity: string): ControllerProcess {
  const controller = startController(fleet.sandbox, [
    `--leader-election-identity=${identity}`,
    '--log-level=info',
  ]);
  replicas.push(controller);
  return controller;
}

async function holder(): Promise<string> {
  const lease = await leases
    .readNamespacedLease({ name: leaseName, namespace: systemNamespace })
    .catch(() => undefined);
  return lease?.spec?.holderIdentity ?? '';
}

/** Resolves once `identity` holds the Lease (polled every 100 ms, so takeover times are exact to that). */
async function untilHolds(identity: string, timeoutMs: number): Promise<void> {
  await eventually(
    `${identity} to hold the Lease`,
    async () => ((await holder()) === identity ? true : undefined),
    {
      timeoutMs,
      intervalMs: 100,
    },
  );
}

function jobNamed(name: string, managedBy: string | undefined): V1Job {
  return sandboxJob({ name, managedBy, requests: { cpu: '50m', memory: '32Mi' }, pod: { runSeconds: 2 } });
}

async function createJobs(prefix: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => uniqueName(`${prefix}-${i}`));
  for (let i = 0; i < names.length; i += 15)
    await Promise.all(
      names.slice(i, i + 15).map((name) =>
        fleet.management.batch.createNamespacedJob({
          namespace,
          body: jobNamed(name, dispatcherManagedBy),
        }),
      ),
    );
  return names;
}

async function originsNamed(names: string[]): Promise<V1Job[]> {
  const wanted = new Set(names);
  return (await fleet.management.batch.listNamespacedJob({ namespace })).items.filter((job) =>
    wanted.has(job.metadata!.name!),
  );
}

/** Every origin Complete, each with exactly one mirror ever, never two at once, whose final status it shows. */
async function expectEachRanOnceAndCompleted(names: string[]): Promise<void> {
  const origins = await eventually(
    `all ${names.length} Jobs Complete on the management cluster`,
    async () => {
      const jobs = await originsNamed(names);
      return jobs.length === names.length && jobs.every((job) => isTrue(job, 'Complete')) ? jobs : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  await sampler.settle();
  const report = sampler.report();
  expect(report.watchGaps, 'times a watch of the workers lost its history').toBe(0);
  for (const origin of origins) {
    const name = origin.metadata!.name!;
    const mirrors = report.mirrorsOf(origin.metadata!.uid!);
    expect(
      mirrors.map((m) => m.cluster),
      `${name}: the mirrors it ever had`,
    ).toEqual([placedCluster(origin)]);
    expect(report.maxLiveMirrors(origin.metadata!.uid!), `${name}: most mirrors alive at once`).toBe(1);
    expect(report.podsOfOrigin(origin.metadata!.uid!), `${name}: pods that ran`).toHaveLength(1);
    expect(comparableStatus(origin), `${name}: final status, against the same Job run directly`).toEqual(
      control,
    );
  }
}

/** The same Job run directly on one worker, without jobrelay: what every origin must end as. */
async function runControlJob(): Promise<ReturnType<typeof comparableStatus>> {
  const directNamespace = await createTestNamespace(fleet.direct, 'leader-direct');
  const name = uniqueName('control');
  await fleet.direct.batch.createNamespacedJob({
    namespace: directNamespace,
    body: jobNamed(name, undefined),
  });
  const job = await eventually(
    'the control Job to finish on its worker',
    async () => {
      const job = await fleet.direct.batch.readNamespacedJob({ name, namespace: directNamespace });
      return isTrue(job, 'Complete') || isTrue(job, 'Failed') ? job : undefined;
    },
    { timeoutMs: 120_000 },
  );
  await fleet.direct.core.deleteNamespace({ name: directNamespace }).catch(() => {});
  return comparableStatus(job);
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  leases = fleet.management.kubeConfig.makeApiClient(CoordinationV1Api);
  namespace = await createTestNamespace(fleet.management, 'leader');
  sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
  control = await runControlJob();
}, 180_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.kill('SIGTERM')));
  await sampler?.stop();
  await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
});

describe('two controller replicas on one Lease', () => {
  let a: ControllerProcess;
  let b: ControllerProcess;

  it('one leads, reconciles and places; the other is ready and does neither', {
    timeout: 120_000,
  }, async () => {
    a = replica('replica-a');
    await untilHolds('replica-a', 60_000 + leaseDurationMs);
    b = replica('replica-b');
    await eventually('replica-b to be ready', async () => ((await b.isReady()) ? true : undefined), {
      timeoutMs: 60_000,
    });
    expect(await a.metric('jobrelay_leader')).toBe(1);
    expect(await b.metric('jobrelay_leader')).toBe(0);
    expect(await holder()).toBe('replica-a');
  });

  it('survives a SIGKILL of the leader mid-burst: taken over within the lease duration, nothing lost or doubled', {
    timeout: 480_000,
  }, async () => {
    const names = await createJobs('kill', burst);
    // Mid-burst: some Jobs have mirrors, most do not yet.
    await eventually(
      'a tenth of the burst placed',
      async () => {
        const placed = (await originsNamed(names)).filter((job) => placedCluster(job)).length;
        return placed >= burst / 10 ? placed : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    expect(await b.metric('jobrelay_reconciles_total'), 'reconciles run by the follower').toBe(0);
    expect(await b.metric('jobrelay_placements_total'), 'placement tasks run by the follower').toBe(0);
    const killedAt = Date.now();
    await a.kill('SIGKILL');
    const placedAtKill = (await originsNamed(names)).filter((job) => placedCluster(job)).length;
    // The leader places ~90 Jobs/s, so it may have placed the whole burst before the kill landed;
    // Jobs created while nobody leads are sure to be placed by the new leader.
    const leaderless = await createJobs('leaderless', 15);
    await untilHolds('replica-b', 2 * leaseDurationMs);
    const takeoverMs = Date.now() - killedAt;
    await eventually(
      'replica-b to lead',
      async () => ((await b.metric('jobrelay_leader')) === 1 ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
    console.log(
      `[leader-election] SIGKILL of the leader: replica-b held the Lease ${(takeoverMs / 1000).toFixed(1)} s later ` +
        `(lease duration ${leaseDurationMs / 1000} s, retry period ${retryPeriodMs / 1000} s); ` +
        `${placedAtKill} of the ${burst} in the burst were placed at the kill`,
    );
    // As client-go's, the follower counts the lease duration from when it first saw the last
    // renewal, not from the renewal: it sees that at one of its attempts, up to a retry period
    // (jittered by up to 20 %) after the renewal, which may be just before the kill; it takes the
    // Lease at its first attempt after the duration, another retry period at most.
    expect(takeoverMs).toBeLessThanOrEqual(leaseDurationMs + 2 * 1.2 * retryPeriodMs + 1_000);
    await expectEachRanOnceAndCompleted([...names, ...leaderless]);
    expect(await b.metric('jobrelay_reconciles_total')).toBeGreaterThan(0);
    expect(
      await b.metric('jobrelay_placements_total'),
      'placements by the new leader',
    ).toBeGreaterThanOrEqual(leaderless.length);
  });

  it('hands over on SIGTERM: the leader finishes, releases the Lease, and the other takes it at once', {
    timeout: 300_000,
  }, async () => {
    a = replica('replica-a');
    await eventually(
      'the restarted replica-a to be ready',
      async () => ((await a.isReady()) ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    expect(await holder()).toBe('replica-b');
    const names = await createJobs('term', 30);
    const stoppingAt = Date.now();
    await b.kill('SIGTERM');
    const exitedMs = Date.now() - stoppingAt;
    expect(b.process.exitCode, `replica-b's exit code; see ${b.logFile}`).toBe(0);
    expect(b.logs()).toContain('released the leader lease');
    await untilHolds('replica-a', leaseDurationMs);
    const handoverMs = Date.now() - stoppingAt;
    console.log(
      `[leader-election] SIGTERM of the leader: it exited after ${(exitedMs / 1000).toFixed(1)} s; ` +
        `replica-a held the Lease ${(handoverMs / 1000).toFixed(1)} s after the signal`,
    );
    // Released, not expired: the next attempt takes it.
    expect(handoverMs - exitedMs).toBeLessThanOrEqual(1.2 * retryPeriodMs + 1_000);
    await expectEachRanOnceAndCompleted(names);
  });
});
