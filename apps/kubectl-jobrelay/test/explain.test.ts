import { describe, expect, it } from 'vitest';
import type { JobDetail, WorkloadDetail } from '../src/api-types.ts';
import {
  formatExplanation,
  formatWorkloadExplanation,
  isWaiting,
  statusHighlights,
} from '../src/job-commands.ts';

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

  it('prints the placement decision on a line of its own, and marks history read from the record', () => {
    const decision = 'placed on worker-2 by spread (score 97; worker-3 80); 2/3 clusters feasible.';
    const decided: JobDetail = {
      ...running,
      placement: { cluster: 'worker-2', attempt: 2, decision },
      history: [
        running.history![1]!,
        {
          type: 'Normal',
          reason: 'Placed',
          message: decision,
          at: '2026-01-01T11:55:00Z',
          count: 1,
          source: 'placement-record',
        },
      ],
    };
    const page = formatExplanation(decided, null, now);
    expect(page).toContain(
      [
        'Placement:',
        '  cluster: worker-2',
        '  attempt: 2',
        `Decision:    ${decision}`,
        'Mirror:      on worker-2, uid m-1; active 2, succeeded 0',
      ].join('\n'),
    );
    expect(page).toContain(`  Normal   Placed     5m   1      ${decision} (from the placement record)\n`);
    expect(page).toContain('  Warning  Replacing  5m   1      worker-1 lost\n');
    // Said once, on its own line, not folded into the record's YAML as well.
    expect(page.match(/score 97/g)).toHaveLength(2);
  });

  it('treats a pending Job without a waiting record and without a cluster as waiting', () => {
    expect(isWaiting({ ...running, phase: 'pending', cluster: null, waiting: null })).toBe(true);
    // Placed but its mirror not made yet: pending, yet not waiting for a cluster.
    expect(isWaiting({ ...running, phase: 'pending', waiting: null })).toBe(false);
  });
});

describe('formatWorkloadExplanation', () => {
  it('prints the decision under the placement for a workload of any kind, and no Decision line without one', () => {
    const workload: WorkloadDetail = {
      kind: 'raycluster',
      namespace: 'team-a',
      name: 'demo',
      phase: 'running',
      cluster: 'worker-1',
      attempt: 1,
      placedAt: '2026-01-01T11:59:00Z',
      waitingSince: null,
      createdAt: '2026-01-01T11:58:00Z',
      reason: null,
      placement: { cluster: 'worker-1', attempt: 1, decision: 'placed on worker-1 by binpack (score 60).' },
      mirror: null,
      mirrorUnavailable: 'the API has not seen it yet',
      events: [],
      waiting: null,
    };
    expect(formatWorkloadExplanation(workload, null, now)).toContain(
      ['  attempt: 1', 'Decision:    placed on worker-1 by binpack (score 60).', 'Mirror:'].join('\n'),
    );
    const undecided = { ...workload, placement: { cluster: 'worker-1', attempt: 1 } };
    expect(formatWorkloadExplanation(undecided, null, now)).not.toContain('Decision:');
    expect(formatWorkloadExplanation({ ...workload, placement: null }, null, now)).toContain(
      'Placement:   <none>\n',
    );
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
