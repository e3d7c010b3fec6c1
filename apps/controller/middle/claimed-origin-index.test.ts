// The shared index of the claimed origins (ClaimedOriginIndex) with the real placement and queue
// admission behind it, wired through the hub as the controller wires them: each origin's placement
// record is read (the annotation parsed, its seal checked) once per change of the origin, however
// many parts keep state from it, and every one of them gets that very reading.
import { CachedPriorityClasses } from '@jobrelay/admission';
import { batchJobAdapter, type Job, type KubeObject } from '@jobrelay/kinds';
import type { InformerEvent } from '@jobrelay/kube';
import { defaultManagedBy, placementAnnotation } from '@jobrelay/mirror';
import {
  formatPlacementRecord,
  type PlacementRecord,
  RecordKeyring,
  sealSubjectOf,
} from '@jobrelay/placement';
import { originJob, record } from '@jobrelay/planner/test-support/snapshot-builders';
import { describe, expect, it } from 'vitest';
import { admissionFunctions } from '../src/admission-functions.ts';
import { ClaimedOriginIndex } from '../src/claimed-origin-index.ts';
import {
  type ClaimedOriginEvent,
  ControllerEvents,
  type ControllerPart,
  subscribeParts,
} from '../src/controller-events.ts';
import type { AnyDispatchedKind } from '../src/dispatched-kinds.ts';
import { OriginPlacer } from '../src/place-origin-jobs.ts';
import { QueueAdmission } from '../src/queue-admission.ts';
import { executorWorld, registryOf, silentLog, TestClock, workerView } from './executor-harness.ts';

const researchQueue = {
  apiVersion: 'jobrelay.dev/v1alpha1',
  kind: 'DispatchQueue',
  metadata: { name: 'research', generation: 1, uid: 'queue-research' },
  spec: { namespaceSelector: {}, resources: [{ name: 'cpu', nominalQuota: '100' }] },
} as KubeObject;

/**
 * The index, placement and admission on one hub, with `spies` more parts that watch
 * `claimedOrigin`. The keyring counts the seals it checks; every origin made by `version` counts
 * each read of its placement annotation (what `placementRecordOf` reads first, every call).
 */
function originWorld(options: { spies: number; queues?: KubeObject[] }) {
  const world = executorWorld();
  const clock = new TestClock();
  // A keyring of its own: placementRecordOf's memory of records read is per keyring.
  const keys = new RecordKeyring(Buffer.alloc(32, 9));
  const counts = { sealChecks: 0, annotationReads: 0 };
  const check = keys.check.bind(keys);
  keys.check = (...args) => {
    counts.sealChecks += 1;
    return check(...args);
  };
  const cache = new Map<string, Job>();
  const kind = {
    adapter: batchJobAdapter,
    managedBy: defaultManagedBy,
    origins: { get: (key: string) => cache.get(key) },
    management: world.management,
  };
  const kinds = new Map([['job', kind]]);
  const namespaces = { get: () => ({ metadata: { labels: {} } }) };
  const queues = options.queues ?? [researchQueue];
  const claimed = new ClaimedOriginIndex({ recordKeys: keys });
  const placer = new OriginPlacer({
    kinds,
    registry: registryOf(() => [workerView('worker-1'), workerView('worker-2')]),
    queue: { retryWaitingNow: async () => {} },
    executor: world.executor,
    leading: () => true,
    recordKeys: keys,
    config: {
      placementPolicy: 'spread',
      placementTimeoutSeconds: 0,
      recordDispatchEvents: false,
      systemNamespace: 'jobrelay-system',
    },
    namespaces,
    clock,
    log: silentLog,
    originWritten: () => {},
    placedOn: () => {},
  });
  const admission = new QueueAdmission({
    kinds,
    claimed,
    placer,
    queues: { list: () => queues },
    priorityClasses: new CachedPriorityClasses(() => []),
    namespaces,
    functions: admissionFunctions,
    writeQueueStatus: async () => {},
    leading: () => true,
    recordKeys: keys,
    clock,
    log: silentLog,
    scheduleCycles: false,
  });
  const seenBySpies: ClaimedOriginEvent[][] = [];
  const spies: ControllerPart[] = Array.from({ length: options.spies }, (_, n) => {
    const seen: ClaimedOriginEvent[] = [];
    seenBySpies.push(seen);
    return {
      name: `spy ${n}`,
      watches: ['claimedOrigin'],
      writes: [],
      subscribe: (events) => events.on('claimedOrigin', (event) => void seen.push(event)),
    };
  });
  const hub = new ControllerEvents();
  subscribeParts(hub, [claimed, placer, admission, ...spies]);
  admission.factsChanged();

  /** A version of `team-a/train` with `placement` sealed in its record annotation. */
  const version = (
    resourceVersion: string,
    placement?: PlacementRecord,
    status?: Job['status'],
    uid = 'uid-train',
  ): Job => {
    const job = originJob({ uid, ...(status ? { status } : {}) });
    job.metadata!.resourceVersion = resourceVersion;
    const annotations: Record<string, string> = placement
      ? { [placementAnnotation]: formatPlacementRecord(placement, sealSubjectOf(job), keys) }
      : {};
    job.metadata!.annotations = new Proxy(annotations, {
      get: (target, name) => {
        if (name === placementAnnotation) counts.annotationReads += 1;
        return Reflect.get(target, name);
      },
    });
    return job;
  };
  /** The cache takes `job`: the informer's event on the hub, as the controller emits it. */
  const cacheSees = (job: Job) => {
    const key = `team-a/${job.metadata!.name}`;
    const event: InformerEvent<KubeObject> = { type: 'upsert', object: job, previous: cache.get(key) };
    cache.set(key, job);
    hub.emit('origin', kind as unknown as AnyDispatchedKind, event);
  };
  /** The cache lets go of `job`. */
  const cacheDeletes = (job: Job) => {
    cache.delete(`team-a/${job.metadata!.name}`);
    hub.emit('origin', kind as unknown as AnyDispatchedKind, { type: 'delete', object: job });
  };
  /** What one change cost: annotation reads and seal checks. */
  const costOf = (change: () => void) => {
    counts.sealChecks = 0;
    counts.annotationReads = 0;
    change();
    return { ...counts };
  };
  const indexed = () => claimed.get('job', 'uid-train');
  return { claimed, placer, admission, seenBySpies, version, cacheSees, cacheDeletes, costOf, indexed };
}

describe('ClaimedOriginIndex', () => {
  for (const spies of [0, 3]) {
    it(`reads each origin's record once per change, whatever the number of consumers (placement, admission and ${spies} more)`, () => {
      const o = originWorld({ spies });
      const admitted = (cluster: string, attempt: number) =>
        record({ cluster, queue: 'research', attempt, placedAt: '2026-12-01T09:00:00Z' });
      const first = admitted('worker-1', 1);
      // First sight, a record sealed for it: read and checked once.
      expect(o.costOf(() => o.cacheSees(o.version('10', first)))).toEqual({
        sealChecks: 1,
        annotationReads: 1,
      });
      // A status write: a new version carrying the same record. Read once, its seal remembered.
      expect(o.costOf(() => o.cacheSees(o.version('11', first, { active: 1 })))).toEqual({
        sealChecks: 0,
        annotationReads: 1,
      });
      // A new record (placed again elsewhere): read and checked once.
      const second = admitted('worker-2', 2);
      expect(o.costOf(() => o.cacheSees(o.version('12', second, { active: 0 })))).toEqual({
        sealChecks: 1,
        annotationReads: 1,
      });

      // Every consumer has that one reading: the index's record is admission's, and placement's
      // load counts the workload where that record says.
      const read = o.indexed()!;
      expect(read.placement).toMatchObject({ kind: 'ok', record: { cluster: 'worker-2', attempt: 2 } });
      const recordRead = read.placement.kind === 'ok' ? read.placement.record : undefined;
      const [entry] = [...o.admission.entries()];
      expect(entry?.record).toBe(recordRead);
      expect(entry?.admitted).toMatchObject({ cluster: 'worker-2', queue: 'research' });
      expect(entry?.admitted?.record).toBe(recordRead);
      const load = o.placer.loadByCluster();
      expect(load.get('worker-2')?.workloads).toBe(1);
      expect(load.has('worker-1')).toBe(false);
      for (const seen of o.seenBySpies) {
        expect(seen).toHaveLength(3);
        const last = seen.at(-1)!;
        expect(last.type === 'upsert' && last.claimed).toBe(read);
      }
      // Reading the index costs no read of the record.
      expect(o.costOf(() => o.indexed())).toEqual({ sealChecks: 0, annotationReads: 0 });
    });
  }

  it('a deletion reaches every consumer by UID, and the index lets go of the origin', () => {
    const o = originWorld({ spies: 1 });
    const job = o.version('10', record({ cluster: 'worker-1', queue: 'research' }));
    o.cacheSees(job);
    expect(o.placer.loadByCluster().get('worker-1')?.workloads).toBe(1);
    expect([...o.admission.entries()]).toHaveLength(1);
    expect(o.costOf(() => o.cacheDeletes(job))).toEqual({ sealChecks: 0, annotationReads: 0 });
    expect(o.seenBySpies[0]!.at(-1)).toMatchObject({ type: 'delete', uid: 'uid-train', object: job });
    expect(o.indexed()).toBeUndefined();
    expect(o.placer.loadByCluster().size).toBe(0);
    expect([...o.admission.entries()]).toEqual([]);
  });

  it('an origin made again under its name while the watch was down (no delete seen): the old one is gone for every consumer', () => {
    const o = originWorld({ spies: 1 });
    const before = o.version('10', record({ cluster: 'worker-1', queue: 'research' }));
    o.cacheSees(before);
    // The same namespace/name, another object: the cache's event says only that it changed.
    const again = o.version(
      '30',
      record({ cluster: 'worker-2', queue: 'research' }),
      undefined,
      'uid-train-again',
    );
    o.cacheSees(again);
    expect(o.seenBySpies[0]!.slice(-2)).toMatchObject([
      { type: 'delete', uid: 'uid-train', object: before },
      { type: 'upsert', claimed: { uid: 'uid-train-again' }, previous: undefined },
    ]);
    expect(o.indexed()).toBeUndefined();
    const load = o.placer.loadByCluster();
    expect(load.has('worker-1')).toBe(false);
    expect(load.get('worker-2')?.workloads).toBe(1);
    expect([...o.admission.entries()].map((entry) => entry.uid)).toEqual(['uid-train-again']);
  });

  it('the first DispatchQueue builds admission’s index from the shared one: no record read again', () => {
    const queues: KubeObject[] = [];
    const o = originWorld({ spies: 0, queues });
    // No queue yet: admission keeps nothing; placement's load follows the records as read.
    o.cacheSees(o.version('10', record({ cluster: 'worker-1', queue: 'research' })));
    expect([...o.admission.entries()]).toEqual([]);
    expect(o.placer.loadByCluster().get('worker-1')?.workloads).toBe(1);
    queues.push(researchQueue);
    expect(o.costOf(() => o.admission.factsChanged())).toEqual({ sealChecks: 0, annotationReads: 0 });
    const [entry] = [...o.admission.entries()];
    const read = o.indexed()!;
    expect(entry?.admitted).toMatchObject({ cluster: 'worker-1', queue: 'research' });
    expect(entry?.record).toBe(read.placement.kind === 'ok' ? read.placement.record : 'not ok');
  });
});
