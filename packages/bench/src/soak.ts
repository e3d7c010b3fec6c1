import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { mapWithConcurrency } from '@jobrelay/kube';
import type { BenchFleet } from './bench-fleet.ts';
import { benchJob, benchJobNames } from './bench-jobs.ts';
import { JobWatch } from './job-watch.ts';
import { type BenchSettings, startController } from './scenarios.ts';

/** What the soak reads of the controller and Redis at one moment. */
export interface SoakSample {
  /** Jobs created so far. */
  created: number;
  /** Jobs whose origin was seen Complete so far. */
  completed: number;
  seconds: number;
  /** Origins still present on the management cluster (created, not yet deleted by their TTL). */
  originsPresent: number;
  controllerRssMiB: number;
  controllerHeapUsedMiB: number;
  redisUsedMiB: number;
  redisKeys: number;
}

export interface SoakResult {
  jobs: number;
  ratePerSec: number;
  samples: SoakSample[];
  /** Jobs never seen Complete on their origin. */
  lost: number;
  /** The last sample, taken after every origin was gone and one resync had run. */
  settled: SoakSample;
}

/**
 * `jobs` finishing Jobs created at `ratePerSec` against one running controller, its memory and
 * Redis read every `sampleEvery` Jobs, then once more when every origin is gone and a resync
 * has run. Whatever grows with the number of Jobs dispatched (rather than present) shows here.
 */
export async function soak(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: {
    jobs: number;
    ratePerSec: number;
    sampleEvery: number;
    run: string;
    settleSeconds: number;
    /**
     * Read the heap after a full collection (a heap snapshot, written here and removed), so that
     * garbage not yet collected does not pass for memory kept. The controller must run with
     * --heapsnapshot-signal=SIGUSR2.
     */
    heapSnapshotDir?: string;
  },
): Promise<SoakResult> {
  const namespace = `bench-${options.run}`;
  await fleet.createNamespace(namespace);
  await fleet.flushRedis();
  const completed = new Set<string>();
  const watch = new JobWatch(
    fleet.management.kubeConfig,
    `/apis/batch/v1/namespaces/${namespace}/jobs`,
    (seen) => {
      if (seen.job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'))
        completed.add(seen.job.metadata!.name!);
    },
  );
  await watch.start();
  const controller = startController(fleet, settings);
  const began = performance.now();
  const samples: SoakSample[] = [];
  let created = 0;
  const sample = async (): Promise<SoakSample> => {
    if (options.heapSnapshotDir) rmSync(await controller.heapSnapshot(options.heapSnapshotDir));
    const heap = await controller.heap();
    const info = await fleet.redis.info('memory');
    const origins = await fleet.management.batch.listNamespacedJob({ namespace, limit: 1 });
    const present = (origins.items.length > 0 ? 1 : 0) + (origins.metadata?.remainingItemCount ?? 0);
    const reading: SoakSample = {
      created,
      completed: completed.size,
      seconds: (performance.now() - began) / 1000,
      originsPresent: present,
      controllerRssMiB: controller.rssBytes() / 2 ** 20,
      controllerHeapUsedMiB: heap.usedMiB,
      redisUsedMiB: Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0) / 2 ** 20,
      redisKeys: await fleet.redis.dbsize(),
    };
    samples.push(reading);
    settings.log(
      `  ${String(reading.created).padStart(6)} created, ${String(reading.completed).padStart(6)} complete, ` +
        `${String(present).padStart(5)} present: controller RSS ${reading.controllerRssMiB.toFixed(0)} MiB ` +
        `(heap ${reading.controllerHeapUsedMiB.toFixed(0)}), Redis ${reading.redisUsedMiB.toFixed(2)} MiB in ${reading.redisKeys} keys`,
    );
    return reading;
  };
  try {
    await controller.ready();
    await sample();
    const names = benchJobNames('soak', options.jobs);
    const intervalMs = 1000 / options.ratePerSec;
    const start = performance.now();
    // Paced: Job i is created at start + i/rate (or as soon after as the apiserver lets it).
    await mapWithConcurrency(names, 16, async (name, index) => {
      const due = start + index * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await fleet.management.jobs.create(
        namespace,
        benchJob({ name, run: options.run, shape: 'finishing', dispatched: true }),
      );
      created += 1;
      if (created % options.sampleEvery === 0) await sample();
    });
    // Every origin finished and deleted by its TTL; then one resync and the retention pass.
    const deadline = performance.now() + 600_000;
    while (performance.now() < deadline) {
      const left = await fleet.management.batch.listNamespacedJob({ namespace, limit: 1 });
      if (left.items.length === 0) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await new Promise((r) => setTimeout(r, options.settleSeconds * 1000));
    const settled = await sample();
    return {
      jobs: options.jobs,
      ratePerSec: options.ratePerSec,
      samples,
      lost: options.jobs - completed.size,
      settled,
    };
  } finally {
    watch.stop();
    await controller.stop();
  }
}
