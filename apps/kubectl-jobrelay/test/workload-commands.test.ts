import type { WorkloadDetail } from '@jobrelay/api-types';
import { describe, expect, it } from 'vitest';
import { formatWorkloadExplanation, isWaiting, statusHighlights } from '../src/workload-commands.ts';
import { detailOf } from './wire-fixtures.ts';

const now = new Date('2026-01-01T12:00:00Z');

/** A Job re-placed once, shown through the same page as every kind. */
const running: WorkloadDetail = detailOf({
  kind: 'job',
  apiVersion: 'batch/v1',
  objectKind: 'Job',
  namespace: 'team-a',
  name: 'train',
  phase: 'running',
  cluster: 'worker-2',
  attempt: 2,
  placedAt: '2026-01-01T11:55:00Z',
  createdAt: '2026-01-01T11:40:00Z',
  pods: 2,
  placement: { cluster: 'worker-2', attempt: 2 },
  history: [
    {
      type: 'Normal',
      reason: 'Placed',
      message: 'placed on worker-1',
      at: '2026-01-01T11:40:00Z',
      count: 1,
      source: 'jobrelay',
    },
    {
      type: 'Warning',
      reason: 'Replacing',
      message: 'worker-1 lost',
      at: '2026-01-01T11:55:00Z',
      count: 1,
      source: 'jobrelay',
    },
  ],
  mirror: { cluster: 'worker-2', uid: 'm-1', createdAt: null, status: { active: 2, succeeded: 0 } },
  events: null,
});

describe('formatWorkloadExplanation of a Job', () => {
  it('says where a placed Job runs, its placement record, history and mirror', () => {
    expect(isWaiting(running)).toBe(false);
    expect(formatWorkloadExplanation(running, null, now)).toBe(
      [
        'Workload:    job team-a/train (batch/v1 Job)',
        'Phase:       running',
        'Cluster:     worker-2 (attempt 2, placed 5m ago)',
        'Pods:        2 at once',
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
    const decided: WorkloadDetail = {
      ...running,
      placement: { cluster: 'worker-2', attempt: 2, decision },
      history: [
        running.history[1]!,
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
    const page = formatWorkloadExplanation(decided, null, now);
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

  it('treats a pending workload without a waiting record and without a cluster as waiting', () => {
    expect(isWaiting({ ...running, phase: 'pending', cluster: null, waiting: null })).toBe(true);
    // Placed but its mirror not seen yet: not waiting for a cluster.
    expect(isWaiting({ ...running, phase: 'placed', waiting: null })).toBe(false);
  });
});

describe('formatWorkloadExplanation', () => {
  it('prints the decision under the placement for a workload of any kind, and no Decision line without one', () => {
    const workload: WorkloadDetail = detailOf({
      kind: 'raycluster',
      namespace: 'team-a',
      name: 'demo',
      phase: 'running',
      cluster: 'worker-1',
      attempt: 1,
      placedAt: '2026-01-01T11:59:00Z',
      createdAt: '2026-01-01T11:58:00Z',
      placement: { cluster: 'worker-1', attempt: 1, decision: 'placed on worker-1 by binpack (score 60).' },
      mirror: null,
      mirrorUnavailable: 'the API has not seen it yet',
    });
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
