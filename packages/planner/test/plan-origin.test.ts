// planOrigin, case by case: a snapshot and a fixed clock in, the expected actions out.

import type { Job } from '@jobrelay/kinds';
import {
  continuesFromAnnotation,
  deadlineUsedAnnotation,
  placementAnnotation,
  placementAttemptAnnotation,
  suspendSentAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import { nothingCarried, type PlacementRecord } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import {
  evictionCheckMs,
  mirrorRecorded,
  type OriginAction,
  planEviction,
  planOrigin,
} from '../src/index.ts';
import {
  adapter,
  cluster,
  config,
  foreignJob,
  mirrorOf,
  now,
  originId,
  originJob,
  present,
  record,
  seconds,
} from '../test-support/snapshot-builders.ts';

const plan = (snapshot: Parameters<typeof planOrigin<Job>>[0]) => planOrigin(snapshot, adapter, config, now);
const types = (actions: OriginAction<Job>[]) => actions.map((a) => a.type);
const reasons = (actions: OriginAction<Job>[]) =>
  actions.flatMap((a) => (a.type === 'record-event' ? [a.reason] : []));
const only = <K extends OriginAction<Job>['type']>(actions: OriginAction<Job>[], type: K) =>
  actions.filter((a): a is Extract<OriginAction<Job>, { type: K }> => a.type === type);

const running = { active: 3, ready: 3, succeeded: 0, failed: 0, startTime: seconds(-100) };

describe('1. a deleted origin', () => {
  it('deletes its own mirrors on reachable clusters only, never a foreign object or another origin’s', () => {
    const origin = originJob();
    const actions = plan({
      kind: 'gone',
      key: 'team-a/train',
      uid: 'uid-1',
      clusters: [
        cluster('worker-1', { mirror: mirrorOf(origin) }),
        cluster('worker-2', { mirror: foreignJob(origin) }),
        cluster('worker-3', { mirror: mirrorOf(origin), active: false, inactiveSince: now - 1000 }),
        cluster('worker-4', { mirror: mirrorOf(origin, { originUid: 'uid-of-a-newer-job' }) }),
      ],
    });
    expect(actions).toEqual([
      { type: 'forget-origin', uid: 'uid-1' },
      { type: 'delete-mirror', cluster: 'worker-1', mirror: mirrorOf(origin), why: 'its origin was deleted' },
    ]);
  });

  it('does nothing when its UID is unknown', () => {
    expect(
      plan({ kind: 'gone', key: 'team-a/train', uid: undefined, clusters: [cluster('worker-1')] }),
    ).toEqual([]);
  });
});

describe('a placement record jobrelay did not seal for this workload (untrusted)', () => {
  const untrusted = { kind: 'untrusted', problem: 'it carries no seal', claimedAttempt: 2 } as const;

  it('believes nothing in it: deletes every mirror of the origin, says so, and starts afresh from its status', () => {
    const origin = originJob({ status: { succeeded: 1, failed: 2 } });
    const actions = plan(
      present(origin, untrusted, [
        cluster('worker-1', { mirror: mirrorOf(origin) }),
        cluster('worker-2', { mirror: mirrorOf(origin, { attempt: 4 }) }),
        cluster('worker-3', { mirror: foreignJob(origin) }),
      ]),
    );
    expect(types(actions)).toEqual(['delete-mirror', 'delete-mirror', 'record-event', 'patch-placement']);
    expect(only(actions, 'delete-mirror').map((a) => a.cluster)).toEqual(['worker-1', 'worker-2']);
    expect(reasons(actions)).toEqual(['PlacementUntrusted']);
    expect(only(actions, 'record-event')[0]!.note).toBe(
      `annotation ${placementAnnotation} was not written by jobrelay for this Job (it carries no seal); it is ignored and the Job is placed from scratch`,
    );
    // Past every mirror seen (attempt 4) and the claim (2): none of them is ever adopted.
    expect(only(actions, 'patch-placement')[0]!.record).toEqual({
      attempt: 5,
      carried: { succeeded: 1, failed: 2 },
      excludedClusters: [],
      waitingSince: new Date(now).toISOString(),
    });
  });

  it('carries nothing the record claims: a new Job starts from zero', () => {
    const actions = plan(present(originJob(), { kind: 'untrusted', problem: 'x' }, [cluster('worker-1')]));
    expect(only(actions, 'patch-placement')[0]!.record).toMatchObject({
      attempt: 1,
      carried: { succeeded: 0, failed: 0 },
    });
    expect(types(actions)).not.toContain('create-mirror');
    expect(types(actions)).not.toContain('enqueue-placement');
  });
});

// Progress is the kind's: the planner asks the kind whether a sealed record's `carried` is one
// of its values before acting on the record, and never reads inside it.
describe('a sealed record whose carried progress the kind refuses', () => {
  it.each([
    { name: 'a count that is not a number', carried: { succeeded: 'three', failed: 0 }, field: 'succeeded' },
    { name: 'a negative count', carried: { succeeded: 0, failed: -1 }, field: 'failed' },
    { name: 'not an object at all', carried: 'lots', field: '(root)' },
  ])(
    'is not acted on ($name): no mirror is made from it, and the Job starts afresh past its attempt',
    ({ carried, field }) => {
      const origin = originJob({ status: { succeeded: 1, failed: 0 } });
      const bad = record({ attempt: 3, carried: carried as never });
      const actions = plan(
        present(origin, bad, [cluster('worker-1', { mirror: mirrorOf(origin, { attempt: 3 }) })]),
      );
      expect(types(actions)).toEqual(['delete-mirror', 'record-event', 'patch-placement']);
      expect(reasons(actions)).toEqual(['PlacementUntrusted']);
      expect(only(actions, 'record-event')[0]!.note).toContain(
        `its carried progress is not a Job's (carried: ${field}: `,
      );
      expect(only(actions, 'patch-placement')[0]!.record).toEqual({
        attempt: 4,
        carried: { succeeded: 1, failed: 0 },
        excludedClusters: [],
        waitingSince: new Date(now).toISOString(),
      });
    },
  );

  it('is acted on when it carries nothing (null): a first attempt of the Job, as the placer writes it', () => {
    const origin = originJob();
    const actions = plan(
      present(origin, record({ attempt: 1, carried: nothingCarried }), [cluster('worker-1')]),
    );
    expect(types(actions)).toEqual(['create-mirror']);
  });
});

describe('a placement record sealed with a key jobrelay does not hold (unverifiable)', () => {
  it('says so in an Event and touches no mirror, since which is current cannot be known', () => {
    const origin = originJob();
    const actions = plan(
      present(origin, { kind: 'unverifiable', keyId: '0123456789abcdef' }, [
        cluster('worker-1', { mirror: mirrorOf(origin) }),
        cluster('worker-2', { mirror: mirrorOf(origin, { attempt: 2 }) }),
      ]),
    );
    expect(types(actions)).toEqual(['record-event']);
    expect(reasons(actions)).toEqual(['PlacementUnverifiable']);
    expect(only(actions, 'record-event')[0]!.note).toContain('key id 0123456789abcdef');
  });
});

describe('the fences again, just before a mirror is created', () => {
  it('places the workload again when its cluster no longer takes it, creating nothing there', () => {
    const origin = originJob();
    const actions = plan(present(origin, record(), [cluster('worker-1', { fenced: 'cordoned' })]));
    expect(types(actions)).toEqual(['patch-placement', 'record-event', 'enqueue-placement']);
    expect(only(actions, 'record-event')[0]!.note).toContain('cluster worker-1 no longer takes it: cordoned');
    const next = only(actions, 'patch-placement')[0]!.record;
    expect(next.attempt).toBe(2);
    expect(next.cluster).toBeUndefined();
  });

  it('creates it when the cluster still takes it', () => {
    const actions = plan(present(originJob(), record(), [cluster('worker-1')]));
    expect(types(actions)).toEqual(['create-mirror']);
  });

  it('leaves a mirror that exists alone: the fences are for new mirrors', () => {
    const origin = originJob({ status: running });
    const mirror = mirrorOf(origin, { status: running });
    const actions = plan(present(origin, record(), [cluster('worker-1', { mirror, fenced: 'cordoned' })]));
    expect(types(actions)).not.toContain('patch-placement');
    expect(types(actions)).not.toContain('delete-mirror');
  });
});

describe('a mirror whose continuation was edited on its worker', () => {
  const origin = originJob({ status: { succeeded: 1, failed: 0, startTime: seconds(-100) } });
  const placement = record({ attempt: 2, carried: { succeeded: 1, failed: 0 } });
  const seeded = () =>
    adapter.buildMirror(origin, { originId, attempt: 2, carried: placement.carried, now: new Date(now) });

  it.each([
    {
      name: 'claiming more progress than was carried',
      edit: (mirror: Job) => {
        mirror.metadata!.annotations![continuesFromAnnotation] = '{"succeeded":3,"failed":0}';
      },
      problem: 'claims more progress than was carried',
    },
    {
      name: 'without the continuation it was given',
      edit: (mirror: Job) => {
        delete mirror.metadata!.annotations![continuesFromAnnotation];
      },
      problem: 'was removed',
    },
  ])('is deleted, and nothing read from it is believed, when $name', ({ edit, problem }) => {
    const mirror = seeded();
    mirror.metadata!.uid = 'mirror-uid-2';
    edit(mirror);
    const actions = plan(present(origin, placement, [cluster('worker-1', { mirror })]));
    expect(types(actions)).toEqual(['delete-mirror', 'record-event']);
    expect(only(actions, 'delete-mirror')[0]!.why).toContain(problem);
    expect(reasons(actions)).toEqual(['MirrorTampered']);
  });

  it('is used as it is when its continuation is the one jobrelay gave it', () => {
    const mirror = seeded();
    mirror.metadata!.uid = 'mirror-uid-2';
    const actions = plan(present(origin, placement, [cluster('worker-1', { mirror })]));
    expect(types(actions)).toEqual(['seed-mirror-status', 'requeue']);
  });

  it('is deleted when a first attempt carries a continuation', () => {
    const fresh = originJob();
    const mirror = mirrorOf(fresh);
    mirror.metadata!.annotations![continuesFromAnnotation] = '{"succeeded":3,"failed":0}';
    const actions = plan(present(fresh, record(), [cluster('worker-1', { mirror })]));
    expect(types(actions)).toEqual(['delete-mirror', 'record-event']);
  });
});

describe('4. not placed', () => {
  it('asks for a placement', () => {
    expect(plan(present(originJob(), undefined, [cluster('worker-1')]))).toEqual([
      { type: 'enqueue-placement' },
    ]);
  });

  it('asks again after a re-placement left it without a cluster', () => {
    const actions = plan(
      present(originJob(), record({ cluster: undefined, attempt: 2 }), [cluster('worker-1')]),
    );
    expect(actions).toEqual([{ type: 'enqueue-placement' }]);
  });

  it('waits while suspended, marking it Suspended as the built-in controller would', () => {
    const actions = plan(
      present(originJob({ spec: { suspend: true } as Job['spec'] }), undefined, [cluster('worker-1')]),
    );
    expect(types(actions)).toEqual(['write-status']);
    const status = only(actions, 'write-status')[0]!.status as Job['status'];
    expect(status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Suspended',
        status: 'True',
        reason: 'JobSuspended',
        lastTransitionTime: '2026-12-01T10:00:00Z',
      }),
    ]);
    expect(status).toMatchObject({ ready: 0, terminating: 0 });
  });

  it('writes nothing for a suspended origin already marked Suspended', () => {
    const suspended = originJob({
      spec: { suspend: true } as Job['spec'],
      status: {
        conditions: [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }],
      },
    });
    expect(plan(present(suspended, undefined, [cluster('worker-1')]))).toEqual([]);
  });

  it('deletes a mirror left from before its record was removed, and starts afresh past its attempt (no record, no current mirror)', () => {
    const origin = originJob();
    const actions = plan(
      present(origin, undefined, [cluster('worker-1', { mirror: mirrorOf(origin, { attempt: 3 }) })]),
    );
    expect(types(actions)).toEqual(['delete-mirror', 'record-event', 'patch-placement']);
    expect(reasons(actions)).toEqual(['PlacementRemoved']);
    expect(only(actions, 'patch-placement')[0]!.record).toMatchObject({
      attempt: 4,
      carried: { succeeded: 0, failed: 0 },
    });
  });

  it('places again from its status a Job that ran and whose record was removed: nothing counts twice', () => {
    const origin = originJob({ status: { ...running, succeeded: 2, failed: 1 } });
    const actions = plan(present(origin, undefined, [cluster('worker-1')]));
    expect(types(actions)).toEqual(['record-event', 'patch-placement']);
    // A second attempt at least: only a later attempt's mirror is seeded with what was carried.
    expect(only(actions, 'patch-placement')[0]!.record).toEqual({
      attempt: 2,
      carried: { succeeded: 2, failed: 1 },
      excludedClusters: [],
      waitingSince: new Date(now).toISOString(),
    });
  });

  it('asks for a placement at once for a Job that never ran (no extra write)', () => {
    expect(
      plan(present(originJob(), undefined, [cluster('worker-1', { mirror: foreignJob(originJob()) })])),
    ).toEqual([{ type: 'enqueue-placement' }]);
  });
});

describe('5. placed, its cluster unusable', () => {
  const origin = originJob({ status: { ...running, succeeded: 1, failed: 2 } });

  it('moves off a draining cluster, carrying the counts so far', () => {
    const actions = plan(
      present(origin, record({ excludedClusters: ['worker-9'] }), [
        cluster('worker-1', { drain: true, mirror: mirrorOf(origin) }),
      ]),
    );
    expect(types(actions)).toEqual(['patch-placement', 'record-event', 'enqueue-placement']);
    expect(only(actions, 'patch-placement')[0]!.record).toEqual({
      attempt: 2,
      carried: { succeeded: 1, failed: 2 },
      excludedClusters: ['worker-9'],
      lastReplacedBecause: 'cluster worker-1 is being drained',
      waitingSince: new Date(now).toISOString(),
    });
    expect(reasons(actions)).toEqual(['Replacing']);
  });

  it('waits for a lost cluster until the timeout, looking again at most every 5 s', () => {
    const lost = (forMs: number) =>
      plan(
        present(origin, record(), [
          cluster('worker-1', { active: false, reason: 'Unreachable', inactiveSince: now - forMs }),
        ]),
      );
    expect(lost(10_000)).toEqual([{ type: 'requeue', afterMs: 5_000 }]);
    expect(lost(58_000)).toEqual([{ type: 'requeue', afterMs: 2_000 }]);
  });

  it('moves off a cluster lost for the timeout, saying for how long and why', () => {
    const actions = plan(
      present(origin, record(), [
        cluster('worker-1', { active: false, reason: 'Unreachable', inactiveSince: now - 61_000 }),
      ]),
    );
    expect(only(actions, 'patch-placement')[0]!.record.lastReplacedBecause).toBe(
      'cluster worker-1 has not been Active for 61s (Unreachable)',
    );
  });

  it('treats a cluster whose connection is gone like an inactive one', () => {
    const actions = plan(
      present(origin, record(), [
        cluster('worker-1', { connected: false, active: false, inactiveSince: now }),
      ]),
    );
    expect(actions).toEqual([{ type: 'requeue', afterMs: 5_000 }]);
  });

  it('moves at once off a cluster that is no longer registered', () => {
    const actions = plan(present(origin, record(), [cluster('worker-2')]));
    expect(only(actions, 'patch-placement')[0]!.record.lastReplacedBecause).toBe(
      'cluster worker-1 is no longer registered',
    );
  });

  it('finishes a Job whose outcome was decided instead of running it again (FailureTarget)', () => {
    const decided = originJob({
      status: {
        ...running,
        failed: 7,
        conditions: [
          {
            type: 'FailureTarget',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            message: 'too many failures',
            lastTransitionTime: seconds(-5),
          },
        ],
      },
    });
    const actions = plan(present(decided, record(), [cluster('worker-1', { drain: true })]));
    expect(types(actions)).toEqual(['write-status', 'record-event']);
    expect(reasons(actions)).toEqual(['FinishedWithoutMirror']);
    const conditions = (only(actions, 'write-status')[0]!.status as Job['status'])?.conditions ?? [];
    expect(conditions.map((c) => c.type)).toEqual(['FailureTarget', 'Failed']);
  });
});

describe('5. evicted by its queue: its quota held until its mirror is gone from the worker', () => {
  // The origin as last synced: its mirror's status, with two pods failed before the eviction.
  const origin = originJob({ status: { ...running, succeeded: 1, failed: 2 } });
  const mirrorStatus = { ...running, succeeded: 1, failed: 2 };
  const evicted = (overrides: Partial<PlacementRecord> = {}) =>
    record({ queue: 'research', preempted: 'preempted to admit team-a/urgent', ...overrides });
  /** The mirror as the worker holds it while its garbage collector deletes its pods. */
  const beingDeleted = (mirror: Job): Job => ({
    ...mirror,
    metadata: { ...mirror.metadata, deletionTimestamp: seconds(-2), finalizers: ['foregroundDeletion'] },
  });
  const replaced = (because: string) => [
    {
      type: 'patch-placement',
      record: {
        attempt: 2,
        carried: { succeeded: 1, failed: 2 },
        excludedClusters: [],
        lastReplacedBecause: because,
        waitingSince: new Date(now).toISOString(),
      },
    },
    {
      type: 'record-event',
      eventType: 'Warning',
      reason: 'Replacing',
      action: 'Place',
      note: `placing the Job again: ${because} (attempt 2)`,
    },
    { type: 'enqueue-placement' },
  ];
  const preempted = 'preempted: preempted to admit team-a/urgent';

  // Its mirror deleted so that it goes only once its pods have, and looked at again.
  const deleteInForeground: OriginAction<Job>[] = [
    {
      type: 'delete-mirror',
      cluster: 'worker-1',
      mirror: mirrorOf(origin, { status: mirrorStatus }),
      why: 'its Job was preempted to admit team-a/urgent',
      propagation: 'Foreground',
    },
    { type: 'requeue', afterMs: evictionCheckMs },
  ];
  const cases: Array<{
    name: string;
    record?: PlacementRecord;
    clusters: ReturnType<typeof cluster>[];
    want: OriginAction<Job>[];
  }> = [
    {
      name: 'its mirror there: deleted in the foreground, the record kept (cluster, queue, preempted), looked at again',
      clusters: [cluster('worker-1', { mirror: mirrorOf(origin, { status: mirrorStatus }) })],
      want: deleteInForeground,
    },
    {
      name: 'its mirror being deleted (its pods not gone yet): nothing but waiting; its status (pods killed, failed) not synced',
      clusters: [
        cluster('worker-1', {
          mirror: beingDeleted(mirrorOf(origin, { status: { ...mirrorStatus, active: 1, failed: 4 } })),
        }),
      ],
      want: [{ type: 'requeue', afterMs: evictionCheckMs }],
    },
    {
      name: 'its mirror gone from the cache: the worker is asked; gone there too, back to its queue with its progress',
      clusters: [cluster('worker-1')],
      want: [
        {
          type: 'confirm-mirror-vanished',
          cluster: 'worker-1',
          attempt: 1,
          ifVanished: replaced(preempted) as OriginAction<Job>[],
        },
      ],
    },
    {
      name: 'the name taken there by an object not ours: its mirror is not there (the worker confirms)',
      clusters: [cluster('worker-1', { mirror: foreignJob(origin) })],
      want: [
        {
          type: 'confirm-mirror-vanished',
          cluster: 'worker-1',
          attempt: 1,
          ifVanished: replaced(preempted) as OriginAction<Job>[],
        },
      ],
    },
    {
      name: 'its cluster draining: still deleted and waited for, not moved at once',
      clusters: [cluster('worker-1', { drain: true, mirror: mirrorOf(origin, { status: mirrorStatus }) })],
      want: deleteInForeground,
    },
    {
      name: 'its cluster unreachable: the quota held (its pods may run there), looked at again within 5 s',
      clusters: [
        cluster('worker-1', {
          active: false,
          reason: 'Unreachable',
          inactiveSince: now - 10_000,
          mirror: mirrorOf(origin),
        }),
      ],
      want: [{ type: 'requeue', afterMs: 5_000 }],
    },
    {
      name: 'its cluster unreachable, the worker-lost timeout near: looked at again when it is over',
      clusters: [cluster('worker-1', { active: false, reason: 'Unreachable', inactiveSince: now - 58_000 })],
      want: [{ type: 'requeue', afterMs: 2_000 }],
    },
    {
      name: 'its cluster lost for the worker-lost timeout: placed again, as every workload of a lost worker',
      clusters: [cluster('worker-1', { active: false, reason: 'Unreachable', inactiveSince: now - 61_000 })],
      want: replaced(
        `${preempted} (cluster worker-1 has not been Active for 61s (Unreachable))`,
      ) as OriginAction<Job>[],
    },
    {
      name: 'its cluster no longer registered: placed again at once',
      clusters: [cluster('worker-2')],
      want: replaced(`${preempted} (cluster worker-1 is no longer registered)`) as OriginAction<Job>[],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(plan(present(origin, c.record ?? evicted(), c.clusters))).toEqual(c.want);
    });
  }

  it('a change its mirror showed before the delete is synced first (it is the workload’s progress)', () => {
    const moved = { ...mirrorStatus, succeeded: 2 };
    const actions = plan(
      present(origin, evicted(), [cluster('worker-1', { mirror: mirrorOf(origin, { status: moved }) })]),
    );
    expect(types(actions)).toEqual(['write-status', 'delete-mirror', 'requeue']);
    expect(only(actions, 'write-status')[0]!.status).toMatchObject({ succeeded: 2, failed: 2 });
  });

  it('a re-placed mirror not seeded yet: deleted without a sync (its status is not the workload’s)', () => {
    const carried = { succeeded: 1, failed: 2 };
    const body = adapter.buildMirror(origin, { originId, attempt: 2, carried, now: new Date(now) });
    const mirror = { ...body, metadata: { ...body.metadata, uid: 'mirror-uid-2' } };
    const actions = plan(
      present(origin, evicted({ attempt: 2, carried }), [cluster('worker-1', { mirror })]),
    );
    expect(types(actions)).toEqual(['delete-mirror', 'requeue']);
  });

  it('its earlier attempt’s mirror elsewhere is deleted as stale, as always, while this one is waited for', () => {
    const actions = plan(
      present(origin, evicted({ attempt: 2 }), [
        cluster('worker-1', { mirror: beingDeleted(mirrorOf(origin, { attempt: 2, status: mirrorStatus })) }),
        cluster('worker-2', { mirror: mirrorOf(origin, { attempt: 1 }) }),
      ]),
    );
    expect(types(actions)).toEqual(['delete-mirror', 'requeue']);
    expect(only(actions, 'delete-mirror')[0]).toMatchObject({ cluster: 'worker-2' });
    expect(only(actions, 'delete-mirror')[0]!.propagation).toBeUndefined();
  });

  it('finished meanwhile (its last sync showed it complete): retired as any finished workload, not placed again', () => {
    const done = originJob({
      status: {
        succeeded: 3,
        failed: 0,
        active: 0,
        startTime: seconds(-100),
        completionTime: seconds(-1),
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: seconds(-1) },
          { type: 'Complete', status: 'True', lastTransitionTime: seconds(-1) },
        ],
      },
    });
    const actions = plan(present(done, evicted(), [cluster('worker-1', { mirror: mirrorOf(done) })]));
    expect(types(actions)).not.toContain('patch-placement');
    expect(types(actions)).not.toContain('enqueue-placement');
  });
});

describe('5. placed on an Active cluster', () => {
  const origin = originJob();

  it('creates the mirror: managedBy dropped, our identity on it', () => {
    const actions = plan(present(origin, record(), [cluster('worker-1')]));
    expect(types(actions)).toEqual(['create-mirror']);
    const create = only(actions, 'create-mirror')[0]!;
    expect(create.cluster).toBe('worker-1');
    expect(create.body.spec?.managedBy).toBeUndefined();
    expect(create.body.metadata?.labels).toMatchObject({
      'jobrelay.dev/origin': 'mgmt-1',
      'jobrelay.dev/origin-uid': 'uid-1',
    });
    expect(create.record).toEqual(record());
  });

  it('plans the collision branch: an Event, and placement elsewhere, excluding that cluster', () => {
    const create = only(
      plan(present(origin, record(), [cluster('worker-1', { mirror: foreignJob(origin) })])),
      'create-mirror',
    )[0]!;
    const branch = create.onCollision('not created by jobrelay');
    expect(types(branch)).toEqual(['record-event', 'patch-placement', 'record-event', 'enqueue-placement']);
    expect(reasons(branch)).toEqual(['NameCollision', 'Replacing']);
    expect(only(branch, 'patch-placement')[0]!.record.excludedClusters).toEqual(['worker-1']);
  });

  it('plans the missing-namespace branch: an Event, and another look in 30 s', () => {
    const create = only(plan(present(origin, record(), [cluster('worker-1')])), 'create-mirror')[0]!;
    expect(reasons(create.onNamespaceMissing)).toEqual(['NamespaceMissing']);
    expect(create.onNamespaceMissing.at(-1)).toEqual({ type: 'requeue', afterMs: 30_000 });
  });
});

describe('5. a mirror the worker refuses', () => {
  const origin = originJob();
  const refusal = { code: 403, message: 'jobs.batch "train" is forbidden: exceeded quota: jobs' };
  const refusedBranch = (placed: PlacementRecord, limit?: number) => {
    const create = only(
      planOrigin(
        present(origin, placed, [cluster('worker-1')]),
        adapter,
        limit === undefined ? config : { ...config, mirrorRefusalLimit: limit },
        now,
      ),
      'create-mirror',
    )[0]!;
    return create.onRefused(refusal);
  };

  it('records the refusal, quotes the apiserver in a Warning, and waits 5 s before placing it again', () => {
    const branch = refusedBranch(record({ placedAt: seconds(-1), decision: 'placed on worker-1' }));
    expect(types(branch)).toEqual(['patch-placement', 'record-event', 'requeue']);
    expect(reasons(branch)).toEqual(['MirrorRefused']);
    const note = only(branch, 'record-event')[0]!.note;
    expect(note).toContain(
      'cluster worker-1 refused the mirror Job (HTTP 403): jobs.batch "train" is forbidden',
    );
    expect(note).toContain('refusal 1 of 3');
    const next = only(branch, 'patch-placement')[0]!.record;
    expect(next).toEqual({
      attempt: 1,
      carried: nothingCarried,
      excludedClusters: [],
      refusals: 1,
      refusedBy: ['worker-1'],
      lastReplacedBecause: expect.stringContaining('HTTP 403'),
      retryAfter: seconds(5),
      waitingSince: seconds(0),
    });
    expect(branch.at(-1)).toEqual({ type: 'requeue', afterMs: 5_000 });
  });

  it('waits twice as long after the second refusal, and lists each refusing cluster once', () => {
    const branch = refusedBranch(record({ refusals: 1, refusedBy: ['worker-1'] }));
    const next = only(branch, 'patch-placement')[0]!.record;
    expect(next.refusals).toBe(2);
    expect(next.refusedBy).toEqual(['worker-1']);
    expect(branch.at(-1)).toEqual({ type: 'requeue', afterMs: 10_000 });
  });

  it('gives up at the limit: the Job fails with reason MirrorRefused and is never placed again', () => {
    const branch = refusedBranch(record({ refusals: 2, refusedBy: ['worker-2'] }));
    expect(types(branch)).toEqual(['patch-placement', 'record-event', 'write-status']);
    const next = only(branch, 'patch-placement')[0]!.record;
    expect(next.cluster).toBeUndefined();
    expect(next.retryAfter).toBeUndefined();
    expect(next.refusedBy).toEqual(['worker-2', 'worker-1']);
    expect(next.gaveUp).toContain('refused 3 times');
    const status = only(branch, 'write-status')[0]!;
    expect(status.purpose).toBe('gave-up');
    const conditions = (status.status as Job['status'])?.conditions ?? [];
    expect(conditions.map((c) => [c.type, c.reason])).toEqual([
      ['FailureTarget', 'MirrorRefused'],
      ['Failed', 'MirrorRefused'],
    ]);
    expect(conditions[1]!.message).toContain('exceeded quota');
    expect(only(branch, 'record-event')[0]!.note).toContain('Giving up after 3 refusals');
  });

  it('honours a configured limit of 1: the first refusal is final', () => {
    expect(types(refusedBranch(record(), 1))).toEqual(['patch-placement', 'record-event', 'write-status']);
  });

  it('keeps counting refusals when the Job moves to another cluster', () => {
    const actions = plan(
      present(origin, record({ refusals: 1, refusedBy: ['worker-2'] }), [
        cluster('worker-1', { drain: true }),
      ]),
    );
    const next = only(actions, 'patch-placement')[0]!.record;
    expect(next).toMatchObject({ attempt: 2, refusals: 1, refusedBy: ['worker-2'] });
  });
});

describe('4. not placed after a refusal', () => {
  const origin = originJob();
  const unplaced = (overrides: Partial<PlacementRecord>) => {
    const { cluster: _cluster, ...rest } = record({ refusals: 1, refusedBy: ['worker-1'], ...overrides });
    return rest;
  };

  it('waits out the retry delay before asking for a placement', () => {
    expect(plan(present(origin, unplaced({ retryAfter: seconds(4) }), [cluster('worker-1')]))).toEqual([
      { type: 'requeue', afterMs: 4_000 },
    ]);
  });

  it('asks for a placement once the delay is over', () => {
    expect(plan(present(origin, unplaced({ retryAfter: seconds(-1) }), [cluster('worker-1')]))).toEqual([
      { type: 'enqueue-placement' },
    ]);
  });

  it('does nothing more for a workload jobrelay gave up on', () => {
    expect(plan(present(origin, unplaced({ gaveUp: 'refused 3 times' }), [cluster('worker-1')]))).toEqual([]);
  });
});

describe('5. placed on an Active cluster, its mirror not in the cache', () => {
  // No mirror UID is recorded: whether a missing mirror ran is read from the origin. Counts
  // above what the record carried can only come from this attempt's mirror; without them a
  // missing mirror is created (again) in place, and nothing is lost.
  const rows: Array<{
    name: string;
    origin: Job;
    record: PlacementRecord;
    mirror?: Job;
    expected: (actions: OriginAction<Job>[]) => void;
  }> = [
    {
      name: 'no progress of this attempt on the origin: created again, same attempt',
      origin: originJob({ status: running }),
      record: record(),
      expected: (actions) => {
        expect(types(actions)).toEqual(['create-mirror']);
        const create = only(actions, 'create-mirror')[0]!;
        expect(create.cluster).toBe('worker-1');
        expect(create.record).toEqual(record());
        expect(create.body.metadata?.annotations?.[placementAttemptAnnotation]).toBe('1');
      },
    },
    {
      name: 'no progress, but started with a deadline: created again with what is left of it',
      origin: originJob({ spec: { activeDeadlineSeconds: 300 } as Job['spec'], status: running }),
      record: record(),
      expected: (actions) => {
        const { body } = only(actions, 'create-mirror')[0]!;
        // Started 100 s ago: a fresh 300 s would let it run 100 s past the Job's own deadline.
        expect(body.spec?.activeDeadlineSeconds).toBe(200);
        expect(body.metadata?.annotations?.[deadlineUsedAnnotation]).toBe('100');
      },
    },
    {
      name: 'counts equal to those carried from earlier attempts: created again, same attempt, seeded',
      origin: originJob({ status: { ...running, succeeded: 2, failed: 1 } }),
      record: record({ attempt: 2, carried: { succeeded: 2, failed: 1 } }),
      expected: (actions) => {
        expect(types(actions)).toEqual(['create-mirror']);
        const { body } = only(actions, 'create-mirror')[0]!;
        expect(body.metadata?.annotations?.[placementAttemptAnnotation]).toBe('2');
        expect(JSON.parse(body.metadata!.annotations![continuesFromAnnotation]!)).toEqual({
          succeeded: 2,
          failed: 1,
        });
      },
    },
    {
      name: 'successes above those carried: the worker is asked, and if it is gone the Job moves with them',
      origin: originJob({ status: { ...running, succeeded: 1 } }),
      record: record(),
      expected: (actions) => {
        expect(types(actions)).toEqual(['confirm-mirror-vanished']);
        const confirm = only(actions, 'confirm-mirror-vanished')[0]!;
        expect(confirm).toMatchObject({ cluster: 'worker-1', attempt: 1 });
        expect(types(confirm.ifVanished)).toEqual(['patch-placement', 'record-event', 'enqueue-placement']);
        expect(only(confirm.ifVanished, 'patch-placement')[0]!.record).toEqual({
          attempt: 2,
          carried: { succeeded: 1, failed: 0 },
          excludedClusters: [],
          lastReplacedBecause: 'its mirror on worker-1 vanished before the Job finished',
          waitingSince: new Date(now).toISOString(),
        });
        expect(reasons(confirm.ifVanished)).toEqual(['Replacing']);
      },
    },
    {
      name: 'only failures above those carried: the same question, for this attempt',
      origin: originJob({ status: { ...running, succeeded: 2, failed: 3 } }),
      record: record({ attempt: 2, carried: { succeeded: 2, failed: 1 } }),
      expected: (actions) => {
        expect(types(actions)).toEqual(['confirm-mirror-vanished']);
        const confirm = only(actions, 'confirm-mirror-vanished')[0]!;
        expect(confirm.attempt).toBe(2);
        expect(only(confirm.ifVanished, 'patch-placement')[0]!.record).toMatchObject({
          attempt: 3,
          carried: { succeeded: 2, failed: 3 },
        });
      },
    },
    {
      name: 'an index completed but not yet counted (an Indexed Job): progress too, the worker is asked',
      origin: originJob({
        spec: { completionMode: 'Indexed', completions: 3 } as Job['spec'],
        status: { ...running, completedIndexes: '1' },
      }),
      record: record(),
      expected: (actions) => {
        expect(types(actions)).toEqual(['confirm-mirror-vanished']);
        expect(
          only(only(actions, 'confirm-mirror-vanished')[0]!.ifVanished, 'patch-placement')[0]!.record,
        ).toMatchObject({ attempt: 2, carried: { completedIndexes: '1' } });
      },
    },
    {
      name: 'a mirror of this attempt whose UID is not the one an old record names: simply current, synced',
      origin: originJob(),
      // Records written before 0.2 name the mirror they created; that name is read no more.
      record: record({ mirrorUid: 'mirror-uid-1' }),
      mirror: mirrorOf(originJob(), { uid: 'mirror-uid-2', status: running }),
      expected: (actions) => {
        // Nothing ends: no re-placement, no Event; its status goes up as any current mirror's.
        expect(types(actions)).toEqual(['write-status']);
        expect(only(actions, 'write-status')[0]!.status).toMatchObject({ active: 3, ready: 3 });
      },
    },
  ];

  it.each(rows)('$name', ({ origin, record: placed, mirror, expected }) => {
    expected(plan(present(origin, placed, [cluster('worker-1', mirror ? { mirror } : {})])));
  });
});

describe('mirrorRecorded: what follows a mirror created or adopted', () => {
  const placed = record({ attempt: 2 });

  it('records nothing for a created mirror unless dispatch Events are asked for', () => {
    expect(mirrorRecorded(adapter, placed, 'worker-1', 'created', {})).toEqual([]);
    expect(mirrorRecorded(adapter, placed, 'worker-1', 'created', { recordDispatchEvents: false })).toEqual(
      [],
    );
  });

  it('records MirrorCreated for a created mirror when asked, and never writes the placement record', () => {
    expect(mirrorRecorded(adapter, placed, 'worker-1', 'created', { recordDispatchEvents: true })).toEqual([
      {
        type: 'record-event',
        eventType: 'Normal',
        reason: 'MirrorCreated',
        action: 'Create',
        note: 'created mirror Job on cluster worker-1 (attempt 2)',
      },
    ]);
  });

  it.each([false, true])('always records MirrorAdopted for an adopted mirror (dispatch Events %s)', (on) => {
    expect(mirrorRecorded(adapter, placed, 'worker-3', 'adopted', { recordDispatchEvents: on })).toEqual([
      {
        type: 'record-event',
        eventType: 'Normal',
        reason: 'MirrorAdopted',
        action: 'Create',
        note: 'adopted existing mirror Job on cluster worker-3 (attempt 2)',
      },
    ]);
  });
});

describe('2. stale mirrors, with the current one in place', () => {
  const origin = originJob({ status: running });
  const current = mirrorOf(origin, { attempt: 2, uid: 'mirror-uid-2', status: running });
  const placed = record({ cluster: 'worker-2', attempt: 2 });

  it('deletes a mirror of an older attempt on another cluster, and syncs the current one', () => {
    const stale = mirrorOf(origin, { attempt: 1 });
    const actions = plan(
      present(origin, placed, [
        cluster('worker-1', { mirror: stale }),
        cluster('worker-2', { mirror: current }),
      ]),
    );
    expect(actions).toEqual([
      {
        type: 'delete-mirror',
        cluster: 'worker-1',
        mirror: stale,
        why: 'its origin is placed on worker-2 now',
      },
    ]);
  });

  it('leaves a stale mirror on an unreachable cluster for its return', () => {
    const actions = plan(
      present(origin, placed, [
        cluster('worker-1', { mirror: mirrorOf(origin), active: false, inactiveSince: now - 5_000 }),
        cluster('worker-2', { mirror: current }),
      ]),
    );
    expect(actions).toEqual([]);
  });

  it('deletes a mirror left by an earlier origin of the same name', () => {
    const earlier = mirrorOf(origin, { originUid: 'uid-0' });
    const actions = plan(
      present(origin, placed, [
        cluster('worker-1', { mirror: earlier }),
        cluster('worker-2', { mirror: current }),
      ]),
    );
    expect(only(actions, 'delete-mirror').map((a) => a.why)).toEqual([
      'it belongs to an earlier object of this name',
    ]);
  });

  it('never deletes a foreign object, even with our origin’s name', () => {
    const actions = plan(
      present(origin, placed, [
        cluster('worker-1', { mirror: foreignJob(origin) }),
        cluster('worker-2', { mirror: current }),
      ]),
    );
    expect(actions).toEqual([]);
  });
});

describe('6. sync', () => {
  it('seeds a re-placed mirror with the progress of earlier attempts before it may run', () => {
    const origin = originJob({ status: { ...running, succeeded: 2 } });
    const carried = { succeeded: 2, failed: 0 };
    const body = adapter.buildMirror(origin, { originId: 'mgmt-1', attempt: 2, carried, now: new Date(now) });
    const mirror = { ...body, metadata: { ...body.metadata, uid: 'mirror-uid-2' } };
    const actions = plan(present(origin, record({ attempt: 2, carried }), [cluster('worker-1', { mirror })]));
    expect(types(actions)).toEqual(['seed-mirror-status', 'requeue']);
    expect(only(actions, 'seed-mirror-status')[0]!.seed).toMatchObject({ succeeded: 2 });
  });

  describe('a mirror its worker’s own admission holds suspended (a Kueue there)', () => {
    const heldSince = { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' };
    const heldMirror = (origin: Job): Job => {
      const mirror = mirrorOf(origin, { status: { conditions: [heldSince] } });
      mirror.spec!.suspend = true;
      return mirror;
    };
    const withNote = (origin: Job, message: string): Job => ({
      ...origin,
      metadata: { ...origin.metadata, annotations: { [unschedulableAnnotation]: message } },
    });
    const note =
      "held suspended by worker-1's own admission: its Job is suspended there (JobSuspended: Job suspended)";

    it('is left held: no spec patch; the origin says it waits on that worker’s queue, once, with an Event', () => {
      const origin = originJob();
      const actions = plan(present(origin, record(), [cluster('worker-1', { mirror: heldMirror(origin) })]));
      expect(types(actions)).not.toContain('patch-mirror-spec');
      expect(only(actions, 'note-waiting')).toEqual([{ type: 'note-waiting', message: note }]);
      expect(reasons(actions)).toEqual(['HeldByWorker']);
      expect(only(actions, 'record-event')[0]!.eventType).toBe('Normal');
      // Its Suspended condition shows on the origin, as on that worker alone.
      expect((only(actions, 'write-status')[0]!.status as Job['status'])?.conditions).toEqual([heldSince]);

      const noted = withNote(originJob({ status: { conditions: [heldSince] } }), note);
      const again = plan(present(noted, record(), [cluster('worker-1', { mirror: heldMirror(noted) })]));
      expect(types(again)).not.toContain('note-waiting');
      expect(reasons(again)).toEqual([]);
    });

    it('says why in the worker admission’s own words once they are read, with one more Event then', () => {
      const kueue =
        "Kueue: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 500m more needed";
      const withKueue = `held suspended by worker-1's own admission (${kueue})`;
      // Noted first with the mirror's reason (the Workload not read yet): the note and one more Event.
      const origin = withNote(originJob({ status: { conditions: [heldSince] } }), note);
      const actions = plan(
        present(origin, record(), [
          cluster('worker-1', { mirror: heldMirror(origin), workerAdmission: kueue }),
        ]),
      );
      expect(only(actions, 'note-waiting')).toEqual([{ type: 'note-waiting', message: withKueue }]);
      expect(reasons(actions)).toEqual(['HeldByWorker']);
      expect(only(actions, 'record-event')[0]!.note).toBe(withKueue);
      // Kueue's message changes (less quota missing): the note follows, no new Event.
      const noted = withNote(originJob({ status: { conditions: [heldSince] } }), withKueue);
      const changed = kueue.replace('500m', '250m');
      const again = plan(
        present(noted, record(), [
          cluster('worker-1', { mirror: heldMirror(noted), workerAdmission: changed }),
        ]),
      );
      expect(only(again, 'note-waiting')).toEqual([
        { type: 'note-waiting', message: `held suspended by worker-1's own admission (${changed})` },
      ]);
      expect(reasons(again)).toEqual([]);
      // Read before the first note: one note, one Event, both with Kueue's words.
      const fresh = originJob();
      const first = plan(
        present(fresh, record(), [
          cluster('worker-1', { mirror: heldMirror(fresh), workerAdmission: kueue }),
        ]),
      );
      expect(only(first, 'note-waiting')).toEqual([{ type: 'note-waiting', message: withKueue }]);
      expect(only(first, 'record-event').map((e) => e.note)).toEqual([withKueue]);
      // Not held: whatever was read says nothing.
      const running = plan(
        present(noted, record(), [
          cluster('worker-1', { mirror: mirrorOf(noted, { status: { active: 1 } }), workerAdmission: kueue }),
        ]),
      );
      expect(only(running, 'note-waiting')).toEqual([{ type: 'note-waiting', message: null }]);
    });

    it('removes the note once the worker lets it run', () => {
      const origin = withNote(originJob(), note);
      const admitted = mirrorOf(origin, { status: running });
      const actions = plan(present(origin, record(), [cluster('worker-1', { mirror: admitted })]));
      expect(only(actions, 'note-waiting')).toEqual([{ type: 'note-waiting', message: null }]);
      expect(types(actions)).not.toContain('patch-mirror-spec');
    });

    it('still gets the origin’s own suspend, once, with the record of it', () => {
      const origin = originJob({ spec: { ...originJob().spec!, suspend: true } });
      const actions = plan(
        present(origin, record(), [cluster('worker-1', { mirror: heldMirror(originJob()) })]),
      );
      expect(only(actions, 'patch-mirror-spec')).toEqual([
        expect.objectContaining({
          patch: { suspend: true },
          annotations: { [suspendSentAnnotation]: 'true' },
        }),
      ]);
      expect(types(actions)).not.toContain('note-waiting');
    });
  });

  it('propagates a parallelism change down', () => {
    const origin = originJob({ spec: { parallelism: 1 } as Job['spec'] });
    const actions = plan(present(origin, record(), [cluster('worker-1', { mirror: mirrorOf(originJob()) })]));
    expect(only(actions, 'patch-mirror-spec')).toEqual([
      expect.objectContaining({ cluster: 'worker-1', patch: { parallelism: 1 } }),
    ]);
  });

  it('writes the mirror’s status up, and nothing when the origin already has it', () => {
    const origin = originJob();
    const mirror = mirrorOf(origin, { status: running });
    const first = plan(present(origin, record(), [cluster('worker-1', { mirror })]));
    expect(types(first)).toEqual(['write-status']);
    const written = only(first, 'write-status')[0]!.status as Job['status'];
    expect(written).toMatchObject({ active: 3, ready: 3 });
    const synced = originJob({ status: written });
    expect(plan(present(synced, record(), [cluster('worker-1', { mirror })]))).toEqual([]);
  });

  it('takes a seeded mirror’s status as the whole Job’s: the carried progress is not added again', () => {
    const origin = originJob({ status: { ...running, failed: 2 } });
    const carried = { succeeded: 0, failed: 2 };
    const mirror = adapter.buildMirror(origin, { originId, attempt: 2, carried, now: new Date(now) });
    mirror.metadata!.uid = 'mirror-uid-2';
    // Seeded with the 2 carried failures, then one more of its own.
    mirror.status = { ...running, failed: 3 };
    mirror.spec!.suspend = false;
    const actions = plan(present(origin, record({ attempt: 2, carried }), [cluster('worker-1', { mirror })]));
    expect((only(actions, 'write-status')[0]!.status as Job['status'])?.failed).toBe(3);
  });

  it('refuses a status that breaks the kind’s rules, with an Event, writing nothing', () => {
    // The Job translation never produces an invalid status (its property tests say so), so a
    // kind whose rules refuse this one stands in for a mirror the rules would reject.
    const strict = {
      ...adapter,
      statusViolations: () => [{ field: 'status.ready', message: 'must be <= active' }],
    };
    const origin = originJob();
    const mirror = mirrorOf(origin, { status: running });
    const actions = planOrigin(
      present(origin, record(), [cluster('worker-1', { mirror })]),
      strict,
      config,
      now,
    );
    expect(types(actions)).toEqual(['refuse-status', 'record-event']);
    expect(reasons(actions)).toEqual(['StatusRefused']);
    expect(only(actions, 'record-event')[0]!.note).toBe(
      "not writing the mirror's status: status.ready: must be <= active",
    );
  });
});

describe('3. finished', () => {
  const finishedStatus = (at: string) => ({
    succeeded: 3,
    startTime: seconds(-100),
    completionTime: at,
    conditions: [
      { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: at },
      { type: 'Complete', status: 'True', lastTransitionTime: at },
    ],
  });

  it('keeps the mirror for the retention time, then deletes it', () => {
    const recent = originJob({ status: finishedStatus(seconds(-10)) });
    const mirror = mirrorOf(recent);
    expect(plan(present(recent, record(), [cluster('worker-1', { mirror })]))).toEqual([
      { type: 'requeue', afterMs: 20_000 },
    ]);
    const old = originJob({ status: finishedStatus(seconds(-31)) });
    expect(plan(present(old, record(), [cluster('worker-1', { mirror })]))).toEqual([
      { type: 'delete-mirror', cluster: 'worker-1', mirror, why: 'its Job finished' },
    ]);
  });

  it('leaves the mirror of an unreachable cluster for its return', () => {
    const old = originJob({ status: finishedStatus(seconds(-300)) });
    const actions = plan(
      present(old, record(), [
        cluster('worker-1', { mirror: mirrorOf(old), active: false, inactiveSince: now }),
      ]),
    );
    expect(actions).toEqual([]);
  });

  it('places nothing and creates nothing for a finished origin', () => {
    const old = originJob({ status: finishedStatus(seconds(-300)) });
    expect(plan(present(old, undefined, [cluster('worker-1')]))).toEqual([]);
  });
});

describe('determinism', () => {
  it('returns the same actions for the same snapshot and clock, and leaves the snapshot untouched', () => {
    const origin = originJob({ status: running });
    const snapshot = present(origin, record(), [
      cluster('worker-1', { mirror: mirrorOf(origin, { status: { ...running, succeeded: 1 } }) }),
      cluster('worker-2', { mirror: mirrorOf(origin, { attempt: 0 }) }),
    ]);
    const before = structuredClone(snapshot);
    const first = plan(snapshot);
    expect(plan(snapshot)).toEqual(first);
    expect(snapshot).toEqual(before);
  });
});

describe('planEviction', () => {
  it('marks a placed record preempted, sealed in one write, with a Preempted Event', () => {
    const placed = record({ queue: 'research' });
    const actions = planEviction<Job>(
      placed,
      'preempted to admit team-a/urgent (priority 1000) of queue research',
    );
    expect(actions).toEqual([
      {
        type: 'patch-placement',
        record: {
          ...placed,
          preempted: 'preempted to admit team-a/urgent (priority 1000) of queue research',
        },
      },
      {
        type: 'record-event',
        eventType: 'Warning',
        reason: 'Preempted',
        action: 'Preempt',
        note: 'preempted to admit team-a/urgent (priority 1000) of queue research',
      },
    ]);
  });

  it('does nothing for a workload not placed, or already evicted (no second Event)', () => {
    expect(planEviction<Job>(record({ cluster: undefined }), 'x')).toEqual([]);
    expect(planEviction<Job>(record({ preempted: 'earlier' }), 'x')).toEqual([]);
  });
});
