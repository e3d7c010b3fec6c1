// Placement a platform team can trust: selectors, pins, capacity, scoring policies,
// explanations, cordon and drain, and a worker that is lost and comes back.

import { placementAnnotation } from '@jobrelay/mirror';
import { openSandbox } from '@jobrelay/sandbox';
import type { V1Job } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, sandboxProcessPid, waitForMirror } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  type SandboxJobOptions,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const testLabels = ['region', 'e2e-drain'];
let fleet: Fleet;
let admin: ReturnType<typeof workerClusterAdmin>;
let controller: ControllerProcess;
let namespace: string;
let workers: [string, string, string];

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  admin = workerClusterAdmin(fleet);
  workers = fleet.sandbox.workers.map((w) => w.name) as [string, string, string];
  expect(workers).toHaveLength(3);
  controller = startController(fleet.sandbox, [
    '--worker-lost-timeout-seconds=6',
    '--cluster-reconnect-max-seconds=2',
    '--cluster-health-interval-seconds=1',
    // Long enough for the Jobs that wait on purpose in these tests, short enough to see a give-up.
    '--placement-timeout-seconds=30',
  ]);
  namespace = await createTestNamespace(fleet.management, 'placement');
});

afterEach(async () => {
  for (const worker of workers) await admin.reset(worker, testLabels);
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
});

function placement(job: V1Job): { cluster?: string; attempt: number } {
  return JSON.parse(job.metadata?.annotations?.[placementAnnotation] ?? '{"attempt":0}');
}

async function dispatch(options: Omit<SandboxJobOptions, 'managedBy'>): Promise<V1Job> {
  return fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ ...options, managedBy: dispatcherManagedBy }),
  });
}

async function placedOn(name: string, timeoutMs = 60_000): Promise<string> {
  return eventually(
    `${name} placed`,
    async () => placement(await fleet.management.batch.readNamespacedJob({ name, namespace })).cluster,
    { timeoutMs },
  );
}

async function waitingBecause(name: string): Promise<string> {
  return eventually('the Job to say why it waits', async () => {
    const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
    return job.metadata?.annotations?.['jobrelay.dev/unschedulable'];
  });
}

async function deleteJobs(names: string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      fleet.management.batch
        .deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' })
        .catch(() => {}),
    ),
  );
}

describe('choosing a cluster', () => {
  it('honours a cluster selector', async () => {
    await admin.patch(workers[1], { labels: { region: 'eu' } });
    const name = uniqueName('selector');
    await dispatch({ name, annotations: { 'jobrelay.dev/cluster-selector': 'region=eu' } });
    expect(await placedOn(name)).toBe(workers[1]);
  });

  it('honours a pin', async () => {
    const name = uniqueName('pin');
    await dispatch({ name, annotations: { 'jobrelay.dev/cluster': workers[2] } });
    expect(await placedOn(name)).toBe(workers[2]);
  });

  it('places a GPU Job on the only cluster with GPUs', async () => {
    const name = uniqueName('gpu');
    await dispatch({ name, limits: { 'nvidia.com/gpu': '1' } });
    expect(await placedOn(name)).toBe(workers[2]);
    const done = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(done, 'Complete')).toBe(true);
  });
});

describe('a Job that fits nowhere', () => {
  it('waits and says why, kube-scheduler style, on the Job and in an Event', async () => {
    const name = uniqueName('mars');
    await dispatch({ name, annotations: { 'jobrelay.dev/cluster-selector': 'region=mars' } });
    const why = await waitingBecause(name);
    expect(why).toBe('0/3 clusters available: 3 did not match selector region=mars.');
    const huge = uniqueName('huge');
    await dispatch({ name: huge, requests: { cpu: '20' } });
    expect(await waitingBecause(huge)).toMatch(
      /^0\/3 clusters available: 3 insufficient cpu \(requests 20, largest free node \d+(\.\d+)?m?\)\.$/,
    );
    await deleteJobs([name, huge]);
  });

  it('gives up after the placement timeout: the Job fails with reason PlacementTimeout', async () => {
    const name = uniqueName('never');
    await dispatch({ name, annotations: { 'jobrelay.dev/cluster-selector': 'region=nowhere' } });
    const failed = await waitForFinishedJob(fleet.management, namespace, name, 90_000);
    const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
    expect(condition).toMatchObject({ status: 'True', reason: 'PlacementTimeout' });
    expect(condition?.message).toBe(
      'no cluster fit for 30s: 0/3 clusters available: 3 did not match selector region=nowhere.',
    );
    expect(failed.status?.conditions?.find((c) => c.type === 'FailureTarget')?.reason).toBe(
      'PlacementTimeout',
    );
    expect(failed.status?.startTime).toBeDefined();
  });

  it('is placed promptly once its cluster is uncordoned', async () => {
    await admin.patch(workers[0], { spec: { unschedulable: true } });
    const name = uniqueName('cordon');
    await dispatch({ name, annotations: { 'jobrelay.dev/cluster': workers[0] } });
    expect(await waitingBecause(name)).toBe(
      `0/3 clusters available: 1 cordoned, 2 not the pinned cluster ${workers[0]}.`,
    );
    await admin.patch(workers[0], { spec: { unschedulable: false } });
    expect(await placedOn(name, 15_000)).toBe(workers[0]);
  });

  it('waits while capacity is used up and is placed when it frees', async () => {
    // worker-1 has two 4-cpu nodes: two 3-cpu pods fit, a third does not.
    // The first two hold the cpu while the third says why it waits; the third only needs placing.
    const names = [uniqueName('cap-a'), uniqueName('cap-b'), uniqueName('cap-c')];
    for (const [i, name] of names.entries()) {
      await dispatch({
        name,
        requests: { cpu: '3' },
        pod: { runSeconds: i < 2 ? 8 : 2 },
        annotations: { 'jobrelay.dev/cluster': workers[0] },
      });
    }
    const third = names[2]!;
    // Which check says no first depends on whether the first two pods exist yet.
    expect(await waitingBecause(third)).toMatch(
      /^0\/3 clusters available: 1 insufficient cpu (\(requests 3, largest free node 1\)|in total \(1 pod needs 3, free [0-2]\)), 2 not the pinned cluster worker-1\.$/,
    );
    const first = await waitForFinishedJob(fleet.management, namespace, names[0]!);
    expect(isTrue(first, 'Complete')).toBe(true);
    const last = await waitForFinishedJob(fleet.management, namespace, third);
    expect(isTrue(last, 'Complete')).toBe(true);
    expect(placement(last).cluster).toBe(workers[0]);
  });
});

describe('scoring policies', () => {
  async function distribute(policy: 'spread' | 'binpack'): Promise<Record<string, number>> {
    // Start from empty clusters: pods of earlier tests would skew the distribution.
    await eventually(
      'every worker’s cpu free',
      async () => {
        for (const worker of workers) {
          const capacity = (await admin.get(worker)).status?.capacity;
          if (!capacity?.free?.cpu || capacity.free.cpu !== capacity.allocatable?.cpu) return undefined;
        }
        return true;
      },
      { timeoutMs: 90_000 },
    );
    const names = Array.from({ length: 30 }, (_, i) => uniqueName(`${policy}-${i}`));
    for (const name of names) {
      await dispatch({
        name,
        requests: { cpu: '1' },
        pod: { runSeconds: 120 },
        annotations: { 'jobrelay.dev/placement-policy': policy },
      });
    }
    const counts: Record<string, number> = Object.fromEntries(workers.map((w) => [w, 0]));
    for (const name of names) counts[await placedOn(name)]! += 1;
    await deleteJobs(names);
    // Their pods must be gone before the next distribution, or they would skew it.
    await eventually(
      'pods of the distribution gone',
      async () => {
        for (const clients of fleet.workers.values()) {
          const pods = await clients.core.listNamespacedPod({ namespace });
          if (pods.items.some((p) => p.metadata?.name?.startsWith(policy))) return undefined;
        }
        return true;
      },
      { timeoutMs: 60_000 },
    );
    console.log(`[placement] ${policy}: ${JSON.stringify(counts)}`);
    return counts;
  }

  it('spread uses every cluster, the larger ones more; binpack fills one cluster first', async () => {
    const spread = await distribute('spread');
    for (const worker of workers) expect(spread[worker]).toBeGreaterThanOrEqual(4);
    expect(spread[workers[0]]).toBeLessThan(spread[workers[1]]!);
    expect(Math.max(...Object.values(spread))).toBeLessThanOrEqual(14);

    const binpack = await distribute('binpack');
    // The smallest cluster (8 cpu) fills up first, then one of the two 16-cpu clusters (they
    // tie; fewer active Jobs, then the name, decides), and the other takes the rest.
    expect(binpack[workers[0]]).toBe(8);
    expect([binpack[workers[1]], binpack[workers[2]]].sort((a, b) => a! - b!)).toEqual([6, 16]);
  });
});

describe('cordon, drain and a lost worker', () => {
  it('drain moves an unfinished Job to another cluster', async () => {
    await admin.patch(workers[0], { spec: { weight: 100 } });
    const name = uniqueName('drain');
    const origin = await dispatch({ name, pod: { runSeconds: 600 } });
    expect(await placedOn(name)).toBe(workers[0]);
    await waitForMirror(fleet, origin);
    await admin.patch(workers[0], { spec: { drain: true } });
    const moved = await eventually('the Job placed again elsewhere', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
      const record = placement(job);
      return record.attempt === 2 && record.cluster && record.cluster !== workers[0] ? job : undefined;
    });
    expect(placement(moved).cluster).not.toBe(workers[0]);
    await eventually('the drained cluster’s mirror gone', async () => {
      const list = await fleet.workers
        .get(workers[0])!
        .batch.listNamespacedJob({ namespace, fieldSelector: `metadata.name=${name}` });
      return list.items.length === 0 ? true : undefined;
    });
    await deleteJobs([name]);
  });

  it('a lost worker’s Jobs move after the timeout and complete elsewhere while it stays down; on its return its stale mirror goes', async () => {
    const lost = workers[1];
    await admin.patch(lost, { spec: { weight: 100 } });
    const name = uniqueName('lost');
    // Still running when its worker freezes, right after it starts; the time it runs again elsewhere.
    const origin = await dispatch({ name, pod: { runSeconds: 12 } });
    expect(await placedOn(name)).toBe(lost);
    const { mirror: lostMirror } = await waitForMirror(fleet, origin);
    const started = await eventually('origin started', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
      return job.status?.startTime ? job : undefined;
    });

    // Frozen, not killed: a stopped apiserver accepts connections and never answers, the
    // hardest kind of loss (every call to it hangs until a timeout).
    const apiserver = await sandboxProcessPid(fleet.sandbox, `${lost}/kube-apiserver`);
    process.kill(apiserver, 'SIGSTOP');
    try {
      const inactive = await eventually('the worker marked not Active', async () => {
        const wc = await admin.get(lost);
        const active = wc.status?.conditions?.find((c) => c.type === 'Active');
        return active?.status === 'False' ? active : undefined;
      });
      expect(inactive.reason).toBe('Unreachable');
      const moved = await eventually(
        'the Job placed again after the lost-worker timeout',
        async () => {
          const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
          return placement(job).attempt === 2 && placement(job).cluster ? job : undefined;
        },
        { timeoutMs: 60_000 },
      );
      const movedTo = placement(moved).cluster!;
      expect(movedTo).not.toBe(lost);
      // Counters and startTime are still valid after the move.
      expect(moved.status?.startTime?.getTime()).toBe(started.status!.startTime!.getTime());
      // The stale mirror on the frozen worker cannot be deleted; that must not hold the Job up.
      const done = await waitForFinishedJob(fleet.management, namespace, name, 120_000);
      expect(isTrue(done, 'Complete')).toBe(true);
      expect(done.status?.succeeded).toBe(1);
      expect(placement(done).attempt).toBe(2);
      expect(placement(done).cluster).toBe(movedTo);
    } finally {
      process.kill(apiserver, 'SIGCONT');
    }

    await eventually(
      'the returned worker’s stale mirror removed',
      async () => {
        const list = await fleet.workers
          .get(lost)!
          .batch.listNamespacedJob({ namespace, fieldSelector: `metadata.name=${name}` });
        return list.items.some((j) => j.metadata?.uid === lostMirror.metadata?.uid) ? undefined : true;
      },
      { timeoutMs: 60_000 },
    );
    const after = await fleet.management.batch.readNamespacedJob({ name, namespace });
    expect(after.status?.succeeded).toBe(1);
    expect(openSandbox(fleet.sandbox.dir).workers).toHaveLength(3);
  });
});
