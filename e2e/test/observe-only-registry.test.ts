// What the admin API reuses of the controller's cluster code, against real clusters: an
// observe-only WorkerClusterRegistry that connects and watches mirrors but never writes to the
// management cluster, nor watches a worker's pods or nodes (it reads the capacity the leader
// publishes), and probeWorkerKubeconfig, the registry's checks on a kubeconfig
// that is not saved anywhere yet.

import {
  capacitySnapshotOf,
  probeWorkerKubeconfig,
  type WorkerCluster,
  WorkerClusterRegistry,
} from '@jobrelay/clusters';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, builtInKinds } from '@jobrelay/kinds';
import { mergePatch } from '@jobrelay/kube';
import { originLabel } from '@jobrelay/mirror';
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  type ClusterClients,
  createTestNamespace,
  eventually,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const group = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;
const log = pino({ level: 'warn' });

let fleet: Fleet;
let custom: CustomObjectsApi;
let worker: string;
let workerAdmin: ClusterClients;
/** The kubeconfig the sandbox registered for worker-1: the jobrelay-dispatcher identity, self-contained. */
let dispatcherKubeconfig: string;
let kubeSystemUid: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  worker = fleet.sandbox.workers[0]!.name;
  workerAdmin = fleet.workers.get(worker)!;
  const secret = await fleet.management.core.readNamespacedSecret({
    name: `${worker}-kubeconfig`,
    namespace: systemNamespace,
  });
  dispatcherKubeconfig = Buffer.from(secret.data!.kubeconfig!, 'base64').toString('utf8');
  kubeSystemUid = (await workerAdmin.core.readNamespace({ name: 'kube-system' })).metadata!.uid!;
});

async function listWorkerClusters(): Promise<WorkerCluster[]> {
  const list = (await custom.listClusterCustomObject(group)) as { items: WorkerCluster[] };
  return list.items;
}

/** Each WorkerCluster's resourceVersion and status: any write to one changes them. */
async function workerClusterWrites(): Promise<Map<string, string>> {
  return new Map(
    (await listWorkerClusters()).map((wc) => [
      wc.metadata.name,
      JSON.stringify([wc.metadata.resourceVersion, wc.status ?? null]),
    ]),
  );
}

describe('an observe-only WorkerClusterRegistry', () => {
  const registries: WorkerClusterRegistry[] = [];
  const createdWorkerClusters: string[] = [];

  afterAll(async () => {
    await Promise.all(registries.map((r) => r.stop()));
    for (const name of createdWorkerClusters)
      await custom.deleteClusterCustomObject({ ...group, name }).catch(() => {});
  });

  it('connects to the workers, lists mirrors, reads capacity as published, and writes nothing to the management cluster', async () => {
    // Its own origin id: only the mirror made below carries it, so the list is exactly it.
    const originId = uniqueName('observer');
    const namespace = await createTestNamespace(workerAdmin, 'observe');
    const mirrorName = uniqueName('mirror');
    await workerAdmin.batch.createNamespacedJob({
      namespace,
      body: {
        metadata: { name: mirrorName, labels: { [originLabel]: originId } },
        spec: {
          suspend: true, // no pods: only the object matters here
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
        },
      },
    });
    // Another origin's Job next to it: the mirror watch is label-selected and must not see it.
    await workerAdmin.batch.createNamespacedJob({
      namespace,
      body: {
        metadata: { name: uniqueName('foreign'), labels: { [originLabel]: 'someone-else' } },
        spec: {
          suspend: true,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
        },
      },
    });

    // A registry that writes (as the controller's leader does) publishes the workers' capacity,
    // then stops: what the observer reads below is that, not a watch of its own.
    const publisher = new WorkerClusterRegistry({
      management: fleet.management.kubeConfig,
      systemNamespace,
      originId,
      kinds: builtInKinds,
      log,
      leading: () => true,
    });
    registries.push(publisher);
    await publisher.start();
    await eventually(`${worker} capacity published by the writer`, async () => {
      const list = await listWorkerClusters();
      const capacity = list.find((wc) => wc.metadata.name === worker)?.status?.capacity;
      return capacity?.nodeGroups && capacity.nodeGroups.length > 0 ? capacity : undefined;
    });
    expect(publisher.watchStreams()).toMatchObject({ pods: fleet.sandbox.workers.length });
    await publisher.stop();

    const before = await workerClusterWrites();
    expect(before.has(worker)).toBe(true);
    const events: string[] = [];
    let beforeActiveRan = false;
    const registry = new WorkerClusterRegistry({
      management: fleet.management.kubeConfig,
      systemNamespace,
      originId,
      kinds: builtInKinds,
      log,
      observeOnly: true,
      healthIntervalMs: 300, // many health rounds in the seconds below, each a chance to write
      onWorkerClusterEvent: (event) => events.push(`${event.type} ${event.object.metadata.name}`),
      beforeActive: async () => {
        beforeActiveRan = true;
      },
    });
    registries.push(registry);
    await registry.start();

    const connection = await eventually(`${worker} active in the observer`, async () => {
      const c = registry.get(worker);
      return c?.state.active ? c : undefined;
    });
    expect(connection.clusterUid).toBe(kubeSystemUid);
    expect(connection.kubernetesVersion).toMatch(/^v1\.\d+\./);
    expect(connection.servedKinds.has(batchJobAdapter.name)).toBe(true);
    await connection.waitForMirrors();
    const mirrors: Job[] = await eventually('the mirror in the cache', async () => {
      const list = connection.mirrors(batchJobAdapter)?.list() ?? [];
      return list.length > 0 ? list : undefined;
    });
    expect(mirrors.map((m) => `${m.metadata?.namespace}/${m.metadata?.name}`)).toEqual([
      `${namespace}/${mirrorName}`,
    ]);
    // The worker clients work for reads (the API's pod logs go through them).
    const read = await batchJobAdapter.client(connection.clients).read(namespace, mirrorName);
    expect(read.metadata?.labels?.[originLabel]).toBe(originId);
    // And its kubeconfig (for client-node's Log) is the registered worker's, not the management's.
    expect(connection.kubeConfig.getCurrentCluster()?.server).toBe(
      fleet.sandbox.clusters.find((c) => c.name === worker)!.server,
    );

    const capacity = await eventually(
      `${worker} capacity`,
      async () => registry.clusters().find((c) => c.name === worker)?.capacity,
    );
    expect(capacity.nodes.length).toBeGreaterThan(0);
    expect(capacity.nodes.every((n) => (n.allocatable.cpu ?? 0) > 0)).toBe(true);
    // Exactly what the status it holds publishes (a writer elsewhere may have published anew).
    expect(capacity).toEqual(capacitySnapshotOf(registry.workerCluster(worker)?.status?.capacity));
    expect(registry.watchStreams(), 'the observer’s watches of the workers').toEqual({
      pods: 0,
      nodes: 0,
      mirrors: expect.any(Number),
      namespaces: fleet.sandbox.workers.length,
    });

    // The raw objects, as the controller left them, and a change streamed as it happens.
    expect(registry.workerClusters().map((wc) => wc.metadata.name)).toEqual(
      expect.arrayContaining(fleet.sandbox.workers.map((w) => w.name)),
    );
    expect(registry.workerCluster(worker)?.metadata.resourceVersion).toBe(JSON.parse(before.get(worker)!)[0]);
    const extra = uniqueName('observed');
    createdWorkerClusters.push(extra);
    await custom.createClusterCustomObject({
      ...group,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'WorkerCluster',
        metadata: { name: extra },
        spec: { kubeconfigSecretRef: { name: extra } }, // no such Secret: never Active
      },
    });
    await eventually('the new WorkerCluster event', async () =>
      events.includes(`upsert ${extra}`) ? true : undefined,
    );
    expect(registry.workerCluster(extra)?.spec.kubeconfigSecretRef.name).toBe(extra);
    const missing = await eventually('the missing Secret noticed', async () => {
      const state = registry.clusters().find((c) => c.name === extra)?.state;
      return state?.reason === 'SecretNotFound' ? state : undefined;
    });
    expect(missing.active).toBe(false);

    // What a reconcile reads (mirrorCaches) agrees with the full views, for a connected worker
    // and for one that never connected.
    const views = new Map(registry.clusters().map((view) => [view.name, view]));
    const caches = new Map(registry.mirrorCaches(batchJobAdapter.name).map((c) => [c.name, c]));
    expect([...caches.keys()].sort()).toEqual([...views.keys()].sort());
    for (const [name, view] of views) {
      const cache = caches.get(name)!;
      const connection = registry.get(name);
      expect(cache, name).toEqual({
        name,
        registered: true,
        active: connection?.state.active ?? false,
        reason: view.state.reason,
        inactiveSince: view.inactiveSince,
        drain: view.spec.drain === true,
        mirrors: connection?.mirrors(batchJobAdapter.name),
      });
    }
    expect(caches.get(worker)?.mirrors).toBeDefined();
    expect(caches.get(extra)).toMatchObject({ active: false, reason: 'SecretNotFound', mirrors: undefined });

    // Several health rounds later: no WorkerCluster was written, Active or failing.
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await workerClusterWrites();
    for (const [name, written] of before) expect(after.get(name), name).toBe(written);
    const extraObject = (await listWorkerClusters()).find((wc) => wc.metadata.name === extra);
    expect(extraObject?.status).toBeUndefined();
    expect(beforeActiveRan).toBe(false);
  });

  it('takes a cluster it reaches as not Active while the leader’s written condition says so', async () => {
    // What a follower replica (or the admin API) sees when the leader has declared a worker lost
    // that this process still reaches: it must not place Jobs there.
    const registry = new WorkerClusterRegistry({
      management: fleet.management.kubeConfig,
      systemNamespace,
      originId: uniqueName('follower'),
      kinds: builtInKinds,
      log,
      healthIntervalMs: 300,
      observeOnly: true,
    });
    registries.push(registry);
    await registry.start();
    await eventually(`${worker} Active here`, async () =>
      registry.clusters().find((c) => c.name === worker)?.state.active ? true : undefined,
    );
    const original = (await custom.getClusterCustomObject({ ...group, name: worker })) as {
      status?: Record<string, unknown>;
    };
    const writeStatus = (status: Record<string, unknown>) =>
      custom.patchClusterCustomObjectStatus({ ...group, name: worker, body: { status } }, mergePatch);
    try {
      await writeStatus({
        conditions: [
          {
            type: 'Active',
            status: 'False',
            reason: 'Unreachable',
            message: 'no answer within 5 s',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      });
      const seen = await eventually('the leader’s condition seen', async () => {
        const state = registry.clusters().find((c) => c.name === worker)?.state;
        return state && !state.active ? state : undefined;
      });
      expect(seen).toEqual({
        active: false,
        reason: 'Unreachable',
        message: 'no answer within 5 s (as the leader found it; this replica reaches it)',
      });
      // Its own connection stays up: the reconcile view and the mirror caches are untouched.
      expect(registry.get(worker)?.state.active).toBe(true);
    } finally {
      await writeStatus({ conditions: (original.status?.conditions as unknown[]) ?? null });
    }
    await eventually(`${worker} Active again`, async () =>
      registry.clusters().find((c) => c.name === worker)?.state.active ? true : undefined,
    );
  });

  it('is what keeps the status untouched: the same registry without observeOnly writes it', async () => {
    // The contrast that shows the comparison above can fail. No controller runs in this file,
    // so nothing else writes WorkerCluster status meanwhile.
    const before = await workerClusterWrites();
    const registry = new WorkerClusterRegistry({
      management: fleet.management.kubeConfig,
      systemNamespace,
      originId: uniqueName('writer'),
      kinds: builtInKinds,
      log,
      healthIntervalMs: 300,
    });
    registries.push(registry);
    await registry.start();
    await eventually(`${worker} status written`, async () => {
      const after = await workerClusterWrites();
      return after.get(worker) !== before.get(worker) ? true : undefined;
    });
    await registry.stop();
  });
});

describe('probeWorkerKubeconfig', () => {
  const originId = 'probe-test';
  type KubeconfigDocument = {
    clusters: Array<{ cluster: Record<string, unknown> }>;
    users: Array<{ user: Record<string, unknown> }>;
  };
  /** The dispatcher's kubeconfig with one change to its parsed document. */
  const variant = (change: (doc: KubeconfigDocument) => void): string => {
    const doc = parse(dispatcherKubeconfig) as KubeconfigDocument;
    change(doc);
    return stringify(doc);
  };
  const dispatcherToken = () =>
    (parse(dispatcherKubeconfig) as KubeconfigDocument).users[0]!.user.token as string;

  it("accepts the registered dispatcher kubeconfig, with the worker's version and kube-system UID", async () => {
    const result = await probeWorkerKubeconfig(dispatcherKubeconfig, { originId, kinds: builtInKinds });
    const server = fleet.sandbox.clusters.find((c) => c.name === worker)!.server;
    expect(result).toEqual({
      ok: true,
      server: new URL(server).origin,
      kubernetesVersion: expect.stringMatching(/^v1\.\d+\./),
      clusterUid: kubeSystemUid,
      servedKinds: expect.arrayContaining([batchJobAdapter.name]),
    });
  });

  it('names the missing permissions of an identity without any (Forbidden)', async () => {
    const nobodyToken = fleet.sandbox.token('nobody');
    const result = await probeWorkerKubeconfig(
      variant((d) => {
        d.users[0]!.user = { token: nobodyToken };
      }),
      { originId, kinds: builtInKinds },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('Forbidden');
    // Every required rule of deploy/worker is missing, so each resource is named.
    for (const fragment of ['jobs.batch', 'jobs.batch/status', 'list, watch nodes', 'list, watch pods'])
      expect(result.message).toContain(fragment);
    expect(result.message).toContain('jobrelay-worker ClusterRole');
    expect(result.message).not.toContain(nobodyToken);
  });

  it('says Unreachable for a server port nothing listens on, within the timeout', async () => {
    const began = Date.now();
    const result = await probeWorkerKubeconfig(
      dispatcherKubeconfig.replace(/https:\/\/127\.0\.0\.1:\d+/, 'https://127.0.0.1:9'),
      { originId, kinds: builtInKinds, timeoutMs: 3_000 },
    );
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(result).toMatchObject({ ok: false, reason: 'Unreachable' });
    expect(!result.ok && result.message).toContain('127.0.0.1:9');
    expect(!result.ok && result.message).not.toContain(dispatcherToken());
  });

  it('refuses an exec plugin (KubeconfigUnsafe) unless allowed, and garbage (KubeconfigMalformed)', async () => {
    const exec = variant((d) => {
      d.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } };
    });
    const unsafe = await probeWorkerKubeconfig(exec, { originId, kinds: builtInKinds });
    expect(unsafe).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe' });
    expect(!unsafe.ok && unsafe.message).toContain('exec');
    const malformed = await probeWorkerKubeconfig(': not a kubeconfig [', { originId, kinds: builtInKinds });
    expect(malformed).toMatchObject({ ok: false, reason: 'KubeconfigMalformed' });
    const notOne = await probeWorkerKubeconfig('hello: world\n', { originId, kinds: builtInKinds });
    expect(notOne).toMatchObject({ ok: false, reason: 'KubeconfigMalformed' });
  });

  it('agrees with the registry: the same Forbidden message for the same identity', async () => {
    // A WorkerCluster with the nobody kubeconfig, seen by an observe-only registry: its state
    // must carry the very message the probe gives (one code path, so they cannot drift).
    const name = uniqueName('nobody');
    const kubeconfig = variant((d) => {
      d.users[0]!.user = { token: fleet.sandbox.token('nobody') };
    });
    await fleet.management.core.createNamespacedSecret({
      namespace: systemNamespace,
      body: { metadata: { name, namespace: systemNamespace }, stringData: { kubeconfig } },
    });
    await custom.createClusterCustomObject({
      ...group,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'WorkerCluster',
        metadata: { name },
        spec: { kubeconfigSecretRef: { name } },
      },
    });
    const registry = new WorkerClusterRegistry({
      management: fleet.management.kubeConfig,
      systemNamespace,
      originId,
      kinds: builtInKinds,
      log,
      observeOnly: true,
    });
    try {
      await registry.start();
      const state = await eventually('the nobody registration checked', async () => {
        const s = registry.clusters().find((c) => c.name === name)?.state;
        return s?.reason === 'Forbidden' ? s : undefined;
      });
      const probed = await probeWorkerKubeconfig(kubeconfig, { originId, kinds: builtInKinds });
      expect(probed).toEqual({ ok: false, reason: 'Forbidden', message: state.message });
    } finally {
      await registry.stop();
      await custom.deleteClusterCustomObject({ ...group, name }).catch(() => {});
      await fleet.management.core
        .deleteNamespacedSecret({ name, namespace: systemNamespace })
        .catch(() => {});
    }
  });
});
