// Restarts, a flushed queue, a foreign Job in the way, a vanished mirror: nothing is lost,
// nothing runs twice, and nothing that is not ours is touched. And the Normal dispatch Events
// (Placed, MirrorCreated), recorded only when an admin asks for them.

import { placementAnnotation } from '@jobrelay/mirror';
import { EventsV1Api, type EventsV1Event, type V1Job, type V1JobSpec } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, findMirror, fleetOf, waitForMirror } from '../src/dispatch-fixtures.ts';
import { expectRanOnce, type FleetSampler, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

let fleet: Fleet;
let controller: ControllerProcess | undefined;
let namespace: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  namespace = await createTestNamespace(fleet.management, 'resilience');
});

afterEach(async () => {
  await controller?.kill('SIGTERM');
  controller = undefined;
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
});

function placementOf(job: V1Job): {
  cluster?: string;
  attempt: number;
  excludedClusters: string[];
  decision?: string;
} {
  return JSON.parse(
    job.metadata?.annotations?.[placementAnnotation] ?? '{"attempt":0,"excludedClusters":[]}',
  );
}

async function createDispatched(name: string, spec: Partial<V1JobSpec> = {}, runSeconds = 2): Promise<V1Job> {
  return fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ name, managedBy: dispatcherManagedBy, spec, pod: { runSeconds } }),
  });
}

/** Starts `controller` and waits until it sees every worker Active, so its first placement can choose among all. */
async function startControllerWithWorkersActive(): Promise<void> {
  controller = startController(fleet.sandbox);
  const started = controller;
  // Retried: the log file may not exist yet.
  const url = await eventually('the controller’s health address', () => started.healthUrl());
  await eventually('every worker Active in the controller', async () => {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    return fleet.sandbox.workers.every((w) =>
      new RegExp(`^jobrelay_worker_cluster_active\\{cluster="${w.name}"\\} 1$`, 'm').test(metrics),
    )
      ? true
      : undefined;
  });
}

async function eventsOf(origin: V1Job): Promise<EventsV1Event[]> {
  const events = await fleet.management.kubeConfig
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `regarding.uid=${origin.metadata!.uid}` });
  return events.items;
}

async function eventReasons(origin: V1Job): Promise<string[]> {
  return (await eventsOf(origin)).map((e) => e.reason ?? '');
}

/**
 * Every origin completes exactly once, on its first placement: what the sampler saw on the
 * workers while they ran is one mirror per origin (so never two at once), on the placed
 * cluster, and exactly `completions` pods of it, all Succeeded.
 */
async function expectEachRanOnce(
  origins: V1Job[],
  completions: number,
  sampler: FleetSampler,
): Promise<void> {
  const finished = await Promise.all(
    origins.map((o) => waitForFinishedJob(fleet.management, namespace, o.metadata!.name!)),
  );
  // Their pods were all created before the origins finished and outlive that by the mirror
  // retention time: one more sample has seen every one of them.
  await sampler.settle();
  const report = await sampler.stop();
  console.log(
    `[resilience] ${report.samples} samples of the workers (${report.incompleteSamples} incomplete), ` +
      `longest gap ${report.maxGapMs} ms, ${report.watchGaps} watch gaps`,
  );
  for (const job of finished) {
    expect(isTrue(job, 'Complete'), job.metadata?.name).toBe(true);
    expect(job.status?.succeeded, job.metadata?.name).toBe(completions);
    expect(placementOf(job).attempt, job.metadata?.name).toBe(1);
    const pods = expectRanOnce(report, job, { cluster: placementOf(job).cluster!, pods: completions });
    expect(
      pods.map((p) => p.phase),
      job.metadata?.name,
    ).toEqual(pods.map(() => 'Succeeded'));
  }
}

describe('a controller killed mid-dispatch', () => {
  it('restarts, relists, and neither loses a Job nor creates a second mirror', async () => {
    const sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
    controller = startController(fleet.sandbox);
    const origins = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createDispatched(uniqueName(`kill${i}`), { completions: 2, parallelism: 1 }),
      ),
    );
    // Kill it as soon as it is part-way through: some Jobs placed, some not.
    await eventually(
      'a first placement',
      async () => {
        const list = await fleet.management.batch.listNamespacedJob({ namespace });
        return list.items.some(
          (j) =>
            origins.some((o) => o.metadata!.uid === j.metadata!.uid) &&
            j.metadata?.annotations?.[placementAnnotation],
        )
          ? true
          : undefined;
      },
      { intervalMs: 20 },
    );
    await controller.kill('SIGKILL');
    const afterKill = await Promise.all(
      origins.map((o) => fleet.management.batch.readNamespacedJob({ name: o.metadata!.name!, namespace })),
    );
    const placedBeforeKill = afterKill.filter((j) => j.metadata?.annotations?.[placementAnnotation]).length;
    expect(placedBeforeKill).toBeGreaterThan(0);

    controller = startController(fleet.sandbox);
    await expectEachRanOnce(origins, 2, sampler);
  });
});

describe('Redis flushed mid-run', () => {
  it('rebuilds the queue from Kubernetes: every Job still runs, once', async () => {
    const sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
    controller = startController(fleet.sandbox);
    const redis = new Redis(fleet.sandbox.redisUrl);
    try {
      const creating = Promise.all(
        Array.from({ length: 12 }, (_, i) => createDispatched(uniqueName(`flush${i}`), { completions: 1 })),
      );
      // Flush repeatedly while Jobs arrive and are being placed.
      const flushes = (async () => {
        for (let i = 0; i < 15; i++) {
          await redis.flushall();
          await new Promise((r) => setTimeout(r, 150));
        }
      })();
      const [origins] = await Promise.all([creating, flushes]);
      await expectEachRanOnce(origins, 1, sampler);
    } finally {
      redis.disconnect();
    }
  });
});

describe('a Job of the same name that jobrelay does not own', () => {
  async function createForeign(cluster: string, name: string): Promise<V1Job> {
    const worker = fleet.workers.get(cluster)!;
    await worker.core.createNamespace({ body: { metadata: { name: namespace } } }).catch(() => {});
    await eventually('default ServiceAccount', async () =>
      (await worker.core.readNamespacedServiceAccount({ name: 'default', namespace }).catch(() => undefined))
        ? true
        : undefined,
    );
    return worker.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name, spec: { completions: 1 }, pod: { runSeconds: 600 } }),
    });
  }

  async function expectUntouched(cluster: string, foreign: V1Job): Promise<void> {
    const now = await fleet.workers
      .get(cluster)!
      .batch.readNamespacedJob({ name: foreign.metadata!.name!, namespace });
    expect(now.metadata?.uid).toBe(foreign.metadata?.uid);
    expect(now.metadata?.labels?.['jobrelay.dev/origin-uid']).toBeUndefined();
    expect(now.spec?.parallelism).toBe(foreign.spec?.parallelism);
    expect(now.metadata?.deletionTimestamp).toBeUndefined();
  }

  it('is left alone, and the Job runs on another cluster', async () => {
    const admin = workerClusterAdmin(fleet);
    const name = uniqueName('collide');
    const [first] = fleet.sandbox.workers.map((w) => w.name) as [string];
    const foreign = await createForeign(first, name);
    // The placer's first choice is the cluster with the foreign Job, so the collision happens.
    await admin.patch(first, { spec: { weight: 100 } });
    try {
      await startControllerWithWorkersActive();
      const origin = await createDispatched(name);
      const done = await waitForFinishedJob(fleet.management, namespace, name);
      expect(isTrue(done, 'Complete')).toBe(true);
      expect(placementOf(done).excludedClusters).toEqual([first]);
      expect(placementOf(done).cluster).not.toBe(first);
      expect(placementOf(done).attempt).toBe(2);
      await expectUntouched(first, foreign);
      expect(await eventReasons(origin)).toContain('NameCollision');
    } finally {
      await admin.reset(first, []);
    }
  });

  it('on every cluster: the Job waits and says why, and nothing foreign is touched', async () => {
    controller = startController(fleet.sandbox);
    const name = uniqueName('blocked');
    const clusters = fleet.sandbox.workers.map((w) => w.name);
    const foreign = await Promise.all(clusters.map((c) => createForeign(c, name)));
    const origin = await createDispatched(name);
    const waiting = await eventually('both clusters excluded', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
      return placementOf(job).excludedClusters.length === clusters.length ? job : undefined;
    });
    expect(placementOf(waiting).cluster).toBeUndefined();
    const reasons = await eventually('a FailedPlacement event', async () => {
      const found = await eventReasons(origin);
      return found.includes('FailedPlacement') ? found : undefined;
    });
    expect(reasons.filter((r) => r === 'NameCollision')).toHaveLength(clusters.length);
    for (const [i, cluster] of clusters.entries()) await expectUntouched(cluster, foreign[i]!);
  });
});

describe('a mirror that vanishes before it counted anything', () => {
  it('is created again on its cluster, in the same attempt; the origin keeps its first startTime and completes once', async () => {
    controller = startController(fleet.sandbox);
    const sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
    const name = uniqueName('vanish');
    const origin = await createDispatched(name, { completions: 1 }, 6);
    const { cluster, mirror } = await waitForMirror(fleet, origin);
    const started = await eventually('origin startTime', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
      return job.status?.startTime ? job : undefined;
    });
    // Nothing counted yet (its one pod runs 6 s): a new mirror loses nothing, so the Job stays.
    expect(started.status?.succeeded ?? 0).toBe(0);
    expect(started.status?.failed ?? 0).toBe(0);
    await fleet.workers.get(cluster)!.batch.deleteNamespacedJob({
      name,
      namespace,
      propagationPolicy: 'Background',
      body: { propagationPolicy: 'Background', preconditions: { uid: mirror.metadata!.uid } },
    });
    const done = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(done, 'Complete')).toBe(true);
    expect(placementOf(done)).toMatchObject({ cluster, attempt: 1 });
    expect(done.status?.succeeded).toBe(1);
    expect(done.status?.startTime?.getTime()).toBe(started.status!.startTime!.getTime());
    const reasons = await eventReasons(origin);
    expect(reasons).not.toContain('Replacing');
    // Dispatch Events are off by default: the recreation is not worth a write either.
    expect(reasons).not.toContain('Placed');
    expect(reasons).not.toContain('MirrorCreated');
    const report = await sampler.stop();
    // Exactly two mirrors ever, both on its cluster: the vanished one and the one made in its
    // place, never both at once.
    const mirrors = report.mirrorsOf(origin.metadata!.uid!);
    expect(mirrors.map((m) => m.cluster)).toEqual([cluster, cluster]);
    expect(mirrors.map((m) => m.uid)).toContain(mirror.metadata!.uid);
    expect(new Set(mirrors.map((m) => m.uid)).size).toBe(2);
    expect(report.maxLiveMirrors(origin.metadata!.uid!, { includeTerminating: false })).toBe(1);
  });
});

describe('dispatch Events, asked for with --record-dispatch-events=true', () => {
  it('records Placed with the decision the placement record holds, and MirrorCreated', async () => {
    controller = startController(fleet.sandbox, ['--record-dispatch-events=true']);
    const name = uniqueName('events');
    const origin = await createDispatched(name, { completions: 1 }, 1);
    const done = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(done, 'Complete')).toBe(true);
    const record = placementOf(done);
    expect(record.decision).toMatch(new RegExp(`^placed on ${record.cluster} by spread \\(score `));
    // Recorded after the writes they tell of: wait for both rather than race them.
    const events = await eventually('Placed and MirrorCreated Events', async () => {
      const found = await eventsOf(origin);
      const reasons = found.map((e) => e.reason);
      return reasons.includes('Placed') && reasons.includes('MirrorCreated') ? found : undefined;
    });
    const told = (reason: string) =>
      events.filter((e) => e.reason === reason).map((e) => ({ type: e.type, note: e.note }));
    expect(told('Placed')).toEqual([{ type: 'Normal', note: record.decision }]);
    expect(told('MirrorCreated')).toEqual([
      { type: 'Normal', note: `created mirror Job on cluster ${record.cluster} (attempt 1)` },
    ]);
  });
});

describe('mirror lifetime', () => {
  it('a finished Job’s mirror is removed after the retention time', async () => {
    controller = startController(fleet.sandbox);
    const name = uniqueName('retire');
    const origin = await createDispatched(name, { completions: 1 }, 1);
    const { cluster } = await waitForMirror(fleet, origin);
    const done = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(done, 'Complete')).toBe(true);
    // The test controller keeps mirrors 5 s after the origin finished.
    await eventually(
      'mirror removed after retention',
      async () => ((await findMirror(fleet, origin)) ? undefined : true),
      {
        timeoutMs: 30_000,
      },
    );
    const pods = await fleet.workers
      .get(cluster)!
      .core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
    expect(pods.items).toHaveLength(0);
    // The origin keeps its final status.
    const after = await fleet.management.batch.readNamespacedJob({ name, namespace });
    expect(after.status?.succeeded).toBe(1);
  });

  it('the garbage collector removes a mirror whose origin was deleted while the controller was down', async () => {
    controller = startController(fleet.sandbox);
    const name = uniqueName('orphan');
    const origin = await createDispatched(name, { completions: 1 }, 600);
    await waitForMirror(fleet, origin);
    await controller.kill('SIGKILL');
    await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
    expect(await findMirror(fleet, origin)).toBeDefined();
    controller = startController(fleet.sandbox);
    await eventually(
      'orphaned mirror collected',
      async () => ((await findMirror(fleet, origin)) ? undefined : true),
      {
        timeoutMs: 60_000,
      },
    );
  });
});
