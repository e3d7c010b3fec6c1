import { describe, expect, it } from 'vitest';
import type { JobDetail } from '../src/api-types.ts';
import { formatExplanation, isWaiting, statusHighlights } from '../src/job-commands.ts';

const now = new Date('2026-01-01T12:00:00Z');

const running: JobDetail = {
  namespace: 'team-a',
  name: 'train',
  phase: 'running',
  cluster: 'worker-2',
  attempt: 2,
  placedAt: '2026-01-01T11:55:00Z',
  waitingSince: null,
  createdAt: '2026-01-01T11:40:00Z',
  completions: 4,
  parallelism: 2,
  active: 2,
  succeeded: 1,
  failed: 1,
  reason: null,
  placement: { cluster: 'worker-2', attempt: 2 },
  history: [
    { type: 'Normal', reason: 'Placed', message: 'placed on worker-1', at: '2026-01-01T11:40:00Z', count: 1 },
    { type: 'Warning', reason: 'Replacing', message: 'worker-1 lost', at: '2026-01-01T11:55:00Z', count: 1 },
  ],
  mirror: { cluster: 'worker-2', uid: 'm-1', status: { active: 2, succeeded: 0 } },
  mirrorUnavailable: null,
  events: null,
  waiting: null,
};

describe('formatExplanation', () => {
  it('says where a placed Job runs, its placement record, history and mirror', () => {
    expect(isWaiting(running)).toBe(false);
    expect(formatExplanation(running, null, now)).toBe(
      [
        'Job:         team-a/train',
        'Phase:       running',
        'Cluster:     worker-2 (attempt 2, placed 5m ago)',
        'Completions: 1/4 (active 2, failed 1)',
        'Age:         20m',
        'Placement:',
        '  cluster: worker-2',
        '  attempt: 2',
        'Mirror:      on worker-2, uid m-1; active 2, succeeded 0',
        'History:',
        '  TYPE     REASON     AGE  COUNT  MESSAGE',
        '  Normal   Placed     20m  1      placed on worker-1',
        '  Warning  Replacing  5m   1      worker-1 lost',
        'Events:      <unknown> (you may not list Events in this namespace)',
        '',
      ].join('\n'),
    );
  });

  it('treats a pending Job without a waiting record and without a cluster as waiting', () => {
    expect(isWaiting({ ...running, phase: 'pending', cluster: null, waiting: null })).toBe(true);
    // Placed but its mirror not made yet: pending, yet not waiting for a cluster.
    expect(isWaiting({ ...running, phase: 'pending', waiting: null })).toBe(false);
  });
});

describe('statusHighlights', () => {
  it('says what any kind’s status says in a line: state-like fields first, plain values only, at most six', () => {
    expect(
      statusHighlights({
        succeeded: 1,
        rayClusterName: 'demo-x',
        jobDeploymentStatus: 'Running',
        jobStatus: 'RUNNING',
        rayClusterStatus: { state: 'ready' },
        message: 'x'.repeat(80),
        dashboardURL: '',
        failed: 0,
        startTime: '2026-01-01T11:00:00Z',
      }),
    ).toEqual([
      'jobDeploymentStatus Running',
      'jobStatus RUNNING',
      'failed 0',
      `message ${'x'.repeat(57)}...`,
      'rayClusterName demo-x',
      'startTime 2026-01-01T11:00:00Z',
    ]);
    expect(statusHighlights(undefined)).toEqual([]);
  });
});
