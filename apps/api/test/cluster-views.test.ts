import { describe, expect, it } from 'vitest';
import { drainStatus } from '../src/cluster-views.ts';

describe('drainStatus', () => {
  const placed = [
    { namespace: 'team-b', name: 'z', kind: 'job' },
    { namespace: 'team-a', name: 'train', kind: 'job' },
    { namespace: 'team-a', name: 'ray', kind: 'raycluster' },
    { namespace: 'team-c', name: 'secret-project', kind: 'rayjob' },
  ];

  it('counts every workload but names only those the caller may list', () => {
    const visible = (w: { namespace: string; kind: string }) => w.namespace === 'team-a' && w.kind === 'job';
    expect(drainStatus('worker-1', true, placed, visible)).toEqual({
      cluster: 'worker-1',
      draining: true,
      remaining: 4,
      hidden: 3,
      workloads: [{ namespace: 'team-a', name: 'train', kind: 'job' }],
    });
  });

  it('names all, sorted, for a caller who may list everything', () => {
    const status = drainStatus('worker-1', false, placed, () => true);
    expect(status.hidden).toBe(0);
    expect(status.workloads.map((j) => `${j.namespace}/${j.name}`)).toEqual([
      'team-a/ray',
      'team-a/train',
      'team-b/z',
      'team-c/secret-project',
    ]);
  });

  it('an empty cluster', () => {
    expect(drainStatus('w', false, [], () => false)).toEqual({
      cluster: 'w',
      draining: false,
      remaining: 0,
      hidden: 0,
      workloads: [],
    });
  });
});
