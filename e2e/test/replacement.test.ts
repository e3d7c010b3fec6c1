// A Job whose mirror is lost in the middle of its run ends with a status one cluster could
// have produced: the new mirror runs only the remaining work, spends only the remaining backoff
// budget and deadline, and indexes decided earlier keep their verdict (docs/architecture.md,
// "Re-placement, per mode"). The loss here is the mirror deleted on its worker (a lost worker is
// in placement.test.ts). Once the origin shows counts of the lost mirror, the Job is placed
// again with them carried, as for a lost worker; before that a new mirror loses nothing, and it
// is created again on the same cluster, in the same attempt (still with what is left of the
// deadline).

import { buildMirrorJob, parseIndexIntervals } from '@jobrelay/kinds';
import { mergePatch } from '@jobrelay/kube';
import {
  continuesFromAnnotation,
  deadlineUsedAnnotation,
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
} from '@jobrelay/mirror';
import type { V1Job, V1JobSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, sealedPlacement } from '../src/dispatch-fixtures.ts';
import { type FleetSampler, jobControllerUidLabel, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  condition,
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  plainJson,
  type SandboxJobOptions,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

let fleet: Fleet;
let controller: ControllerProcess;
let sampler: FleetSampler;
let namespace: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  namespace = await createTestNamespace(fleet.management, 'replace');
  // Mirrors are kept long after their origin finished, so the new mirror and its pods can be read.
  controller = startController(fleet.sandbox, ['--mirror-retention-seconds=600']);
  sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
});

afterAll(async () => {
  await sampler?.stop();
  await controller?.kill('SIGTERM');
});

interface PlacementRecord {
  cluster?: string;
  attempt: number;
  /** The Job's progress when the attempt began; null for nothing carried (a first attempt). */
  carried: { succeeded: number; failed: number; completedIndexes?: string; failedIndexes?: string } | null;
  lastReplacedBecause?: string;
}

function placementOf(job: V1Job): PlacementRecord {
  return JSON.parse(job.metadata?.annotations?.[placementAnnotation] ?? '{"attempt":0}');
}

async function readOrigin(name: string): Promise<V1Job> {
  return fleet.management.batch.readNamespacedJob({ name, namespace });
}

/** The live mirror of `origin` on whichever worker holds it, with that worker's name. */
async function liveMirror(origin: V1Job): Promise<{ cluster: string; mirror: V1Job } | undefined> {
  for (const [cluster, clients] of fleet.workers) {
    const list = await clients.batch.listNamespacedJob({
      namespace,
      labelSelector: `${originUidLabel}=${origin.metadata!.uid}`,
    });
    const mirror = list.items.find((m) => !m.metadata?.deletionTimestamp);
    if (mirror) return { cluster, mirror };
  }
  return undefined;
}

interface LostMidway {
  /** The origin as it was when its first mirror was deleted. */
  atLoss: V1Job;
  final: V1Job;
  /** The cluster the first mirror ran on. */
  firstCluster: string;
  /** The mirror that ran after the loss, read after the origin finished. */
  second: V1Job;
  secondCluster: string;
  /** Pods the second mirror ran, as the fleet sampler saw them while it ran. */
  secondPods: { phase: string; index: string | undefined }[];
}

/**
 * What follows the loss: `placed-again` when the origin showed counts of the lost mirror (they
 * would go backwards on a fresh one, so they are carried to a new attempt), `created-again`
 * when it showed none (a new mirror of the same attempt, on the same cluster, loses nothing).
 */
type AfterLoss = 'placed-again' | 'created-again';

const counted = (origin: V1Job) => (origin.status?.succeeded ?? 0) + (origin.status?.failed ?? 0) > 0;

/**
 * Dispatches a Job, waits until its origin shows `midway`, deletes the mirror on its worker
 * (as a worker's admin or a crashed etcd might), and follows the Job to its end.
 */
async function loseMirrorMidway(
  job: Omit<SandboxJobOptions, 'managedBy'>,
  midway: (origin: V1Job) => boolean,
  after: AfterLoss = 'placed-again',
): Promise<LostMidway> {
  const created = await fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ ...job, managedBy: dispatcherManagedBy }),
  });
  const first = await eventually(`${job.name}: first mirror`, () => liveMirror(created));
  const atLoss = await eventually(
    `${job.name}: midway`,
    async () => {
      const origin = await readOrigin(job.name);
      return midway(origin) ? origin : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200 },
  );
  expect(isTrue(atLoss, 'Complete') || isTrue(atLoss, 'Failed')).toBe(false);
  // The case is what the origin showed when the mirror went, not what the test hoped for.
  expect(counted(atLoss), `${job.name}: counts on the origin at the loss`).toBe(after === 'placed-again');
  await fleet.workers.get(first.cluster)!.batch.deleteNamespacedJob({
    name: job.name,
    namespace,
    propagationPolicy: 'Background',
    body: { propagationPolicy: 'Background', preconditions: { uid: first.mirror.metadata!.uid } },
  });
  const final = await waitForFinishedJob(fleet.management, namespace, job.name, 180_000);
  const record = placementOf(final);
  const second = await eventually(`${job.name}: second mirror`, () => liveMirror(created));
  expect(second.mirror.metadata!.uid).not.toBe(first.mirror.metadata!.uid);
  expect(second.cluster).toBe(record.cluster);
  if (after === 'placed-again') {
    expect(record.attempt).toBe(2);
    expect(record.lastReplacedBecause).toBe(
      `its mirror on ${first.cluster} vanished before the Job finished`,
    );
    // Counters never go back: what was carried is at least what the origin showed at the loss.
    expect(record.carried?.succeeded).toBeGreaterThanOrEqual(atLoss.status?.succeeded ?? 0);
    expect(record.carried?.failed).toBeGreaterThanOrEqual(atLoss.status?.failed ?? 0);
  } else {
    expect(record).toMatchObject({
      attempt: 1,
      cluster: first.cluster,
      carried: null,
    });
    expect(record.lastReplacedBecause).toBeUndefined();
  }
  expect(second.mirror.metadata!.annotations![placementAttemptAnnotation]).toBe(String(record.attempt));
  // Finished pods stay until their Job is deleted, and the mirror is retained: list them all.
  const pods = await fleet.workers.get(second.cluster)!.core.listNamespacedPod({
    namespace,
    labelSelector: `${jobControllerUidLabel}=${second.mirror.metadata!.uid}`,
  });
  const secondPods = pods.items.map((p) => ({
    phase: p.status?.phase ?? '',
    index: p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'],
  }));
  await sampler.settle();
  // Never two mirrors of one origin at once, sampled while they ran.
  expect(sampler.report().maxLiveMirrors(created.metadata!.uid!)).toBe(1);
  return {
    atLoss,
    final,
    firstCluster: first.cluster,
    second: second.mirror,
    secondCluster: second.cluster,
    secondPods,
  };
}

function conditionsOf(job: V1Job): string[] {
  return (job.status?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
}

function carriedOf(final: V1Job): NonNullable<PlacementRecord['carried']> {
  const { carried } = placementOf(final);
  if (carried === null)
    throw new Error(`${final.metadata?.name} was placed again, yet its record carries nothing`);
  return carried;
}

const quick = (runSeconds: number): Pick<SandboxJobOptions, 'pod'> => ({ pod: { runSeconds } });

describe.concurrent('a mirror lost in the middle of the run', () => {
  it('NonIndexed with completions: the new mirror runs only the completions left', async () => {
    const spec: Partial<V1JobSpec> = { completions: 6, parallelism: 2 };
    const run = await loseMirrorMidway(
      { name: uniqueName('fixed'), spec, ...quick(3) },
      (o) => (o.status?.succeeded ?? 0) >= 2,
    );
    const carried = carriedOf(run.final);
    expect(carried.succeeded).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(run.second.metadata!.annotations![continuesFromAnnotation]!)).toEqual(carried);
    // The worker's own Job controller counted on from the seeded progress.
    const succeededPods = run.secondPods.filter((p) => p.phase === 'Succeeded');
    expect(succeededPods).toHaveLength(6 - carried.succeeded);
    expect(run.second.status?.succeeded).toBe(6);
    expect(run.final.status?.succeeded).toBe(6);
    expect(run.final.status?.failed ?? 0).toBe(0);
    expect(conditionsOf(run.final)).toEqual([
      'SuccessCriteriaMet=True/CompletionsReached',
      'Complete=True/CompletionsReached',
    ]);
    expect(run.final.status?.startTime?.getTime()).toBe(run.atLoss.status?.startTime?.getTime());
  });

  it('Indexed: completed indexes are not run again', async () => {
    const spec: Partial<V1JobSpec> = { completions: 6, parallelism: 2, completionMode: 'Indexed' };
    const run = await loseMirrorMidway(
      { name: uniqueName('indexed'), spec, ...quick(3) },
      (o) => parseIndexIntervals(o.status?.completedIndexes).length >= 2,
    );
    const done = parseIndexIntervals(carriedOf(run.final).completedIndexes);
    expect(done.length).toBeGreaterThanOrEqual(2);
    const rerun = run.secondPods.filter((p) => done.includes(Number(p.index)));
    expect(rerun).toEqual([]);
    expect(run.secondPods.filter((p) => p.phase === 'Succeeded')).toHaveLength(6 - done.length);
    expect(run.final.status?.completedIndexes).toBe('0-5');
    expect(run.final.status?.succeeded).toBe(6);
    expect(conditionsOf(run.final)).toEqual([
      'SuccessCriteriaMet=True/CompletionsReached',
      'Complete=True/CompletionsReached',
    ]);
  });

  it('backoffLimitPerIndex: a failed index stays failed and is not retried; the rest completes', async () => {
    const spec: Partial<V1JobSpec> = {
      completions: 4,
      parallelism: 1,
      completionMode: 'Indexed',
      backoffLimitPerIndex: 0,
    };
    const run = await loseMirrorMidway(
      { name: uniqueName('per-index'), spec, pod: { runSeconds: 3, failIndexes: '1' } },
      (o) => o.status?.failedIndexes === '1',
    );
    expect(carriedOf(run.final).failedIndexes).toBe('1');
    const rerun = run.secondPods.filter((p) => p.index === '0' || p.index === '1');
    expect(rerun).toEqual([]);
    expect(run.final.status?.failedIndexes).toBe('1');
    expect(run.final.status?.completedIndexes).toBe('0,2,3');
    expect(run.final.status?.succeeded).toBe(3);
    expect(run.final.status?.failed).toBe(1);
    expect(conditionsOf(run.final)).toEqual([
      'FailureTarget=True/FailedIndexes',
      'Failed=True/FailedIndexes',
    ]);
  });

  it('backoffLimit: the new mirror gets only the failures left, not a fresh budget', async () => {
    const spec: Partial<V1JobSpec> = { completions: 2, parallelism: 1, backoffLimit: 2 };
    const run = await loseMirrorMidway(
      { name: uniqueName('backoff'), spec, pod: { runSeconds: 1, exitCode: 1 } },
      (o) => (o.status?.failed ?? 0) >= 1,
    );
    const carried = carriedOf(run.final);
    expect(carried.failed).toBeGreaterThanOrEqual(1);
    // One cluster fails the Job at the third failure; a fresh budget would have allowed three more.
    expect(run.final.status?.failed).toBe(3);
    expect(run.secondPods.filter((p) => p.phase === 'Failed')).toHaveLength(3 - carried.failed);
    expect(conditionsOf(run.final)).toEqual([
      'FailureTarget=True/BackoffLimitExceeded',
      'Failed=True/BackoffLimitExceeded',
    ]);
  });

  it('work queue: the failures so far count against backoffLimit', async () => {
    const spec: Partial<V1JobSpec> = { parallelism: 1, backoffLimit: 1 };
    const run = await loseMirrorMidway(
      { name: uniqueName('queue'), spec, pod: { runSeconds: 1, exitCode: 1 } },
      (o) => (o.status?.failed ?? 0) >= 1,
    );
    expect(carriedOf(run.final).failed).toBe(1);
    expect(run.final.status?.failed).toBe(2);
    expect(run.secondPods.filter((p) => p.phase === 'Failed')).toHaveLength(1);
    expect(condition(run.final, 'Failed')?.reason).toBe('BackoffLimitExceeded');
  });

  it('activeDeadlineSeconds, lost before anything counted: created again in place with what is left of the deadline', async () => {
    const deadline = 40;
    const spec: Partial<V1JobSpec> = { activeDeadlineSeconds: deadline };
    const run = await loseMirrorMidway(
      { name: uniqueName('deadline'), spec, ...quick(600) },
      (o) => {
        const started = o.status?.startTime?.getTime();
        return started !== undefined && Date.now() - started >= 15_000;
      },
      'created-again',
    );
    expect(run.secondCluster).toBe(run.firstCluster);
    const used = Number(run.second.metadata!.annotations![deadlineUsedAnnotation]);
    expect(used).toBeGreaterThanOrEqual(15);
    expect(run.second.spec?.activeDeadlineSeconds).toBe(deadline - used);
    expect(conditionsOf(run.final)).toEqual([
      'FailureTarget=True/DeadlineExceeded',
      'Failed=True/DeadlineExceeded',
    ]);
    // Ended close to the origin's own deadline, not a whole deadline after the loss. The
    // deadline is judged by FailureTarget, which the worker's Job controller sets the moment it
    // sees the deadline pass; Failed waits until the simulator has ended the pods, which under
    // a loaded machine (the whole suite at once) took up to 17 s more.
    const startedAt = run.final.status!.startTime!.getTime();
    const targetAt = condition(run.final, 'FailureTarget')!.lastTransitionTime!.getTime();
    const failedAt = condition(run.final, 'Failed')!.lastTransitionTime!.getTime();
    const secondCreatedAt = run.second.metadata!.creationTimestamp!.getTime();
    const secondStartedAt = run.second.status?.startTime?.getTime();
    console.log(
      `${run.final.metadata!.name}: used ${used} s at the loss; after the origin's start, in s: ` +
        `mirror created again ${(secondCreatedAt - startedAt) / 1000}, started ${secondStartedAt === undefined ? '-' : (secondStartedAt - startedAt) / 1000}, ` +
        `FailureTarget ${(targetAt - startedAt) / 1000}, Failed ${(failedAt - startedAt) / 1000}`,
    );
    // The second mirror's clock starts from what was used when it was created.
    expect(secondCreatedAt - startedAt).toBeLessThan((used + 5) * 1000);
    expect(targetAt - startedAt).toBeLessThan((deadline + 12) * 1000);
    expect(targetAt - startedAt).toBeGreaterThanOrEqual(deadline * 1000);
    expect(failedAt).toBeGreaterThanOrEqual(targetAt);
  });
});

describe('the worker’s own Job controller continues from a seeded status', () => {
  // The rule the per-mode cases rely on, checked on a worker directly: a work-queue Job that
  // already had a success completes without starting another pod.
  it('work queue with a success so far: completes at once, no new pod', async () => {
    const worker = fleet.direct;
    const name = uniqueName('seeded-queue');
    const ns = await createTestNamespace(worker, 'seeded');
    const job = sandboxJob({ name, spec: { parallelism: 2, suspend: true }, ...quick(1) });
    const created = await worker.batch.createNamespacedJob({ namespace: ns, body: job });
    await worker.batch.patchNamespacedJobStatus(
      { name, namespace: ns, body: { status: { succeeded: 1 } } },
      mergePatch,
    );
    await worker.batch.patchNamespacedJob(
      { name, namespace: ns, body: { spec: { suspend: false } } },
      mergePatch,
    );
    const done = await waitForFinishedJob(worker, ns, name, 60_000);
    // (Finishing in the sync that resumes it, the controller leaves Suspended=True as it was.)
    expect(conditionsOf(done).filter((c) => !c.startsWith('Suspended='))).toEqual([
      'SuccessCriteriaMet=True/CompletionsReached',
      'Complete=True/CompletionsReached',
    ]);
    expect(done.status?.succeeded).toBe(1);
    const pods = await worker.core.listNamespacedPod({
      namespace: ns,
      labelSelector: `${jobControllerUidLabel}=${created.metadata!.uid}`,
    });
    expect(pods.items).toHaveLength(0);
  });
});

describe('a mirror a controller created and died before it saw', () => {
  it('is taken as current by the next controller, and its loss after it counted places the Job again', async () => {
    // A controller of its own (another managedBy value and origin id), started only once the
    // state a dying controller leaves behind has been arranged: the placement written and the
    // mirror created, nothing else (no mirror UID is recorded: its labels say whose it is).
    const managedBy = 'jobrelay.dev/e2e-unseen';
    const originId = 'e2e-unseen';
    const cluster = fleet.sandbox.workers[0]!.name;
    const worker = fleet.workers.get(cluster)!;
    const name = uniqueName('unseen');
    const created = await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name,
        managedBy,
        spec: { completions: 2, parallelism: 1 },
        // Long enough that the first success is counted while the second pod still runs, however
        // long the controller takes to start and sync: with 8 s pods, one that started beside the
        // unit tier and three other lanes first saw the mirror already Complete.
        pod: { runSeconds: 20 },
      }),
    });
    const record = { cluster, attempt: 1, carried: { succeeded: 0, failed: 0 }, excludedClusters: [] };
    // Sealed with the installation's key, as the dying controller would have written it.
    const sealed = await sealedPlacement(fleet, created, record);
    const placed = await fleet.management.batch.patchNamespacedJob(
      { name, namespace, body: { metadata: { annotations: { [placementAnnotation]: sealed } } } },
      mergePatch,
    );
    await worker.core.createNamespace({ body: { metadata: { name: namespace } } }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
    const made = await worker.jobs.create(
      namespace,
      buildMirrorJob(plainJson(placed), { originId, attempt: 1 }),
    );

    const restarted = startController(fleet.sandbox, [
      `--managed-by=${managedBy}`,
      `--origin-id=${originId}`,
      // The second mirror is read after the Job finished.
      '--mirror-retention-seconds=600',
    ]);
    try {
      // Its first pod's success reaches the origin: the mirror it found is the one that runs.
      const counted = await eventually(
        'a success of the mirror it found',
        async () => {
          const origin = await readOrigin(name);
          return (origin.status?.succeeded ?? 0) >= 1 ? origin : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(isTrue(counted, 'Complete')).toBe(false);
      expect(placementOf(counted)).toMatchObject({ cluster, attempt: 1 });
      const live = await liveMirror(counted);
      expect(live?.mirror.metadata?.uid).toBe(made.metadata!.uid);
      await worker.batch.deleteNamespacedJob({
        name,
        namespace,
        propagationPolicy: 'Background',
        body: { propagationPolicy: 'Background', preconditions: { uid: made.metadata!.uid } },
      });
      const final = await waitForFinishedJob(fleet.management, namespace, name, 120_000);
      expect(placementOf(final)).toMatchObject({
        attempt: 2,
        lastReplacedBecause: `its mirror on ${cluster} vanished before the Job finished`,
      });
      expect(carriedOf(final).succeeded).toBeGreaterThanOrEqual(1);
      expect(conditionsOf(final)).toEqual([
        'SuccessCriteriaMet=True/CompletionsReached',
        'Complete=True/CompletionsReached',
      ]);
      // The success before the loss was carried, not run again.
      expect(final.status?.succeeded).toBe(2);
      const second = await eventually('the second attempt’s mirror', () => liveMirror(final));
      expect(second.mirror.metadata!.annotations![placementAttemptAnnotation]).toBe('2');
    } finally {
      await restarted.kill('SIGTERM');
    }
  });
});
