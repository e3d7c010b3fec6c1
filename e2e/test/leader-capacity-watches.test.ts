// Issue 31: only the leader watches the workers' pods and nodes. Two controller replicas on one
// Lease and the admin API, against the real sandbox: the follower and the API hold no pod or node
// watch (their /metrics say so), the leader one of each per worker; the leader publishes a
// capacity summary on every WorkerCluster, with the pods of our mirrors and nobody else's; the
// API previews placement from that summary. SIGKILL the leader: the follower takes over, starts
// its own watches, places nothing until they have synced, then dispatches a Job that completes.

import { watchStreamsOf } from '@jobrelay/bench';
import type { CapacityStatus, WorkerCluster } from '@jobrelay/clusters';
import { CoordinationV1Api, CustomObjectsApi, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from '../src/api-process.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const leaseName = 'jobrelay-controller';
const systemNamespace = 'jobrelay-system';
/** The controller's defaults: a lease of 15 s, renewed every 2 s. */
const leaseDurationMs = 15_000;
const group = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

type Resource = 'pods' | 'nodes' | 'mirrors' | 'namespaces';

let fleet: Fleet;
let workerNames: string[];
let namespace: string;
let leases: CoordinationV1Api;
let custom: CustomObjectsApi;
let api: ApiProcess;
let apiUrl: string;
const replicas: ControllerProcess[] = [];
const directNamespaces: string[] = [];

function replica(identity: string): ControllerProcess {
  const controller = startController(fleet.sandbox, [`--leader-election-identity=${identity}`]);
  replicas.push(controller);
  return controller;
}

async function untilHolds(identity: string, timeoutMs: number): Promise<void> {
  await eventually(
    `${identity} to hold the Lease`,
    async () => {
      const lease = await leases
        .readNamespacedLease({ name: leaseName, namespace: systemNamespace })
        .catch(() => undefined);
      return lease?.spec?.holderIdentity === identity ? true : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** `jobrelay_worker_watch_streams{resource}` from a Prometheus exposition, every resource. */
function watchStreamsIn(exposition: string): Record<Resource, number> {
  // None reported reads as an empty record: every assertion on a count then fails.
  return (watchStreamsOf(exposition) ?? {}) as Record<Resource, number>;
}

async function controllerWatches(controller: ControllerProcess): Promise<Record<Resource, number>> {
  return watchStreamsIn(await (await fetch(`${await controller.healthUrl()}/metrics`)).text());
}

async function callApi(method: string, path: string, body?: unknown) {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${fleet.sandbox.token('fleet-admin')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBe(200);
  return text;
}

async function apiWatches(): Promise<Record<Resource, number>> {
  return watchStreamsIn(await callApi('GET', '/metrics'));
}

async function publishedCapacity(worker: string): Promise<CapacityStatus | undefined> {
  const wc = (await custom.getClusterCustomObject({ ...group, name: worker })) as WorkerCluster;
  return wc.status?.capacity ?? undefined;
}

function longJob(name: string, managedBy: string | undefined): V1Job {
  return sandboxJob({ name, managedBy, requests: { cpu: '100m', memory: '32Mi' }, pod: { runSeconds: 30 } });
}

/** The JSON log lines of a process, in order. */
function logLines(controller: ControllerProcess): Array<Record<string, unknown>> {
  return controller
    .logs()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  workerNames = fleet.sandbox.workers.map((w) => w.name);
  leases = fleet.management.kubeConfig.makeApiClient(CoordinationV1Api);
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  namespace = await createTestNamespace(fleet.management, 'capacity');
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.kill('SIGTERM')));
  await api?.kill('SIGTERM');
  await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
  for (const name of directNamespaces) await fleet.direct.core.deleteNamespace({ name }).catch(() => {});
});

describe('capacity watches: the leader alone, published for the others', () => {
  let a: ControllerProcess;
  let b: ControllerProcess;

  it('the leader holds one pod and one node watch per worker; the follower and the API hold none', {
    timeout: 180_000,
  }, async () => {
    a = replica('capacity-a');
    await untilHolds('capacity-a', 60_000 + leaseDurationMs);
    b = replica('capacity-b');
    api = startApiProcess(fleet.sandbox);
    apiUrl = await api.url();
    await eventually('capacity-b ready', async () => ((await b.isReady()) ? true : undefined), {
      timeoutMs: 60_000,
    });
    const workers = workerNames.length;
    const leader = await eventually(
      'the leader’s pod and node watches',
      async () => {
        const streams = await controllerWatches(a);
        return streams.pods === workers && streams.nodes === workers ? streams : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(leader.namespaces).toBe(workers);
    expect(leader.mirrors).toBeGreaterThanOrEqual(workers);
    const follower = await controllerWatches(b);
    expect(follower, 'the follower’s watches of the workers').toEqual({
      pods: 0,
      nodes: 0,
      mirrors: leader.mirrors,
      namespaces: workers,
    });
    const apiStreams = await eventually(
      'the API connected to every worker',
      async () => {
        const streams = await apiWatches();
        return streams.namespaces === workers ? streams : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(apiStreams, 'the API’s watches of the workers').toEqual({
      pods: 0,
      nodes: 0,
      mirrors: leader.mirrors,
      namespaces: workers,
    });
    expect(a.logs()).toContain('capacity of every Active worker synced: placing');
    expect(b.logs()).not.toContain('watching pods and nodes for capacity');
  });

  it('every WorkerCluster carries the summary, with our mirrors’ pods and no one else’s; the API previews from it', {
    timeout: 240_000,
  }, async () => {
    for (const worker of workerNames) {
      const capacity = await eventually(`${worker}’s capacity summary`, async () => {
        const published = await publishedCapacity(worker);
        return published?.nodeGroups?.length ? published : undefined;
      });
      expect(
        capacity.nodeGroups!.reduce((sum, g) => sum + g.count, 0),
        `${worker}: nodes in the groups`,
      ).toBe(capacity.nodes);
      expect(Date.now() - Date.parse(capacity.observedTime!), `${worker}: age of the summary`).toBeLessThan(
        120_000,
      );
      expect(capacity.free?.cpu).toBeDefined();
    }
    // A Job another tenant runs on a worker directly, and one of ours dispatched.
    const direct = await createTestNamespace(fleet.direct, 'capacity-direct');
    directNamespaces.push(direct);
    const foreign = uniqueName('foreign');
    await fleet.direct.batch.createNamespacedJob({ namespace: direct, body: longJob(foreign, undefined) });
    const ours = uniqueName('ours');
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: longJob(ours, dispatcherManagedBy),
    });
    const placed = await eventually('our Job placed', async () =>
      placedCluster(await fleet.management.batch.readNamespacedJob({ name: ours, namespace })),
    );
    await eventually('the other tenant’s pod running', async () => {
      const pods = await fleet.direct.core.listNamespacedPod({ namespace: direct });
      return pods.items.some((p) => p.status?.phase === 'Running') ? true : undefined;
    });
    const summary = await eventually(
      `our mirror’s pod in ${placed}’s summary`,
      async () => {
        const published = await publishedCapacity(placed);
        return published?.podsByOwner?.some((e) => e.owner === `${namespace}/${ours}` && e.pods === 1)
          ? published
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(summary.requested?.cpu).toBeDefined();
    for (const worker of workerNames) {
      const owners = (await publishedCapacity(worker))?.podsByOwner?.map((e) => e.owner) ?? [];
      expect(owners, `${worker}: owners published`).not.toContain(`${direct}/${foreign}`);
      expect(owners.every((owner) => !owner.startsWith(`${direct}/`))).toBe(true);
    }
    // The API plans from the summary: a small Job fits somewhere, an enormous one nowhere, for want of cpu.
    const manifest = (cpu: string) => ({
      manifest: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { namespace },
        spec: {
          parallelism: 1,
          template: { spec: { containers: [{ name: 'main', resources: { requests: { cpu } } }] } },
        },
      },
    });
    const fits = JSON.parse(await callApi('POST', '/api/v1/placement-preview', manifest('100m'))) as {
      decision: string;
      cluster: string;
    };
    expect(fits.decision).toBe('placed');
    expect(workerNames).toContain(fits.cluster);
    const tooBig = JSON.parse(await callApi('POST', '/api/v1/placement-preview', manifest('100000'))) as {
      decision: string;
      message: string;
    };
    expect(tooBig.decision).toBe('unschedulable');
    expect(tooBig.message).toContain('insufficient cpu');
    expect(tooBig.message).not.toContain('capacity not known');
    // The cluster views read the same status.
    const clusters = JSON.parse(await callApi('GET', '/api/v1/clusters')) as {
      items: Array<{ name: string; capacity: { nodes: number } | null }>;
    };
    for (const worker of workerNames)
      expect(clusters.items.find((c) => c.name === worker)?.capacity?.nodes).toBeGreaterThan(0);
  });

  it('SIGKILL of the leader: the follower starts its watches, places nothing until they synced, then dispatches', {
    timeout: 300_000,
  }, async () => {
    await a.kill('SIGKILL');
    // Created while nobody leads: the new leader places it.
    const name = uniqueName('after-takeover');
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name,
        managedBy: dispatcherManagedBy,
        requests: { cpu: '100m', memory: '32Mi' },
        pod: { runSeconds: 2 },
      }),
    });
    await untilHolds('capacity-b', 2 * leaseDurationMs + 5_000);
    const workers = workerNames.length;
    await eventually(
      'the new leader’s pod and node watches',
      async () => {
        const streams = await controllerWatches(b);
        return streams.pods === workers && streams.nodes === workers ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const origin = await eventually(
      'the Job Complete',
      async () => {
        const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
        return isTrue(job, 'Complete') ? job : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(workerNames).toContain(placedCluster(origin));
    const lines = logLines(b);
    const synced = lines.findIndex((l) => l.msg === 'capacity of every Active worker synced: placing');
    const placement = lines.findIndex(
      (l) => l.job === `${namespace}/${name}` && typeof l.cluster === 'string',
    );
    expect(synced, `the new leader's "synced" line; see ${b.logFile}`).toBeGreaterThanOrEqual(0);
    console.log(
      `[leader-capacity-watches] the new leader waited ${String(lines[synced]!.waitedMs)} ms for its capacity watches before placing`,
    );
    expect(placement, `its placement of ${name}`).toBeGreaterThan(synced);
    const startedWatches = lines.findIndex((l) => l.msg === 'watching pods and nodes for capacity');
    expect(startedWatches, 'its watches started on taking the lead').toBeGreaterThanOrEqual(0);
    expect(startedWatches).toBeLessThan(synced);
    const apiStreams = await apiWatches();
    expect([apiStreams.pods, apiStreams.nodes], 'the API still watches no pods or nodes').toEqual([0, 0]);
    expect(await b.metric('jobrelay_placement_waiting_for_capacity')).toBe(0);
  });
});
