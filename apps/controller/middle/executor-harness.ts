// What the middle tier's controller tests share: a management cluster and workers in memory
// (InMemoryCluster), the real OriginExecutor over them with every callback recorded, a clock
// the test moves, and a silent logger.

import type { WorkerClusterView } from '@jobrelay/clusters';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import type { Clock, RecordedEvent } from '@jobrelay/kube';
import { type PlacementTask, RecordKeyring } from '@jobrelay/placement';
import { pino } from 'pino';
import { ControllerMetrics } from '../src/controller-metrics.ts';
import { type ExecutionTarget, OriginExecutor, type OriginExecutorOptions } from '../src/origin-executor.ts';
import { InMemoryCluster } from './in-memory-cluster.ts';

export const originId = 'mgmt-1';
export const silentLog = pino({ level: 'silent' });

/** A clock that moves only when the test says so. */
/** The registry's views a placer reads, from a list of clusters (as WorkerClusterRegistry gives them). */
export function registryOf(clusters: () => WorkerClusterView[]) {
  return {
    clusters,
    fencesView: (name: string) => {
      const found = clusters().find((c) => c.name === name);
      return found && { ...found, capacity: undefined };
    },
  };
}

export class TestClock implements Clock {
  private current = Date.parse('2026-12-01T10:00:00Z');
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export function testMetrics(): ControllerMetrics {
  return new ControllerMetrics({
    managedJobs: () => 0,
    reconcileQueueLength: () => 0,
    placementQueueDepth: async () => ({}),
    placementQueueOldestWaitingMs: async () => 0,
    clusters: () => [],
    leader: () => true,
    workerWatchStreams: () => ({ pods: 0, nodes: 0, mirrors: 0, namespaces: 0 }),
    waitingForCapacity: () => false,
  });
}

/** The value of one counter series (0 when never incremented). */
export async function counted(
  metrics: ControllerMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const registered = metrics.registry.getSingleMetric(name);
  if (!registered) throw new Error(`no metric ${name}`);
  const metric = await registered.get();
  const series = metric?.values.find((v) =>
    Object.entries(labels).every(([k, want]) => v.labels[k] === want),
  );
  return series?.value ?? 0;
}

export interface ExecutorWorld {
  keys: RecordKeyring;
  management: InMemoryCluster<Job>;
  workers: Map<string, InMemoryCluster<Job>>;
  events: RecordedEvent[];
  enqueued: PlacementTask[];
  forgotten: string[];
  created: { kind: string; cluster: string; mirror: KubeObject }[];
  originWrites: { kind: string; version: string | undefined }[];
  statusWrites: string[];
  metrics: ControllerMetrics;
  executor: OriginExecutor;
  /** The target of one run for the origin `team-a/<name>` as the management cluster holds it now. */
  target(name?: string): ExecutionTarget<Job>;
}

export function executorWorld(
  options: Partial<OriginExecutorOptions> = {},
  workerNames = ['worker-1'],
): ExecutorWorld {
  const world = {
    keys: new RecordKeyring(Buffer.alloc(32, 7)),
    management: new InMemoryCluster<Job>('management'),
    workers: new Map(workerNames.map((name) => [name, new InMemoryCluster<Job>(name)])),
    events: [] as RecordedEvent[],
    enqueued: [] as PlacementTask[],
    forgotten: [] as string[],
    created: [] as ExecutorWorld['created'],
    originWrites: [] as ExecutorWorld['originWrites'],
    statusWrites: [] as string[],
    metrics: testMetrics(),
  } as ExecutorWorld;
  world.executor = new OriginExecutor({
    originId,
    recordDispatchEvents: false,
    createNamespaces: true,
    recordKeys: world.keys,
    namespaceLabels: () => ({ 'jobrelay.dev/origin': originId }),
    events: { record: async (event) => void world.events.push(event) },
    queue: { enqueue: async (task) => void world.enqueued.push(task) },
    forgetOrigin: (uid) => world.forgotten.push(uid),
    metrics: world.metrics,
    writes: {
      mirrorCreating: () => {},
      mirrorCreated: (kind, cluster, mirror) => world.created.push({ kind, cluster, mirror }),
      originWriting: () => {},
      originUnwritten: () => {},
      originWritten: (kind, origin) =>
        world.originWrites.push({ kind, version: origin.metadata?.resourceVersion }),
      statusWritten: (_kind, origin) => world.statusWrites.push(origin.metadata!.resourceVersion!),
    },
    log: silentLog,
    ...options,
  });
  world.target = (name = 'train') => {
    const origin = world.management.get('team-a', name);
    return {
      adapter: batchJobAdapter,
      namespace: 'team-a',
      name,
      uid: origin?.metadata?.uid ?? 'uid-gone',
      origin,
      management: world.management,
      worker: (cluster) => {
        const worker = world.workers.get(cluster);
        return worker ? { client: worker, core: worker.core } : undefined;
      },
    };
  };
  return world;
}

const cpuOf = (cores: number) => ({ cpu: cores * 1000, memory: 64 * 2 ** 30, pods: 110 });

/** A connected worker serving Jobs: one node of `cores` cpu, nothing requested on it yet. */
export function workerView(
  name: string,
  spec: Partial<WorkerClusterView['spec']> = {},
  cores = 8,
): WorkerClusterView {
  return {
    name,
    labels: {},
    spec: { kubeconfigSecretRef: { name }, ...spec },
    state: { active: true, reason: 'Connected', message: '' },
    inactiveSince: undefined,
    servedKinds: ['job'],
    capacity: {
      nodes: [{ name: `${name}-node`, allocatable: cpuOf(cores), requested: {}, free: cpuOf(cores) }],
      allocatable: cpuOf(cores),
      requested: {},
      podsByOwner: new Map(),
    },
    namespaces: { get: () => ({ metadata: { labels: {} } }) },
  };
}
