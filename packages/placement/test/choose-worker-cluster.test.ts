import { describe, expect, it } from 'vitest';
import { type ClusterCandidate, chooseWorkerCluster } from '../src/choose-worker-cluster.ts';

const cluster = (name: string, overrides: Partial<ClusterCandidate> = {}): ClusterCandidate => ({
  name,
  active: true,
  activeJobs: 0,
  ...overrides,
});

describe('chooseWorkerCluster', () => {
  it('picks the active cluster with the fewest active Jobs', () => {
    const decision = chooseWorkerCluster([cluster('a', { activeJobs: 3 }), cluster('b', { activeJobs: 1 })], {
      excludedClusters: [],
    });
    expect(decision).toMatchObject({ kind: 'placed', cluster: 'b' });
    expect(decision.message).toBe('placed on b: fewest active Jobs (1) of 2/2 available clusters');
  });

  it('breaks ties by name, so the same inputs give the same answer', () => {
    const decision = chooseWorkerCluster([cluster('b'), cluster('a')], { excludedClusters: [] });
    expect(decision).toMatchObject({ kind: 'placed', cluster: 'a' });
  });

  it('skips inactive and excluded clusters even when they are emptier', () => {
    const decision = chooseWorkerCluster(
      [
        cluster('a', { active: false, inactiveReason: 'Unreachable' }),
        cluster('b'),
        cluster('c', { activeJobs: 5 }),
      ],
      { excludedClusters: ['b'] },
    );
    expect(decision).toMatchObject({ kind: 'placed', cluster: 'c' });
    expect(decision.message).toContain('1/3 available');
  });

  it('explains why nothing fits, counting each reason', () => {
    const decision = chooseWorkerCluster(
      [
        cluster('a', { active: false, inactiveReason: 'Unreachable' }),
        cluster('b', { active: false, inactiveReason: 'Unreachable' }),
        cluster('c'),
      ],
      { excludedClusters: ['c'] },
    );
    expect(decision).toEqual({
      kind: 'unschedulable',
      message:
        '0/3 clusters available: 1 excluded (a Job of the same name that jobrelay does not own is there), 2 not active (Unreachable).',
    });
  });

  it('says so when no cluster is registered', () => {
    expect(chooseWorkerCluster([], { excludedClusters: [] })).toEqual({
      kind: 'unschedulable',
      message: '0/0 clusters available: no WorkerCluster is registered.',
    });
  });
});
