// `kubectl jobrelay queues`: the table's cells, a queue's page, and a workload's queue on the
// explain page and in the pending table. The answers are whole API answers (wire-fixtures).
import type { DispatchQueueDetail } from '@jobrelay/api-types';
import { describe, expect, it } from 'vitest';
import { queueCell } from '../src/format-rows.ts';
import { formatQueueDetail, queueRow } from '../src/queue-commands.ts';
import { formatWorkloadExplanation } from '../src/workload-commands.ts';
import { detailOf, queuedOf, queueOf } from './wire-fixtures.ts';

const now = new Date('2026-01-01T12:00:00Z');

const cpu = {
  name: 'cpu',
  nominal: '40',
  borrowingLimit: '8',
  lendingLimit: null,
  used: '44',
  borrowed: '4',
  usedAmount: 44_000,
  nominalAmount: 40_000,
  borrowingLimitAmount: 8_000,
};

const status = {
  pendingWorkloads: 17,
  admittedWorkloads: 5,
  usage: { cpu: '44' },
  borrowed: { cpu: '4', memory: '2Gi' },
  share: '0.55',
  columns: { cpu: '44/40', memory: '8Gi/64Gi', gpu: '-' },
  conditions: [
    {
      type: 'Active',
      status: 'True' as const,
      reason: 'Ready',
      message: '',
      lastTransitionTime: '2026-01-01T11:00:00Z',
    },
  ],
  observedGeneration: 2,
};

describe('queueRow', () => {
  it('shows counts, used/nominal per resource, what it borrowed and its share, from the status', () => {
    expect(queueRow(queueOf({ name: 'research', cohort: 'lab', resources: [cpu], status }))).toEqual([
      'research',
      'lab',
      '17',
      '5',
      '44/40',
      '8Gi/64Gi',
      '-',
      'cpu=4,memory=2Gi',
      '0.55',
    ]);
  });

  it('shows the quota alone, and unknown counts, before the controller wrote a status', () => {
    const gpu = { ...cpu, name: 'nvidia.com/gpu', nominal: '8', used: null, borrowed: null };
    expect(queueRow(queueOf({ name: 'fresh', resources: [cpu, gpu] }))).toEqual([
      'fresh',
      '<none>',
      '<unknown>',
      '<unknown>',
      '?/40',
      '-',
      '?/8',
      '<unknown>',
      '<unknown>',
    ]);
  });

  it('says <none> for a queue that borrows nothing', () => {
    expect(queueRow(queueOf({ name: 'q', status: { ...status, borrowed: {} } }))[7]).toBe('<none>');
  });
});

describe('formatQueueDetail', () => {
  const detail: DispatchQueueDetail = {
    ...queueOf({
      name: 'research',
      cohort: 'lab',
      weight: 2,
      namespaceSelector: { matchLabels: { team: 'research' } },
      resources: [cpu],
      status,
      createdAt: '2026-01-01T10:00:00Z',
    }),
    pending: [
      queuedOf({
        name: 'big',
        position: 1,
        waitingSince: '2026-01-01T11:50:00Z',
        reason: 'queue research: cpu 40/40 in use (borrowing 8 of 8 allowed)',
      }),
      queuedOf({
        name: 'small',
        kind: 'rayjob',
        position: 3,
        waitingSince: '2026-01-01T11:59:00Z',
        reason: null,
      }),
    ],
    admitted: [queuedOf({ name: 'run', cluster: 'worker-1', pods: 4, admittedAt: '2026-01-01T11:30:00Z' })],
    hidden: { pending: 1, admitted: 0 },
  };

  it('shows its quota, then its pending workloads in order with reasons, then its admitted ones', () => {
    expect(formatQueueDetail(detail, now)).toBe(
      [
        'Queue:       research',
        'Cohort:      lab (weight 2)',
        'Strategy:    BestEffortFIFO',
        'Preemption:  within queue Never, reclaim within cohort Never',
        'Namespaces:  {"matchLabels":{"team":"research"}}',
        'Active:      True (Ready)',
        'Share:       0.55',
        'Age:         120m',
        'Quota:',
        '  RESOURCE  USED  NOMINAL  BORROWED  BORROWING-LIMIT  LENDING-LIMIT',
        '  cpu       44    40       4         8                <none>',
        'Pending (2 in queue order; 1 more you may not list):',
        '  POSITION  KIND    NAMESPACE  NAME   WAITING  REASON',
        '  1         job     team-a     big    10m      queue research: cpu 40/40 in use (borrowing 8 of 8 allowed)',
        '  3         rayjob  team-a     small  60s      <none>',
        'Admitted (1):',
        '  KIND  NAMESPACE  NAME  CLUSTER   PODS  ADMITTED',
        '  job   team-a     run   worker-1  4     30m',
        '',
      ].join('\n'),
    );
  });

  it('names what is wrong with an invalid queue', () => {
    const invalid = {
      ...detail,
      valid: false,
      problems: ['spec.weight must be > 0', 'spec.nominalQuota is empty'],
    };
    expect(formatQueueDetail(invalid, now)).toContain(
      'Invalid:     spec.weight must be > 0; spec.nominalQuota is empty\n',
    );
  });
});

describe('a workload’s queue', () => {
  it('is named with its place in the pending table', () => {
    expect(queueCell({ name: 'research', position: 3, of: 17 })).toBe('research 3/17');
    expect(queueCell({ name: 'research', position: null, of: null })).toBe('research');
    expect(queueCell(null)).toBe('<none>');
  });

  it('is named on the explain page while waiting, even when the reason is a cluster’s', () => {
    const waiting = detailOf({
      kind: 'job',
      name: 'train',
      phase: 'pending',
      waiting: { reason: '0/2 clusters available: 2 insufficient cpu', since: '2026-01-01T11:59:00Z' },
      queue: { name: 'research', position: null, of: null },
    });
    expect(formatWorkloadExplanation(waiting, null, now)).toContain('\nQueue:       research (waiting)\n');
    const queued = detailOf({ ...waiting, queue: { name: 'research', position: 2, of: 5 } });
    expect(formatWorkloadExplanation(queued, null, now)).toContain(
      '\nQueue:       research (waiting, position 2 of 5)\n',
    );
  });

  it('is named as holding its quota once admitted, and absent without a queue', () => {
    const admitted = detailOf({
      kind: 'job',
      name: 'train',
      phase: 'running',
      cluster: 'worker-1',
      queue: { name: 'research', position: null, of: null },
    });
    expect(formatWorkloadExplanation(admitted, null, now)).toContain(
      '\nQueue:       research (admitted: holds its quota)\n',
    );
    expect(formatWorkloadExplanation({ ...admitted, queue: null }, null, now)).not.toContain('Queue:');
  });
});
