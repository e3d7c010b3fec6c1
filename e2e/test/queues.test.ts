// Queue admission (issue 30) on the sandbox, with the real controller: a DispatchQueue's quota
// holds at every sampled instant, the workloads past it wait with the queue's message and all
// complete; a high-priority Job preempts a lower one of its queue, and the preempted Indexed Job
// completes without running a completed index again, the preemptor's mirror made only once the
// evicted mirror and its pods (held terminating a while) are gone from the worker; after the
// controller is killed and restarted, the queue's usage is what the placement records say.

import { mergePatch } from '@jobrelay/kube';
import {
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import type { PlacementRecord } from '@jobrelay/placement';
import { CustomObjectsApi, SchedulingV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { type FleetSampler, jobControllerUidLabel, startFleetSampler } from '../src/fleet-sampler.ts';
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
let sampler: FleetSampler;
let namespace: string;
const queues: string[] = [];
const priorityClassName = uniqueName('e2e-urgent');

const custom = () => fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };

/** A queue of 1 cpu for this test's namespace. */
async function createQueue(name: string, withinQueue: 'Never' | 'LowerPriority'): Promise<void> {
  await custom().createClusterCustomObject({
    ...queueApi,
    body: {
      apiVersion: 'jobrelay.dev/v1alpha1',
      kind: 'DispatchQueue',
      metadata: { name },
      spec: {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        resources: [{ name: 'cpu', nominalQuota: '1' }],
        preemption: { withinQueue },
      },
    },
  });
  queues.push(name);
}

async function deleteQueue(name: string): Promise<void> {
  await custom()
    .deleteClusterCustomObject({ ...queueApi, name })
    .catch(() => {});
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

/** The Jobs of the namespace holding quota now: placed by a queue, unfinished. */
async function admittedNow(): Promise<V1Job[]> {
  const jobs = await fleet.management.batch.listNamespacedJob({ namespace });
  return jobs.items.filter((job) => {
    const record = recordOf(job);
    return record?.cluster !== undefined && record.queue !== undefined && !isFinished(job);
  });
}

/** Samples the admitted Jobs every 300 ms until stopped: the most held at once. */
function sampleAdmitted(): { stop(): Promise<number> } {
  let most = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      most = Math.max(most, (await admittedNow()).length);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return most;
    },
  };
}

interface WorkerSample {
  at: number;
  /** Mirrors there, as `originUid#attempt`. */
  mirrors: Set<string>;
  /** Of those, the ones being deleted (deletionTimestamp set). */
  terminating: Set<string>;
  /** The UIDs of the Jobs that had pods there. */
  podsOf: Set<string>;
  /** Each mirror's UID, and which mirror it is. */
  mirrorUids: Map<string, string>;
}

/**
 * Lists every worker's mirrors, then its pods, of this namespace every 150 ms until stopped:
 * whether two workloads' pods ever existed at once, and whether a mirror outlived its pods
 * (listed in that order, a pod seen in a sample whose list of mirrors no longer had its Job
 * existed after the Job was gone).
 */
function sampleWorkers(): { stop(): Promise<WorkerSample[]> } {
  const samples: WorkerSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const sample: WorkerSample = {
        at: Date.now(),
        mirrors: new Set(),
        terminating: new Set(),
        podsOf: new Set(),
        mirrorUids: new Map(),
      };
      await Promise.all(
        [...fleet.workers.values()].map(async (clients) => {
          const jobs = await clients.batch.listNamespacedJob({ namespace, labelSelector: originUidLabel });
          const pods = await clients.core.listNamespacedPod({
            namespace,
            labelSelector: jobControllerUidLabel,
          });
          for (const job of jobs.items) {
            const mirror = `${job.metadata!.labels![originUidLabel]}#${job.metadata?.annotations?.[placementAttemptAnnotation]}`;
            sample.mirrors.add(mirror);
            if (job.metadata?.deletionTimestamp) sample.terminating.add(mirror);
            sample.mirrorUids.set(job.metadata!.uid!, mirror);
          }
          for (const pod of pods.items) sample.podsOf.add(pod.metadata!.labels![jobControllerUidLabel]!);
        }),
      );
      samples.push(sample);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** On a Job's pod template: its pods, once deleted, stay terminating until `holdTerminatingPods` lets them go. */
const holdFinalizer = 'e2e.jobrelay.dev/hold-terminating';

/**
 * Plays a slow kubelet on every worker: a pod carrying `holdFinalizer` stays terminating for
 * `holdMs` after its deletion (kwok stops a pod at once; a real kubelet takes its grace period),
 * then its finalizer is removed. `stop` lets every pod go, deleted or not.
 */
function holdTerminatingPods(holdMs: number): { stop(): Promise<void> } {
  let running = true;
  const release = async (all: boolean) => {
    for (const clients of fleet.workers.values()) {
      const pods = await clients.core.listNamespacedPod({ namespace });
      for (const pod of pods.items) {
        const finalizers = pod.metadata?.finalizers ?? [];
        if (!finalizers.includes(holdFinalizer)) continue;
        const deletedAt = Date.parse(String(pod.metadata?.deletionTimestamp ?? ''));
        if (!all && !(deletedAt + holdMs <= Date.now())) continue;
        await clients.core
          .patchNamespacedPod(
            {
              name: pod.metadata!.name!,
              namespace,
              body: {
                metadata: {
                  resourceVersion: pod.metadata!.resourceVersion,
                  finalizers: finalizers.filter((f) => f !== holdFinalizer),
                },
              },
            },
            mergePatch,
          )
          .catch(() => {}); // A conflict (its controller changed it): the next round.
      }
    }
  };
  const loop = (async () => {
    while (running) {
      await release(false);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await release(true);
    },
  };
}

async function createJob(
  name: string,
  options: { runSeconds: number; spec?: V1Job['spec']; priority?: boolean; holdTerminating?: boolean },
) {
  const body = sandboxJob({
    name,
    managedBy: dispatcherManagedBy,
    requests: { cpu: '500m' },
    pod: { runSeconds: options.runSeconds },
    ...(options.spec ? { spec: options.spec } : {}),
  });
  if (options.priority) body.spec!.template.spec!.priorityClassName = priorityClassName;
  if (options.holdTerminating)
    body.spec!.template.metadata = { ...body.spec!.template.metadata, finalizers: [holdFinalizer] };
  return fleet.management.batch.createNamespacedJob({ namespace, body });
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  namespace = await createTestNamespace(fleet.management, 'queues');
  // The class exists on every cluster: the workers' Priority admission refuses a pod naming an unknown one.
  for (const clients of [fleet.management, ...fleet.workers.values()]) {
    await clients.kubeConfig.makeApiClient(SchedulingV1Api).createPriorityClass({
      body: { metadata: { name: priorityClassName }, value: 1000, description: 'jobrelay e2e: queues' },
    });
  }
  controller = startController(fleet.sandbox, ['--mirror-retention-seconds=600']);
  sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
});

afterAll(async () => {
  await sampler?.stop();
  await controller?.kill('SIGTERM');
  for (const name of queues) await deleteQueue(name);
  for (const clients of [fleet.management, ...fleet.workers.values()]) {
    await clients.kubeConfig
      .makeApiClient(SchedulingV1Api)
      .deletePriorityClass({ name: priorityClassName })
      .catch(() => {});
  }
});

describe('DispatchQueue admission', () => {
  it('holds the quota at every sampled instant; the others wait with the queue message; all complete', async () => {
    const queue = uniqueName('e2e-q');
    await createQueue(queue, 'Never');
    const sampling = sampleAdmitted();
    const names = [0, 1, 2, 3].map((i) => uniqueName(`quota-${i}`));
    for (const name of names) await createJob(name, { runSeconds: 8 });
    // Two wait, saying which queue holds them.
    const waiting = await eventually('two Jobs waiting with the queue message', async () => {
      const jobs = (await fleet.management.batch.listNamespacedJob({ namespace })).items.filter((j) =>
        names.includes(j.metadata!.name!),
      );
      const held = jobs.filter((j) =>
        j.metadata?.annotations?.[unschedulableAnnotation]?.includes(`queue ${queue}`),
      );
      return held.length >= 2 ? held : undefined;
    });
    expect(waiting.every((j) => recordOf(j)?.cluster === undefined)).toBe(true);
    for (const name of names) {
      const done = await waitForFinishedJob(fleet.management, namespace, name);
      expect(done.status?.succeeded).toBe(1);
      expect(recordOf(done)?.queue).toBe(queue);
    }
    expect(await sampling.stop()).toBeLessThanOrEqual(2);
    // Each admission's wait was measured (creation to admission).
    expect(await controller.metric('jobrelay_queue_admission_wait_seconds_count')).toBeGreaterThanOrEqual(4);
    await deleteQueue(queue);
  }, 300_000);

  it('a high-priority Job preempts a lower one of its queue; the preempted Indexed Job re-runs no completed index', async () => {
    const queue = uniqueName('e2e-prio');
    await createQueue(queue, 'LowerPriority');
    // Its pods, once deleted, stay terminating for 4 s, as under a real kubelet's grace period.
    const holding = holdTerminatingPods(4_000);
    try {
      const low = await createJob(uniqueName('low'), {
        holdTerminating: true,
        runSeconds: 4,
        spec: { completionMode: 'Indexed', completions: 6, parallelism: 2 } as V1Job['spec'],
      });
      const lowName = low.metadata!.name!;
      // Some index done on its first mirror before it is preempted.
      await eventually('the low Job to complete an index', async () => {
        const job = await fleet.management.batch.readNamespacedJob({ name: lowName, namespace });
        return job.status?.completedIndexes ? job : undefined;
      });
      const watching = sampleWorkers();
      const high = await createJob(uniqueName('urgent'), { runSeconds: 3, priority: true });
      const preempted = await eventually('the low Job preempted', async () => {
        const job = await fleet.management.batch.readNamespacedJob({ name: lowName, namespace });
        const record = recordOf(job);
        return (record as { lastReplacedBecause?: string } | undefined)?.lastReplacedBecause?.startsWith(
          'preempted',
        )
          ? job
          : undefined;
      });
      expect(recordOf(preempted)?.attempt).toBe(2);
      expect(await controller.metric('jobrelay_queue_evictions_total')).toBe(1);
      const urgentDone = await waitForFinishedJob(fleet.management, namespace, high.metadata!.name!);
      expect(urgentDone.status?.succeeded).toBe(1);
      // The evicted mirror kept the quota until it was gone from its worker, with its pods (deleted
      // in the foreground): the urgent Job's mirror never existed beside it or any of its pods.
      const samples = await watching.stop();
      const evictedMirror = `${low.metadata!.uid}#1`;
      const urgentMirror = `${high.metadata!.uid}#1`;
      const evictedUids = new Set(
        samples.flatMap((x) => [...x.mirrorUids].filter(([, m]) => m === evictedMirror).map(([uid]) => uid)),
      );
      const lastEvicted = Math.max(
        ...samples
          .filter((x) => x.mirrors.has(evictedMirror) || [...evictedUids].some((uid) => x.podsOf.has(uid)))
          .map((x) => x.at),
      );
      const firstUrgent = Math.min(...samples.filter((x) => x.mirrors.has(urgentMirror)).map((x) => x.at));
      expect(evictedUids.size).toBe(1);
      expect(Number.isFinite(lastEvicted) && Number.isFinite(firstUrgent)).toBe(true);
      expect(firstUrgent).toBeGreaterThan(lastEvicted);
      // Deleted in the foreground, the evicted Job stayed (being deleted) while its pods
      // terminated, and none of its pods outlived it: its absence meant they were gone.
      const [evictedUid] = evictedUids;
      expect(samples.some((x) => x.terminating.has(evictedMirror) && x.podsOf.has(evictedUid!))).toBe(true);
      expect(samples.filter((x) => x.podsOf.has(evictedUid!) && !x.mirrors.has(evictedMirror))).toEqual([]);
      const lowDone = await waitForFinishedJob(fleet.management, namespace, lowName, 300_000);
      expect(lowDone.status?.succeeded).toBe(6);
      expect(lowDone.status?.completedIndexes).toBe('0-5');
      await sampler.settle();
      // Every index succeeded exactly once across both mirrors: a completed index never ran again.
      const succeeded = sampler
        .report()
        .podsOfOrigin(low.metadata!.uid!)
        .filter((p) => p.phase === 'Succeeded');
      expect(succeeded).toHaveLength(6);
    } finally {
      await holding.stop();
    }
    await deleteQueue(queue);
  }, 400_000);

  it('after a controller restart, the queue usage is what the records say', async () => {
    const queue = uniqueName('e2e-restart');
    await createQueue(queue, 'Never');
    const names = [0, 1, 2].map((i) => uniqueName(`restart-${i}`));
    // The two admitted hold the quota through the restart and the watch after it: they run 40 s.
    // The third only waits, then runs once they are done: 2 s. Created once the two are
    // admitted, it is the one that waits, whatever the order of Jobs created in the same second;
    // the controller is killed at once, whether or not it has seen the third.
    for (const name of names.slice(0, 2)) await createJob(name, { runSeconds: 40 });
    await eventually('two admitted', async () => ((await admittedNow()).length === 2 ? true : undefined));
    await createJob(names[2]!, { runSeconds: 2 });
    await controller.kill('SIGKILL');
    controller = startController(fleet.sandbox, ['--mirror-retention-seconds=600']);
    const sampling = sampleAdmitted();
    const status = await eventually(
      'the queue status after the restart',
      async () => {
        if (!(await controller.isReady())) return undefined;
        const s = await queueStatus(queue);
        return s && s.admittedWorkloads === 2 && s.pendingWorkloads === 1 ? s : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(status.usage).toEqual({ cpu: '1' });
    // The restarted controller admits nothing more while both hold the quota.
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await admittedNow()).length).toBe(2);
    for (const name of names) await waitForFinishedJob(fleet.management, namespace, name, 300_000);
    expect(await sampling.stop()).toBeLessThanOrEqual(2);
    await deleteQueue(queue);
  }, 400_000);
});
