import { describe, expect, it } from 'vitest';
import { formatAge, formatDuration } from '../src/format-age.ts';
import {
  clusterRow,
  formatCpu,
  formatMemory,
  pendingRow,
  workloadHeaders,
  workloadRow,
} from '../src/format-rows.ts';
import { formatTable } from '../src/format-table.ts';
import { clusterOf, pendingOf, summaryOf } from './wire-fixtures.ts';

describe('formatDuration (kubectl HumanDuration)', () => {
  const s = 1000;
  const m = 60 * s;
  const h = 60 * m;
  const d = 24 * h;
  it.each([
    [-5 * s, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [4 * m + 30 * s, '4m30s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [5 * h + 15 * m, '5h15m'],
    [47 * h, '47h'],
    [3 * d + 4 * h, '3d4h'],
    [5 * d, '5d'],
    [400 * d, '400d'],
    [3 * 365 * d + 10 * d, '3y10d'],
    [9 * 365 * d, '9y'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('measures an age from an RFC 3339 timestamp', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    expect(formatAge('2026-01-01T11:55:00Z', now)).toBe('5m');
    // As in kubectl, minutes are kept up to three hours.
    expect(formatAge('2026-01-01T10:00:00Z', now)).toBe('120m');
    expect(formatAge('2026-01-01T09:00:00Z', now)).toBe('3h');
    expect(formatAge(null, now)).toBe('<unknown>');
    expect(formatAge('yesterday', now)).toBe('<unknown>');
  });
});

describe('formatTable', () => {
  it('pads columns to the widest cell with two spaces and leaves no trailing blanks', () => {
    expect(
      formatTable(
        ['name', 'active', 'reason'],
        [
          ['worker-1', 'True', ''],
          ['w2', 'False', 'Unreachable'],
        ],
      ),
    ).toBe('NAME      ACTIVE  REASON\nworker-1  True\nw2        False   Unreachable\n');
  });

  it('keeps a cell with a newline on one line', () => {
    expect(formatTable(['A', 'B'], [['x', 'one\n two']])).toBe('A  B\nx  one two\n');
  });
});

describe('rows', () => {
  const now = new Date('2026-01-01T12:00:00Z');

  it('shows a cluster as kubectl get would', () => {
    expect(
      clusterRow(
        clusterOf({
          name: 'worker-1',
          active: true,
          reason: 'Connected',
          kubernetesVersion: 'v1.35.4',
          cordoned: true,
          draining: false,
          capacity: { nodes: 2, allocatable: {}, free: { cpu: '3500m', memory: '7Gi' } },
          workloadsPlaced: 4,
          placementsPerMinute: 1.25,
          createdAt: '2026-01-01T09:00:00Z',
        }),
        now,
      ),
    ).toEqual(['worker-1', 'True', 'Connected', 'v1.35.4', 'True', '4', '3500m', '7Gi', '1.3', '3h']);
  });

  it('says Draining rather than cordoned, and <unknown> without capacity', () => {
    const row = clusterRow(
      clusterOf({
        name: 'w',
        active: false,
        reason: 'Unreachable',
        kubernetesVersion: null,
        cordoned: true,
        draining: true,
        capacity: null,
      }),
      now,
    );
    expect(row).toEqual([
      'w',
      'False',
      'Unreachable',
      '<none>',
      'Draining',
      '0',
      '<unknown>',
      '<unknown>',
      '0',
      '<unknown>',
    ]);
  });

  it('formats numeric quantities', () => {
    expect(formatCpu(2)).toBe('2');
    expect(formatCpu(1.5)).toBe('1500m');
    expect(formatMemory(8 * 1024 ** 3)).toBe('8Gi');
    expect(formatMemory(1536 * 1024 ** 2)).toBe('1.5Gi');
    expect(formatMemory(512)).toBe('512');
  });

  it('shows how long a pending workload waited from waitingSeconds, else waitingSince, and its kind', () => {
    expect(
      pendingRow(
        pendingOf({
          position: 1,
          kind: 'raycluster',
          namespace: 'a',
          name: 'j',
          waitingSeconds: 300,
          reason: 'x',
        }),
        now,
      ),
    ).toEqual(['1', 'raycluster', 'a', 'j', '<none>', '5m', 'x']);
    expect(
      pendingRow(
        pendingOf({
          position: 2,
          kind: 'job',
          namespace: 'a',
          name: 'k',
          waitingSince: '2026-01-01T11:59:00Z',
        }),
        now,
      ),
    ).toEqual(['2', 'job', 'a', 'k', '<none>', '60s', 'waiting']);
  });

  it('shows a workload of any kind: its kind, phase, cluster, attempt and pods', () => {
    const workload = summaryOf({
      kind: 'raycluster',
      namespace: 'team-a',
      name: 'demo',
      phase: 'running',
      cluster: 'w2',
      attempt: 1,
      placedAt: '2026-01-01T11:58:00Z',
      createdAt: '2026-01-01T11:50:00Z',
      pods: 3,
    });
    expect(workloadHeaders(true)).toEqual([
      'NAMESPACE',
      'KIND',
      'NAME',
      'PHASE',
      'CLUSTER',
      'ATTEMPT',
      'PODS',
      'AGE',
      'REASON',
    ]);
    expect(workloadRow(workload, true, now)).toEqual([
      'team-a',
      'raycluster',
      'demo',
      'running',
      'w2',
      '1',
      '3',
      '10m',
      '<none>',
    ]);
    expect(
      workloadRow({ ...workload, cluster: null, attempt: null, phase: 'pending' as const }, false, now),
    ).toEqual(['raycluster', 'demo', 'pending', '<none>', '<none>', '3', '10m', '<none>']);
  });
});
