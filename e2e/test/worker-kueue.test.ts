// A worker's own admission is a second gate, never fought. One sandbox worker runs Kueue
// v0.17.0 (its real controller and webhooks) with a 1-cpu ClusterQueue, as many real workers do
// for their local users. Three 500m Jobs naming its LocalQueue are created directly on that
// worker, then the same three are dispatched through jobrelay, pinned there: Kueue admits two,
// holds the third suspended until quota frees, and jobrelay must leave that hold alone (never
// resume it over the worker's quota), say on the origin that it waits on the worker's queue in
// Kueue's own words (those of the Workload Kueue made for the direct Job that waited), and end
// each origin as the same Job ended directly.
import { clusterPinAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { startKueueOnWorker, type WorkerKueue } from '@jobrelay/sandbox';
import { CustomObjectsApi, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { expectRanOnce, type FleetSampler, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  type ClusterClients,
  dispatcherManagedBy,
  eventually,
  isFinished,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { type Json, type JsonObject, maskedStatus } from '../src/status-differential.ts';

const queueLabel = 'kueue.x-k8s.io/queue-name';
/** Kueue's Job webhooks apply to the namespaces with this label only: the rest of the shared fleet never waits on it. */
const kueueNamespaceLabel = { 'jobrelay.dev/e2e-worker-kueue': 'true' };
const quotaMillicpu = 1000;
const jobMillicpu = 500;
const jobNames = ['kq-a', 'kq-b', 'kq-c'];
// The third Job waits about this long for quota. Its origin's note takes Kueue's words after one
// or two reads of its Workload (2 s apart while Kueue has not said why yet): with 4 s, the whole
// suite's load once let the Job be admitted before the second read answered.
const runSeconds = 8;

let fleet: Fleet;
let worker: string;
let workerClients: ClusterClients;
let kueue: WorkerKueue | undefined;
let controller: ControllerProcess | undefined;
let sampler: FleetSampler | undefined;
let quotaWatch: QuotaWatch | undefined;
const namespaces = { dispatched: uniqueName('kueue-dispatch'), direct: uniqueName('kueue-direct') };
const clusterQueue = uniqueName('cq');

/** Samples the worker's pods in both namespaces: the most cpu requested by live pods at once. */
interface QuotaWatch {
  stop(): Promise<{ samples: number; maxMillicpu: number; over: string[] }>;
}

function millicpu(quantity: string | undefined): number {
  if (!quantity) return 0;
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
}

function watchQuota(clients: ClusterClients, watched: string[]): QuotaWatch {
  let stopped = false;
  let samples = 0;
  let maxMillicpu = 0;
  const over: string[] = [];
  const sampling = (async () => {
    while (!stopped) {
      const lists = await Promise.all(
        watched.map((namespace) => clients.core.listNamespacedPod({ namespace })),
      );
      // Pending or Running: scheduled or about to be, holding the cpu they ask for. A pod being
      // deleted still holds it until it is gone.
      const live = lists
        .flatMap((list) => list.items)
        .filter((pod) => pod.status?.phase === 'Pending' || pod.status?.phase === 'Running');
      const used = live.reduce(
        (sum, pod) =>
          sum +
          (pod.spec?.containers ?? []).reduce(
            (s, c) => s + millicpu(c.resources?.requests?.cpu as string),
            0,
          ),
        0,
      );
      samples++;
      maxMillicpu = Math.max(maxMillicpu, used);
      if (used > quotaMillicpu)
        over.push(`${new Date().toISOString()}: ${live.map((p) => p.metadata?.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await sampling;
      return { samples, maxMillicpu, over };
    },
  };
}

function kueueJob(name: string, dispatched: boolean): V1Job {
  const job = sandboxJob({
    name,
    pod: { runSeconds },
    requests: { cpu: `${jobMillicpu}m` },
    ...(dispatched
      ? { managedBy: dispatcherManagedBy, annotations: { [clusterPinAnnotation]: worker } }
      : {}),
  });
  job.metadata!.labels = { [queueLabel]: 'lq' };
  return job;
}

async function createNamespace(clients: ClusterClients, name: string, labels: Record<string, string>) {
  await clients.core.createNamespace({
    body: { metadata: { name, labels: { 'jobrelay.dev/e2e': 'true', ...labels } } },
  });
  await eventually(`ServiceAccount default in ${name}`, async () =>
    (await clients.core.readNamespacedServiceAccount({ name: 'default', namespace: name }))
      ? true
      : undefined,
  );
}

/** Kueue's objects for a 1-cpu quota: a flavor, a ClusterQueue over it, a LocalQueue `lq` per namespace. */
async function createQuota(custom: CustomObjectsApi): Promise<void> {
  const kueueApi = { group: 'kueue.x-k8s.io', version: 'v1beta2' };
  await custom.createClusterCustomObject({
    ...kueueApi,
    plural: 'resourceflavors',
    body: {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: `${clusterQueue}-flavor` },
    },
  });
  await custom.createClusterCustomObject({
    ...kueueApi,
    plural: 'clusterqueues',
    body: {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ClusterQueue',
      metadata: { name: clusterQueue },
      spec: {
        namespaceSelector: {},
        resourceGroups: [
          {
            coveredResources: ['cpu'],
            flavors: [
              {
                name: `${clusterQueue}-flavor`,
                resources: [{ name: 'cpu', nominalQuota: `${quotaMillicpu}m` }],
              },
            ],
          },
        ],
      },
    },
  });
  for (const namespace of [namespaces.dispatched, namespaces.direct]) {
    await custom.createNamespacedCustomObject({
      ...kueueApi,
      namespace,
      plural: 'localqueues',
      body: {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'LocalQueue',
        metadata: { name: 'lq', namespace },
        spec: { clusterQueue },
      },
    });
  }
  await eventually(`ClusterQueue ${clusterQueue} to be Active`, async () => {
    const queue = (await custom.getClusterCustomObject({
      ...kueueApi,
      plural: 'clusterqueues',
      name: clusterQueue,
    })) as {
      status?: { conditions?: Array<{ type: string; status: string }> };
    };
    return queue.status?.conditions?.some((c) => c.type === 'Active' && c.status === 'True')
      ? true
      : undefined;
  });
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  worker = fleet.sandbox.workers[fleet.sandbox.workers.length - 1]!.name;
  workerClients = fleet.workers.get(worker)!;
  kueue = await startKueueOnWorker({
    dir: fleet.sandbox.dir,
    cluster: worker,
    namespaceLabels: kueueNamespaceLabel,
    log: (line) => console.log(`[worker-kueue] ${line}`),
  });
  // The dispatched Jobs' namespace exists on the worker before jobrelay would make it: the
  // worker's admin enrolled it in Kueue, as a team's namespace on a shared cluster is.
  await createNamespace(fleet.management, namespaces.dispatched, {});
  await createNamespace(workerClients, namespaces.dispatched, kueueNamespaceLabel);
  await createNamespace(workerClients, namespaces.direct, kueueNamespaceLabel);
  await createQuota(workerClients.kubeConfig.makeApiClient(CustomObjectsApi));
  controller = startController(fleet.sandbox);
  sampler = await startFleetSampler(fleet, { namespaces: [namespaces.dispatched, namespaces.direct] });
  quotaWatch = watchQuota(workerClients, [namespaces.dispatched, namespaces.direct]);
});

afterAll(async () => {
  await quotaWatch?.stop();
  await sampler?.stop();
  await controller?.kill('SIGTERM');
  await kueue?.stop();
});

/** One QuotaReserved condition of a Kueue Workload, as seen while sampling. */
interface QuotaSeen {
  status: string;
  reason: string;
  message: string;
}

/** Samples the Kueue Workloads of a namespace on the worker: every distinct QuotaReserved condition seen. */
function watchWorkloads(namespace: string): { stop(): Promise<QuotaSeen[]> } {
  const custom = workerClients.kubeConfig.makeApiClient(CustomObjectsApi);
  const seen = new Map<string, QuotaSeen>();
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const list = (await custom.listNamespacedCustomObject({
        group: 'kueue.x-k8s.io',
        version: 'v1beta2',
        namespace,
        plural: 'workloads',
      })) as { items: Array<{ status?: { conditions?: Array<Record<string, string>> } }> };
      for (const workload of list.items) {
        const quota = workload.status?.conditions?.find((c) => c.type === 'QuotaReserved');
        if (!quota) continue;
        const one = { status: quota.status!, reason: quota.reason!, message: quota.message! };
        seen.set(JSON.stringify(one), one);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await sampling;
      return [...seen.values()].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    },
  };
}

/** What Kueue said of the Workloads it held (QuotaReserved False). */
const held = (seen: QuotaSeen[]): QuotaSeen[] => seen.filter((q) => q.status === 'False');

/** Finished Jobs' statuses, times masked, in a stable order: which of the three waited is up to Kueue. */
function finalStatuses(
  jobs: Array<{ metadata?: { name?: string; namespace?: string }; status?: unknown }>,
): Json[] {
  return jobs
    .map((job) =>
      maskedStatus(
        JSON.parse(JSON.stringify(job.status ?? {})) as JsonObject,
        job.metadata!.namespace!,
        job.metadata!.name!,
      ),
    )
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

async function stoppedEvents(namespace: string): Promise<string[]> {
  const events = await workerClients.core.listNamespacedEvent({ namespace });
  return events.items
    .filter((e) => e.reason === 'Stopped')
    .map((e) => `${e.involvedObject.name}: ${e.reason} ${e.message}`);
}

describe('a worker running Kueue: its admission is a second gate, never fought', () => {
  let direct: V1Job[] = [];
  /** The QuotaReserved conditions of the direct Jobs' Workloads. */
  let directQuota: QuotaSeen[] = [];

  it('the same three Jobs created directly on the worker wait for admission and each run once', async () => {
    const workloads = watchWorkloads(namespaces.direct);
    await Promise.all(
      jobNames.map((name) =>
        workerClients.batch.createNamespacedJob({
          namespace: namespaces.direct,
          body: kueueJob(name, false),
        }),
      ),
    );
    direct = await Promise.all(
      jobNames.map((name) => waitForFinishedJob(workerClients, namespaces.direct, name)),
    );
    directQuota = await workloads.stop();
    console.log(`[worker-kueue] the direct Jobs' Workloads said: ${JSON.stringify(directQuota)}`);
    // One of the three waited for quota, and Kueue said why on its Workload.
    expect(held(directQuota)).toContainEqual({
      status: 'False',
      reason: 'Pending',
      message: `couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor ${clusterQueue}-flavor, ${jobMillicpu}m more needed`,
    });
    await sampler!.settle();
    for (const job of direct) {
      const pods = sampler!.report().podsOfJob(job.metadata!.uid!);
      expect(
        pods.map((p) => p.phase),
        `${job.metadata?.name}: its pods`,
      ).toEqual(['Succeeded']);
    }
    expect(await stoppedEvents(namespaces.direct)).toEqual([]);
  });

  it('dispatched through jobrelay, they wait on the worker’s queue, run once within its quota, and end as the direct run', async () => {
    const mirrorWorkloads = watchWorkloads(namespaces.dispatched);
    const origins = await Promise.all(
      jobNames.map((name) =>
        fleet.management.batch.createNamespacedJob({
          namespace: namespaces.dispatched,
          body: kueueJob(name, true),
        }),
      ),
    );
    // While they run: what each origin says about waiting, seen as a user polling kubectl would.
    const waitNotes = new Set<string>();
    const finished = await eventually(
      'the three dispatched Jobs to finish',
      async () => {
        const jobs = await Promise.all(
          jobNames.map((name) => fleet.management.jobs.read(namespaces.dispatched, name)),
        );
        for (const job of jobs) {
          const note = job.metadata?.annotations?.[unschedulableAnnotation];
          if (note) waitNotes.add(note);
        }
        return jobs.every((job) => isFinished(job as V1Job)) ? jobs : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200 },
    );
    const mirrorQuota = await mirrorWorkloads.stop();
    console.log(`[worker-kueue] origin notes seen: ${JSON.stringify([...waitNotes])}`);
    console.log(`[worker-kueue] the mirrors' Workloads said: ${JSON.stringify(mirrorQuota)}`);

    // The mirror Kueue held had a Workload that said what the direct Job's said, field by field.
    expect(held(mirrorQuota)).toEqual(held(directQuota));
    // A held origin said it waits on the worker's own queue, in Kueue's words: those of its
    // mirror's Workload, the same as the direct Job's.
    const prefix = `held suspended by ${worker}'s own admission (Kueue: `;
    const kueueSaid = [...waitNotes]
      .filter((note) => note.startsWith(prefix) && note.endsWith(')'))
      .map((note) => note.slice(prefix.length, -1));
    expect(kueueSaid.length, `notes: ${JSON.stringify([...waitNotes])}`).toBeGreaterThan(0);
    expect(held(directQuota).map((q) => q.message)).toEqual(expect.arrayContaining(kueueSaid));
    // Nothing else was said than Kueue's words, or (before its Workload was read) the mirror's own.
    for (const note of waitNotes)
      expect(note).toMatch(
        new RegExp(`^held suspended by ${worker}'s own admission( \\(Kueue: |: its Job is suspended there)`),
      );
    // And the Event HeldByWorker carries them too.
    const heldEvents = (
      await fleet.management.core.listNamespacedEvent({ namespace: namespaces.dispatched })
    ).items
      .filter((e) => e.reason === 'HeldByWorker')
      .map((e) => e.message ?? '');
    console.log(`[worker-kueue] HeldByWorker Events: ${JSON.stringify(heldEvents)}`);
    expect(heldEvents).toEqual(expect.arrayContaining(kueueSaid.map((said) => `${prefix}${said})`)));
    // The note goes once the worker admits it.
    for (const job of finished) expect(job.metadata?.annotations?.[unschedulableAnnotation]).toBeUndefined();

    await sampler!.settle();
    const report = sampler!.report();
    for (const origin of origins) {
      const pods = expectRanOnce(report, origin, { cluster: worker, pods: 1 });
      expect(
        pods.map((p) => p.phase),
        `${origin.metadata?.name}: its pods`,
      ).toEqual(['Succeeded']);
    }
    // Never resumed over Kueue's hold: no Stopped (Kueue taking back a Job it had not admitted).
    expect(await stoppedEvents(namespaces.dispatched)).toEqual([]);

    // Each origin ends as the same Job did on the worker alone: the whole status, times masked.
    expect(finalStatuses(finished)).toEqual(
      finalStatuses(
        await Promise.all(jobNames.map((name) => workerClients.jobs.read(namespaces.direct, name))),
      ),
    );
    expect(direct).toHaveLength(3);
  });

  it('the worker’s pods never asked for more cpu than its ClusterQueue’s quota at any sampled instant', async () => {
    const quota = await quotaWatch!.stop();
    quotaWatch = undefined;
    console.log(
      `[worker-kueue] ${quota.samples} samples of ${worker}'s pods, at most ${quota.maxMillicpu}m cpu asked at once (quota ${quotaMillicpu}m)`,
    );
    expect(quota.samples).toBeGreaterThan(10);
    // Two of the three run at once (the quota is full), never three.
    expect(quota.maxMillicpu).toBe(quotaMillicpu);
    expect(quota.over).toEqual([]);
  });
});
