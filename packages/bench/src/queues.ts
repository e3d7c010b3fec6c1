import { performance } from 'node:perf_hooks';
import { mapWithConcurrency } from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type BenchFleet, histogramQuantile, metricSum } from './bench-fleet.ts';
import { benchJob, benchJobNames } from './bench-jobs.ts';
import { JobWatch } from './job-watch.ts';
import { type BenchSettings, startController } from './scenarios.ts';

const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };
/** The namespace label each benchmark queue selects. */
export const benchQueueLabel = 'jobrelay.dev/bench-queue';

export interface QueuedBurstOptions {
  jobs: number;
  run: string;
  /** Namespaces the burst is spread over, round robin; with queues, one DispatchQueue each. */
  queues: number;
  /** Queues per cohort (they lend each other unused quota). */
  cohortSize: number;
  /** Each queue's nominal quota of admitted workloads (the `workloads` resource). */
  workloadsPerQueue: number;
  /** With DispatchQueues, or the same burst placed as without queues. */
  withQueues: boolean;
}

export interface QueuedBurstResult {
  jobs: number;
  /** Mirrors created per second, first to last, watched on every worker. */
  dispatchJobsPerSec: number;
  /** From the controller's readiness to the first mirror. */
  firstMirrorMs: number;
  /** First mirror to last. */
  seconds: number;
  controllerCpuMsPerJob: number;
  /** With queues: one admission decision's time (the controller's jobrelay_admission_decision_seconds). */
  decision?: { cycles: number; p50Ms: number; p99Ms: number; meanMs: number };
}

/** The namespaces (and queues) of one burst: `bench-<run>-00`, `-01`, ... */
export function burstNamespaces(run: string, count: number): string[] {
  const width = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => `bench-${run}-${String(i).padStart(width, '0')}`);
}

/** One DispatchQueue per namespace: a `workloads` quota, cohorts of `cohortSize`, weights 1 and 2. */
export function benchQueue(name: string, index: number, options: QueuedBurstOptions, run: string) {
  return {
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name, labels: { 'jobrelay.dev/bench': 'true' } },
    spec: {
      namespaceSelector: { matchLabels: { [benchQueueLabel]: name } },
      cohort: `bench-${run}-cohort-${Math.floor(index / options.cohortSize)}`,
      weight: 1 + (index % 2),
      queueingStrategy: 'BestEffortFIFO',
      resources: [
        // Far above what the burst asks: the count of workloads is what holds them.
        { name: 'cpu', nominalQuota: '1000' },
        { name: 'memory', nominalQuota: '4000Gi' },
        { name: 'workloads', nominalQuota: String(options.workloadsPerQueue) },
      ],
    },
  };
}

/**
 * A burst of `jobs` finishing Jobs (completions 0: the worker's Job controller completes each
 * without a pod; deleted by their TTL once Complete shows on the origin) spread over `queues`
 * namespaces, created while no controller runs; then the controller starts and places them.
 * With queues, each namespace's DispatchQueue admits at most `workloadsPerQueue` at once (more
 * by borrowing from its cohort), so the burst is admitted progressively, as earlier Jobs finish
 * and free their quota; without, the same burst is placed as fast as the controller goes.
 * Dispatch rate: mirrors created per second, first to last.
 */
export async function queuedBurst(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: QueuedBurstOptions,
): Promise<QueuedBurstResult> {
  await fleet.flushRedis();
  const namespaces = burstNamespaces(options.run, options.queues);
  const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  await Promise.all(
    namespaces.map((namespace) =>
      fleet.createNamespace(namespace, [fleet.management], { [benchQueueLabel]: namespace }),
    ),
  );
  if (options.withQueues) {
    for (const [i, name] of namespaces.entries())
      await custom.createClusterCustomObject({
        ...queueApi,
        body: benchQueue(name, i, options, options.run),
      });
  }
  settings.log(
    `  creating ${options.jobs} claimed finishing Jobs over ${options.queues} namespaces${
      options.withQueues
        ? `, each with a DispatchQueue of ${options.workloadsPerQueue} workloads (cohorts of ${options.cohortSize})`
        : ', no queues'
    }`,
  );
  const names = benchJobNames('burst', options.jobs);
  await mapWithConcurrency(names, 32, async (name, i) => {
    await fleet.management.jobs.create(
      namespaces[i % namespaces.length]!,
      benchJob({ name, run: options.run, shape: 'finishing', dispatched: true }),
    );
  });
  const mirrorsSeen = new Map<string, number>();
  const ours = new Set(namespaces);
  // One watch of every namespace per worker (not one per namespace): only this burst's count.
  const watches = fleet.workers.map(
    (worker) =>
      new JobWatch(
        worker.kubeConfig,
        '/apis/batch/v1/jobs',
        ({ at, job }) => {
          const uid = job.metadata?.labels?.[originUidLabel];
          if (uid && ours.has(job.metadata?.namespace ?? '') && !mirrorsSeen.has(uid))
            mirrorsSeen.set(uid, at);
        },
        originUidLabel,
      ),
  );
  await Promise.all(watches.map((w) => w.start()));
  const controller = startController(fleet, settings);
  try {
    await controller.ready();
    const readyAt = performance.now();
    const cpuAtReady = controller.cpuMs();
    const deadline = Date.now() + 30 * 60_000;
    let reported = 0;
    while (mirrorsSeen.size < options.jobs) {
      if (Date.now() > deadline)
        throw new Error(`timed out with ${mirrorsSeen.size}/${options.jobs} mirrors`);
      await new Promise((r) => setTimeout(r, 100));
      if (mirrorsSeen.size >= reported + options.jobs / 5) {
        reported = mirrorsSeen.size;
        settings.log(`    ${reported} placed after ${((performance.now() - readyAt) / 1000).toFixed(0)} s`);
      }
    }
    const cpuMs = controller.cpuMs() - cpuAtReady;
    const times = [...mirrorsSeen.values()].sort((a, b) => a - b);
    const result: QueuedBurstResult = {
      jobs: options.jobs,
      dispatchJobsPerSec: (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000),
      firstMirrorMs: times[0]! - readyAt,
      seconds: (times.at(-1)! - times[0]!) / 1000,
      controllerCpuMsPerJob: cpuMs / options.jobs,
    };
    if (options.withQueues) {
      const text = await controller.metrics();
      const name = 'jobrelay_admission_decision_seconds';
      const cycles = metricSum(text, `${name}_count`);
      result.decision = {
        cycles,
        p50Ms: (histogramQuantile(text, name, 0.5) ?? Number.NaN) * 1000,
        p99Ms: (histogramQuantile(text, name, 0.99) ?? Number.NaN) * 1000,
        meanMs: (metricSum(text, `${name}_sum`) / cycles) * 1000,
      };
    }
    return result;
  } finally {
    for (const w of watches) w.stop();
    await controller.stop();
    if (options.withQueues) {
      await Promise.all(
        namespaces.map((name) =>
          custom.deleteClusterCustomObject({ ...queueApi, name }).catch(() => undefined),
        ),
      );
    }
  }
}
