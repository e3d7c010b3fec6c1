// A burst of 500 Jobs: all placed and completed, no worker ever handed more than fits
// (no pod left unschedulable on a worker), and the figures printed.

import { placementAnnotation } from '@jobrelay/mirror';
import type { V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  isFinished,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const burst = Number(process.env.JOBRELAY_BURST_JOBS ?? 500);
let fleet: Fleet;
let controller: ControllerProcess;
let namespace: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  controller = startController(fleet.sandbox, ['--log-level=info']);
  namespace = await createTestNamespace(fleet.management, 'burst');
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
});

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

describe(`a burst of ${burst} Jobs`, () => {
  it('is placed without overcommitting any worker, and every Job completes once', {
    timeout: 900_000,
  }, async () => {
    const names = Array.from({ length: burst }, (_, i) => uniqueName(`burst-${i}`));
    const unschedulablePods = new Map<string, number>();
    let sampling = true;
    // Sample every worker: a pod the worker's scheduler cannot place means jobrelay sent
    // more than the worker had room for.
    const sampler = (async () => {
      while (sampling) {
        for (const [cluster, clients] of fleet.workers) {
          const pods = await clients.core.listNamespacedPod({
            namespace,
            fieldSelector: 'status.phase=Pending',
          });
          const stuck = pods.items.filter((p) =>
            p.status?.conditions?.some(
              (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
            ),
          ).length;
          unschedulablePods.set(cluster, Math.max(unschedulablePods.get(cluster) ?? 0, stuck));
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    const began = Date.now();
    await inBatches(names, 25, (name) =>
      fleet.management.batch.createNamespacedJob({
        namespace,
        body: sandboxJob({
          name,
          managedBy: dispatcherManagedBy,
          requests: { cpu: '200m', memory: '256Mi' },
          pod: { runSeconds: 3 },
        }),
      }),
    );
    const created = Date.now();

    let placedAt = 0;
    let jobs: V1Job[] = [];
    const deadline = Date.now() + 840_000;
    while (Date.now() < deadline) {
      jobs = (await fleet.management.batch.listNamespacedJob({ namespace })).items;
      const placed = jobs.filter((j) =>
        j.metadata?.annotations?.[placementAnnotation]?.includes('"cluster"'),
      ).length;
      if (!placedAt && placed === burst) placedAt = Date.now();
      if (jobs.filter(isFinished).length === burst) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const finished = Date.now();
    sampling = false;
    await sampler;

    const completed = jobs.filter((j) =>
      j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
    );
    const perCluster: Record<string, number> = {};
    for (const job of jobs) {
      const cluster = JSON.parse(job.metadata?.annotations?.[placementAnnotation] ?? '{}').cluster ?? 'none';
      perCluster[cluster] = (perCluster[cluster] ?? 0) + 1;
    }
    const seconds = (ms: number) => (ms / 1000).toFixed(1);
    console.log(
      `[burst] ${burst} Jobs (200m cpu, 256Mi each, pods run 3 s; workers 8+16+16 cpu): ` +
        `created in ${seconds(created - began)}s, all placed after ${placedAt ? seconds(placedAt - began) : '-'}s, ` +
        `all finished after ${seconds(finished - began)}s (${(burst / ((finished - began) / 1000)).toFixed(1)} Jobs/s end to end); ` +
        `per cluster ${JSON.stringify(perCluster)}; most unschedulable pods seen per worker ${JSON.stringify(Object.fromEntries(unschedulablePods))}; ` +
        `controller API calls to workers: see its log`,
    );
    expect(completed).toHaveLength(burst);
    for (const job of completed) expect(job.status?.succeeded).toBe(1);
    for (const [cluster, stuck] of unschedulablePods)
      expect(stuck, `unschedulable pods on ${cluster}`).toBe(0);
    expect(Object.keys(perCluster).sort()).toEqual([...fleet.workers.keys()].sort());
  });
});
