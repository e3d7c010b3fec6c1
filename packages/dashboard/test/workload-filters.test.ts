import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  choicesOf,
  countByPhase,
  emptyWorkloadFilter,
  filterWorkloads,
  workloadKey,
} from '../src/workload-filters.ts';

const workloads = [
  { kind: 'job', namespace: 'team-b', name: 'train-42', phase: 'running', cluster: 'worker-1' },
  { kind: 'job', namespace: 'team-a', name: 'train-7', phase: 'finished', cluster: 'worker-2' },
  { kind: 'rayjob', namespace: 'team-a', name: 'etl', phase: 'pending', cluster: null },
  { kind: 'job', namespace: 'team-a', name: 'etl', phase: 'placed', cluster: 'worker-1' },
];

describe('filterWorkloads', () => {
  it('keeps everything, sorted by namespace, name then kind, with no filter set', () => {
    expect(filterWorkloads(workloads, emptyWorkloadFilter).map(workloadKey)).toEqual([
      'job/team-a/etl',
      'rayjob/team-a/etl',
      'job/team-a/train-7',
      'job/team-b/train-42',
    ]);
  });

  it('applies kind, namespace, status, cluster and every search word together', () => {
    expect(filterWorkloads(workloads, { ...emptyWorkloadFilter, kind: 'rayjob' }).map(workloadKey)).toEqual([
      'rayjob/team-a/etl',
    ]);
    expect(
      filterWorkloads(workloads, { ...emptyWorkloadFilter, namespace: 'team-a', kind: 'job' }).map(
        (w) => w.name,
      ),
    ).toEqual(['etl', 'train-7']);
    expect(
      filterWorkloads(workloads, { ...emptyWorkloadFilter, phase: 'running' }).map((w) => w.name),
    ).toEqual(['train-42']);
    expect(
      filterWorkloads(workloads, { ...emptyWorkloadFilter, cluster: 'worker-2' }).map((w) => w.name),
    ).toEqual(['train-7']);
    expect(
      filterWorkloads(workloads, { ...emptyWorkloadFilter, search: 'TRAIN  team-b' }).map((w) => w.name),
    ).toEqual(['train-42']);
    // The kind is searched too.
    expect(filterWorkloads(workloads, { ...emptyWorkloadFilter, search: 'rayjob' }).map(workloadKey)).toEqual(
      ['rayjob/team-a/etl'],
    );
    expect(filterWorkloads(workloads, { ...emptyWorkloadFilter, search: 'nothing' })).toEqual([]);
  });

  it('never adds a workload, and what it keeps passes each filter', () => {
    const workload = fc.record({
      kind: fc.constantFrom('job', 'raycluster'),
      namespace: fc.constantFrom('a', 'b'),
      name: fc.string({ maxLength: 6 }),
      phase: fc.constantFrom('running', 'pending'),
      cluster: fc.option(fc.constantFrom('w1', 'w2'), { nil: null }),
    });
    const filter = fc.record({
      kind: fc.constantFrom('', 'raycluster'),
      namespace: fc.constantFrom('', 'a'),
      phase: fc.constantFrom('', 'running'),
      cluster: fc.constantFrom('', 'w1'),
      search: fc.string({ maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(workload, { maxLength: 20 }), filter, (list, f) => {
        const kept = filterWorkloads(list, f);
        expect(kept.length).toBeLessThanOrEqual(list.length);
        for (const w of kept) {
          if (f.kind) expect(w.kind).toBe(f.kind);
          if (f.namespace) expect(w.namespace).toBe(f.namespace);
          if (f.phase) expect(w.phase).toBe(f.phase);
          if (f.cluster) expect(w.cluster).toBe(f.cluster);
        }
      }),
    );
  });
});

describe('choicesOf and countByPhase', () => {
  it('lists distinct non-empty values sorted, and counts phases', () => {
    expect(choicesOf(workloads, (w) => w.cluster)).toEqual(['worker-1', 'worker-2']);
    expect(choicesOf(workloads, (w) => w.kind)).toEqual(['job', 'rayjob']);
    expect(countByPhase(workloads)).toEqual({ running: 1, finished: 1, pending: 1, placed: 1 });
  });
});
