// OriginPlacer, every decision, carried out by the real OriginExecutor on a management cluster
// held in memory: what is written on the origin, which Events, what the placer reports for the
// reconcile to plan from (originWritten), and what it keeps assumed. No Redis: the queue is the
// placer's own interface (a task in, an outcome out).
import type { WorkerClusterView } from '@jobrelay/clusters';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import { defaultManagedBy, placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { formatPlacementRecord, placementRecordOf, sealSubjectOf } from '@jobrelay/placement';
import { eventReasons } from '@jobrelay/planner';
import { originJob, record } from '@jobrelay/planner/test-support/snapshot-builders';
import { describe, expect, it } from 'vitest';
import { OriginPlacer, type OriginPlacerOptions } from '../src/place-origin-jobs.ts';
import { counted, executorWorld, registryOf, silentLog, TestClock, workerView } from './executor-harness.ts';
import { apiError } from './in-memory-cluster.ts';

function placerWorld(
  options: { clusters?: WorkerClusterView[]; leading?: boolean; placementTimeoutSeconds?: number } = {},
) {
  const world = executorWorld();
  const clock = new TestClock();
  const written: { key: string; over: string; written: KubeObject }[] = [];
  const placedOn: string[] = [];
  /** What the reconciler knows newer than the cache, by origin key (its own writes' answers). */
  const newest = new Map<string, KubeObject>();
  let leading = options.leading ?? true;
  /** The origin cache: what the management cluster held when last synced (`sync()`). */
  const cache = new Map<string, Job>();
  const sync = () => {
    cache.clear();
    for (const [key, object] of world.management.objects) cache.set(key, structuredClone(object));
  };
  const placerOptions: OriginPlacerOptions = {
    kinds: new Map([
      [
        'job',
        {
          adapter: batchJobAdapter,
          managedBy: defaultManagedBy,
          origins: { get: (key: string) => cache.get(key) },
          management: world.management,
        },
      ],
    ]),
    registry: registryOf(() => options.clusters ?? [workerView('worker-1')]),
    queue: { retryWaitingNow: async () => {} },
    executor: world.executor,
    leading: () => leading,
    recordKeys: world.keys,
    config: {
      placementPolicy: 'spread',
      placementTimeoutSeconds: options.placementTimeoutSeconds ?? 0,
      recordDispatchEvents: false,
      systemNamespace: 'jobrelay-system',
    },
    namespaces: { get: (name) => (name === 'team-a' ? { metadata: { labels: {} } } : undefined) },
    clock,
    log: silentLog,
    originWritten: (key, over, object) => written.push({ key, over, written: object }),
    newestOrigin: (key, cached) => newest.get(key) ?? cached,
    placedOn: (cluster) => placedOn.push(cluster),
  };
  const placer = new OriginPlacer(placerOptions);
  const task = { namespace: 'team-a', name: 'train', uid: 'uid-1', kind: 'job' };
  return {
    world,
    clock,
    cache,
    sync,
    placer,
    task,
    written,
    newest,
    placedOn,
    stopLeading: () => {
      leading = false;
    },
    stored: () => world.management.get('team-a', 'train')!,
  };
}

describe('OriginPlacer', () => {
  it('placed: the sealed record names the cluster and why, in one write over the version read', async () => {
    const p = placerWorld({ clusters: [workerView('worker-1', {}, 2), workerView('worker-2', {}, 16)] });
    const origin = p.world.management.put(originJob());
    p.sync();
    expect(await p.placer.place(p.task, 0)).toBe('placed');
    const stored = p.stored();
    const parsed = placementRecordOf(stored, p.world.keys);
    expect(parsed).toMatchObject({ kind: 'ok', record: { cluster: 'worker-2', attempt: 1 } });
    expect(parsed.kind === 'ok' && parsed.record.decision).toMatch(/^placed on worker-2/);
    expect(p.world.management.calls).toEqual(['patch team-a/train']);
    expect(p.world.events).toEqual([]);
    // The reconcile plans from the answer, and the executor noted the write for its echo.
    expect(p.written).toEqual([
      { key: 'job/team-a/train', over: origin.metadata!.resourceVersion, written: stored },
    ]);
    expect(p.world.originWrites).toEqual([{ kind: 'job', version: stored.metadata!.resourceVersion }]);
    expect(p.placedOn).toEqual(['worker-2']);
    // Assumed on its cluster until the cache shows it.
    expect(p.placer.loadByCluster().get('worker-2')?.workloads).toBe(1);
  });

  it('placed over the newest version known: its own status written after the cache was synced, no conflict', async () => {
    const p = placerWorld();
    const origin = p.world.management.put(originJob());
    p.sync();
    // The controller wrote the origin's status; the watch has not brought it back yet.
    const statusWritten = p.world.management.put({ ...origin, status: { active: 0 } });
    p.newest.set('job/team-a/train', statusWritten);
    expect(await p.placer.place(p.task, 0)).toBe('placed');
    expect(p.world.management.calls).toEqual(['patch team-a/train']);
    expect(p.written).toEqual([
      { key: 'job/team-a/train', over: statusWritten.metadata!.resourceVersion, written: p.stored() },
    ]);
    // From the cache alone, the same placement meets the newer version: a conflict, retried.
    p.newest.clear();
    p.world.management.put({ ...p.stored(), metadata: { ...p.stored().metadata, annotations: {} } });
    p.sync();
    p.world.management.put({ ...p.stored(), status: { active: 0, ready: 0 } });
    await expect(p.placer.place(p.task, 0)).rejects.toThrow(/changed while placing it/);
  });

  it('placements running concurrently count each other (assumed before the write)', async () => {
    const p = placerWorld({
      clusters: [
        workerView('worker-1', { maxActiveWorkloads: 1 }),
        workerView('worker-2', { maxActiveWorkloads: 1 }),
      ],
    });
    p.world.management.put(originJob());
    p.world.management.put({
      ...originJob({ uid: 'uid-2' }),
      metadata: { ...originJob().metadata, name: 'other', uid: 'uid-2' },
    });
    p.sync();
    const [one, two] = await Promise.all([
      p.placer.place(p.task, 0),
      p.placer.place({ ...p.task, name: 'other', uid: 'uid-2' }, 0),
    ]);
    expect([one, two]).toEqual(['placed', 'placed']);
    expect(p.placedOn.sort()).toEqual(['worker-1', 'worker-2']);
  });

  it('fits nowhere: FailedPlacement and the reason on the workload; the same reason again writes nothing', async () => {
    const p = placerWorld({ clusters: [workerView('worker-1', { unschedulable: true })] });
    p.world.management.put(originJob());
    p.sync();
    expect(await p.placer.place(p.task, 0)).toBe('unschedulable');
    expect(p.world.events.map((e) => e.reason)).toEqual([eventReasons.failedPlacement]);
    const why = p.stored().metadata?.annotations?.[unschedulableAnnotation];
    expect(why).toMatch(/0\/1 clusters available: 1 cordoned/);
    expect(p.written).toHaveLength(1);
    p.sync();
    expect(await p.placer.place(p.task, 1)).toBe('unschedulable');
    expect(p.world.management.calls).toEqual(['patch team-a/train']);
    expect(p.written).toHaveLength(1);
    expect(p.placer.loadByCluster().get('worker-1')?.workloads ?? 0).toBe(0);
  });

  it('fits nowhere for the placement timeout: the gave-up status through the executor (counted, noted), PlacementTimeout', async () => {
    const p = placerWorld({
      clusters: [workerView('worker-1', { unschedulable: true })],
      placementTimeoutSeconds: 60,
    });
    const created = {
      ...originJob(),
      metadata: { ...originJob().metadata, creationTimestamp: new Date(p.clock.now()).toISOString() },
    };
    p.world.management.put(created);
    p.sync();
    expect(await p.placer.place(p.task, 0)).toBe('unschedulable');
    p.clock.advance(60_000);
    p.sync();
    expect(await p.placer.place(p.task, 1)).toBe('not-needed');
    const stored = p.stored();
    expect(stored.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([
      ['FailureTarget', eventReasons.placementTimeout],
      ['Failed', eventReasons.placementTimeout],
    ]);
    expect(p.world.events.map((e) => e.reason)).toEqual([
      eventReasons.failedPlacement,
      eventReasons.failedPlacement,
      eventReasons.placementTimeout,
    ]);
    expect(await counted(p.world.metrics, 'jobrelay_origin_status_writes_total', { result: 'written' })).toBe(
      1,
    );
    expect(p.world.statusWrites).toEqual([stored.metadata!.resourceVersion]);
    expect(p.written.at(-1)!.written).toEqual(stored);
    // Finished: a later task finds nothing to do.
    p.sync();
    expect(await p.placer.place(p.task, 2)).toBe('not-needed');
  });

  it('the origin changed since the cache read it: nothing written, nothing assumed, the task retried', async () => {
    const p = placerWorld();
    p.world.management.put(originJob());
    p.sync();
    p.world.management.put(p.stored()); // a newer version the cache has not seen
    await expect(p.placer.place(p.task, 0)).rejects.toThrow(/changed while placing it; retrying/);
    expect(p.stored().metadata?.annotations?.[placementAnnotation]).toBeUndefined();
    expect(p.placer.loadByCluster().get('worker-1')?.workloads ?? 0).toBe(0);
    expect(p.placedOn).toEqual([]);
  });

  it('the write fails: nothing assumed, the task retried', async () => {
    const p = placerWorld();
    p.world.management.put(originJob());
    p.sync();
    p.world.management.failNext('patch', apiError(503, 'ServiceUnavailable'));
    await expect(p.placer.place(p.task, 0)).rejects.toThrow(/503/);
    expect(p.placer.loadByCluster().get('worker-1')?.workloads ?? 0).toBe(0);
  });

  it('not in the cache yet: read from the apiserver; gone there: not needed', async () => {
    const p = placerWorld();
    p.world.management.put(originJob());
    expect(await p.placer.place(p.task, 0)).toBe('placed');
    expect(p.world.management.calls[0]).toBe('read team-a/train');
    const q = placerWorld();
    expect(await q.placer.place(q.task, 0)).toBe('not-needed');
    expect(q.world.management.calls).toEqual(['read team-a/train']);
  });

  it('not needed (placed already, suspended, another object of the name): nothing written', async () => {
    const p = placerWorld();
    const origin = originJob();
    origin.metadata!.annotations = {
      [placementAnnotation]: formatPlacementRecord(record(), sealSubjectOf(origin), p.world.keys),
    };
    p.world.management.put(origin);
    p.sync();
    expect(await p.placer.place(p.task, 0)).toBe('not-needed');
    expect(await p.placer.place({ ...p.task, uid: 'uid-other' }, 0)).toBe('not-needed');
    const q = placerWorld();
    q.world.management.put(originJob({ spec: { ...originJob().spec!, suspend: true } }));
    q.sync();
    expect(await q.placer.place(q.task, 0)).toBe('not-needed');
    expect(
      [...p.world.management.calls, ...q.world.management.calls].filter((c) => !c.startsWith('read')),
    ).toEqual([]);
  });

  it('its namespace not in the cache yet: retried, nothing written', async () => {
    const p = placerWorld();
    const elsewhere = originJob();
    elsewhere.metadata!.namespace = 'team-new';
    p.world.management.namespaces.add('team-new');
    p.world.management.put(elsewhere);
    p.sync();
    await expect(p.placer.place({ ...p.task, namespace: 'team-new' }, 0)).rejects.toThrow(
      /namespace team-new is not in the cache yet/,
    );
    expect(p.world.management.calls).toEqual([]);
  });

  it('a follower places nothing: the task goes back to the queue for the leader', async () => {
    const p = placerWorld({ leading: false });
    p.world.management.put(originJob());
    p.sync();
    await expect(p.placer.place(p.task, 0)).rejects.toThrow(/not the leader/);
    expect(p.world.management.calls).toEqual([]);
    expect(p.world.events).toEqual([]);
  });

  it('an unknown kind: not needed', async () => {
    const p = placerWorld();
    expect(await p.placer.place({ ...p.task, kind: 'jobset' }, 0)).toBe('not-needed');
  });
});
