import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { choicesOf, countByPhase, emptyJobFilter, filterJobs } from '../src/job-filters.ts';

const jobs = [
  { namespace: 'team-b', name: 'train-42', phase: 'running', cluster: 'worker-1' },
  { namespace: 'team-a', name: 'train-7', phase: 'succeeded', cluster: 'worker-2' },
  { namespace: 'team-a', name: 'etl', phase: 'pending', cluster: null },
];

describe('filterJobs', () => {
  it('keeps everything, sorted by namespace then name, with no filter set', () => {
    expect(filterJobs(jobs, emptyJobFilter).map((j) => j.name)).toEqual(['etl', 'train-7', 'train-42']);
  });

  it('applies namespace, status, cluster and every search word together', () => {
    expect(filterJobs(jobs, { ...emptyJobFilter, namespace: 'team-a' }).map((j) => j.name)).toEqual([
      'etl',
      'train-7',
    ]);
    expect(filterJobs(jobs, { ...emptyJobFilter, phase: 'running' }).map((j) => j.name)).toEqual([
      'train-42',
    ]);
    expect(filterJobs(jobs, { ...emptyJobFilter, cluster: 'worker-2' }).map((j) => j.name)).toEqual([
      'train-7',
    ]);
    expect(filterJobs(jobs, { ...emptyJobFilter, search: 'TRAIN  team-b' }).map((j) => j.name)).toEqual([
      'train-42',
    ]);
    expect(filterJobs(jobs, { ...emptyJobFilter, search: 'nothing' })).toEqual([]);
  });

  it('never adds a Job, and what it keeps passes each filter', () => {
    const job = fc.record({
      namespace: fc.constantFrom('a', 'b'),
      name: fc.string({ maxLength: 6 }),
      phase: fc.constantFrom('running', 'pending'),
      cluster: fc.option(fc.constantFrom('w1', 'w2'), { nil: null }),
    });
    const filter = fc.record({
      namespace: fc.constantFrom('', 'a'),
      phase: fc.constantFrom('', 'running'),
      cluster: fc.constantFrom('', 'w1'),
      search: fc.string({ maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(job, { maxLength: 20 }), filter, (list, f) => {
        const kept = filterJobs(list, f);
        expect(kept.length).toBeLessThanOrEqual(list.length);
        for (const j of kept) {
          if (f.namespace) expect(j.namespace).toBe(f.namespace);
          if (f.phase) expect(j.phase).toBe(f.phase);
          if (f.cluster) expect(j.cluster).toBe(f.cluster);
        }
      }),
    );
  });
});

describe('choicesOf and countByPhase', () => {
  it('lists distinct non-empty values sorted, and counts phases', () => {
    expect(choicesOf(jobs, (j) => j.cluster)).toEqual(['worker-1', 'worker-2']);
    expect(countByPhase(jobs)).toEqual({ running: 1, succeeded: 1, pending: 1 });
  });
});
