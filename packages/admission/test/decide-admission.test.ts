import { describe, expect, it } from 'vitest';
import { decideAdmission } from '../src/decide-admission.ts';
import type { AdmissionSnapshot, QueueSpec } from '../src/queue-model.ts';
import {
  admittedWorkload,
  anyCluster,
  capacityModel,
  cores,
  gibibytes,
  pendingWorkload,
  queueSpec,
} from './admission-test-model.ts';

function snapshot(parts: Partial<AdmissionSnapshot> & { queues: QueueSpec[] }): AdmissionSnapshot {
  return { admitted: [], pending: [], chooseCluster: anyCluster, ...parts };
}

const admittedUids = (decision: ReturnType<typeof decideAdmission>) => decision.admit.map((a) => a.uid);

describe('decideAdmission: quota of a queue alone', () => {
  it('admits up to the nominal quota and says which resource holds the rest, with positions', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [queueSpec('research', { nominalQuota: { cpu: cores(40), memory: gibibytes(64) } })],
        admitted: [admittedWorkload('running', 'research', { cpu: cores(30), memory: gibibytes(8) })],
        pending: [
          pendingWorkload('a', 'research', { cpu: cores(6) }, { createdAt: 1 }),
          pendingWorkload('b', 'research', { cpu: cores(6) }, { createdAt: 2 }),
          pendingWorkload('c', 'research', { cpu: cores(4) }, { createdAt: 3 }),
        ],
      }),
    );
    expect(admittedUids(decision)).toEqual(['a', 'c']);
    expect(decision.waiting.get('b')).toEqual({
      gate: 'quota',
      message: 'queue research: cpu 40/40 in use; position 2 of 3',
      position: 2,
      of: 3,
    });
    expect(decision.usage.get('research')).toEqual({
      used: { cpu: cores(40), memory: gibibytes(8), workloads: 3 },
      borrowed: {},
      share: 0,
      admitted: 3,
      pending: 1,
    });
  });

  it('counts each workload as one of `workloads` when the queue names it, and not otherwise', () => {
    const pending = ['a', 'b', 'c'].map((uid, i) =>
      pendingWorkload(uid, 'q', { cpu: cores(1) }, { createdAt: i }),
    );
    const limited = decideAdmission(
      snapshot({ queues: [queueSpec('q', { nominalQuota: { cpu: cores(8), workloads: 2 } })], pending }),
    );
    expect(admittedUids(limited)).toEqual(['a', 'b']);
    expect(limited.waiting.get('c')?.message).toBe('queue q: workloads 2/2 in use; position 3 of 3');
    const unlimited = decideAdmission(snapshot({ queues: [queueSpec('q')], pending }));
    expect(admittedUids(unlimited)).toEqual(['a', 'b', 'c']);
  });

  it('never admits a workload asking what its queue does not name, or more than it could ever get', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [queueSpec('research', { nominalQuota: { cpu: cores(8) } })],
        pending: [
          pendingWorkload('gpu', 'research', { cpu: cores(1), 'example.com/gpu': 1 }, { priority: 5 }),
          pendingWorkload('huge', 'research', { cpu: cores(9) }, { priority: 4 }),
          pendingWorkload('zero-gpu', 'research', { cpu: cores(1), 'example.com/gpu': 0 }),
          pendingWorkload('lost', 'nowhere', { cpu: cores(1) }),
        ],
      }),
    );
    expect(decision.waiting.get('gpu')).toMatchObject({
      gate: 'inadmissible',
      message: 'queue research: has no quota for example.com/gpu',
      position: 1,
      of: 3,
    });
    expect(decision.waiting.get('huge')).toMatchObject({
      gate: 'inadmissible',
      message: 'queue research: asks cpu 9, more than the 8 it could ever use',
    });
    expect(decision.waiting.get('lost')).toMatchObject({
      gate: 'inadmissible',
      message: 'queue nowhere does not exist',
    });
    expect(admittedUids(decision)).toEqual(['zero-gpu']);
  });

  it('orders a queue by priority, then age, then uid', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [queueSpec('q', { nominalQuota: { cpu: cores(3) } })],
        pending: [
          pendingWorkload('old-low', 'q', { cpu: cores(1) }, { createdAt: 1 }),
          pendingWorkload('new-high', 'q', { cpu: cores(1) }, { priority: 10, createdAt: 9 }),
          pendingWorkload('b-mid', 'q', { cpu: cores(1) }, { priority: 5, createdAt: 3 }),
          pendingWorkload('a-mid', 'q', { cpu: cores(1) }, { priority: 5, createdAt: 3 }),
        ],
      }),
    );
    expect(admittedUids(decision)).toEqual(['new-high', 'a-mid', 'b-mid']);
    expect(decision.waiting.get('old-low')).toMatchObject({ gate: 'quota', position: 4, of: 4 });
  });
});

describe('decideAdmission: queueing strategy', () => {
  const pending = [
    pendingWorkload('big', 'q', { cpu: cores(6) }, { createdAt: 1 }),
    pendingWorkload('small', 'q', { cpu: cores(2) }, { createdAt: 2 }),
    pendingWorkload('smaller', 'q', { cpu: cores(1) }, { createdAt: 3 }),
  ];
  const admitted = [admittedWorkload('running', 'q', { cpu: cores(4) })];

  it('BestEffortFIFO lets smaller workloads pass one that does not fit', () => {
    const decision = decideAdmission(snapshot({ queues: [queueSpec('q')], admitted, pending }));
    expect(admittedUids(decision)).toEqual(['small', 'smaller']);
    expect(decision.waiting.get('big')?.gate).toBe('quota');
  });

  it('StrictFIFO holds everything behind a head that does not fit', () => {
    const decision = decideAdmission(
      snapshot({ queues: [queueSpec('q', { queueingStrategy: 'StrictFIFO' })], admitted, pending }),
    );
    expect(admittedUids(decision)).toEqual([]);
    expect(decision.waiting.get('big')?.gate).toBe('quota');
    expect(decision.waiting.get('small')).toEqual({
      gate: 'order',
      message: 'queue q: StrictFIFO, behind team/big (position 2 of 3)',
      position: 2,
      of: 3,
    });
  });

  it('StrictFIFO holds everything behind a head no cluster takes; BestEffortFIFO does not', () => {
    const chooseCluster = capacityModel({ east: { cpu: cores(3) } });
    const strict = decideAdmission(
      snapshot({ queues: [queueSpec('q', { queueingStrategy: 'StrictFIFO' })], pending, chooseCluster }),
    );
    expect(strict.waiting.get('big')).toMatchObject({
      gate: 'clusters',
      message: '0/1 clusters available: east: insufficient cpu',
    });
    expect(strict.waiting.get('small')?.gate).toBe('order');
    const bestEffort = decideAdmission(snapshot({ queues: [queueSpec('q')], pending, chooseCluster }));
    expect(admittedUids(bestEffort)).toEqual(['small', 'smaller']);
  });

  it('passes chooseCluster what this decision already placed on each cluster', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [queueSpec('q')],
        pending: [
          pendingWorkload('a', 'q', { cpu: cores(2) }, { createdAt: 1 }),
          pendingWorkload('b', 'q', { cpu: cores(2) }, { createdAt: 2 }),
          pendingWorkload('c', 'q', { cpu: cores(2) }, { createdAt: 3 }),
        ],
        chooseCluster: capacityModel({ east: { cpu: cores(2) }, west: { cpu: cores(3) } }),
      }),
    );
    expect(decision.admit.map((a) => [a.uid, a.cluster])).toEqual([
      ['a', 'east'],
      ['b', 'west'],
    ]);
    expect(decision.waiting.get('c')?.gate).toBe('clusters');
  });
});

describe('decideAdmission: cohorts', () => {
  it('lends unused nominal quota, within the borrowing and lending limits, and says so', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [
          queueSpec('research', {
            cohort: 'lab',
            nominalQuota: { cpu: cores(4) },
            borrowingLimit: { cpu: cores(8) },
          }),
          queueSpec('idle', {
            cohort: 'lab',
            nominalQuota: { cpu: cores(20) },
            lendingLimit: { cpu: cores(10) },
          }),
        ],
        pending: ['a', 'b', 'c', 'd'].map((uid, i) =>
          pendingWorkload(uid, 'research', { cpu: cores(4) }, { createdAt: i }),
        ),
      }),
    );
    expect(admittedUids(decision)).toEqual(['a', 'b', 'c']);
    expect(decision.admit.map((a) => a.borrowed)).toEqual([{}, { cpu: cores(4) }, { cpu: cores(4) }]);
    expect(decision.waiting.get('d')?.message).toBe(
      'queue research: cpu 12/4 in use (borrowing 8 of 8 allowed); position 4 of 4',
    );
    expect(decision.usage.get('research')).toMatchObject({
      borrowed: { cpu: cores(8) },
      // 8 of the 14 cores pooled (4 of its own, 10 lent).
      share: 8 / 14,
    });
  });

  it('borrows up to what the cohort lends when no borrowing limit is named', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [
          queueSpec('research', { cohort: 'lab', nominalQuota: { cpu: cores(2) } }),
          queueSpec('idle', {
            cohort: 'lab',
            nominalQuota: { cpu: cores(4) },
            lendingLimit: { cpu: cores(3) },
          }),
        ],
        pending: ['a', 'b', 'c', 'd', 'e', 'f'].map((uid, i) =>
          pendingWorkload(uid, 'research', { cpu: cores(1) }, { createdAt: i }),
        ),
      }),
    );
    expect(admittedUids(decision)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(decision.waiting.get('f')?.message).toBe(
      'queue research: cpu 5/2 in use (borrowing 3 of unlimited allowed); cohort lab has 0 of 5 left to lend; position 6 of 6',
    );
  });

  it('admits within nominal quota before any borrowing, whatever the priorities', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [
          queueSpec('borrower', { cohort: 'lab', nominalQuota: { cpu: 0 } }),
          queueSpec('owner', { cohort: 'lab', nominalQuota: { cpu: cores(4) } }),
        ],
        pending: [
          pendingWorkload('urgent-borrow', 'borrower', { cpu: cores(4) }, { priority: 1000 }),
          pendingWorkload('own', 'owner', { cpu: cores(4) }, { createdAt: 5 }),
        ],
      }),
    );
    expect(admittedUids(decision)).toEqual(['own']);
    expect(decision.waiting.get('urgent-borrow')?.gate).toBe('quota');
  });

  it('gives borrowed capacity to queues in proportion to their weights', () => {
    const flood = (queue: string) =>
      Array.from({ length: 10 }, (_, i) =>
        pendingWorkload(`${queue}-${i}`, queue, { cpu: cores(1) }, { createdAt: i }),
      );
    const decision = decideAdmission(
      snapshot({
        queues: [
          queueSpec('light', { cohort: 'lab', nominalQuota: { cpu: 0 }, weight: 1 }),
          queueSpec('heavy', { cohort: 'lab', nominalQuota: { cpu: 0 }, weight: 3 }),
          queueSpec('lender', { cohort: 'lab', nominalQuota: { cpu: cores(8) } }),
        ],
        pending: [...flood('light'), ...flood('heavy')],
      }),
    );
    expect(decision.usage.get('light')?.admitted).toBe(2);
    expect(decision.usage.get('heavy')?.admitted).toBe(6);
    // Equal shares at the end: 2/8 of the pool for weight 1, 6/8 for weight 3.
    expect(decision.usage.get('light')?.share).toBe(0.25);
    expect(decision.usage.get('heavy')?.share).toBe(0.25);
  });

  it('counts what a member uses of its guaranteed part against no one, and its lent part against the pool', () => {
    // The owner lends 2 of its 4 cores; the borrower took both. The owner can still use its
    // guaranteed 2, not more until the borrowed cores come back.
    const decision = decideAdmission(
      snapshot({
        queues: [
          queueSpec('owner', {
            cohort: 'lab',
            nominalQuota: { cpu: cores(4) },
            lendingLimit: { cpu: cores(2) },
          }),
          queueSpec('borrower', { cohort: 'lab', nominalQuota: { cpu: 0 } }),
        ],
        admitted: [admittedWorkload('borrowed', 'borrower', { cpu: cores(2) })],
        pending: [
          pendingWorkload('first', 'owner', { cpu: cores(2) }, { createdAt: 1 }),
          pendingWorkload('second', 'owner', { cpu: cores(1) }, { createdAt: 2 }),
        ],
      }),
    );
    expect(admittedUids(decision)).toEqual(['first']);
    expect(decision.waiting.get('second')?.gate).toBe('quota');
  });
});

describe('decideAdmission: preemption', () => {
  const research = (overrides: Partial<QueueSpec> = {}) =>
    queueSpec('research', {
      nominalQuota: { cpu: cores(4) },
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Never' },
      ...overrides,
    });

  it('evicts the fewest lower-priority workloads of the queue, lowest priority and newest first', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [research()],
        admitted: [
          admittedWorkload('low-old', 'research', { cpu: cores(1) }, { priority: 1, admittedAt: 1 }),
          admittedWorkload('low-new', 'research', { cpu: cores(1) }, { priority: 1, admittedAt: 2 }),
          admittedWorkload('mid-big', 'research', { cpu: cores(2) }, { priority: 5, admittedAt: 0 }),
        ],
        pending: [
          pendingWorkload(
            'urgent',
            'research',
            { cpu: cores(2) },
            { priority: 1000, label: 'Kind team-a/urgent' },
          ),
        ],
      }),
    );
    expect(admittedUids(decision)).toEqual([]);
    expect(decision.evict).toEqual(
      ['low-new', 'low-old'].map((uid) => ({
        uid,
        reason: 'InQueuePreemption',
        for: 'urgent',
        message: 'preempted to admit team-a/urgent (priority 1000) of queue research',
      })),
    );
    expect(decision.waiting.get('urgent')).toMatchObject({
      gate: 'preempting',
      message: 'preempting 2 lower-priority workloads of queue research',
    });
  });

  it('drops a victim taken on the way that turns out not to be needed', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [research()],
        admitted: [
          admittedWorkload('tiny', 'research', { cpu: cores(1) }, { priority: 1 }),
          admittedWorkload('large', 'research', { cpu: cores(3) }, { priority: 2 }),
        ],
        pending: [pendingWorkload('urgent', 'research', { cpu: cores(3) }, { priority: 10 })],
      }),
    );
    expect(decision.evict.map((e) => e.uid)).toEqual(['large']);
    expect(decision.waiting.get('urgent')?.message).toBe(
      'preempting 1 lower-priority workload of queue research',
    );
  });

  it('never evicts for a workload of equal priority, nor when the queue does not preempt', () => {
    const admitted = [admittedWorkload('peer', 'research', { cpu: cores(4) }, { priority: 10 })];
    const pending = [pendingWorkload('same', 'research', { cpu: cores(1) }, { priority: 10 })];
    expect(decideAdmission(snapshot({ queues: [research()], admitted, pending })).evict).toEqual([]);
    const higher = [pendingWorkload('higher', 'research', { cpu: cores(1) }, { priority: 11 })];
    const never = research({ preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' } });
    const decision = decideAdmission(snapshot({ queues: [never], admitted, pending: higher }));
    expect(decision.evict).toEqual([]);
    expect(decision.waiting.get('higher')?.gate).toBe('quota');
  });

  it('counts evicting workloads as freed, so a second decision picks no more victims', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [research()],
        admitted: [
          admittedWorkload('leaving', 'research', { cpu: cores(2) }, { priority: 1, evicting: true }),
          admittedWorkload('staying', 'research', { cpu: cores(2) }, { priority: 1 }),
        ],
        pending: [pendingWorkload('urgent', 'research', { cpu: cores(2) }, { priority: 10 })],
      }),
    );
    expect(decision.evict).toEqual([]);
    expect(decision.waiting.get('urgent')).toMatchObject({
      gate: 'preempting',
      message: 'waiting for 1 evicted workload to release quota',
    });
    expect(decision.usage.get('research')?.used.cpu).toBe(cores(4));
  });

  it('preempts for one workload per queue per decision', () => {
    const decision = decideAdmission(
      snapshot({
        queues: [research()],
        admitted: [1, 2, 3, 4].map((n) =>
          admittedWorkload(`low-${n}`, 'research', { cpu: cores(1) }, { admittedAt: n }),
        ),
        pending: [
          pendingWorkload('first', 'research', { cpu: cores(2) }, { priority: 10, createdAt: 1 }),
          pendingWorkload('second', 'research', { cpu: cores(2) }, { priority: 10, createdAt: 2 }),
        ],
      }),
    );
    expect(new Set(decision.evict.map((e) => e.for))).toEqual(new Set(['first']));
    expect(decision.evict.map((e) => e.uid)).toEqual(['low-4', 'low-3']);
    expect(decision.waiting.get('second')?.gate).toBe('quota');
  });

  const cohort = (reclaim: 'Any' | 'LowerPriority') => [
    queueSpec('research', {
      cohort: 'lab',
      nominalQuota: { cpu: cores(4) },
      preemption: { withinQueue: 'Never', reclaimWithinCohort: reclaim },
    }),
    queueSpec('team-b', { cohort: 'lab', nominalQuota: { cpu: cores(2) } }),
    queueSpec('team-c', { cohort: 'lab', nominalQuota: { cpu: cores(2) } }),
  ];

  it('reclaims nominal quota from borrowers, never from a queue within its own nominal', () => {
    const decision = decideAdmission(
      snapshot({
        queues: cohort('Any'),
        admitted: [
          admittedWorkload('b-1', 'team-b', { cpu: cores(2) }, { priority: 50, admittedAt: 1 }),
          admittedWorkload('b-2', 'team-b', { cpu: cores(2) }, { priority: 50, admittedAt: 2 }),
          admittedWorkload('b-3', 'team-b', { cpu: cores(2) }, { priority: 50, admittedAt: 3 }),
          admittedWorkload('c-1', 'team-c', { cpu: cores(2) }, { priority: 0, admittedAt: 4 }),
        ],
        pending: [
          pendingWorkload('mine', 'research', { cpu: cores(4) }, { priority: 10, label: 'Kind team-a/mine' }),
        ],
      }),
    );
    expect(decision.evict).toEqual(
      ['b-3', 'b-2'].map((uid) => ({
        uid,
        reason: 'ReclaimNominalQuota',
        for: 'mine',
        message: 'preempted to admit team-a/mine (priority 10) of queue research',
      })),
    );
    expect(decision.waiting.get('mine')).toMatchObject({
      gate: 'preempting',
      message: 'preempting 2 workloads of team-b to reclaim nominal quota',
    });
  });

  it('LowerPriority reclaims only from lower-priority borrowers', () => {
    const admitted = [
      admittedWorkload('b-1', 'team-b', { cpu: cores(2) }, { priority: 50 }),
      admittedWorkload('b-2', 'team-b', { cpu: cores(2) }, { priority: 50 }),
      admittedWorkload('b-3', 'team-b', { cpu: cores(4) }, { priority: 50 }),
    ];
    const pending = [pendingWorkload('mine', 'research', { cpu: cores(4) }, { priority: 10 })];
    const decision = decideAdmission(snapshot({ queues: cohort('LowerPriority'), admitted, pending }));
    expect(decision.evict).toEqual([]);
    expect(decision.waiting.get('mine')?.gate).toBe('quota');
  });

  it('reclaims only what would fit the queue’s own nominal quota', () => {
    const decision = decideAdmission(
      snapshot({
        queues: cohort('Any'),
        admitted: [admittedWorkload('b-1', 'team-b', { cpu: cores(6) })],
        pending: [pendingWorkload('beyond-nominal', 'research', { cpu: cores(5) }, { priority: 10 })],
      }),
    );
    expect(decision.evict).toEqual([]);
  });
});

describe('decideAdmission: determinism', () => {
  it('gives the same decision whatever order the snapshot lists things in', () => {
    const queues = [
      queueSpec('a', { cohort: 'lab', nominalQuota: { cpu: cores(2) } }),
      queueSpec('b', { cohort: 'lab', nominalQuota: { cpu: cores(2) }, weight: 2 }),
    ];
    const pending = Array.from({ length: 12 }, (_, i) =>
      pendingWorkload(`w${i}`, i % 2 ? 'a' : 'b', { cpu: cores(1) }, { priority: i % 3, createdAt: i % 4 }),
    );
    const forward = decideAdmission(snapshot({ queues, pending }));
    const backward = decideAdmission(
      snapshot({ queues: [...queues].reverse(), pending: [...pending].reverse() }),
    );
    expect(backward).toEqual(forward);
    expect(forward.admit).toHaveLength(4);
  });
});
