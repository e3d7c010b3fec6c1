// WorkerClusterRegistry's connection handling on its real code path (client-node over HTTPS,
// the undici watches, kubeconfig vetting, the probe, status writes), against apiservers that
// run in this process (in-process-apiserver.ts), with the clock injected: connect, a
// kubeconfig that is refused, a missing Secret, a lost connection and the return, removal; and
// who watches capacity (issue 31): the leader alone, publishing it for the others.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchJobAdapter } from '@jobrelay/kinds';
import { ensurePki } from '@jobrelay/sandbox/pki';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type CapacityStatus, WorkerClusterRegistry, type WorkerConnection } from '../src/index.ts';
import { InProcessApiServer } from './in-process-apiserver.ts';

const systemNamespace = 'jobrelay-system';
let scratch: string;
let pki: ReturnType<typeof ensurePki>;
const running: { stop(): Promise<void> }[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'jobrelay-middle-'));
  pki = ensurePki(join(scratch, 'pki'));
});

afterEach(async () => {
  for (const thing of running.splice(0).reverse()) await thing.stop();
});

// After every test's afterEach: the apiservers serving with these certificates are stopped.
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

class TestClock {
  private current = Date.parse('2026-12-01T10:00:00Z');
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

function kubeconfigFor(server: InProcessApiServer, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server: server.url,
          'certificate-authority-data': readFileSync(pki.caCert).toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user: { token: 'worker-token', ...extra } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

async function eventually<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function fleet(options: { leading?: () => boolean } = {}) {
  const management = new InProcessApiServer(pki)
    .serve('jobrelay.dev/v1alpha1', 'WorkerCluster', 'workerclusters', false)
    .serve('v1', 'Secret', 'secrets', true);
  const worker = new InProcessApiServer(pki)
    .serve('batch/v1', 'Job', 'jobs', true)
    .serve('v1', 'Node', 'nodes', false)
    .serve('v1', 'Pod', 'pods', true)
    .serve('v1', 'Namespace', 'namespaces', false);
  await management.listen();
  await worker.listen();
  running.push({ stop: () => management.close() }, { stop: () => worker.close() });
  worker.put('v1', 'namespaces', { metadata: { name: 'kube-system', uid: 'worker-cluster-uid' } });
  const clock = new TestClock();
  const availability: [string, boolean][] = [];
  const cleanedBeforeActive: string[] = [];
  const managementConfig = new KubeConfig();
  managementConfig.loadFromOptions({
    clusters: [{ name: 'm', server: management.url, caData: readFileSync(pki.caCert).toString('base64') }],
    users: [{ name: 'admin', token: 'management-token' }],
    contexts: [{ name: 'm', cluster: 'm', user: 'admin' }],
    currentContext: 'm',
  });
  const registry = new WorkerClusterRegistry({
    management: managementConfig,
    kinds: [batchJobAdapter],
    systemNamespace,
    originId: 'mgmt-1',
    log: pino({ level: 'silent' }),
    healthIntervalMs: 50,
    reconnectMaxBackoffMs: 8_000,
    clock,
    ...(options.leading ? { leading: options.leading } : {}),
    onAvailabilityChange: (name, active) => availability.push([name, active]),
    beforeActive: async (connection: WorkerConnection) => {
      cleanedBeforeActive.push(connection.name);
    },
  });
  running.push(registry);
  const secret = (kubeconfig: string) =>
    management.put('v1', 'secrets', {
      metadata: { name: 'worker-1', namespace: systemNamespace },
      data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
    });
  const register = () =>
    management.put('jobrelay.dev/v1alpha1', 'workerclusters', {
      metadata: { name: 'worker-1' },
      spec: { kubeconfigSecretRef: { name: 'worker-1' } },
    });
  const condition = () =>
    (
      management.get('jobrelay.dev/v1alpha1', 'workerclusters', 'worker-1')?.status as
        | { conditions?: { type: string; status: string; reason: string; message: string }[] }
        | undefined
    )?.conditions?.find((c) => c.type === 'Active');
  const state = () => registry.clusters().find((c) => c.name === 'worker-1');
  /** A registry beside it that never writes, as the admin API runs one. */
  const observer = () => {
    const observing = new WorkerClusterRegistry({
      management: managementConfig,
      kinds: [batchJobAdapter],
      systemNamespace,
      originId: 'mgmt-1',
      log: pino({ level: 'silent' }),
      healthIntervalMs: 50,
      clock,
      observeOnly: true,
    });
    running.push(observing);
    return observing;
  };
  return {
    observer,
    management,
    worker,
    registry,
    clock,
    availability,
    cleanedBeforeActive,
    secret,
    register,
    condition,
    state,
  };
}

describe('WorkerClusterRegistry, connection handling', () => {
  it('connects: checks, watches, cleans up before Active, then writes Active', async () => {
    const f = await fleet();
    f.secret(kubeconfigFor(f.worker));
    f.register();
    await f.registry.start();
    const active = await eventually('Active', () => (f.state()?.state.active ? f.state() : undefined));
    expect(active.state.reason).toBe('Connected');
    expect(active.servedKinds).toEqual(['job']);
    expect(f.cleanedBeforeActive).toEqual(['worker-1']);
    expect(f.availability).toContainEqual(['worker-1', true]);
    expect(await eventually('the Active condition written', () => f.condition())).toMatchObject({
      status: 'True',
      reason: 'Connected',
    });
    const connection = f.registry.get('worker-1')!;
    expect(connection.clusterUid).toBe('worker-cluster-uid');
    // The mirror watch runs, label-selected: a mirror put on the worker reaches its cache.
    await connection.waitForMirrors();
    f.worker.put('batch/v1', 'jobs', { metadata: { name: 'train', namespace: 'team-a' } });
    await eventually('the mirror in the cache', () => connection.mirrors('job')?.get('team-a/train'));
    expect(f.worker.requests).toContain('GET /apis/batch/v1/jobs');
  });

  it('a kubeconfig that reads a file is refused, naming the field; the worker is never contacted', async () => {
    const f = await fleet();
    f.secret(kubeconfigFor(f.worker, { 'token-file': '/etc/hostname' }));
    f.register();
    await f.registry.start();
    const refused = await eventually('the refusal written', () => f.condition());
    expect(refused.status).toBe('False');
    expect(refused.reason).toBe('KubeconfigUnsafe');
    expect(refused.message).toContain('token-file');
    expect(refused.message).not.toContain('worker-token');
    expect(f.state()?.state.active).toBe(false);
    expect(f.worker.requests).toEqual([]);
    expect(f.registry.get('worker-1')).toBeUndefined();
  });

  it('a missing Secret: SecretNotFound; once it exists (and the backoff is over), connects', async () => {
    const f = await fleet();
    f.register();
    await f.registry.start();
    expect(await eventually('SecretNotFound', () => f.condition())).toMatchObject({
      status: 'False',
      reason: 'SecretNotFound',
    });
    f.secret(kubeconfigFor(f.worker));
    // The next attempt waits out the backoff, on the injected clock.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(f.state()?.state.active).toBe(false);
    f.clock.advance(60_000);
    await eventually('Active', () => f.state()?.state.active);
  });

  it('a lost worker: not Active (inactive since the clock says), its watches closed; back: cleaned up, Active again', async () => {
    const f = await fleet();
    f.secret(kubeconfigFor(f.worker));
    f.register();
    await f.registry.start();
    await eventually('Active', () => f.state()?.state.active);
    await f.worker.close();
    const lostAt = f.clock.now();
    const lost = await eventually('not Active', () => (f.state()?.state.active ? undefined : f.state()));
    expect(lost.state.reason).toBe('Unreachable');
    expect(lost.inactiveSince).toBe(lostAt);
    expect(f.availability.at(-1)).toEqual(['worker-1', false]);
    // Back on the same address: the next attempt, once due, reconnects through the cleanup.
    await f.worker.listen();
    f.clock.advance(10_000);
    await eventually('Active again', () => f.state()?.state.active);
    expect(f.cleanedBeforeActive).toEqual(['worker-1', 'worker-1']);
    expect(f.state()?.inactiveSince).toBeUndefined();
  });

  it('removal: the WorkerCluster deleted, its connection closes and it is no longer listed', async () => {
    const f = await fleet();
    f.secret(kubeconfigFor(f.worker));
    f.register();
    await f.registry.start();
    await eventually('Active', () => f.state()?.state.active);
    const mirrors = f.registry.get('worker-1')!.mirrors('job')!;
    f.management.remove('jobrelay.dev/v1alpha1', 'workerclusters', 'worker-1');
    await eventually('unlisted', () => f.registry.clusters().length === 0);
    await eventually('disconnected', () => f.registry.get('worker-1') === undefined);
    await eventually('reported unavailable', () => f.availability.at(-1)?.[1] === false);
    expect(f.registry.mirrorCaches('job')).toEqual([]);
    // Its watch is stopped: a mirror put now is not seen.
    f.worker.put('batch/v1', 'jobs', { metadata: { name: 'late', namespace: 'team-a' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mirrors.get('team-a/late')).toBeUndefined();
  });
});

describe('WorkerClusterRegistry, capacity (issue 31)', () => {
  const node = (name: string) => ({
    metadata: { name },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
  const pod = (name: string, namespace: string, owner: string, cpu: string) => ({
    metadata: {
      name,
      namespace,
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'Job', name: owner, uid: `${owner}-uid`, controller: true },
      ],
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'main', resources: { requests: { cpu } } }] },
    status: { phase: 'Running' },
  });
  const published = (f: Awaited<ReturnType<typeof fleet>>) =>
    (
      f.management.get('jobrelay.dev/v1alpha1', 'workerclusters', 'worker-1')?.status as
        | { capacity?: CapacityStatus | null }
        | undefined
    )?.capacity ?? undefined;
  const capacityWrites = (f: Awaited<ReturnType<typeof fleet>>) =>
    f.management.requests.filter(
      (r) => r === 'PATCH /apis/jobrelay.dev/v1alpha1/workerclusters/worker-1/status',
    ).length;

  it('only the leading registry watches pods and nodes; it publishes them for the others, who read them', async () => {
    let leading = false;
    const f = await fleet({ leading: () => leading });
    f.worker.put('v1', 'nodes', node('node-1'));
    f.worker.put('v1', 'nodes', node('node-2'));
    // A mirror and its pod, and another tenant's pod beside it.
    f.worker.put('batch/v1', 'jobs', { metadata: { name: 'train', namespace: 'team-a' } });
    f.worker.put('v1', 'pods', pod('train-0', 'team-a', 'train', '1'));
    f.worker.put('v1', 'pods', pod('secret-0', 'other-tenant', 'secret-project', '500m'));
    f.secret(kubeconfigFor(f.worker));
    f.register();
    const api = f.observer();
    await f.registry.start();
    await api.start();
    await eventually('Active', () => f.state()?.state.active);
    await eventually('the API connected', () => api.get('worker-1'));

    // Following: mirrors and namespaces watched, pods and nodes not, here or in the API.
    const noCapacityWatches = { pods: 0, nodes: 0, mirrors: 1, namespaces: 1 };
    expect(f.registry.watchStreams()).toEqual(noCapacityWatches);
    expect(api.watchStreams()).toEqual(noCapacityWatches);
    expect(f.registry.capacityNotSynced()).toEqual([]);
    expect(f.worker.requests.filter((r) => r.includes('/pods') || r.includes('/nodes'))).toEqual([]);
    expect(f.state()?.capacity).toBeUndefined();

    // Taking the lead: its watches start; nothing is placed until they have synced.
    leading = true;
    f.registry.leadershipChanged();
    expect(f.registry.watchStreams()).toMatchObject({ pods: 1, nodes: 1 });
    await eventually('its capacity synced', () => f.registry.capacityNotSynced().length === 0);
    const own = f.state()!.capacity!;
    expect(own.podsByOwner.get('team-a/train')).toBe(1);
    const first = await eventually('the capacity published', () => published(f)?.nodeGroups && published(f));
    expect(first).toMatchObject({
      nodes: 2,
      free: { cpu: '6500m' },
      requested: { cpu: '1500m' },
      nodeGroups: [
        { count: 1, requested: { cpu: '1500m' } },
        { count: 1, requested: {} },
      ],
      podsByOwner: [{ owner: 'team-a/train', pods: 1 }],
      observedTime: new Date(f.clock.now()).toISOString(),
    });
    expect(JSON.stringify(first), 'another tenant’s pods are not published').not.toContain('secret-project');
    expect(api.watchStreams()).toEqual(noCapacityWatches);
    const asRead = await eventually(
      'the API to read it',
      () => api.clusters().find((c) => c.name === 'worker-1')?.capacity,
    );
    expect(asRead.nodes.map((n) => n.free).sort((a, b) => (a.cpu ?? 0) - (b.cpu ?? 0))).toEqual(
      own.nodes.map((n) => n.free).sort((a, b) => (a.cpu ?? 0) - (b.cpu ?? 0)),
    );
    expect(asRead.allocatable).toMatchObject({ cpu: own.allocatable.cpu, memory: own.allocatable.memory });
    expect(asRead.podsByOwner.get('team-a/train')).toBe(1);

    // A burst of changes within the interval is coalesced into one later write, not lost.
    const writesBefore = capacityWrites(f);
    for (let i = 1; i <= 10; i++) f.worker.put('v1', 'pods', pod(`train-${i}`, 'team-a', 'train', '100m'));
    await eventually(
      'its own view to count them',
      () => f.state()?.capacity?.podsByOwner.get('team-a/train') === 11,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(published(f)?.podsByOwner, 'nothing new published within the interval').toEqual([
      { owner: 'team-a/train', pods: 1 },
    ]);
    f.clock.advance(2_000);
    await eventually('the burst published', () => published(f)?.podsByOwner?.[0]?.pods === 11);
    expect(capacityWrites(f) - writesBefore).toBe(1);
    await eventually(
      'the API to read the burst',
      () =>
        api
          .clusters()
          .find((c) => c.name === 'worker-1')
          ?.capacity?.podsByOwner.get('team-a/train') === 11,
    );

    // Losing the lead: its watches stop, and it reads what is published, like the API.
    leading = false;
    f.registry.leadershipChanged();
    expect(f.registry.watchStreams()).toEqual(noCapacityWatches);
    expect(f.state()?.capacity?.podsByOwner.get('team-a/train')).toBe(11);
  });

  it('a status write waiting on a busy apiserver is not joined by more: one write follows it, with what changed meanwhile', async () => {
    const f = await fleet();
    f.worker.put('v1', 'nodes', node('node-1'));
    f.worker.put('batch/v1', 'jobs', { metadata: { name: 'train', namespace: 'team-a' } });
    f.secret(kubeconfigFor(f.worker));
    f.register();
    await f.registry.start();
    await eventually('Active', () => f.state()?.state.active);
    await eventually('the capacity published', () => published(f)?.nodeGroups);

    // The management apiserver stops answering status writes; the interval since the last is up.
    const statusWrite = 'PATCH /apis/jobrelay.dev/v1alpha1/workerclusters/worker-1/status';
    const release = f.management.hold((request) => request === statusWrite);
    f.clock.advance(2_000);
    const writesBefore = capacityWrites(f);
    // Pods come one by one while the first write waits: each is a capacity change.
    for (let i = 0; i < 20; i++) {
      f.worker.put('v1', 'pods', pod(`train-${i}`, 'team-a', 'train', '100m'));
      await eventually(`pod ${i} seen`, () => f.state()?.capacity?.podsByOwner.get('team-a/train') === i + 1);
    }
    // Health checks (every 50 ms here) and capacity changes had every chance to write meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(capacityWrites(f) - writesBefore, 'one write in flight, none beside it').toBe(1);

    release();
    f.clock.advance(2_000);
    await eventually('all 20 published', () => published(f)?.podsByOwner?.[0]?.pods === 20);
    // The held write, the one that followed it, and the capacity it had to leave for the interval.
    expect(capacityWrites(f) - writesBefore).toBeLessThanOrEqual(3);
  });
});
