// QueueAdmission over the real OriginPlacer and OriginExecutor, on a management cluster held in
// memory: the queue index kept from cache events, and the leader's admission cycle with the real
// decideAdmission: what it places (the record naming the queue), evicts (the record marked
// preempted, the Event), and notes as the reason a workload waits; the queue's status; that an
// install without DispatchQueues places as it always did; and that usage after a restart is what
// the records say. The clock is injected; a cycle is run by the test, not by a timer.

import type { DispatchQueueStatus } from '@jobrelay/admission';
import { CachedPriorityClasses } from '@jobrelay/admission';
import type { WorkerClusterView } from '@jobrelay/clusters';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import { defaultManagedBy, originUidLabel, unschedulableAnnotation } from '@jobrelay/mirror';
import { placementRecordOf } from '@jobrelay/placement';
import { type ClusterSnapshot, eventReasons, planOrigin } from '@jobrelay/planner';
import { cluster, config, originJob } from '@jobrelay/planner/test-support/snapshot-builders';
import { describe, expect, it, vi } from 'vitest';
import { admissionFunctions } from '../src/admission-functions.ts';
import { ClaimedOriginIndex } from '../src/claimed-origin-index.ts';
import { ControllerEvents, subscribeParts } from '../src/controller-events.ts';
import type { AnyDispatchedKind } from '../src/dispatched-kinds.ts';
import { OriginPlacer } from '../src/place-origin-jobs.ts';
import { type AdmittedKind, QueueAdmission, type QueueAdmissionOptions } from '../src/queue-admission.ts';
import {
  counted,
  type ExecutorWorld,
  executorWorld,
  registryOf,
  silentLog,
  TestClock,
} from './executor-harness.ts';

const cpuOf = (cores: number) => ({ cpu: cores * 1000, memory: 64 * 2 ** 30, pods: 110 });

function view(name: string, cores = 8): WorkerClusterView {
  return {
    name,
    labels: {},
    spec: { kubeconfigSecretRef: { name } },
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

/** A DispatchQueue as the apiserver returns it. */
function dispatchQueue(
  name: string,
  spec: Record<string, unknown>,
  status?: DispatchQueueStatus,
): KubeObject {
  return {
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name, generation: 1, uid: `queue-${name}` },
    spec,
    ...(status ? { status } : {}),
  } as KubeObject;
}

const oneCpuQueue = (preemption: Record<string, string> = {}) =>
  dispatchQueue('research', {
    namespaceSelector: {},
    resources: [{ name: 'cpu', nominalQuota: '1' }],
    preemption,
  });

/** A one-pod Job of 500m in team-a, created `ageSeconds` before the clock's now. */
function job(name: string, clock: TestClock, ageSeconds: number, spec: Partial<Job['spec']> = {}): Job {
  const base = originJob({ uid: `uid-${name}` });
  return {
    ...base,
    metadata: {
      ...base.metadata,
      name,
      creationTimestamp: new Date(clock.now() - ageSeconds * 1000).toISOString(),
    },
    spec: { ...base.spec!, completions: 1, parallelism: 1, ...spec },
  };
}

interface AdmissionWorld {
  world: ExecutorWorld;
  clock: TestClock;
  queues: KubeObject[];
  priorityClasses: KubeObject[];
  /** A PriorityClass was added or changed (as the cache's event says). */
  priorityClassesChanged(): void;
  placer: OriginPlacer;
  admission: QueueAdmission;
  kind: AdmittedKind;
  statuses: Array<{ name: string; status: DispatchQueueStatus }>;
  /** Workloads admission handed back to their reconcile (`released`), as `kind namespace/name`. */
  released: string[];
  /** The origin cache catches up with the management cluster; its events reach the index, placer and admission. */
  sync(): void;
  stored(name: string): Job;
}

function admissionWorld(
  options: {
    queues?: KubeObject[];
    world?: ExecutorWorld;
    clock?: TestClock;
    notes?: Pick<
      QueueAdmissionOptions,
      'notesPerCycle' | 'noteRefreshMs' | 'writeWaitMs' | 'scheduleCycles' | 'debounceMs'
    >;
  } = {},
): AdmissionWorld {
  const world = options.world ?? executorWorld();
  const clock = options.clock ?? new TestClock();
  const cache = new Map<string, Job>();
  const queues = options.queues ?? [];
  const priorityClasses: KubeObject[] = [];
  const priorityLookup = new CachedPriorityClasses(() => priorityClasses);
  const statuses: AdmissionWorld['statuses'] = [];
  const released: string[] = [];
  const kind: AdmittedKind = {
    adapter: batchJobAdapter,
    managedBy: defaultManagedBy,
    origins: { get: (key: string) => cache.get(key) },
    management: world.management,
  };
  const claimed = new ClaimedOriginIndex({ recordKeys: world.keys });
  const kinds = new Map([['job', kind]]);
  const namespaces = {
    get: (name: string) => (name === 'team-a' ? { metadata: { labels: { team: 'a' } } } : undefined),
  };
  let admission: QueueAdmission | undefined;
  const placer = new OriginPlacer({
    kinds,
    registry: registryOf(() => [view('worker-1'), view('worker-2')]),
    queue: { retryWaitingNow: async () => {} },
    executor: world.executor,
    leading: () => true,
    recordKeys: world.keys,
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
    admissionGate: (_kind, origin) => admission!.isQueued(kind, origin),
  });
  admission = new QueueAdmission({
    kinds,
    claimed,
    placer,
    queues: { list: () => queues },
    priorityClasses: priorityLookup,
    namespaces,
    functions: admissionFunctions,
    writeQueueStatus: async (name, status) => void statuses.push({ name, status }),
    leading: () => true,
    recordKeys: world.keys,
    clock,
    log: silentLog,
    metrics: world.metrics.queues,
    // No timer fires in these tests: every cycle is the test's own call.
    scheduleCycles: false,
    released: (kindName, key) => void released.push(`${kindName} ${key}`),
    ...options.notes,
  });
  // As the controller wires them: the shared index reads each origin, placement then admission get it.
  const hub = new ControllerEvents();
  subscribeParts(hub, [claimed, placer, admission]);
  // The harness's kind is the slice of a dispatched kind these parts read.
  const dispatched = kind as unknown as AnyDispatchedKind;
  const sync = () => {
    const before = new Map(cache);
    cache.clear();
    for (const [key, object] of world.management.objects) cache.set(key, structuredClone(object));
    for (const [key, object] of cache) {
      const event = { type: 'upsert' as const, object: object as KubeObject, previous: before.get(key) };
      hub.emit('origin', dispatched, event);
    }
    for (const [key, object] of before) {
      if (cache.has(key)) continue;
      hub.emit('origin', dispatched, { type: 'delete', object });
    }
  };
  admission.factsChanged();
  return {
    world,
    clock,
    queues,
    priorityClasses,
    priorityClassesChanged: () => {
      priorityLookup.changed();
      admission!.factsChanged();
    },
    placer,
    admission,
    kind,
    statuses,
    released,
    sync,
    stored: (name) => world.management.get('team-a', name)!,
  };
}

/**
 * One reconcile of `team-a/<name>` with the real planner and executor, the workers' caches
 * showing what the workers hold now (as a reconcile after their watches caught up).
 */
async function reconcile(a: AdmissionWorld, name: string) {
  const origin = a.stored(name);
  const clusters: ClusterSnapshot<Job>[] = [...a.world.workers].map(([clusterName, worker]) =>
    cluster(clusterName, { mirror: worker.get('team-a', name) }),
  );
  const actions = planOrigin(
    {
      kind: 'present',
      key: `team-a/${name}`,
      origin,
      placement: placementRecordOf(origin, a.world.keys),
      clusters,
    },
    batchJobAdapter,
    config,
    a.clock.now(),
  );
  await a.world.executor.execute(actions, a.world.target(name));
  return actions;
}

function recordOf(a: AdmissionWorld, name: string) {
  const parsed = placementRecordOf(a.stored(name), a.world.keys);
  return parsed.kind === 'ok' ? parsed.record : undefined;
}

function finish(a: AdmissionWorld, name: string): void {
  const stored = a.stored(name);
  a.world.management.put({
    ...stored,
    status: {
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True' },
        { type: 'Complete', status: 'True' },
      ],
      succeeded: 1,
    },
  } as Job);
}

const urgentClass = {
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name: 'urgent' },
  value: 1000,
} as KubeObject;

/** A Job of the `urgent` PriorityClass, created a second ago. */
function urgentJob(clock: TestClock): Job {
  const base = job('urgent', clock, 1);
  const template = base.spec!.template;
  return {
    ...base,
    spec: {
      ...base.spec!,
      template: { ...template, spec: { ...template.spec!, priorityClassName: 'urgent' } },
    },
  };
}

/** Jobs created in this order (the first the oldest), seen by the caches. */
function putJobs(a: AdmissionWorld, names: readonly string[]): void {
  for (const [index, name] of names.entries()) a.world.management.put(job(name, a.clock, 100 - index));
  a.sync();
}

describe('QueueAdmission', () => {
  it('admits within quota: the record names the queue and says it admitted it; the rest wait with the quota message', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    putJobs(a, ['one', 'two', 'three', 'four']);
    const report = await a.admission.cycle();
    expect(report?.admitted.map((x) => [x.uid, x.queue, x.outcome])).toEqual([
      ['uid-one', 'research', 'placed'],
      ['uid-two', 'research', 'placed'],
    ]);
    for (const name of ['one', 'two']) {
      expect(recordOf(a, name)).toMatchObject({ queue: 'research', attempt: 1 });
      expect(recordOf(a, name)?.cluster).toMatch(/^worker-/);
      expect(recordOf(a, name)?.decision).toMatch(/^admitted by queue research; placed on worker-/);
    }
    for (const name of ['three', 'four']) {
      expect(recordOf(a, name)).toBeUndefined();
      expect(a.stored(name).metadata?.annotations?.[unschedulableAnnotation]).toMatch(/queue research/);
    }
    for (const name of ['three', 'four'])
      expect(a.stored(name).metadata?.annotations?.[unschedulableAnnotation]).toBe(
        'queue research: cpu 1/1 in use',
      );
    // Admitted but not yet in the cache: assumed, so a second cycle admits nothing more. Their
    // positions moved up, but the note carries no position: nothing is rewritten.
    const again = await a.admission.cycle();
    expect(again?.admitted).toEqual([]);
    expect(again?.noted).toEqual([]);
    // Nothing changed since: nothing written.
    a.sync();
    const calls = a.world.management.calls.length;
    const still = await a.admission.cycle();
    expect(still?.admitted).toEqual([]);
    expect(still?.noted).toEqual([]);
    expect(a.world.management.calls.length).toBe(calls);
    // The queue's status says so.
    const status = a.statuses.at(-1)!;
    expect(status.name).toBe('research');
    expect(status.status).toMatchObject({
      admittedWorkloads: 2,
      pendingWorkloads: 2,
      usage: { cpu: '1' },
      columns: { cpu: '1/1' },
    });
    expect(status.status.conditions[0]).toMatchObject({ type: 'Active', status: 'True' });
    expect(await counted(a.world.metrics, 'jobrelay_queue_admitted_workloads', { queue: 'research' })).toBe(
      2,
    );
    expect(await counted(a.world.metrics, 'jobrelay_queue_pending_workloads', { queue: 'research' })).toBe(2);
    expect(
      await counted(a.world.metrics, 'jobrelay_queue_usage', { queue: 'research', resource: 'cpu' }),
    ).toBe(1000);
  });

  it('the index follows the cache: pending, admitted (the record), gone when finished; cleared when the last queue goes', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    a.world.management.put(job('one', clock, 10));
    a.sync();
    const state = () =>
      [...a.admission.entries()].map((e) => ({
        uid: e.uid,
        pending: e.pending,
        queue: e.admitted?.queue,
        evicting: e.admitted?.evicting,
      }));
    expect(state()).toEqual([{ uid: 'uid-one', pending: true, queue: undefined, evicting: undefined }]);
    await a.admission.cycle();
    // Not in the cache yet: still pending there (admission assumes it meanwhile).
    expect(state()[0]?.pending).toBe(true);
    a.sync();
    expect(state()).toEqual([{ uid: 'uid-one', pending: false, queue: 'research', evicting: false }]);
    expect(a.admission.isQueued(a.kind, a.stored('one'))).toBe(true);
    finish(a, 'one');
    a.sync();
    expect(state()).toEqual([]);
    a.world.management.put(job('two', clock, 5));
    a.sync();
    expect(state()).toHaveLength(1);
    a.queues.length = 0;
    a.admission.factsChanged();
    expect(state()).toEqual([]);
    expect(a.admission.isQueued(a.kind, a.stored('two'))).toBe(false);
  });

  it('a burst waiting is noted a few per cycle, and a reason whose figures moved is refreshed only every so often', async () => {
    // A burst of thousands waiting must not hold admission while thousands of notes are written.
    const clock = new TestClock();
    const a = admissionWorld({
      queues: [oneCpuQueue()],
      clock,
      notes: { notesPerCycle: 2, noteRefreshMs: 10_000 },
    });
    const names = ['one', 'two', 'three', 'four', 'five', 'six'];
    putJobs(a, names);
    const first = await a.admission.cycle();
    expect(first?.admitted.map((x) => x.uid)).toEqual(['uid-one', 'uid-two']);
    expect(first?.noted.map((x) => x.uid).sort()).toEqual(['uid-four', 'uid-three']);
    a.sync();
    const second = await a.admission.cycle();
    expect(second?.noted.map((x) => x.uid).sort()).toEqual(['uid-five', 'uid-six']);
    a.sync();
    expect((await a.admission.cycle())?.noted).toEqual([]);
    // More quota: one more admitted; the others' reason is the same gate with new figures.
    a.queues.splice(
      0,
      1,
      dispatchQueue('research', {
        namespaceSelector: {},
        resources: [{ name: 'cpu', nominalQuota: '1500m' }],
      }),
    );
    a.admission.factsChanged();
    clock.advance(2_000);
    const grown = await a.admission.cycle();
    expect(grown?.admitted.map((x) => x.uid)).toEqual(['uid-three']);
    expect(grown?.noted).toEqual([]);
    a.sync();
    expect(a.stored('four').metadata?.annotations?.[unschedulableAnnotation]).toBe(
      'queue research: cpu 1/1 in use',
    );
    // Past the refresh interval: rewritten, a tenth of the budget (here 1) per cycle.
    clock.advance(10_000);
    for (let cycle = 0; cycle < 3; cycle++) {
      expect((await a.admission.cycle())?.noted).toHaveLength(1);
      a.sync();
    }
    expect((await a.admission.cycle())?.noted).toEqual([]);
    for (const name of ['four', 'five', 'six'])
      expect(a.stored(name).metadata?.annotations?.[unschedulableAnnotation]).toBe(
        'queue research: cpu 1500m/1500m in use',
      );
  });

  it('a finished workload frees its quota: the next in order is admitted', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    putJobs(a, ['one', 'two', 'three']);
    await a.admission.cycle();
    a.sync();
    finish(a, 'one');
    a.sync();
    clock.advance(5_000);
    const report = await a.admission.cycle();
    expect(report?.admitted.map((x) => x.uid)).toEqual(['uid-three']);
    expect(recordOf(a, 'three')).toMatchObject({ queue: 'research' });
  });

  it('a cycle asked for now is not held back by one scheduled later (a deferred note refresh)', async () => {
    const clock = new TestClock();
    const a = admissionWorld({
      queues: [oneCpuQueue()],
      clock,
      notes: { scheduleCycles: true, debounceMs: 5 },
    });
    // The first cycle (nothing to admit yet) runs; then one is scheduled a minute ahead.
    await new Promise((resolve) => setTimeout(resolve, 50));
    a.admission.cycleSoon(60_000);
    // A workload arrives: its event asks for a cycle now, which must not wait for that minute.
    a.world.management.put(job('one', clock, 10));
    a.sync();
    await vi.waitFor(() => expect(recordOf(a, 'one')?.queue).toBe('research'), { timeout: 5_000 });
    a.admission.stop();
  });

  it('a write that hangs does not hold admission: the cycle goes on, the next one admits', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock, notes: { writeWaitMs: 20 } });
    putJobs(a, ['one', 'two', 'three']);
    // The note on the one that waits never gets an answer (until released at the end).
    const release = a.world.management.holdNext('patch', 'three');
    const first = await a.admission.cycle();
    expect(first?.admitted.map((x) => x.uid)).toEqual(['uid-one', 'uid-two']);
    a.sync();
    finish(a, 'one');
    a.sync();
    clock.advance(5_000);
    const second = await a.admission.cycle();
    expect(second?.admitted.map((x) => x.uid)).toEqual(['uid-three']);
    expect(recordOf(a, 'three')).toMatchObject({ queue: 'research' });
    release();
  });

  it('reasons still being written hold no admission and count against the next cycle’s budget', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock, notes: { notesPerCycle: 2 } });
    const names = ['one', 'two', 'three', 'four', 'five', 'six'];
    putJobs(a, names);
    // Neither reason of this cycle gets an answer until released.
    const releases = [
      a.world.management.holdNext('patch', 'three'),
      a.world.management.holdNext('patch', 'four'),
    ];
    // As the scheduler runs it: the decisions' writes only (the default wait would be 10 s).
    const first = await a.admission.cycle({ followUp: false });
    expect(first?.admitted.map((x) => x.uid)).toEqual(['uid-one', 'uid-two']);
    expect(first?.noted).toEqual([]);
    a.sync();
    finish(a, 'one');
    a.sync();
    const second = await a.admission.cycle({ followUp: false });
    // Admitted although two reasons hang; no new reason: the two in flight take the budget.
    expect(second?.admitted.map((x) => x.uid)).toEqual(['uid-three']);
    expect(a.world.management.calls.filter((c) => c.startsWith('patch') && /\/(five|six)$/.test(c))).toEqual(
      [],
    );
    for (const release of releases) release();
    await vi.waitFor(() => expect(first?.noted.map((x) => x.uid).sort()).toEqual(['uid-four', 'uid-three']));
    a.sync();
    const third = await a.admission.cycle();
    expect(third?.noted.map((x) => x.uid).sort()).toEqual(['uid-five', 'uid-six']);
  });

  it('a mirror finished on its worker gives the quota back before its origin shows it', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    putJobs(a, ['one', 'two', 'three']);
    expect((await a.admission.cycle())?.admitted.map((x) => x.uid)).toEqual(['uid-one', 'uid-two']);
    a.sync();
    const cluster = recordOf(a, 'one')!.cluster!;
    const mirror = (status: Job['status']) =>
      ({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'one', namespace: 'team-a', labels: { [originUidLabel]: 'uid-one' } },
        status,
      }) as KubeObject;
    const other = cluster === 'worker-1' ? 'worker-2' : 'worker-1';
    // Still running there, or finished on a cluster it is not placed on: nothing is freed.
    a.admission.observeMirror(cluster, 'job', {
      type: 'upsert',
      object: mirror({ active: 1 }),
      previous: undefined,
    });
    const done = mirror({
      succeeded: 1,
      conditions: [{ type: 'Complete', status: 'True' }],
    } as Job['status']);
    a.admission.observeMirror(other, 'job', { type: 'upsert', object: done, previous: undefined });
    expect((await a.admission.cycle())?.admitted).toEqual([]);
    // Complete on its worker: its pods are gone, its quota is free though the origin runs on.
    a.admission.observeMirror(cluster, 'job', { type: 'upsert', object: done, previous: undefined });
    expect(a.stored('one').status?.conditions).toBeUndefined();
    expect((await a.admission.cycle())?.admitted.map((x) => x.uid)).toEqual(['uid-three']);
    // The origin catching up frees nothing twice.
    a.sync();
    finish(a, 'one');
    a.sync();
    expect((await a.admission.cycle())?.admitted).toEqual([]);
  });

  it('the placement task of a queued workload leaves it to admission: nothing written', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    a.world.management.put(job('one', clock, 10));
    a.sync();
    const task = { namespace: 'team-a', name: 'one', uid: 'uid-one', kind: 'job' };
    expect(a.admission.holds('uid-one')).toBe(false);
    // Its task ends (no delayed retry per waiting workload): the cycle places it.
    expect(await a.placer.place(task, 0)).toBe('queued');
    expect(a.world.management.calls).toEqual([]);
    expect(a.released).toEqual([]);
    // Its queue holds it: its reconcile enqueues no task for it (until the queues change).
    expect(a.admission.holds('uid-one')).toBe(true);
    a.admission.factsChanged();
    expect(a.admission.holds('uid-one')).toBe(false);
    expect(await a.placer.place(task, 0)).toBe('queued');
    expect(a.admission.holds('uid-one')).toBe(true);
    // Admitted: no longer held.
    await a.admission.cycle();
    a.sync();
    expect(a.admission.holds('uid-one')).toBe(false);
  });

  it('a workload left to its queue is handed back to its reconcile when its queue goes', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    for (const name of ['one', 'two', 'three']) a.world.management.put(job(name, clock, 10));
    a.sync();
    const task = (name: string) => ({ namespace: 'team-a', name, uid: `uid-${name}`, kind: 'job' });
    // 'one' and 'two' were left to the queue by their tasks; 'three' never had its task run.
    expect(await a.placer.place(task('one'), 0)).toBe('queued');
    expect(await a.placer.place(task('two'), 0)).toBe('queued');
    a.queues.length = 0;
    a.admission.factsChanged();
    expect(a.released.sort()).toEqual(['job team-a/one', 'job team-a/two']);
    // Handed back once: their tasks now place them as without queues.
    a.admission.factsChanged();
    expect(a.released).toHaveLength(2);
    expect(await a.placer.place(task('one'), 0)).toBe('placed');
  });

  it('a queue that no longer selects its namespace hands its waiting workloads back (the cycle sees it)', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    putJobs(a, ['one', 'two', 'three']);
    expect((await a.admission.cycle())?.admitted).toHaveLength(2);
    a.sync();
    const three = { namespace: 'team-a', name: 'three', uid: 'uid-three', kind: 'job' };
    expect(await a.placer.place(three, 0)).toBe('queued');
    // Another queue (for team b only) stays, so admission stays on; this one now selects nothing here.
    a.queues.splice(
      0,
      1,
      dispatchQueue('research', {
        namespaceSelector: { matchLabels: { team: 'b' } },
        resources: [{ name: 'cpu', nominalQuota: '1' }],
      }),
    );
    a.admission.factsChanged();
    expect(a.released).toEqual([]);
    await a.admission.cycle();
    expect(a.released).toEqual(['job team-a/three']);
    expect(await a.placer.place(three, 0)).toBe('placed');
  });

  it('no DispatchQueue: placement as before, admission does nothing', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ clock });
    a.world.management.put(job('one', clock, 10));
    a.sync();
    expect(await a.admission.cycle()).toBeUndefined();
    const task = { namespace: 'team-a', name: 'one', uid: 'uid-one', kind: 'job' };
    expect(await a.placer.place(task, 0)).toBe('placed');
    const record = recordOf(a, 'one');
    expect(record?.queue).toBeUndefined();
    expect(record?.decision).toMatch(/^placed on worker-/);
    expect(a.statuses).toEqual([]);
    expect([...a.admission.entries()]).toEqual([]);
  });

  it('a queue for other namespaces only: this one is placed by its task, as without queues', async () => {
    const clock = new TestClock();
    const elsewhere = dispatchQueue('team-b', {
      namespaceSelector: { matchLabels: { team: 'b' } },
      resources: [{ name: 'cpu', nominalQuota: '1' }],
    });
    const a = admissionWorld({ queues: [elsewhere], clock });
    a.world.management.put(job('one', clock, 10));
    a.sync();
    expect((await a.admission.cycle())?.admitted).toEqual([]);
    const task = { namespace: 'team-a', name: 'one', uid: 'uid-one', kind: 'job' };
    expect(await a.placer.place(task, 0)).toBe('placed');
    expect(recordOf(a, 'one')?.queue).toBeUndefined();
    expect(a.stored('one').metadata?.annotations?.[unschedulableAnnotation]).toBeUndefined();
  });

  it('a refused queue choice is the reason it waits (noted once)', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    const named = job('one', clock, 10);
    named.metadata!.labels = { 'jobrelay.dev/queue-name': 'nope' };
    a.world.management.put(named);
    a.sync();
    const report = await a.admission.cycle();
    expect(report?.admitted).toEqual([]);
    expect(report?.noted).toHaveLength(1);
    expect(a.stored('one').metadata?.annotations?.[unschedulableAnnotation]).toMatch(/nope/);
    a.sync();
    expect((await a.admission.cycle())?.noted).toEqual([]);
  });

  it('evicts through the executor: the record marked preempted, a Preempted Event, counted', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue({ withinQueue: 'LowerPriority' })], clock });
    a.priorityClasses.push(urgentClass);
    a.priorityClassesChanged();
    putJobs(a, ['one', 'two']);
    await a.admission.cycle();
    a.sync();
    a.world.management.put(urgentJob(clock));
    a.sync();
    const report = await a.admission.cycle();
    expect(report?.evicted).toHaveLength(1);
    const [evicted] = report!.evicted;
    expect(evicted!.reason).toBe('InQueuePreemption');
    const victim = evicted!.uid.replace(/^uid-/, '');
    const spared = victim === 'one' ? 'two' : 'one';
    expect(['one', 'two']).toContain(victim);
    expect(recordOf(a, victim)?.preempted).toMatch(/urgent/);
    // Still on its cluster: its reconcile deletes the mirror and places it again.
    expect(recordOf(a, victim)?.cluster).toMatch(/^worker-/);
    expect(a.world.events.map((e) => e.reason)).toContain(eventReasons.preempted);
    expect(
      await counted(a.world.metrics, 'jobrelay_queue_evictions_total', {
        queue: 'research',
        reason: 'InQueuePreemption',
      }),
    ).toBe(1);
    // Chosen once: the next cycle (the cache showing it evicting) does not evict more.
    a.sync();
    expect((await a.admission.cycle())?.evicted).toEqual([]);
    expect(recordOf(a, spared)?.preempted).toBeUndefined();
    expect(recordOf(a, 'urgent')).toBeUndefined();
  });

  it('an evicted workload holds its quota until its mirror is gone from the worker (deleted in the foreground), after a restart too', async () => {
    const clock = new TestClock();
    const world = executorWorld({}, ['worker-1', 'worker-2']);
    const a = admissionWorld({ queues: [oneCpuQueue({ withinQueue: 'LowerPriority' })], clock, world });
    a.priorityClasses.push(urgentClass);
    a.priorityClassesChanged();
    putJobs(a, ['one', 'two']);
    await a.admission.cycle();
    // Their reconciles create their mirrors.
    for (const name of ['one', 'two']) await reconcile(a, name);
    a.sync();
    const mirrorOf = (name: string) => {
      const cluster = recordOf(a, name)!.cluster!;
      return {
        worker: a.world.workers.get(cluster)!,
        mirror: a.world.workers.get(cluster)!.get('team-a', name),
      };
    };
    expect(mirrorOf('one').mirror).toBeDefined();
    expect(mirrorOf('two').mirror).toBeDefined();
    a.world.management.put(urgentJob(clock));
    a.sync();
    const evicting = await a.admission.cycle();
    expect(evicting?.admitted).toEqual([]);
    const victim = evicting!.evicted[0]!.uid.replace(/^uid-/, '');
    const { worker } = mirrorOf(victim);

    // Its reconcile deletes the mirror in the foreground; the record keeps its cluster and queue.
    const deleting = await reconcile(a, victim);
    expect(deleting.map((x) => x.type)).toEqual(['delete-mirror', 'requeue']);
    expect(worker.calls).toContain(`delete team-a/${victim} (foreground)`);
    expect(worker.get('team-a', victim)?.metadata?.deletionTimestamp).toBeDefined();
    expect(recordOf(a, victim)).toMatchObject({
      queue: 'research',
      preempted: expect.stringMatching(/urgent/),
    });
    expect(recordOf(a, victim)?.cluster).toMatch(/^worker-/);

    // Its pods not gone yet (the mirror still there, being deleted): the urgent Job is not admitted,
    // and no one else is evicted for it; it says it waits for the evicted one.
    a.sync();
    clock.advance(5_000);
    const waiting = await a.admission.cycle();
    expect(waiting?.admitted).toEqual([]);
    expect(waiting?.evicted).toEqual([]);
    expect(recordOf(a, 'urgent')).toBeUndefined();
    a.sync();
    // (The note the eviction wrote stays: the same gate, refreshed only after a while.)
    expect(a.stored('urgent').metadata?.annotations?.[unschedulableAnnotation]).toBe(
      'preempting 1 lower-priority workload of queue research',
    );
    expect(a.statuses.at(-1)?.status).toMatchObject({
      admittedWorkloads: 2,
      pendingWorkloads: 1,
      usage: { cpu: '1' },
    });
    // Looked at again meanwhile: still waiting, the record as it was.
    expect(await reconcile(a, victim)).toEqual([{ type: 'requeue', afterMs: 5_000 }]);
    expect(recordOf(a, victim)?.cluster).toMatch(/^worker-/);

    // A controller restarted now recounts the same from the records: nothing admitted.
    a.admission.stop();
    const restarted = admissionWorld({
      queues: [oneCpuQueue({ withinQueue: 'LowerPriority' })],
      clock,
      world,
    });
    restarted.priorityClasses.push(urgentClass);
    restarted.priorityClassesChanged();
    restarted.sync();
    const afterRestart = await restarted.admission.cycle();
    expect(afterRestart?.admitted).toEqual([]);
    expect(afterRestart?.evicted).toEqual([]);

    // The worker's garbage collector is done: its pods are gone, and so is the mirror. The next
    // reconcile asks the worker, and places it again with its progress: the quota is free.
    worker.dependentsGone('team-a', victim);
    const replaced = await reconcile(a, victim);
    expect(replaced.map((x) => x.type)).toEqual(['confirm-mirror-vanished']);
    expect(recordOf(a, victim)).toMatchObject({
      attempt: 2,
      lastReplacedBecause: expect.stringMatching(/^preempted: /),
    });
    expect(recordOf(a, victim)?.cluster).toBeUndefined();
    expect(recordOf(a, victim)?.queue).toBeUndefined();
    restarted.sync();
    clock.advance(5_000);
    const admitted = await restarted.admission.cycle();
    expect(admitted?.admitted.map((x) => [x.uid, x.outcome])).toEqual([['uid-urgent', 'placed']]);
    expect(recordOf(a, 'urgent')).toMatchObject({ queue: 'research' });
    // The evicted one waits in its queue again, behind the quota.
    restarted.sync();
    expect(recordOf(a, victim)?.cluster).toBeUndefined();
  });

  it('after a restart, usage is what the records say: nothing admitted past the quota', async () => {
    const clock = new TestClock();
    const first = admissionWorld({ queues: [oneCpuQueue()], clock });
    for (const [index, name] of ['one', 'two', 'three'].entries())
      first.world.management.put(job(name, clock, 100 - index));
    first.sync();
    await first.admission.cycle();
    first.admission.stop();
    // A new controller over the same management cluster: nothing carried over but Kubernetes state.
    const second = admissionWorld({ queues: [oneCpuQueue()], world: first.world, clock });
    second.sync();
    const report = await second.admission.cycle();
    expect(report?.admitted).toEqual([]);
    expect(second.statuses.at(-1)?.status).toMatchObject({ admittedWorkloads: 2, usage: { cpu: '1' } });
    expect(second.stored('three').metadata?.annotations?.[unschedulableAnnotation]).toMatch(/queue research/);
  });

  it('a queue whose spec cannot be used: Active False, InvalidSpec, with the problems', async () => {
    const clock = new TestClock();
    const a = admissionWorld({
      queues: [
        dispatchQueue('broken', {
          namespaceSelector: {},
          resources: [{ name: 'cpu', nominalQuota: 'lots' }],
        }),
      ],
      clock,
    });
    await a.admission.cycle();
    expect(a.statuses).toHaveLength(1);
    expect(a.statuses[0]!.status.conditions[0]).toMatchObject({
      type: 'Active',
      status: 'False',
      reason: 'InvalidSpec',
    });
    expect(a.statuses[0]!.status.conditions[0]!.message).toMatch(/nominalQuota/);
  });

  it('a queue status is written only when it changed, and at most every 2 s', async () => {
    const clock = new TestClock();
    const a = admissionWorld({ queues: [oneCpuQueue()], clock });
    a.world.management.put(job('one', clock, 10));
    a.sync();
    await a.admission.cycle();
    expect(a.statuses).toHaveLength(1);
    a.sync();
    await a.admission.cycle();
    expect(a.statuses).toHaveLength(1);
    a.world.management.put(job('two', clock, 5));
    a.sync();
    clock.advance(500);
    const soon = await a.admission.cycle();
    // Changed (two admitted) but written 0.5 s ago: left for later.
    expect(soon?.statusWritten).toEqual([]);
    clock.advance(2_000);
    const later = await a.admission.cycle();
    expect(later?.statusWritten).toEqual(['research']);
    expect(a.statuses.at(-1)?.status).toMatchObject({ admittedWorkloads: 2 });
  });
});
