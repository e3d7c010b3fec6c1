// OriginReconciler and OriginWriteExpectations: one origin's reconcile and the bookkeeping of the controller's own writes,
// with the real planner and executor, the caches and clusters held in memory and the clock in
// the test's hands. The watch is the test: it delivers (or withholds) each event, so what is
// proven is which events cost a reconcile, what each reconcile does, and that every piece of
// bookkeeping is dropped again (`sizes`).

import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import type { InformerEvent } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { formatPlacementRecord, type PlacementRecord, sealSubjectOf } from '@jobrelay/placement';
import { deletionRetryMs, eventReasons } from '@jobrelay/planner';
import { config, mirrorOf, originJob, record } from '@jobrelay/planner/test-support/snapshot-builders';
import { describe, expect, it } from 'vitest';
import { ControllerEvents, subscribeParts } from '../src/controller-events.ts';
import type { AnyDispatchedKind } from '../src/dispatched-kinds.ts';
import { OriginReconciler } from '../src/origin-reconciler.ts';
import { OriginWriteExpectations } from '../src/origin-write-expectations.ts';
import { WorkerAdmissionReasons } from '../src/worker-admission-reasons.ts';
import { executorWorld, silentLog, TestClock } from './executor-harness.ts';
import { apiError, InMemoryCluster } from './in-memory-cluster.ts';

const key = 'job/team-a/train';
const objectName = 'team-a/train';

function reconcilerWorld(options: { workerAdmission?: boolean } = {}) {
  const clock = new TestClock();
  /** Every registered cluster's state, as the registry would report it (the test changes it). */
  const clusterState = {
    active: true,
    drain: false,
    reason: 'Connected',
    inactiveSince: undefined as number | undefined,
  };
  /** The actions of every execution, in order. */
  const executed: string[][] = [];
  /** The caches: what the watches have delivered so far. */
  const originCache = new Map<string, Job>();
  const mirrorCaches = new Map<string, Map<string, Job>>([['worker-1', new Map()]]);
  const enqueued: { key: string; first?: boolean; afterMs?: number }[] = [];
  const lags: number[] = [];
  /** Runs after each execution, before the reconcile plans again: a watch event arriving just then. */
  const afterExecute: { hook?: () => void } = {};
  const enqueue = (k: string, opts: { first?: boolean; afterMs?: number } = {}) =>
    enqueued.push({ key: k, ...opts });
  // As in the controller: the executor reports every write to the bookkeeping the reconcile reads.
  const ownWrites = new OriginWriteExpectations({
    origins: () => ({ get: (k) => originCache.get(k) }),
    clock,
    enqueue,
    leading: () => true,
    statusCoalesceMs: 100,
    statusLag: (seconds) => lags.push(seconds),
  });
  const world = executorWorld({ writes: ownWrites });
  // What the worker's Kueue says, through the worker's client (here: the in-memory worker's answer).
  const workerAdmission = options.workerAdmission
    ? new WorkerAdmissionReasons({
        listWorkloads: (cluster, request) => world.workers.get(cluster)?.listWorkloads(request),
        clock,
        enqueue,
        log: silentLog,
      })
    : undefined;
  const reconciler = new OriginReconciler({
    kinds: new Map([
      [
        'job',
        {
          adapter: batchJobAdapter,
          management: world.management,
          origins: { get: (k) => originCache.get(k) },
        },
      ],
    ]),
    clusters: () =>
      [...mirrorCaches].map(([name, cache]) => ({
        name,
        registered: true,
        active: clusterState.active,
        reason: clusterState.reason,
        inactiveSince: clusterState.inactiveSince,
        drain: clusterState.drain,
        podRestrictions: undefined,
        mirrors: { get: (k: string) => cache.get(k) },
      })),
    worker: (cluster) => {
      const worker = world.workers.get(cluster);
      return worker ? { client: worker as InMemoryCluster<KubeObject>, core: worker.core } : undefined;
    },
    executor: {
      execute: async (actions, target) => {
        executed.push(actions.map((a) => a.type));
        const result = await world.executor.execute(actions, target);
        afterExecute.hook?.();
        return result;
      },
    },
    fencesAgainst: () => undefined,
    plannerConfig: config,
    recordKeys: world.keys,
    clock,
    enqueue,
    ownWrites,
    // The re-plans' spread, fixed: the most a plan may be moved back (half the trust).
    random: () => 0.999,
    ...(workerAdmission ? { workerAdmission } : {}),
  });

  /** The origin watch delivers the management cluster's current version (an upsert). */
  const deliverOrigin = (): void => {
    const current = world.management.get('team-a', 'train')!;
    const previous = originCache.get(objectName);
    originCache.set(objectName, current);
    const event: InformerEvent<KubeObject> = { type: 'upsert', object: current, previous };
    reconciler.originEvent(key, event);
  };
  /** The worker's mirror watch delivers its current object (an upsert). */
  const deliverMirror = (cluster = 'worker-1'): void => {
    const current = world.workers.get(cluster)!.get('team-a', 'train')!;
    mirrorCaches.get(cluster)!.set(objectName, current);
    ownWrites.mirrorEvent(cluster, 'job', { type: 'upsert', object: current, previous: undefined });
  };
  /** The mirror on worker-1 starts running (one active pod), and its watch delivers it. */
  const mirrorStarts = (): void => {
    const worker = world.workers.get('worker-1')!;
    worker.put({
      ...worker.get('team-a', 'train')!,
      status: { active: 1, startTime: new Date(clock.now()).toISOString() },
    });
    deliverMirror();
  };
  /** The origin placed on worker-1 by a placement task, as the placer reports it. */
  const placeOnWorker1 = (placed: PlacementRecord = record()): Job => {
    const origin = world.management.put(originJob());
    originCache.set(objectName, origin);
    const sealed = world.management.put({
      ...origin,
      metadata: {
        ...origin.metadata,
        annotations: {
          [placementAnnotation]: formatPlacementRecord(placed, sealSubjectOf(origin), world.keys),
        },
      },
    });
    // As in the controller: the placer's executor notes the write, then the placer asks for the reconcile.
    ownWrites.originWritten('job', sealed, origin);
    enqueue(key, { first: true });
    return sealed;
  };
  /** Placed on worker-1, its mirror created and seen, and running: its status not written back yet. */
  const placedAndRunning = async (): Promise<void> => {
    placeOnWorker1();
    await reconciler.reconcile(key);
    deliverOrigin();
    deliverMirror();
    mirrorStarts();
  };
  return {
    world,
    clock,
    clusterState,
    executed,
    reconciler,
    ownWrites,
    workerAdmission,
    originCache,
    mirrorCaches,
    enqueued,
    lags,
    afterExecute,
    deliverOrigin,
    deliverMirror,
    mirrorStarts,
    placeOnWorker1,
    placedAndRunning,
  };
}

describe('OriginReconciler', () => {
  it('through the controller hub: it watches what it declares; an origin event queues its key first, a mirror event a coalesced reconcile', () => {
    const r = reconcilerWorld();
    const hub = new ControllerEvents();
    expect(subscribeParts(hub, [r.reconciler])).toEqual([
      { name: 'origin reconcile', watches: ['origin', 'mirror'], writes: r.reconciler.writes },
    ]);
    const origin = r.world.management.put(originJob());
    const kind = { adapter: batchJobAdapter } as unknown as AnyDispatchedKind;
    hub.emit('origin', kind, { type: 'upsert', object: origin, previous: undefined });
    expect(r.enqueued).toEqual([{ key, first: true }]);
    const mirror = r.world.workers.get('worker-1')!.put(mirrorOf(origin));
    hub.emit('mirror', 'worker-1', 'job', { type: 'upsert', object: mirror, previous: undefined });
    expect(r.enqueued).toEqual([
      { key, first: true },
      { key, afterMs: 100 },
    ]);
  });

  it('a placement is planned from at once: the mirror is created before the cache shows the record', async () => {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    expect(r.enqueued).toEqual([{ key, first: true }]);
    await r.reconciler.reconcile(key);
    expect(r.world.workers.get('worker-1')!.objects.size).toBe(1);
    expect(r.reconciler.sizes).toMatchObject({ writtenOrigins: 1, expectedMirrors: 1 });
  });

  it('the echoes of the placement and of the mirror create cost no reconcile; a later change does', async () => {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    r.enqueued.length = 0;
    await r.reconciler.reconcile(key);
    r.deliverOrigin();
    r.deliverMirror();
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes).toEqual({
      expectedMirrors: 0,
      // The placement's echo showed the cache caught up: its entry went with it.
      writtenOrigins: 0,
      ownWrites: 0,
      deletedOrigins: 0,
    });
    // A later mirror change is reconciled as any event.
    const worker = r.world.workers.get('worker-1')!;
    const mirror = worker.get('team-a', 'train')!;
    worker.put({
      ...mirror,
      status: { active: 1, ready: 0, startTime: new Date(r.clock.now()).toISOString() },
    });
    r.deliverMirror();
    expect(r.enqueued).toEqual([{ key, afterMs: 100 }]);
    await r.reconciler.reconcile(key);
    // Its status written back, until the watch brings it.
    expect(r.reconciler.sizes.writtenOrigins).toBe(1);
    r.deliverOrigin();
    expect(r.reconciler.sizes.writtenOrigins).toBe(0);
  });

  it('a status written back: its echo is not reconciled; the lag from the mirror change is measured', async () => {
    const r = reconcilerWorld();
    await r.placedAndRunning();
    r.clock.advance(250);
    r.enqueued.length = 0;
    await r.reconciler.reconcile(key);
    expect(r.world.management.get('team-a', 'train')!.status?.active).toBe(1);
    expect(r.lags).toEqual([0.25]);
    expect(r.reconciler.sizes.ownWrites).toBe(1);
    r.deliverOrigin();
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
    // Someone else's change of the origin afterwards is reconciled as usual.
    r.world.management.put(r.world.management.get('team-a', 'train')!);
    r.deliverOrigin();
    expect(r.enqueued).toEqual([{ key, first: false }]);
  });

  it('a status change after a status write the origin watch has not brought yet: written over that write, no conflict', async () => {
    const r = reconcilerWorld();
    await r.placedAndRunning();
    await r.reconciler.reconcile(key);
    const first = r.world.management.get('team-a', 'train')!;
    expect(first.status?.active).toBe(1);
    // The pod becomes ready before the origin watch brings the first write back (a lagging watch).
    const worker = r.world.workers.get('worker-1')!;
    worker.put({
      ...worker.get('team-a', 'train')!,
      status: { ...worker.get('team-a', 'train')!.status, ready: 1 },
    });
    r.deliverMirror();
    expect(r.originCache.get(objectName)!.metadata!.resourceVersion).not.toBe(
      first.metadata!.resourceVersion,
    );
    r.executed.length = 0;
    const result = await r.reconciler.reconcile(key);
    expect(result).toBeUndefined();
    expect(r.executed).toEqual([['write-status']]);
    const second = r.world.management.get('team-a', 'train')!;
    expect(second.status?.ready).toBe(1);
    expect(second.status?.active).toBe(1);
    // Both echoes, in order: the first is not taken for a change (the second covers it), nor the second.
    r.enqueued.length = 0;
    r.originCache.set(objectName, first);
    r.reconciler.originEvent(key, { type: 'upsert', object: first, previous: undefined });
    r.deliverOrigin();
    expect(r.reconciler.sizes.writtenOrigins).toBe(0);
  });

  /** An origin whose record names a cluster that is not registered: its reconcile re-places it. */
  function placedOnAVanishedCluster(r: ReturnType<typeof reconcilerWorld>): void {
    const origin = r.world.management.put(originJob());
    const sealed = r.world.management.put({
      ...origin,
      metadata: {
        ...origin.metadata,
        annotations: {
          [placementAnnotation]: formatPlacementRecord(
            record({ cluster: 'gone-1' }),
            sealSubjectOf(origin),
            r.world.keys,
          ),
        },
      },
    });
    r.originCache.set(objectName, sealed);
  }

  it('the echo of a write that left work to do is reconciled (a plan from it still asks for a placement)', async () => {
    const r = reconcilerWorld();
    placedOnAVanishedCluster(r);
    await r.reconciler.reconcile(key);
    expect(r.world.events.map((e) => e.reason)).toEqual([eventReasons.replacing]);
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
    r.deliverOrigin();
    expect(r.enqueued).toEqual([{ key, first: false }]);
  });

  it('an echo that arrives before the reconcile planned again is held, then enqueued if work is left', async () => {
    const r = reconcilerWorld();
    placedOnAVanishedCluster(r);
    r.afterExecute.hook = () => {
      r.deliverOrigin();
      // Held: the reconcile that wrote it has not planned from it yet.
      expect(r.enqueued).toEqual([]);
    };
    await r.reconciler.reconcile(key);
    expect(r.enqueued).toEqual([{ key }]);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
  });

  it('an echo that arrives before the reconcile planned again is dropped if nothing is left', async () => {
    const r = reconcilerWorld();
    await r.placedAndRunning();
    r.enqueued.length = 0;
    r.afterExecute.hook = () => r.deliverOrigin();
    await r.reconciler.reconcile(key);
    expect(r.world.management.get('team-a', 'train')!.status?.active).toBe(1);
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
  });

  it('a failed reconcile forgets the write before it: that echo is reconciled as any event', async () => {
    const r = reconcilerWorld();
    await r.placedAndRunning();
    await r.reconciler.reconcile(key);
    expect(r.reconciler.sizes.ownWrites).toBe(1);
    const worker = r.world.workers.get('worker-1')!;
    // Another mirror change; its status write fails before the first write's echo arrived.
    worker.put({
      ...worker.get('team-a', 'train')!,
      status: { active: 2, startTime: new Date(r.clock.now()).toISOString() },
    });
    r.deliverMirror();
    r.world.management.failNext('replaceStatus', apiError(500, 'InternalError'));
    await expect(r.reconciler.reconcile(key)).rejects.toThrow(/500/);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
    r.enqueued.length = 0;
    r.deliverOrigin();
    expect(r.enqueued).toEqual([{ key, first: false }]);
  });

  describe('mirrors created but not yet in their cluster cache', () => {
    it('are taken as there for 30 s: no second create; after that the create-or-adopt path settles it', async () => {
      const r = reconcilerWorld();
      r.placeOnWorker1();
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      const worker = r.world.workers.get('worker-1')!;
      expect(worker.calls).toEqual(['create team-a/train']);
      r.clock.advance(29_999);
      await r.reconciler.reconcile(key);
      expect(worker.calls).toEqual(['create team-a/train']);
      r.clock.advance(1);
      await r.reconciler.reconcile(key);
      expect(worker.calls).toEqual(['create team-a/train', 'create team-a/train', 'read team-a/train']);
      expect(r.world.events.map((e) => e.reason)).toEqual([eventReasons.mirrorAdopted]);
    });

    it('expire with garbage collection when their origin is never reconciled again; the echo is then reconciled', async () => {
      const r = reconcilerWorld();
      r.placeOnWorker1();
      await r.reconciler.reconcile(key);
      expect(r.reconciler.sizes.expectedMirrors).toBe(1);
      r.clock.advance(29_000);
      r.ownWrites.expireExpectations();
      expect(r.reconciler.sizes.expectedMirrors).toBe(1);
      r.clock.advance(1_000);
      r.ownWrites.expireExpectations();
      expect(r.reconciler.sizes.expectedMirrors).toBe(0);
      r.enqueued.length = 0;
      r.deliverMirror();
      expect(r.enqueued).toEqual([{ key, afterMs: 100 }]);
    });

    it('a mirror of another cluster does not settle the expectation', async () => {
      const r = reconcilerWorld();
      r.mirrorCaches.set('worker-2', new Map());
      r.world.workers.set('worker-2', executorWorld().workers.get('worker-1')!);
      r.placeOnWorker1();
      await r.reconciler.reconcile(key);
      const other = r.world.workers.get('worker-2')!;
      other.put(mirrorOf(originJob(), { attempt: 1 }));
      r.deliverMirror('worker-2');
      expect(r.reconciler.sizes.expectedMirrors).toBe(1);
    });
  });

  describe('origins deleted from the cache', () => {
    function deleted() {
      const r = reconcilerWorld();
      const origin = r.world.management.put(originJob());
      const worker = r.world.workers.get('worker-1')!;
      const mirror = worker.put(mirrorOf(origin, { attempt: 1, uid: undefined as unknown as string }));
      r.mirrorCaches.get('worker-1')!.set(objectName, mirror);
      r.world.management.objects.clear();
      r.originCache.delete(objectName);
      r.reconciler.originEvent(key, { type: 'delete', object: origin });
      return { r, worker };
    }

    it('keep their UID until their mirrors are gone: a failed deletion is retried with it', async () => {
      const { r, worker } = deleted();
      expect(r.enqueued).toEqual([{ key, first: false }]);
      worker.failNext('delete', apiError(503, 'ServiceUnavailable'));
      expect(await r.reconciler.reconcile(key)).toEqual({ requeueAfterMs: deletionRetryMs });
      expect(r.reconciler.sizes.deletedOrigins).toBe(1);
      await r.reconciler.reconcile(key);
      expect(worker.objects.size).toBe(0);
      expect(r.reconciler.sizes.deletedOrigins).toBe(0);
      expect(r.world.forgotten).toEqual(['uid-1', 'uid-1']);
    });

    it('forget it once a new origin of that name appears', async () => {
      const { r, worker } = deleted();
      r.world.management.put(originJob({ uid: 'uid-2' }));
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(r.reconciler.sizes.deletedOrigins).toBe(0);
      // The old origin's mirror is stale for the new one (another origin UID): deleted as an orphan.
      expect(worker.objects.size).toBe(0);
    });
  });

  describe('a mirror its worker’s own Kueue holds suspended: the origin says why in Kueue’s words', () => {
    const insufficient =
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 500m more needed";
    const mirrorsOwn =
      "held suspended by worker-1's own admission: its Job is suspended there (JobSuspended: Job suspended)";
    const kueueNote = `held suspended by worker-1's own admission (Kueue: ${insufficient})`;
    /** Answers a read started by the reconcile (an in-process promise), as the worker would. */
    const answered = () => new Promise((resolve) => setImmediate(resolve));

    /** Placed on worker-1 and mirrored there; Kueue's webhook suspended the mirror at creation. */
    async function heldOnWorker1(kueue: InMemoryCluster['kueue']) {
      const r = reconcilerWorld({ workerAdmission: true });
      const worker = r.world.workers.get('worker-1')!;
      worker.kueue = kueue;
      r.placeOnWorker1();
      await r.reconciler.reconcile(key);
      r.deliverOrigin();
      const created = worker.get('team-a', 'train')!;
      const held = worker.put({
        ...created,
        spec: { ...created.spec!, suspend: true },
        status: {
          conditions: [
            { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' },
          ],
        },
      });
      r.deliverMirror();
      r.enqueued.length = 0;
      const reads = () => worker.calls.filter((call) => call.startsWith('list workloads'));
      const note = () =>
        r.world.management.get('team-a', 'train')!.metadata?.annotations?.[unschedulableAnnotation];
      /** The mirror changes on the worker (its version moves): its watch delivers it. */
      const mirrorChanged = () => {
        worker.put(worker.get('team-a', 'train')!);
        r.deliverMirror();
      };
      return { r, worker, held, reads, note, mirrorChanged };
    }

    /** Each distinct request for a reconcile (the queue keeps one per key and time). */
    const distinct = <T>(requests: T[]): T[] =>
      [...new Set(requests.map((request) => JSON.stringify(request)))].map((json) => JSON.parse(json) as T);

    function kueueWorkload(jobUid: string, message: string): KubeObject {
      return {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'Workload',
        metadata: {
          name: 'job-train-1a2b3',
          namespace: 'team-a',
          labels: { 'kueue.x-k8s.io/job-uid': jobUid },
          ownerReferences: [
            { apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: jobUid, controller: true },
          ],
        },
        status: { conditions: [{ type: 'QuotaReserved', status: 'False', reason: 'Pending', message }] },
      } as KubeObject;
    }

    it('one read, not awaited; its answer reconciles the origin, whose note and Event carry Kueue’s message', async () => {
      const { r, worker, held, reads, note } = await heldOnWorker1('installed');
      worker.workloads.push(kueueWorkload(held.metadata!.uid!, insufficient));
      // The reconcile does not wait for the read: the mirror's own reason first.
      let release!: () => void;
      const listed = worker.listWorkloads.bind(worker);
      worker.listWorkloads = async (request) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return listed(request);
      };
      await r.reconciler.reconcile(key);
      expect(note()).toBe(mirrorsOwn);
      expect(r.enqueued).toEqual([]);
      release();
      await answered();
      expect(reads()).toEqual([`list workloads.v1beta2 team-a?kueue.x-k8s.io/job-uid=${held.metadata!.uid}`]);
      // The answer asks for a reconcile now, and another while the mirror stays held.
      expect(r.enqueued).toEqual([{ key }, { key, afterMs: 30_000 }]);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(note()).toBe(kueueNote);
      const held2 = r.world.events.filter((e) => e.reason === eventReasons.heldByWorker).map((e) => e.note);
      expect(held2).toEqual([mirrorsOwn, kueueNote]);
      expect(reads()).toHaveLength(1);
    });

    it('one read per mirror version, at most one every 2 s, and again every 30 s while held; none once it runs', async () => {
      const { r, worker, held, reads, note, mirrorChanged } = await heldOnWorker1('installed');
      worker.workloads.push(kueueWorkload(held.metadata!.uid!, insufficient));
      await r.reconciler.reconcile(key);
      await answered();
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      r.deliverOrigin();
      expect(note()).toBe(kueueNote);
      expect(reads()).toHaveLength(1);
      // The mirror changes within 2 s of the read: no read. Past 2 s: one.
      r.clock.advance(1_000);
      mirrorChanged();
      await r.reconciler.reconcile(key);
      await r.reconciler.reconcile(key);
      expect(reads()).toHaveLength(1);
      r.clock.advance(1_000);
      await r.reconciler.reconcile(key);
      await answered();
      expect(reads()).toHaveLength(2);
      // Quiet: nothing until 30 s after the last read; then Kueue's new words reach the note.
      const workload = worker.workloads[0] as { status: { conditions: Array<{ message: string }> } };
      workload.status.conditions[0]!.message = insufficient.replace('500m', '250m');
      r.clock.advance(29_999);
      await r.reconciler.reconcile(key);
      expect(reads()).toHaveLength(2);
      r.clock.advance(1);
      await r.reconciler.reconcile(key);
      await answered();
      expect(reads()).toHaveLength(3);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(note()).toBe(kueueNote.replace('500m', '250m'));
      // No new Event for a changed message: one for the hold, one when Kueue's words came.
      expect(r.world.events.filter((e) => e.reason === eventReasons.heldByWorker)).toHaveLength(2);
      // Admitted: the mirror runs; the note goes, nothing is kept, nothing read any more.
      r.deliverOrigin();
      worker.put({
        ...worker.get('team-a', 'train')!,
        spec: { ...held.spec!, suspend: false },
        status: { active: 1, startTime: new Date(r.clock.now()).toISOString() },
      });
      r.deliverMirror();
      await r.reconciler.reconcile(key);
      expect(note()).toBeUndefined();
      expect(r.workerAdmission!.size).toBe(0);
      r.clock.advance(60_000);
      mirrorChanged();
      await r.reconciler.reconcile(key);
      expect(reads()).toHaveLength(3);
    });

    it.each([
      ['absent', 'no Workload API: 404 on each version', ['v1beta2', 'v1beta1']],
      ['forbidden', 'the optional rule not granted: 403', ['v1beta2']],
    ] as const)(
      'Kueue %s (%s): the mirror’s own reason, silently, and no read for 10 minutes',
      async (kueue, _why, versions) => {
        const { r, reads, note, mirrorChanged } = await heldOnWorker1(kueue);
        await r.reconciler.reconcile(key);
        await answered();
        expect(reads().map((call) => call.split(' ')[1])).toEqual(versions.map((v) => `workloads.${v}`));
        expect(note()).toBe(mirrorsOwn);
        expect(r.enqueued).toEqual([]);
        // Mirror changes and reconciles for the next 10 minutes ask nothing of the worker.
        for (let minute = 1; minute < 10; minute++) {
          r.clock.advance(60_000);
          mirrorChanged();
          r.deliverOrigin();
          await r.reconciler.reconcile(key);
          await answered();
        }
        expect(reads()).toHaveLength(versions.length);
        expect(note()).toBe(mirrorsOwn);
        expect(r.world.events.filter((e) => e.reason === eventReasons.heldByWorker)).toHaveLength(1);
        // Then it is asked again, once (Kueue may have been installed, the rule granted).
        r.clock.advance(60_000);
        await r.reconciler.reconcile(key);
        await answered();
        expect(reads()).toHaveLength(2 * versions.length);
      },
    );

    it('a failed read (a worker that does not answer) keeps the mirror’s reason and is tried again later', async () => {
      const { r, worker, held, reads, note } = await heldOnWorker1('installed');
      worker.listWorkloads = async () => {
        throw apiError(503, 'ServiceUnavailable');
      };
      await r.reconciler.reconcile(key);
      await answered();
      expect(note()).toBe(mirrorsOwn);
      // (Asked by the read's answer, and by the reconcile's second plan from its own write's answer.)
      expect(distinct(r.enqueued)).toEqual([{ key, afterMs: 2_000 }]);
      worker.listWorkloads = InMemoryCluster.prototype.listWorkloads.bind(worker);
      worker.workloads.push(kueueWorkload(held.metadata!.uid!, insufficient));
      r.clock.advance(2_000);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      await answered();
      expect(reads()).toHaveLength(1);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(note()).toBe(kueueNote);
    });

    it('a read that found nothing yet: any reconcile before the retry is due asks for the one at that time, and the resync never passes over the hold', async () => {
      const { r, worker, held, reads, note } = await heldOnWorker1('installed');
      // Kueue has made no Workload yet: nothing to say.
      await r.reconciler.reconcile(key);
      await answered();
      expect(reads()).toHaveLength(1);
      // (Asked by the read's answer, and by the reconcile's second plan from its own write's answer.)
      expect(distinct(r.enqueued)).toEqual([{ key, afterMs: 2_000 }]);
      r.enqueued.length = 0;
      // The queue keeps one timer per key, the earliest: a reconcile comes sooner (a status
      // write's timer) and the read's own request is gone. That reconcile asks again.
      r.clock.advance(500);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(reads()).toHaveLength(1);
      expect(r.enqueued).toContainEqual({ key, afterMs: 1_500 });
      // The plan found nothing to do, yet the resync must not pass over a held mirror.
      expect(r.executed.at(-1)).toEqual([]);
      expect(r.reconciler.unchangedSincePlanned('job')(r.originCache.get(objectName)!, objectName)).toBe(
        false,
      );
      // Kueue says why; the reconcile asked for reads it.
      worker.workloads.push(kueueWorkload(held.metadata!.uid!, insufficient));
      r.clock.advance(1_500);
      await r.reconciler.reconcile(key);
      await answered();
      expect(reads()).toHaveLength(2);
      r.deliverOrigin();
      await r.reconciler.reconcile(key);
      expect(note()).toBe(kueueNote);
    });
  });
});

describe('the resync passes over an origin whose last plan found nothing to do', () => {
  /** Placed on worker-1, its mirror created and both echoes in the caches: nothing left to do. */
  async function settledWorld() {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    await r.reconciler.reconcile(key);
    r.deliverOrigin();
    r.deliverMirror();
    return r;
  }
  const unchanged = (r: ReturnType<typeof reconcilerWorld>): boolean =>
    r.reconciler.unchangedSincePlanned('job')(r.originCache.get(objectName)!, objectName);
  /** The mirror's status moves on, on the worker (a pod started, or one more). */
  const mirrorProgresses = (r: ReturnType<typeof reconcilerWorld>): void => {
    const worker = r.world.workers.get('worker-1')!;
    const mirror = worker.get('team-a', 'train')!;
    worker.put({
      ...mirror,
      status: {
        active: (mirror.status?.active ?? 0) + 1,
        startTime: mirror.status?.startTime ?? new Date(r.clock.now()).toISOString(),
      },
    });
  };

  it('until the mirror, the origin or a cluster changes, or the trust runs out', async () => {
    const r = await settledWorld();
    // The caches hold the echoes, objects no plan has seen yet: planned once, then passed over.
    expect(unchanged(r)).toBe(false);
    await r.reconciler.reconcile(key);
    expect(r.executed.at(-1)).toEqual([]);
    expect(unchanged(r)).toBe(true);

    // The mirror moves on: planned again, its status written, and the write's echo is settled.
    mirrorProgresses(r);
    r.deliverMirror();
    expect(unchanged(r)).toBe(false);
    await r.reconciler.reconcile(key);
    expect(r.executed.at(-1)).toEqual(['write-status']);
    r.deliverOrigin();
    expect(unchanged(r)).toBe(false);
    await r.reconciler.reconcile(key);
    expect(r.executed.at(-1)).toEqual([]);
    expect(unchanged(r)).toBe(true);

    // Someone else writes the origin (a label): planned again, and settled by that plan.
    const origin = r.world.management.get('team-a', 'train')!;
    r.world.management.put({ ...origin, metadata: { ...origin.metadata, labels: { team: 'a' } } });
    r.deliverOrigin();
    expect(unchanged(r)).toBe(false);
    await r.reconciler.reconcile(key);
    expect(r.executed.at(-1)).toEqual([]);
    expect(unchanged(r)).toBe(true);

    // A cluster is drained: every origin is planned again (this one moves).
    r.clusterState.drain = true;
    expect(unchanged(r)).toBe(false);
    r.clusterState.drain = false;
    expect(unchanged(r)).toBe(true);

    // Trusted for half the default five minutes at least and for five at most (spread, so
    // that what one pass settled is not all planned again in one pass), then planned again.
    r.clock.advance(150_000);
    expect(unchanged(r)).toBe(true);
    r.clock.advance(1_000);
    expect(unchanged(r)).toBe(false);
  });

  it('a second mirror, or one the cache does not show yet, is not passed over', async () => {
    const r = await settledWorld();
    const worker2 = new Map<string, Job>();
    r.mirrorCaches.set('worker-2', worker2);
    await r.reconciler.reconcile(key);
    expect(unchanged(r)).toBe(true);
    // A mirror of the same name appears on another cluster (the caches show it, no event yet).
    worker2.set(objectName, r.world.workers.get('worker-1')!.get('team-a', 'train')!);
    expect(unchanged(r)).toBe(false);
    worker2.delete(objectName);
    expect(unchanged(r)).toBe(true);
    // The mirror leaves the cache (deleted on its worker, the event not handled yet).
    r.mirrorCaches.get('worker-1')!.delete(objectName);
    expect(unchanged(r)).toBe(false);
  });

  it('a seeded random run: whenever the resync would pass an origin over, a plan from the caches finds nothing to do', async () => {
    const seed = 20261204;
    let state = seed;
    const random = (n: number): number => {
      // mulberry32: the same steps for the same seed.
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    let passedOver = 0;
    let planned = 0;
    // Episodes from a settled origin: a long walk ends re-placed, waiting for a placer there is none of.
    for (let episode = 0; episode < 12; episode++) {
      const r = await settledWorld();
      for (let step = 0; step < 40; step++) {
        const worker = r.world.workers.get('worker-1')!;
        switch (random(8)) {
          case 0:
            if (worker.get('team-a', 'train')) mirrorProgresses(r);
            break;
          case 1:
            if (worker.get('team-a', 'train')) r.deliverMirror();
            break;
          case 2: {
            const origin = r.world.management.get('team-a', 'train')!;
            r.world.management.put({
              ...origin,
              metadata: { ...origin.metadata, labels: { step: String(step) } },
            });
            break;
          }
          case 3:
            r.deliverOrigin();
            break;
          case 4: {
            const active = random(3) !== 0;
            if (active !== r.clusterState.active)
              r.clusterState.inactiveSince = active ? undefined : r.clock.now();
            r.clusterState.active = active;
            r.clusterState.reason = active ? 'Connected' : 'Unreachable';
            break;
          }
          case 5:
            // Mostly within the worker-lost timeout (60 s here); now and then past the 5-minute trust.
            r.clock.advance(random(8) === 0 ? 301_000 : random(20_000));
            break;
          default:
            await r.reconciler.reconcile(key).catch(() => undefined);
        }
        if (!unchanged(r)) continue;
        passedOver++;
        // What the resync skips must be exactly what a reconcile from the same caches would not do.
        await r.reconciler.reconcile(key);
        expect(r.executed.at(-1), `seed ${seed}, episode ${episode}, step ${step}`).toEqual([]);
        planned++;
      }
    }
    // The run must have exercised both answers.
    expect(passedOver).toBeGreaterThan(50);
    expect(planned).toBe(passedOver);
  });
});

/** `during` runs once `target[method]` is answered, before its caller reads the answer (as a watch event may). */
function beforeTheAnswer<T, K extends keyof T>(target: T, method: K, during: () => void): void {
  const call = target[method] as (...args: unknown[]) => Promise<unknown>;
  target[method] = (async (...args: unknown[]) => {
    const answer = await call.apply(target, args);
    during();
    return answer;
  }) as T[K];
}

describe('a mirror whose watch echo comes before the create’s answer', () => {
  /** Placed on worker-1, the placement's echo in the cache; `during` runs while the create is in flight. */
  async function createWith(during: (r: ReturnType<typeof reconcilerWorld>) => void) {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    r.deliverOrigin();
    beforeTheAnswer(r.world.workers.get('worker-1')!, 'create', () => during(r));
    r.enqueued.length = 0;
    return r;
  }

  it('is the create’s own echo: no reconcile for it', async () => {
    const r = await createWith((w) => w.deliverMirror());
    await r.reconciler.reconcile(key);
    expect(r.executed).toEqual([['create-mirror']]);
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes.expectedMirrors).toBe(0);
  });

  it('with a change of the mirror after it, also before the answer: reconciled', async () => {
    const r = await createWith((w) => {
      w.deliverMirror();
      const worker = w.world.workers.get('worker-1')!;
      worker.put({ ...worker.get('team-a', 'train')!, status: { active: 1 } });
      w.deliverMirror();
    });
    await r.reconciler.reconcile(key);
    // As a mirror change (its status is to be written back; the queue runs the key once).
    expect(r.enqueued).toContainEqual({ key, afterMs: 100 });
  });

  it('while the create fails: what came meanwhile is reconciled', async () => {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    r.deliverOrigin();
    const worker = r.world.workers.get('worker-1')!;
    worker.create = async () => {
      // Someone else's object of that name shows up, and the create fails.
      worker.put(mirrorOf(r.world.management.get('team-a', 'train')!, { uid: 'another' }));
      r.deliverMirror();
      throw apiError(500, 'InternalError');
    };
    r.enqueued.length = 0;
    await expect(r.reconciler.reconcile(key)).rejects.toThrow(/500/);
    expect(r.enqueued).toEqual([{ key, afterMs: 100 }]);
  });
});

describe('an origin write whose watch echo comes before its answer', () => {
  /** Placed, its mirror created and seen, a mirror change to write back; `during` runs while the status write is in flight. */
  async function statusWriteWith(during: (r: ReturnType<typeof reconcilerWorld>) => void) {
    const r = reconcilerWorld();
    r.placeOnWorker1();
    await r.reconciler.reconcile(key);
    r.deliverOrigin();
    r.deliverMirror();
    r.mirrorStarts();
    beforeTheAnswer(r.world.management, 'replaceStatus', () => during(r));
    r.enqueued.length = 0;
    return r;
  }

  it('is its own echo: no reconcile for it', async () => {
    const r = await statusWriteWith((w) => w.deliverOrigin());
    await r.reconciler.reconcile(key);
    expect(r.executed.at(-1)).toEqual(['write-status']);
    expect(r.enqueued).toEqual([]);
    expect(r.reconciler.sizes.ownWrites).toBe(0);
  });

  it('with someone else’s write after it, before the answer: reconciled', async () => {
    const r = await statusWriteWith((w) => {
      w.deliverOrigin();
      const origin = w.world.management.get('team-a', 'train')!;
      w.world.management.put({ ...origin, metadata: { ...origin.metadata, labels: { team: 'a' } } });
      w.deliverOrigin();
    });
    await r.reconciler.reconcile(key);
    expect(r.enqueued.map((e) => e.key)).toContain(key);
  });

  it('a write that fails: what came meanwhile is reconciled', async () => {
    const r = await statusWriteWith(() => undefined);
    r.world.management.replaceStatus = async () => {
      const origin = r.world.management.get('team-a', 'train')!;
      r.world.management.put({ ...origin, metadata: { ...origin.metadata, labels: { team: 'a' } } });
      r.deliverOrigin();
      throw apiError(500, 'InternalError');
    };
    await expect(r.reconciler.reconcile(key)).rejects.toThrow(/500/);
    expect(r.enqueued.map((e) => e.key)).toContain(key);
  });
});
