// OriginExecutor, every action and every branch an API answer picks, against clusters held in
// memory at the client boundary (no Kubernetes). Plans come from the real planOrigin where a
// reconcile would make them, so each case is snapshot -> plan -> execute.

import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter } from '@jobrelay/kinds';
import {
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
  suspendSentAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import { placementRecordOf } from '@jobrelay/placement';
import {
  conflictRetryMs,
  deletionRetryMs,
  eventReasons,
  type OriginAction,
  planOrigin,
} from '@jobrelay/planner';
import {
  cluster,
  config,
  foreignJob,
  mirrorOf,
  now,
  originJob,
  present,
  record,
} from '@jobrelay/planner/test-support/snapshot-builders';
import { describe, expect, it } from 'vitest';
import { counted, executorWorld } from './executor-harness.ts';
import { apiError } from './in-memory-cluster.ts';

/** The origin placed on worker-1 (attempt `attempt`), stored on the management cluster. */
function placedWorld(options: Parameters<typeof executorWorld>[0] = {}, attempt = 1) {
  const world = executorWorld(options);
  const origin = world.management.put(originJob());
  return { world, origin, placed: record({ attempt }) };
}

const reasons = (world: ReturnType<typeof executorWorld>) => world.events.map((e) => e.reason);

describe('create-mirror', () => {
  it('created: the mirror is on the worker with our labels, expected until its cache shows it, no Event', async () => {
    const { world, origin, placed } = placedWorld();
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    expect(plan.map((a) => a.type)).toEqual(['create-mirror']);
    const result = await world.executor.execute(plan, world.target());
    const mirror = world.workers.get('worker-1')!.get('team-a', 'train');
    expect(mirror?.metadata?.labels?.[originUidLabel]).toBe('uid-1');
    expect(mirror?.spec?.managedBy).toBeUndefined();
    expect(world.created).toEqual([
      { kind: 'job', cluster: 'worker-1', mirror: expect.objectContaining({}) },
    ]);
    expect(world.created[0]!.mirror.metadata?.uid).toBe(mirror!.metadata!.uid);
    expect(world.events).toEqual([]);
    expect(result).toMatchObject({ requeueAfterMs: undefined, conflicted: false, failedDeletions: 0 });
    expect(await counted(world.metrics, 'jobrelay_mirror_operations_total', { operation: 'created' })).toBe(
      1,
    );
  });

  it('created, with --record-dispatch-events: a Normal MirrorCreated Event', async () => {
    const { world, origin, placed } = placedWorld({ recordDispatchEvents: true });
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    await world.executor.execute(plan, world.target());
    expect(reasons(world)).toEqual([eventReasons.mirrorCreated]);
  });

  it('adopted: a mirror of this attempt already there (the cache lagged) is taken as ours, with MirrorAdopted', async () => {
    const { world, origin, placed } = placedWorld();
    const worker = world.workers.get('worker-1')!;
    const existing = worker.put(mirrorOf(origin, { attempt: 1 }));
    // The snapshot does not show it: the plan creates, the apiserver answers AlreadyExists.
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    const result = await world.executor.execute(plan, world.target());
    expect(worker.calls).toEqual(['create team-a/train', 'read team-a/train']);
    expect(worker.get('team-a', 'train')?.metadata?.uid).toBe(existing.metadata!.uid);
    expect(world.created.map((c) => c.mirror.metadata?.uid)).toEqual([existing.metadata!.uid]);
    expect(reasons(world)).toEqual([eventReasons.mirrorAdopted]);
    expect(result.requeueAfterMs).toBeUndefined();
    expect(await counted(world.metrics, 'jobrelay_mirror_operations_total', { operation: 'adopted' })).toBe(
      1,
    );
  });

  it('stale: ours from an older attempt is deleted (UID-guarded), then a look again in 1 s', async () => {
    const { world, origin } = placedWorld();
    const worker = world.workers.get('worker-1')!;
    worker.put(mirrorOf(origin, { attempt: 1 }));
    const plan = planOrigin(
      present(origin, record({ attempt: 2 }), [cluster('worker-1')]),
      batchJobAdapter,
      config,
      now,
    );
    const result = await world.executor.execute(plan, world.target());
    expect(worker.calls).toEqual(['create team-a/train', 'read team-a/train', 'delete team-a/train']);
    expect(worker.get('team-a', 'train')).toBeUndefined();
    expect(world.created).toEqual([]);
    expect(result.requeueAfterMs).toBe(1_000);
  });

  it('collision: another object of that name is left alone; NameCollision, re-placed elsewhere', async () => {
    const { world, origin, placed } = placedWorld();
    const worker = world.workers.get('worker-1')!;
    const foreign = worker.put(foreignJob(origin));
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    const result = await world.executor.execute(plan, world.target());
    expect(worker.get('team-a', 'train')).toEqual(foreign);
    expect(reasons(world)).toEqual([eventReasons.nameCollision, eventReasons.replacing]);
    const parsed = placementRecordOf(world.management.get('team-a', 'train')!, world.keys);
    expect(parsed).toMatchObject({ kind: 'ok', record: { attempt: 2, excludedClusters: ['worker-1'] } });
    expect(world.enqueued).toEqual([{ namespace: 'team-a', name: 'train', uid: 'uid-1', kind: 'job' }]);
    expect(result.origin?.metadata?.resourceVersion).toBe(
      world.management.get('team-a', 'train')!.metadata!.resourceVersion,
    );
  });

  it('namespace missing, creation on: the namespace is made with the labels given, then the mirror', async () => {
    const { world, origin, placed } = placedWorld();
    const worker = world.workers.get('worker-1')!;
    worker.namespaces.clear();
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    await world.executor.execute(plan, world.target());
    expect(worker.calls).toEqual(['create team-a/train', 'createNamespace team-a', 'create team-a/train']);
    expect(worker.createdNamespaces.get('team-a')).toEqual({ 'jobrelay.dev/origin': 'mgmt-1' });
    expect(world.created).toHaveLength(1);
  });

  it('namespace missing, its management labels unknown: nothing is created, the run fails (retried)', async () => {
    const { world, origin, placed } = placedWorld({ namespaceLabels: () => undefined });
    const worker = world.workers.get('worker-1')!;
    worker.namespaces.clear();
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    await expect(world.executor.execute(plan, world.target())).rejects.toThrow(
      /labels on the management cluster are not known/,
    );
    expect(worker.namespaces.size).toBe(0);
    expect(worker.objects.size).toBe(0);
  });

  it('namespace-missing, creation off: NamespaceMissing, and a look again in 30 s', async () => {
    const { world, origin, placed } = placedWorld({ createNamespaces: false });
    world.workers.get('worker-1')!.namespaces.clear();
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    const result = await world.executor.execute(plan, world.target());
    expect(reasons(world)).toEqual([eventReasons.namespaceMissing]);
    expect(result.requeueAfterMs).toBe(30_000);
    expect(world.workers.get('worker-1')!.calls).toEqual(['create team-a/train']);
    expect(
      await counted(world.metrics, 'jobrelay_mirror_operations_total', { operation: 'namespace-missing' }),
    ).toBe(1);
  });

  it('refused by the worker (422): MirrorRefused, the refusal counted in the record, placed again after 5 s', async () => {
    const { world, origin, placed } = placedWorld();
    world.workers.get('worker-1')!.failNext('create', apiError(422, 'Invalid', 'spec.foo: unknown field'));
    const plan = planOrigin(present(origin, placed, [cluster('worker-1')]), batchJobAdapter, config, now);
    const result = await world.executor.execute(plan, world.target());
    expect(reasons(world)).toEqual([eventReasons.mirrorRefused]);
    expect(world.events[0]!.note).toContain('spec.foo: unknown field');
    const parsed = placementRecordOf(world.management.get('team-a', 'train')!, world.keys);
    expect(parsed).toMatchObject({ kind: 'ok', record: { refusals: 1, refusedBy: ['worker-1'] } });
    expect(parsed.kind === 'ok' && parsed.record.cluster).toBe(undefined);
    expect(result.requeueAfterMs).toBe(5_000);
  });

  it('a worker not connected: the action is skipped', async () => {
    const { world, origin, placed } = placedWorld();
    const plan = planOrigin(present(origin, placed, [cluster('worker-9')]), batchJobAdapter, config, now);
    // worker-9 is not in the world: the registry would not hand out a client for it.
    const result = await world.executor.execute(plan, world.target());
    expect(result.requeueAfterMs).toBeUndefined();
    expect(world.created).toEqual([]);
  });
});

describe('confirm-mirror-vanished', () => {
  // The origin counted progress of attempt 1 that the cache's missing mirror cannot explain.
  function progressed() {
    const world = executorWorld();
    const origin = world.management.put(originJob({ status: { succeeded: 1, active: 1 } }));
    const plan = planOrigin(present(origin, record(), [cluster('worker-1')]), batchJobAdapter, config, now);
    expect(plan.map((a) => a.type)).toEqual(['confirm-mirror-vanished']);
    return { world, origin, plan };
  }

  it('still on the worker (the cache lagged): nothing written, a look again in 500 ms', async () => {
    const { world, origin, plan } = progressed();
    world.workers.get('worker-1')!.put(mirrorOf(origin, { attempt: 1 }));
    const result = await world.executor.execute(plan, world.target());
    expect(result.requeueAfterMs).toBe(500);
    expect(world.management.calls).toEqual([]);
  });

  it('gone: placed again with its progress carried (Replacing, enqueued)', async () => {
    const { world, plan } = progressed();
    const result = await world.executor.execute(plan, world.target());
    expect(reasons(world)).toEqual([eventReasons.replacing]);
    const parsed = placementRecordOf(world.management.get('team-a', 'train')!, world.keys);
    expect(parsed).toMatchObject({ kind: 'ok', record: { attempt: 2, carried: { succeeded: 1 } } });
    expect(world.enqueued).toHaveLength(1);
    expect(result.requeueAfterMs).toBeUndefined();
  });
});

describe('delete-mirror', () => {
  it('the origin is gone: its mirror goes, and its placement bookkeeping is forgotten', async () => {
    const world = executorWorld();
    const origin = originJob();
    const mirror = world.workers.get('worker-1')!.put(mirrorOf(origin));
    const plan = planOrigin(
      { kind: 'gone', key: 'team-a/train', uid: 'uid-1', clusters: [cluster('worker-1', { mirror })] },
      batchJobAdapter,
      config,
      now,
    );
    const result = await world.executor.execute(plan, { ...world.target(), uid: 'uid-1' });
    expect(world.forgotten).toEqual(['uid-1']);
    expect(world.workers.get('worker-1')!.objects.size).toBe(0);
    expect(result.failedDeletions).toBe(0);
  });

  it('a deletion that fails is counted, the rest goes on, and a look again is asked for', async () => {
    const world = executorWorld({}, ['worker-1', 'worker-2']);
    const origin = originJob();
    const one = world.workers.get('worker-1')!.put(mirrorOf(origin));
    const two = world.workers.get('worker-2')!.put(mirrorOf(origin));
    world.workers.get('worker-1')!.failNext('delete', apiError(503, 'ServiceUnavailable'));
    const plan = planOrigin(
      {
        kind: 'gone',
        key: 'team-a/train',
        uid: 'uid-1',
        clusters: [cluster('worker-1', { mirror: one }), cluster('worker-2', { mirror: two })],
      },
      batchJobAdapter,
      config,
      now,
    );
    const result = await world.executor.execute(plan, { ...world.target(), uid: 'uid-1' });
    expect(result.failedDeletions).toBe(1);
    expect(result.requeueAfterMs).toBe(deletionRetryMs);
    expect(world.workers.get('worker-1')!.objects.size).toBe(1);
    expect(world.workers.get('worker-2')!.objects.size).toBe(0);
  });

  it('already gone, or replaced by another object (UID precondition): nothing deleted, not a failure', async () => {
    const world = executorWorld();
    const origin = originJob();
    const worker = world.workers.get('worker-1')!;
    const replaced = worker.put(foreignJob(origin));
    const action: OriginAction<Job> = {
      type: 'delete-mirror',
      cluster: 'worker-1',
      mirror: mirrorOf(origin, { uid: 'old-uid' }),
      why: 'stale',
    };
    const result = await world.executor.execute([action, { ...action, cluster: 'worker-1' }], world.target());
    expect(worker.get('team-a', 'train')).toEqual(replaced);
    expect(result.failedDeletions).toBe(0);
  });
});

describe('writes to the origin', () => {
  it('patch-placement: sealed record over the version read; later writes go over the version it produced', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const actions: OriginAction<Job>[] = [
      { type: 'patch-placement', record: record({ cluster: undefined, attempt: 2 }) },
      { type: 'write-status', status: { active: 0 }, purpose: 'sync' },
    ];
    const result = await world.executor.execute(actions, world.target());
    const stored = world.management.get('team-a', 'train')!;
    expect(placementRecordOf(stored, world.keys)).toMatchObject({ kind: 'ok', record: { attempt: 2 } });
    expect(world.management.calls).toEqual(['patch team-a/train', 'replaceStatus team-a/train']);
    expect(world.originWrites.map((w) => w.version)).toHaveLength(2);
    expect(world.originWrites.at(-1)!.version).toBe(stored.metadata!.resourceVersion);
    expect(result.origin?.metadata?.resourceVersion).toBe(stored.metadata!.resourceVersion);
  });

  it('patch-placement over a version that moved on: a conflict ends the run, re-read in 200 ms', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const target = world.target();
    world.management.put(world.management.get('team-a', 'train')!); // someone else wrote meanwhile
    const result = await world.executor.execute(
      [{ type: 'patch-placement', record: record() }, { type: 'enqueue-placement' }],
      target,
    );
    expect(result).toMatchObject({ conflicted: true, requeueAfterMs: conflictRetryMs });
    expect(world.enqueued).toEqual([]);
    expect(world.originWrites).toEqual([]);
    expect(
      world.management.get('team-a', 'train')!.metadata?.annotations?.[placementAnnotation],
    ).toBeUndefined();
  });

  it('write-status: written over the version read, counted, noted for the echo and the status lag', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const result = await world.executor.execute(
      [{ type: 'write-status', status: { active: 2 }, purpose: 'sync' }],
      world.target(),
    );
    const stored = world.management.get('team-a', 'train')!;
    expect(stored.status).toEqual({ active: 2 });
    expect(world.statusWrites).toEqual([stored.metadata!.resourceVersion]);
    expect(world.originWrites).toEqual([{ kind: 'job', version: stored.metadata!.resourceVersion }]);
    expect(result.origin).toEqual(stored);
    expect(await counted(world.metrics, 'jobrelay_origin_status_writes_total', { result: 'written' })).toBe(
      1,
    );
  });

  it('write-status over a version that moved on: counted as a conflict, nothing else runs', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const target = world.target();
    world.management.put(world.management.get('team-a', 'train')!);
    const result = await world.executor.execute(
      [{ type: 'write-status', status: { active: 2 }, purpose: 'sync' }, { type: 'enqueue-placement' }],
      target,
    );
    expect(result).toMatchObject({ conflicted: true, requeueAfterMs: conflictRetryMs });
    expect(world.enqueued).toEqual([]);
    expect(await counted(world.metrics, 'jobrelay_origin_status_writes_total', { result: 'conflict' })).toBe(
      1,
    );
  });

  it('write-status the apiserver rejects (422): counted as rejected, and the run fails', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    world.management.failNext(
      'replaceStatus',
      apiError(422, 'Invalid', 'status.succeeded: must not decrease'),
    );
    await expect(
      world.executor.execute(
        [{ type: 'write-status', status: { active: 2 }, purpose: 'sync' }],
        world.target(),
      ),
    ).rejects.toThrow(/422/);
    expect(await counted(world.metrics, 'jobrelay_origin_status_writes_total', { result: 'rejected' })).toBe(
      1,
    );
    expect(world.originWrites).toEqual([]);
  });

  it('refuse-status: nothing written, counted as refused', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    await world.executor.execute(
      [{ type: 'refuse-status', violations: [{ field: 'status.succeeded', message: 'must not decrease' }] }],
      world.target(),
    );
    expect(world.management.calls).toEqual([]);
    expect(await counted(world.metrics, 'jobrelay_origin_status_writes_total', { result: 'refused' })).toBe(
      1,
    );
  });

  it('note-waiting: the reason on the origin, noted as an origin write', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const result = await world.executor.execute(
      [{ type: 'note-waiting', message: '0/3 clusters available' }],
      world.target(),
    );
    const stored = world.management.get('team-a', 'train')!;
    expect(stored.metadata?.annotations?.[unschedulableAnnotation]).toBe('0/3 clusters available');
    expect(world.originWrites).toEqual([{ kind: 'job', version: stored.metadata!.resourceVersion }]);
    expect(result.origin).toEqual(stored);
  });

  it('note-waiting null: the note is removed once the workload no longer waits', async () => {
    const world = executorWorld();
    const noted = originJob();
    noted.metadata!.annotations = { [unschedulableAnnotation]: "held suspended by worker-1's own admission" };
    world.management.put(noted);
    await world.executor.execute([{ type: 'note-waiting', message: null }], world.target());
    const stored = world.management.get('team-a', 'train')!;
    expect(stored.metadata?.annotations?.[unschedulableAnnotation]).toBeUndefined();
  });

  it('note-waiting that fails: only logged, the run goes on', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    world.management.failNext('patch', apiError(500, 'InternalError'));
    const result = await world.executor.execute(
      [{ type: 'note-waiting', message: 'why' }, { type: 'enqueue-placement' }],
      world.target(),
    );
    expect(world.enqueued).toHaveLength(1);
    expect(world.originWrites).toEqual([]);
    expect(result.requeueAfterMs).toBeUndefined();
  });
});

describe('the mirror, the queue, Events', () => {
  it('seed-mirror-status and patch-mirror-spec: merge patches on the worker', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const worker = world.workers.get('worker-1')!;
    const mirror = worker.put(mirrorOf(originJob()));
    await world.executor.execute(
      [
        { type: 'seed-mirror-status', cluster: 'worker-1', mirror, seed: { succeeded: 2 } },
        { type: 'patch-mirror-spec', cluster: 'worker-1', mirror, patch: { parallelism: 1 } },
      ],
      world.target(),
    );
    expect(worker.calls).toEqual(['patchStatus team-a/train', 'patch team-a/train']);
    const patched = worker.get('team-a', 'train')!;
    expect(patched.status?.succeeded).toBe(2);
    expect(patched.spec?.parallelism).toBe(1);
  });

  it('patch-mirror-spec with annotations: the record of what was sent goes in the same patch', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const worker = world.workers.get('worker-1')!;
    const mirror = worker.put(mirrorOf(originJob()));
    await world.executor.execute(
      [
        {
          type: 'patch-mirror-spec',
          cluster: 'worker-1',
          mirror,
          patch: { suspend: true },
          annotations: { [suspendSentAnnotation]: 'true' },
        },
      ],
      world.target(),
    );
    expect(worker.calls).toEqual(['patch team-a/train']);
    const patched = worker.get('team-a', 'train')!;
    expect(patched.spec?.suspend).toBe(true);
    expect(patched.metadata?.annotations?.[suspendSentAnnotation]).toBe('true');
    expect(patched.metadata?.annotations?.[placementAttemptAnnotation]).toBe('1');
  });

  it('enqueue-placement, record-event, forget-origin; requeue ends the run', async () => {
    const world = executorWorld();
    world.management.put(originJob());
    const result = await world.executor.execute(
      [
        { type: 'enqueue-placement' },
        {
          type: 'record-event',
          eventType: 'Warning',
          reason: eventReasons.replacing,
          action: 'Place',
          note: 'n',
        },
        { type: 'forget-origin', uid: 'uid-1' },
        { type: 'requeue', afterMs: 1234 },
        { type: 'enqueue-placement' },
      ],
      world.target(),
    );
    expect(world.enqueued).toHaveLength(1);
    expect(world.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: eventReasons.replacing,
        regarding: expect.objectContaining({ kind: 'Job', name: 'train', namespace: 'team-a', uid: 'uid-1' }),
      }),
    ]);
    expect(world.forgotten).toEqual(['uid-1']);
    expect(result.requeueAfterMs).toBe(1234);
  });
});
