// Every Job mode from the seeds, run twice: dispatched through jobrelay, and directly on one
// worker. The origin's final status must match the direct run's, to the letter, and the workers
// must have run as many pods for it, of one mirror, as for the direct run: a sampler lists the
// workers' mirrors and pods while the Jobs run, since both are deleted soon after they finish.

import { mergePatch } from '@jobrelay/kube';
import type { V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import {
  comparableStatus,
  type Fleet,
  findMirror,
  fleetOf,
  placedCluster,
  runBothWays,
  waitForMirror,
} from '../src/dispatch-fixtures.ts';
import { expectRanOnce, type FleetSampler, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  condition,
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  type SandboxJobOptions,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { maskedStatus } from '../src/status-differential.ts';

let fleet: Fleet;
let controller: ControllerProcess;
let namespaces: { origin: string; direct: string };
let sampler: FleetSampler;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  controller = startController(fleet.sandbox);
  namespaces = {
    origin: await createTestNamespace(fleet.management, 'dispatch'),
    direct: await createTestNamespace(fleet.direct, 'direct'),
  };
  sampler = await startFleetSampler(fleet, { namespaces: [namespaces.origin, namespaces.direct] });
});

afterAll(async () => {
  const report = await sampler?.stop();
  console.log(
    `[job-modes] ${report?.samples} samples of the workers, longest gap ${report?.maxGapMs} ms, ${report?.watchGaps} watch gaps`,
  );
  await controller?.kill('SIGTERM');
});

/** The whole status with timestamps masked, as the status differential compares it. */
function withoutTimes(job: V1Job): unknown {
  return maskedStatus(
    JSON.parse(JSON.stringify(job.status ?? {})),
    job.metadata!.namespace!,
    job.metadata!.name!,
  );
}

/** runBothWays, then one more sample of the workers, so every pod of both runs has been seen. */
async function runObserved(
  job: SandboxJobOptions,
  during?: Parameters<typeof runBothWays>[3],
): Promise<{ origin: V1Job; direct: V1Job }> {
  const result = await runBothWays(fleet, namespaces, job, during);
  await sampler.settle();
  return result;
}

/**
 * The origin ended as the direct run did, with `outcome`, and ran as the direct run did: one
 * mirror, on the cluster it was placed on, never two at once, and as many pods as the direct run.
 */
function expectSameOutcome(result: { origin: V1Job; direct: V1Job }, outcome: 'Complete' | 'Failed'): void {
  expect(comparableStatus(result.origin)).toEqual(comparableStatus(result.direct));
  expect(condition(result.origin, outcome)?.status).toBe('True');
  const cluster = placedCluster(result.origin);
  expect(cluster).toMatch(/^worker-\d+$/);
  const { startTime, completionTime } = result.origin.status ?? {};
  expect(startTime).toBeInstanceOf(Date);
  // Only a Complete Job has a completionTime (the apiserver enforces both directions).
  switch (outcome) {
    case 'Complete':
      expect(completionTime).toBeInstanceOf(Date);
      expect(completionTime!.getTime()).toBeGreaterThanOrEqual(startTime!.getTime());
      break;
    case 'Failed':
      expect(completionTime).toBeUndefined();
      break;
  }
  const report = sampler.report();
  const directPods = report.podsOfJob(result.direct.metadata!.uid!);
  expect(directPods.length, 'pods of the direct run').toBeGreaterThan(0);
  expectRanOnce(report, result.origin, { cluster: cluster!, pods: directPods.length });
}

describe.concurrent('every Job mode ends on the origin exactly as on a single cluster', () => {
  it('non-parallel', async () => {
    const result = await runObserved({ name: uniqueName('single') });
    expectSameOutcome(result, 'Complete');
    expect(condition(result.origin, 'Complete')?.reason).toBe('CompletionsReached');
  });

  it('fixed completions 5 with parallelism 2', async () => {
    const result = await runObserved({
      name: uniqueName('fixed'),
      spec: { completions: 5, parallelism: 2 },
    });
    expectSameOutcome(result, 'Complete');
    expect(result.origin.status?.succeeded).toBe(5);
  });

  it('work queue: parallelism 4 without completions', async () => {
    const result = await runObserved({
      name: uniqueName('queue'),
      spec: { parallelism: 4 },
    });
    expectSameOutcome(result, 'Complete');
    expect(isTrue(result.origin, 'Complete')).toBe(true);
  });

  it('Indexed with completions 5', async () => {
    const result = await runObserved({
      name: uniqueName('indexed'),
      spec: { completions: 5, parallelism: 5, completionMode: 'Indexed' },
    });
    expectSameOutcome(result, 'Complete');
    expect(result.origin.status?.completedIndexes).toBe('0-4');
  });

  it('backoffLimit exceeded', async () => {
    const result = await runObserved({
      name: uniqueName('backoff'),
      spec: { backoffLimit: 1 },
      pod: { exitCode: 1 },
    });
    expectSameOutcome(result, 'Failed');
    expect(condition(result.origin, 'Failed')?.reason).toBe('BackoffLimitExceeded');
    expect(result.origin.status?.failed).toBe(2);
  });

  it('backoffLimitPerIndex with failedIndexes', async () => {
    const result = await runObserved({
      name: uniqueName('perindex'),
      spec: { completions: 4, parallelism: 4, completionMode: 'Indexed', backoffLimitPerIndex: 0 },
      pod: { failIndexes: '1,3' },
    });
    expectSameOutcome(result, 'Failed');
    expect(result.origin.status).toMatchObject({ failedIndexes: '1,3', completedIndexes: '0,2' });
    expect(condition(result.origin, 'Failed')?.reason).toBe('FailedIndexes');
  });

  it('podFailurePolicy FailJob on an exit code', async () => {
    const result = await runObserved({
      name: uniqueName('pfp'),
      spec: {
        backoffLimit: 6,
        podFailurePolicy: {
          rules: [
            { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
          ],
        },
      },
      pod: { exitCode: 42 },
    });
    expectSameOutcome(result, 'Failed');
    expect(condition(result.origin, 'Failed')?.reason).toBe('PodFailurePolicy');
  });

  it('successPolicy', async () => {
    const result = await runObserved({
      name: uniqueName('success'),
      spec: {
        completions: 3,
        parallelism: 1,
        completionMode: 'Indexed',
        successPolicy: { rules: [{ succeededIndexes: '0', succeededCount: 1 }] },
      },
    });
    expectSameOutcome(result, 'Complete');
    expect(condition(result.origin, 'Complete')?.reason).toBe('SuccessPolicy');
  });

  it('activeDeadlineSeconds (DeadlineExceeded)', async () => {
    const result = await runObserved({
      name: uniqueName('deadline'),
      spec: { activeDeadlineSeconds: 4 },
      pod: { runSeconds: 120 },
    });
    expectSameOutcome(result, 'Failed');
    expect(condition(result.origin, 'Failed')?.reason).toBe('DeadlineExceeded');
  });

  it('suspend, then resume', async () => {
    const name = uniqueName('suspend');
    const resume = { spec: { suspend: false } };
    const result = await runObserved({ name, spec: { suspend: true } }, async () => {
      // Suspended: not dispatched, and the origin says it is suspended, like the direct run.
      const suspended = await eventually('Suspended=True on both', async () => {
        const [origin, direct] = await Promise.all([
          fleet.management.batch.readNamespacedJob({ name, namespace: namespaces.origin }),
          fleet.direct.batch.readNamespacedJob({ name, namespace: namespaces.direct }),
        ]);
        return isTrue(origin, 'Suspended') && isTrue(direct, 'Suspended') ? { origin, direct } : undefined;
      });
      // The whole status, not only the condition: ready, terminating, uncountedTerminatedPods too.
      expect(withoutTimes(suspended.origin)).toEqual(withoutTimes(suspended.direct));
      expect(condition(suspended.origin, 'Suspended')?.reason).toBe('JobSuspended');
      expect(await findMirror(fleet, suspended.origin)).toBeUndefined();
      await Promise.all([
        fleet.management.batch.patchNamespacedJob(
          { name, namespace: namespaces.origin, body: resume },
          mergePatch,
        ),
        fleet.direct.batch.patchNamespacedJob(
          { name, namespace: namespaces.direct, body: resume },
          mergePatch,
        ),
      ]);
    });
    expectSameOutcome(result, 'Complete');
    expect(condition(result.origin, 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed' });
  });

  it('suspending a running Job suspends its mirror, and the Suspended condition comes back', async () => {
    const name = uniqueName('pause');
    const origin = await fleet.management.batch.createNamespacedJob({
      namespace: namespaces.origin,
      body: sandboxJob({
        name,
        managedBy: dispatcherManagedBy,
        spec: { parallelism: 2, completions: 2 },
        pod: { runSeconds: 120 },
      }),
    });
    const { cluster } = await waitForMirror(fleet, origin);
    await eventually('pods running on the worker', async () => {
      const { mirror } = (await findMirror(fleet, origin))!;
      return (mirror.status?.active ?? 0) > 0 ? true : undefined;
    });
    await fleet.management.batch.patchNamespacedJob(
      { name, namespace: namespaces.origin, body: { spec: { suspend: true, parallelism: 1 } } },
      mergePatch,
    );
    const suspended = await eventually('origin Suspended=True', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace: namespaces.origin });
      return isTrue(job, 'Suspended') && (job.status?.active ?? 0) === 0 ? job : undefined;
    });
    expect(condition(suspended, 'Suspended')?.reason).toBe('JobSuspended');
    const mirror = await fleet.workers
      .get(cluster)!
      .batch.readNamespacedJob({ name, namespace: namespaces.origin });
    expect(mirror.spec).toMatchObject({ suspend: true, parallelism: 1 });
  });

  it('delete while running: the mirror and its pods leave the worker', async () => {
    const name = uniqueName('delete');
    const origin = await fleet.management.batch.createNamespacedJob({
      namespace: namespaces.origin,
      body: sandboxJob({
        name,
        managedBy: dispatcherManagedBy,
        spec: { parallelism: 2, completions: 2 },
        pod: { runSeconds: 300 },
      }),
    });
    const { cluster } = await waitForMirror(fleet, origin);
    const worker = fleet.workers.get(cluster)!;
    await eventually('mirror pods exist', async () => {
      const pods = await worker.core.listNamespacedPod({
        namespace: namespaces.origin,
        labelSelector: `job-name=${name}`,
      });
      return pods.items.length === 2 ? true : undefined;
    });
    await fleet.management.batch.deleteNamespacedJob({
      name,
      namespace: namespaces.origin,
      propagationPolicy: 'Background',
    });
    await eventually(
      'mirror and its pods gone',
      async () => {
        const mirror = await findMirror(fleet, origin);
        const pods = await worker.core.listNamespacedPod({
          namespace: namespaces.origin,
          labelSelector: `job-name=${name}`,
        });
        return !mirror && pods.items.length === 0 ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
  });

  it('ttlSecondsAfterFinished: the TTL controller deletes the origin, and the mirror goes too', async () => {
    const name = uniqueName('ttl');
    const origin = await fleet.management.batch.createNamespacedJob({
      namespace: namespaces.origin,
      body: sandboxJob({ name, managedBy: dispatcherManagedBy, spec: { ttlSecondsAfterFinished: 3 } }),
    });
    const { mirror } = await waitForMirror(fleet, origin);
    // Not copied: the worker must not delete the mirror before its status reached the origin.
    expect(mirror.spec?.ttlSecondsAfterFinished).toBeUndefined();
    await eventually('origin completed', async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace: namespaces.origin });
      return isTrue(job, 'Complete') ? true : undefined;
    });
    await eventually(
      'origin deleted by the TTL controller and mirror gone',
      async () => {
        const list = await fleet.management.batch.listNamespacedJob({
          namespace: namespaces.origin,
          fieldSelector: `metadata.name=${name}`,
        });
        return list.items.length === 0 && !(await findMirror(fleet, origin)) ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  });
});

describe('the controller’s health and metrics endpoints', () => {
  it('is ready, and counts what it did for the Jobs above', async () => {
    const url = await controller.healthUrl();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const value = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? Number.NaN);
    const placed = [
      ...metrics.matchAll(/^jobrelay_placements_total\{outcome="placed",cluster="[^"]+"\} (\d+)/gm),
    ];
    expect(placed.reduce((sum, m) => sum + Number(m[1]), 0)).toBeGreaterThanOrEqual(12);
    expect(value(/^jobrelay_mirror_operations_total\{operation="created"\} (\d+)/m)).toBeGreaterThanOrEqual(
      12,
    );
    expect(value(/^jobrelay_origin_status_writes_total\{result="written"\} (\d+)/m)).toBeGreaterThan(12);
    expect(value(/^jobrelay_origin_status_writes_total\{result="refused"\} (\d+)/m)).toBeNaN();
    for (const worker of fleet.sandbox.workers) {
      expect(
        value(new RegExp(`^jobrelay_worker_cluster_active\\{cluster="${worker.name}"\\} (\\d+)`, 'm')),
      ).toBe(1);
    }
    expect(value(/^jobrelay_managed_workloads (\d+)/m)).toBeGreaterThan(0);
  });
});
