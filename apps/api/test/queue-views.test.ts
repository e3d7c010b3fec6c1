// What the API shows of DispatchQueues and their workloads: the spec summary beside the status,
// the place a waiting reason states, and a queue's members in the controller's order. Queue
// specs are given as parseDispatchQueue answers (its own tests cover parsing).

import type { ParsedQueue, QueueSpec } from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import type { PlacementRecord } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import {
  memberQueue,
  type QueueMemberInput,
  queueMembers,
  queuePlaces,
  queueView,
  selectedQueue,
  statedPlace,
  workloadQueue,
} from '../src/queue-views.ts';

const spec: QueueSpec = {
  name: 'research',
  namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: ['research'] }] },
  nominalQuota: { cpu: 40_000, memory: 64 * 2 ** 30, workloads: 10 },
  cohort: 'lab',
  borrowingLimit: { cpu: 8_000 },
  lendingLimit: { memory: 16 * 2 ** 30 },
  weight: 2,
  queueingStrategy: 'BestEffortFIFO',
  preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
};

const queueObject = (status?: unknown): KubeObject =>
  ({
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name: 'research', creationTimestamp: '2026-12-01T10:00:00Z' },
    spec: { namespaceSelector: { matchLabels: { team: 'research' } } },
    ...(status === undefined ? {} : { status }),
  }) as KubeObject;

const status = {
  pendingWorkloads: 17,
  admittedWorkloads: 5,
  usage: { cpu: '44', memory: '8Gi', workloads: '5' },
  borrowed: { cpu: '4' },
  share: '0.55',
  columns: { cpu: '44/40', memory: '8Gi/64Gi', gpu: '-' },
  conditions: [
    {
      type: 'Active',
      status: 'True',
      reason: 'Ready',
      message: '',
      lastTransitionTime: '2026-12-01T10:00:01Z',
    },
  ],
  observedGeneration: 3,
};

describe('statedPlace', () => {
  it('reads the queue a gate names', () => {
    expect(statedPlace('queue research: cpu 40/40 in use (borrowing 0 of 8 allowed)')).toEqual({
      queue: 'research',
    });
    expect(statedPlace('queue team-b.gpu: StrictFIFO, behind team-a/big')).toEqual({ queue: 'team-b.gpu' });
  });

  it('names no queue for a placement reason or a preemption', () => {
    expect(statedPlace('0/3 clusters available: 1 cordoned, 2 insufficient cpu')).toEqual({});
    expect(statedPlace('preempting 2 workloads of team-b to reclaim nominal quota')).toEqual({});
    expect(statedPlace(null)).toEqual({});
  });
});

describe('queueView', () => {
  it('summarizes the spec per resource beside the status the controller wrote', () => {
    const view = queueView(queueObject(status), { kind: 'ok', spec });
    expect(view).toMatchObject({
      name: 'research',
      valid: true,
      problems: [],
      cohort: 'lab',
      weight: 2,
      queueingStrategy: 'BestEffortFIFO',
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
      namespaceSelector: { matchLabels: { team: 'research' } },
      createdAt: '2026-12-01T10:00:00Z',
    });
    expect(view.resources).toEqual([
      {
        name: 'cpu',
        nominal: '40',
        borrowingLimit: '8',
        lendingLimit: null,
        used: '44',
        borrowed: '4',
        usedAmount: 44_000,
        nominalAmount: 40_000,
        borrowingLimitAmount: 8_000,
      },
      {
        name: 'memory',
        nominal: '64Gi',
        borrowingLimit: null,
        lendingLimit: '16Gi',
        used: '8Gi',
        borrowed: null,
        usedAmount: 8 * 2 ** 30,
        nominalAmount: 64 * 2 ** 30,
        borrowingLimitAmount: null,
      },
      {
        name: 'workloads',
        nominal: '10',
        borrowingLimit: null,
        lendingLimit: null,
        used: '5',
        borrowed: null,
        usedAmount: 5,
        nominalAmount: 10,
        borrowingLimitAmount: null,
      },
    ]);
    expect(view.status).toMatchObject({
      pendingWorkloads: 17,
      admittedWorkloads: 5,
      share: '0.55',
      observedGeneration: 3,
    });
    expect(view.status?.conditions[0]?.reason).toBe('Ready');
  });

  it('shows no status before the controller wrote one, and no usage then', () => {
    const view = queueView(queueObject(), { kind: 'ok', spec });
    expect(view.status).toBeNull();
    expect(view.resources.every((resource) => resource.used === null && resource.usedAmount === null)).toBe(
      true,
    );
  });

  it('shows an invalid spec’s problems and nothing of its quota', () => {
    const parsed: ParsedQueue = {
      kind: 'invalid',
      name: 'research',
      problems: ['spec.weight must be greater than 0'],
    };
    const view = queueView(queueObject({ ...status, usage: {} }), parsed);
    expect(view).toMatchObject({
      valid: false,
      problems: ['spec.weight must be greater than 0'],
      cohort: null,
    });
    expect(view.resources).toEqual([]);
  });

  it('ignores a status of another shape rather than failing', () => {
    expect(queueView(queueObject({ pendingWorkloads: 'many' }), { kind: 'ok', spec }).status).toBeNull();
  });
});

const placed = (queue: string | undefined, cluster = 'w1'): PlacementRecord => ({
  cluster,
  attempt: 1,
  placedAt: '2026-12-01T10:01:00Z',
  decision: `placed on ${cluster}`,
  carried: {},
  excludedClusters: [],
  ...(queue ? { queue } : {}),
});

function member(
  name: string,
  fields: Partial<QueueMemberInput> & { namespace?: string; createdAt?: string } = {},
): QueueMemberInput {
  return {
    kind: 'job',
    object: {
      metadata: {
        namespace: fields.namespace ?? 'team-a',
        name,
        uid: `uid-${name}`,
        creationTimestamp: fields.createdAt ?? '2026-12-01T10:00:00Z',
      },
    } as KubeObject,
    record: undefined,
    reason: null,
    waitingSince: null,
    pods: 1,
    live: true,
    priority: 0,
    ...fields,
  };
}

describe('memberQueue', () => {
  it('takes an admitted workload’s queue from its placement record, not from its namespace', () => {
    expect(memberQueue({ record: placed('research'), reason: null }, () => 'other')).toBe('research');
    expect(memberQueue({ record: placed(undefined), reason: null }, () => 'other')).toBeUndefined();
  });

  it('takes a pending workload’s queue from its reason, else from the selection', () => {
    expect(memberQueue({ record: undefined, reason: 'queue a: cpu 1/1 in use' }, () => 'b')).toBe('a');
    expect(memberQueue({ record: undefined, reason: '0/2 clusters available' }, () => 'b')).toBe('b');
  });
});

describe('queueMembers', () => {
  const select = () => 'research';

  it('orders pending workloads as the controller does: priority, then age, whatever their reasons', () => {
    const inputs = [
      member('old-low', { createdAt: '2026-12-01T10:00:00Z', reason: '0/2 clusters available' }),
      member('new-high', {
        createdAt: '2026-12-01T10:05:00Z',
        priority: 1000,
        reason: 'queue research: cpu 40/40 in use',
      }),
      member('mid-low', { createdAt: '2026-12-01T10:02:00Z' }),
      member('old-high', { createdAt: '2026-12-01T10:01:00Z', priority: 1000 }),
    ];
    const { pending, admitted } = queueMembers('research', inputs, select);
    expect(pending.map((p) => [p.name, p.position])).toEqual([
      ['old-high', 1],
      ['new-high', 2],
      ['old-low', 3],
      ['mid-low', 4],
    ]);
    expect(pending[1]?.reason).toBe('queue research: cpu 40/40 in use');
    expect(admitted).toEqual([]);
  });

  it('lists admitted workloads by name with their cluster, and leaves out other queues and finished ones', () => {
    const inputs = [
      member('b-run', { record: placed('research', 'w2'), pods: 4 }),
      member('a-run', { record: placed('research') }),
      member('elsewhere', { record: placed('other') }),
      member('done', { record: placed('research'), live: false }),
      member('other-pending', { reason: 'queue other: cpu 1/1 in use' }),
    ];
    const { pending, admitted } = queueMembers('research', inputs, select);
    expect(pending).toEqual([]);
    expect(admitted.map((a) => [a.name, a.cluster, a.pods, a.position])).toEqual([
      ['a-run', 'w1', 1, null],
      ['b-run', 'w2', 4, null],
    ]);
    expect(admitted[0]?.admittedAt).toBe('2026-12-01T10:01:00Z');
  });

  it('counts a pending workload that names no queue in the queue selected for it', () => {
    const inputs = [member('x', { namespace: 'team-b' }), member('y', { namespace: 'team-c' })];
    const { pending } = queueMembers('research', inputs, (input) =>
      input.object.metadata?.namespace === 'team-b' ? 'research' : undefined,
    );
    expect(pending.map((p) => p.name)).toEqual(['x']);
  });
});

describe('queuePlaces', () => {
  it('places each pending workload in its own queue, in order, leaving out admitted and finished ones', () => {
    const inputs = [
      member('a2', { createdAt: '2026-12-01T10:02:00Z' }),
      member('a1', { createdAt: '2026-12-01T10:01:00Z' }),
      member('b1', { namespace: 'team-b' }),
      member('a-run', { record: placed('research') }),
      member('a-done', { live: false }),
      member('nowhere', { namespace: 'team-c' }),
    ];
    const byNamespace = (input: QueueMemberInput) =>
      ({ 'team-a': 'research', 'team-b': 'production' })[input.object.metadata?.namespace ?? ''];
    const places = queuePlaces(inputs, byNamespace);
    expect(Object.fromEntries(places)).toEqual({
      'uid-a1': { queue: 'research', position: 1, of: 2 },
      'uid-a2': { queue: 'research', position: 2, of: 2 },
      'uid-b1': { queue: 'production', position: 1, of: 1 },
    });
  });
});

describe('workloadQueue', () => {
  const places = new Map([['uid-x', { queue: 'research', position: 3, of: 17 }]]);

  it('names the queue and the place of a pending workload', () => {
    expect(
      workloadQueue(
        { record: undefined, reason: 'queue research: cpu 40/40 in use', uid: 'uid-x' },
        () => undefined,
        places,
      ),
    ).toEqual({ name: 'research', position: 3, of: 17 });
  });

  it('names the selected queue without a place when it has none there', () => {
    expect(
      workloadQueue(
        { record: undefined, reason: '0/2 clusters available', uid: 'uid-y' },
        () => 'research',
        places,
      ),
    ).toEqual({ name: 'research', position: null, of: null });
  });

  it('names an admitted workload’s queue without a place, and none without a queue', () => {
    expect(
      workloadQueue({ record: placed('research'), reason: null, uid: 'uid-x' }, () => 'x', places),
    ).toEqual({
      name: 'research',
      position: null,
      of: null,
    });
    expect(
      workloadQueue({ record: undefined, reason: null, uid: 'uid-z' }, () => undefined, places),
    ).toBeNull();
  });
});

describe('selectedQueue', () => {
  const ns = { namespace: 'team-x' };
  const selecting = (name: string, team: string): ParsedQueue => ({
    kind: 'ok',
    spec: {
      ...spec,
      name,
      namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: [team] }] },
    },
  });
  const byLabelOnly: ParsedQueue = {
    kind: 'ok',
    spec: { ...spec, name: 'nowhere', namespaceSelector: undefined },
  };

  it('is the only queue selecting the namespace, and none when none selects it', () => {
    const queues = [selecting('research', 'research'), selecting('ops', 'ops'), byLabelOnly];
    expect(selectedQueue(ns, { team: 'research' }, queues)).toBe('research');
    expect(selectedQueue(ns, { team: 'sales' }, queues)).toBeUndefined();
    expect(selectedQueue(ns, undefined, queues)).toBeUndefined();
  });

  it('lets the queue-name label pick among the queues selecting the namespace, and only among them', () => {
    const queues = [selecting('research', 'research'), selecting('research-gpu', 'research'), byLabelOnly];
    expect(selectedQueue(ns, { team: 'research' }, queues)).toBeUndefined();
    const labelled = (queue: string) => ({ ...ns, labels: { 'jobrelay.dev/queue-name': queue } });
    expect(selectedQueue(labelled('research-gpu'), { team: 'research' }, queues)).toBe('research-gpu');
    expect(selectedQueue(labelled('nowhere'), { team: 'research' }, queues)).toBeUndefined();
    expect(selectedQueue(labelled('missing'), { team: 'research' }, queues)).toBeUndefined();
  });

  it('does not let an invalid queue’s namespaces fall to another queue: their workloads wait, unqueued here', () => {
    const invalid: ParsedQueue = {
      kind: 'invalid',
      name: 'broken',
      problems: ['spec.weight must be greater than 0'],
      namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: ['lab'] }] },
    };
    const other: ParsedQueue = {
      kind: 'ok',
      spec: { ...spec, name: 'lab-b', namespaceSelector: invalid.namespaceSelector },
    };
    expect(selectedQueue(ns, { team: 'lab' }, [invalid])).toBeUndefined();
    // Without the invalid queue, the other one would take the workload.
    expect(selectedQueue(ns, { team: 'lab' }, [other])).toBe('lab-b');
    expect(
      selectedQueue({ ...ns, labels: { 'jobrelay.dev/queue-name': 'lab-b' } }, { team: 'lab' }, [
        invalid,
        other,
      ]),
    ).toBe('lab-b');
  });
});
