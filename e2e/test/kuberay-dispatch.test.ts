// KubeRay workloads through jobrelay, on KubeRay's real ray-operator (v1.5.0, one per
// cluster) with KWOK pods and the sandbox's simulated Ray dashboard: RayCluster and RayJob
// origins on the management cluster (spec.managedBy kueue.x-k8s.io/multikueue, the only value
// their CRDs accept besides the operator's own), mirrors on workers, status back. Each status
// is compared field by field with the same object run directly on one worker.
import { execFileSync } from 'node:child_process';
import { mergePatch } from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import { kuberayManagedBy, resolveKubeBinaries, sandboxRayCluster, sandboxRayJob } from '@jobrelay/sandbox';
import { EventsV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, sandboxProcessPid } from '../src/dispatch-fixtures.ts';
import { createTestNamespace, eventually, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';
import {
  comparableRayStatus,
  createRay,
  customOf,
  deleteRay,
  findRayMirror,
  listRay,
  placementOf,
  type RayObject,
  readRay,
  waitForRay,
} from '../src/ray-fixtures.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
// A short lost-worker timeout: one test freezes a worker's apiserver.
const controller = startController(sandbox, ['--worker-lost-timeout-seconds=6']);
const clusters = workerClusterAdmin(fleet);
let originNs: string;
let directNs: string;

const isReady = (object: RayObject) => object.status?.state === 'ready';
const finished = (object: RayObject) =>
  object.status?.jobDeploymentStatus === 'Complete' || object.status?.jobDeploymentStatus === 'Failed';
const conditions = (object: RayObject) =>
  Object.fromEntries((object.status?.conditions ?? []).map((c) => [c.type, c.status]));

async function eventReasonsOf(object: RayObject): Promise<string[]> {
  const events = await fleet.management.kubeConfig.makeApiClient(EventsV1Api).listNamespacedEvent({
    namespace: object.metadata!.namespace!,
    fieldSelector: `regarding.uid=${object.metadata!.uid}`,
  });
  return events.items.map((e) => `${e.reason}: ${e.note}`);
}

beforeAll(async () => {
  if (!sandbox.kuberay)
    throw new Error(`the sandbox at ${sandbox.dir} predates KubeRay: run sandbox up again`);
  [originNs, directNs] = await Promise.all([
    createTestNamespace(fleet.management, 'ray-origin'),
    createTestNamespace(fleet.direct, 'ray-direct'),
  ]);
});

afterAll(async () => {
  // Ray pods run until their RayCluster goes: leave no capacity taken from later test files.
  for (const plural of ['rayclusters', 'rayjobs'] as const) {
    for (const object of await listRay(fleet.management, plural, originNs)) {
      await deleteRay(fleet.management, plural, originNs, object.metadata!.name!);
    }
  }
  await fleet.direct.core.deleteNamespace({ name: directNs });
  await eventually(
    'no Ray pods of this file left on the workers',
    async () => {
      for (const worker of fleet.workers.values()) {
        for (const namespace of [originNs, directNs]) {
          const pods = await worker.core.listNamespacedPod({ namespace, labelSelector: 'ray.io/cluster' });
          if (pods.items.length > 0) return undefined;
        }
      }
      return true;
    },
    { timeoutMs: 120_000 },
  );
  await controller.kill();
});

describe('RayCluster through jobrelay', () => {
  it('runs on a worker and reads on the management cluster as the same RayCluster run on one cluster', async () => {
    const name = uniqueName('rc');
    const origin = await createRay(
      fleet.management,
      originNs,
      sandboxRayCluster({ name, workerReplicas: 2, managedBy: kuberayManagedBy.multiKueue }),
    );
    await createRay(fleet.direct, directNs, sandboxRayCluster({ name, workerReplicas: 2 }));
    const [dispatched, direct] = await Promise.all([
      waitForRay(
        fleet.management,
        'rayclusters',
        originNs,
        name,
        'ready',
        (o) => isReady(o) && o.status?.readyWorkerReplicas === 2,
      ),
      waitForRay(
        fleet.direct,
        'rayclusters',
        directNs,
        name,
        'ready',
        (o) => isReady(o) && o.status?.readyWorkerReplicas === 2,
      ),
    ]);
    expect(comparableRayStatus(dispatched.status, originNs, name)).toEqual(
      comparableRayStatus(direct.status, directNs, name),
    );
    expect(conditions(dispatched)).toMatchObject({ HeadPodReady: 'True', RayClusterProvisioned: 'True' });

    // The mirror: on the recorded cluster, without managedBy (the worker's operator runs it), ours.
    const found = await eventually('its mirror', () => findRayMirror(fleet, origin));
    expect(found.cluster).toBe(placementOf(dispatched)?.cluster);
    expect(found.mirror.spec?.managedBy).toBeUndefined();
    // The management cluster's own operator left the origin alone: no pods there.
    const pods = await fleet.management.core.listNamespacedPod({ namespace: originNs });
    expect(pods.items).toEqual([]);

    // kubectl on the management cluster shows the live state (the CRD's printer columns).
    const { kubectl } = await resolveKubeBinaries();
    const table = execFileSync(
      kubectl,
      [
        '--kubeconfig',
        sandbox.kubeconfigPath(sandbox.management.name),
        'get',
        'rayclusters',
        '-n',
        originNs,
        name,
      ],
      { encoding: 'utf8' },
    );
    expect(table).toMatch(new RegExp(`^${name}\\s+2\\s+2\\s+.*\\bready\\b`, 'm'));
  });

  it('places by the head and every worker group together, and explains a RayCluster that fits nowhere', async () => {
    const name = uniqueName('rc-big');
    const manifest = sandboxRayCluster({
      name,
      workerReplicas: 9,
      requests: { cpu: '2', memory: '128Mi' },
      managedBy: kuberayManagedBy.multiKueue,
    });
    // A 6-cpu head: no node of worker-1 (4 cpu each) can hold it.
    const head = (
      manifest.spec.headGroupSpec as { template: { spec: { containers: Array<{ resources: unknown }> } } }
    ).template.spec.containers[0]!;
    head.resources = { requests: { cpu: '6', memory: '128Mi' } };
    const origin = await createRay(fleet.management, originNs, manifest);
    // 6 + 9 × 2 = 24 cpu: more than any worker has in total (16 at most).
    const waiting = await waitForRay(fleet.management, 'rayclusters', originNs, name, 'explained', (o) =>
      Boolean(o.metadata?.annotations?.['jobrelay.dev/unschedulable']),
    );
    expect(waiting.metadata?.annotations?.['jobrelay.dev/unschedulable']).toMatch(
      /^0\/3 clusters available: 1 insufficient cpu \(requests 6, largest free node [\d.]+m?\), 2 insufficient cpu in total \(10 pods need 24, most free [\d.]+m?\)\.$/,
    );
    expect(placementOf(waiting)?.cluster).toBeUndefined();
    expect(await eventReasonsOf(origin)).toContainEqual(
      expect.stringMatching(/^FailedPlacement: 0\/3 clusters available/),
    );

    // One worker instead of nine: 8 cpu, and the head still needs a node of 6: worker-2 or worker-3.
    await customOf(fleet.management).patchNamespacedCustomObject({
      group: 'ray.io',
      version: 'v1',
      plural: 'rayclusters',
      namespace: originNs,
      name,
      body: [{ op: 'replace', path: '/spec/workerGroupSpecs/0/replicas', value: 1 }],
    });
    const placed = await waitForRay(
      fleet.management,
      'rayclusters',
      originNs,
      name,
      'ready',
      (o) => isReady(o),
      180_000,
    );
    expect(['worker-2', 'worker-3']).toContain(placementOf(placed)?.cluster);
    await deleteRay(fleet.management, 'rayclusters', originNs, name);
  });

  it('suspends and resumes with its origin, and moves off a draining worker', async () => {
    const name = uniqueName('rc-move');
    const origin = await createRay(
      fleet.management,
      originNs,
      sandboxRayCluster({ name, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    await waitForRay(fleet.management, 'rayclusters', originNs, name, 'ready', isReady);
    const patchSuspend = async (suspend: boolean) =>
      customOf(fleet.management).patchNamespacedCustomObject(
        {
          group: 'ray.io',
          version: 'v1',
          plural: 'rayclusters',
          namespace: originNs,
          name,
          body: { spec: { suspend } },
        },
        mergePatch,
      );

    await patchSuspend(true);
    const suspended = await waitForRay(
      fleet.management,
      'rayclusters',
      originNs,
      name,
      'suspended',
      (o) => conditions(o).RayClusterSuspended === 'True',
    );
    expect(suspended.status?.state).toBe('suspended');
    const { cluster: first, mirror } = (await findRayMirror(fleet, origin))!;
    expect(mirror.spec?.suspend).toBe(true);
    const pods = await fleet.workers
      .get(first)!
      .core.listNamespacedPod({ namespace: originNs, labelSelector: `ray.io/cluster=${name}` });
    expect(pods.items.filter((p) => !p.metadata?.deletionTimestamp)).toEqual([]);

    await patchSuspend(false);
    await waitForRay(
      fleet.management,
      'rayclusters',
      originNs,
      name,
      'ready again',
      (o) => isReady(o) && conditions(o).RayClusterSuspended === 'False',
    );

    // Drain its worker: it is placed again elsewhere, and the old mirror goes.
    await clusters.patch(first, { spec: { drain: true } });
    try {
      const moved = await waitForRay(
        fleet.management,
        'rayclusters',
        originNs,
        name,
        'placed elsewhere and ready',
        (o) => {
          const placement = placementOf(o);
          return placement?.cluster !== undefined && placement.cluster !== first && isReady(o);
        },
        180_000,
      );
      expect(placementOf(moved)?.attempt).toBe(2);
      await eventually('the old mirror deleted', async () =>
        (await listRay(fleet.workers.get(first)!, 'rayclusters', originNs)).length === 0 ? true : undefined,
      );
      expect(await eventReasonsOf(origin)).toContainEqual(
        expect.stringMatching(/^Replacing: placing the RayCluster again: cluster .* is being drained/),
      );
    } finally {
      await clusters.patch(first, { spec: { drain: false } });
    }
  });

  it('moves off a lost worker after the timeout and is ready elsewhere; the returned worker’s stale mirror goes', async () => {
    const lost = sandbox.workers[1]!.name;
    await clusters.patch(lost, { spec: { weight: 100 } });
    const name = uniqueName('rc-lost');
    const origin = await createRay(
      fleet.management,
      originNs,
      sandboxRayCluster({ name, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    const ready = await waitForRay(fleet.management, 'rayclusters', originNs, name, 'ready', isReady);
    expect(placementOf(ready)?.cluster).toBe(lost);
    await clusters.patch(lost, { spec: { weight: 1 } });
    const { mirror: lostMirror } = (await findRayMirror(fleet, origin))!;
    // Frozen, not killed: it accepts connections and never answers (its operator hangs too).
    const apiserver = await sandboxProcessPid(sandbox, `${lost}/kube-apiserver`);
    process.kill(apiserver, 'SIGSTOP');
    try {
      const moved = await waitForRay(
        fleet.management,
        'rayclusters',
        originNs,
        name,
        'placed again after the lost-worker timeout',
        (o) => placementOf(o)?.attempt === 2 && placementOf(o)?.cluster !== undefined,
        90_000,
      );
      const movedTo = placementOf(moved)!.cluster!;
      expect(movedTo).not.toBe(lost);
      // Asked of the new worker only: a call to the frozen one would hang.
      await eventually(
        'ready on the new worker',
        async () => {
          const [mirror] = await listRay(
            fleet.workers.get(movedTo)!,
            'rayclusters',
            originNs,
            `${originUidLabel}=${origin.metadata!.uid}`,
          );
          return mirror?.status?.state === 'ready' ? true : undefined;
        },
        { timeoutMs: 120_000 },
      );
      expect(await eventReasonsOf(origin)).toContainEqual(
        expect.stringMatching(
          new RegExp(`^Replacing: placing the RayCluster again: cluster ${lost} has not been Active`),
        ),
      );
    } finally {
      process.kill(apiserver, 'SIGCONT');
    }
    await eventually(
      'the returned worker’s stale mirror removed',
      async () => {
        const left = await listRay(fleet.workers.get(lost)!, 'rayclusters', originNs);
        return left.some((o) => o.metadata?.uid === lostMirror.metadata?.uid) ? undefined : true;
      },
      { timeoutMs: 90_000 },
    );
  });

  it('takes its mirror and pods with it when deleted', async () => {
    const name = uniqueName('rc-gone');
    const origin = await createRay(
      fleet.management,
      originNs,
      sandboxRayCluster({ name, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    await waitForRay(fleet.management, 'rayclusters', originNs, name, 'ready', isReady);
    const { cluster } = (await findRayMirror(fleet, origin))!;
    await deleteRay(fleet.management, 'rayclusters', originNs, name);
    await eventually('the mirror deleted', async () =>
      (await findRayMirror(fleet, origin)) ? undefined : true,
    );
    await eventually('its pods deleted', async () => {
      const pods = await fleet.workers
        .get(cluster)!
        .core.listNamespacedPod({ namespace: originNs, labelSelector: `ray.io/cluster=${name}` });
      return pods.items.length === 0 ? true : undefined;
    });
  });
});

describe.concurrent('RayJob through jobrelay', () => {
  for (const exitCode of [0, 1]) {
    it(`ends ${exitCode === 0 ? 'SUCCEEDED' : 'FAILED'} on the management cluster as it does on one cluster`, async () => {
      const name = uniqueName(exitCode === 0 ? 'rj-ok' : 'rj-fail');
      const job = (managedBy?: string) =>
        sandboxRayJob({
          name,
          runSeconds: 2,
          exitCode,
          cluster: { workerReplicas: 1 },
          ...(managedBy ? { managedBy } : {}),
        });
      await createRay(fleet.management, originNs, job(kuberayManagedBy.multiKueue));
      await createRay(fleet.direct, directNs, job());
      const [dispatched, direct] = await Promise.all([
        waitForRay(fleet.management, 'rayjobs', originNs, name, 'finished', finished, 180_000),
        waitForRay(fleet.direct, 'rayjobs', directNs, name, 'finished', finished, 180_000),
      ]);
      expect(dispatched.status).toMatchObject(
        exitCode === 0
          ? { jobDeploymentStatus: 'Complete', jobStatus: 'SUCCEEDED' }
          : { jobDeploymentStatus: 'Failed', jobStatus: 'FAILED' },
      );
      expect(comparableRayStatus(dispatched.status, originNs, name)).toEqual(
        comparableRayStatus(direct.status, directNs, name),
      );
      // The finished RayJob's mirror is retired after the retention (5 s here); the origin stays.
      const origin = await readRay(fleet.management, 'rayjobs', originNs, name);
      await eventually(
        'the mirror retired',
        async () => ((await findRayMirror(fleet, origin)) ? undefined : true),
        { timeoutMs: 60_000 },
      );
      expect((await readRay(fleet.management, 'rayjobs', originNs, name)).status?.jobDeploymentStatus).toBe(
        dispatched.status?.jobDeploymentStatus,
      );
    });
  }
});
