import { addResources, scaleResources } from '@jobrelay/resources';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClusterLoad, PlacedWorkload, PodsByOwner } from '../src/placed-load.ts';
import { PlacedLoadIndex } from '../src/placed-load-index.ts';

const clusters = ['worker-1', 'worker-2', 'worker-3'];
const names = ['a', 'b', 'c', 'd', 'e', 'f'];

const group = fc.record({
  requests: fc.record(
    {
      cpu: fc.integer({ min: 0, max: 8000 }),
      memory: fc.integer({ min: 0, max: 2 ** 34 }),
      'nvidia.com/gpu': fc.nat(4),
    },
    { requiredKeys: [] },
  ),
  count: fc.nat(5),
});
const workload: fc.Arbitrary<PlacedWorkload> = fc.record({
  cluster: fc.constantFrom(...clusters),
  // Few names, so two workloads (say a Job and a RayCluster) often share one owner key.
  key: fc.constantFrom(...names).map((name) => `team-a/${name}`),
  suspended: fc.boolean(),
  demand: fc.array(group, { maxLength: 3 }),
});
const operation = fc.oneof(
  fc.record({ op: fc.constant('set' as const), uid: fc.nat(9), workload }),
  fc.record({ op: fc.constant('delete' as const), uid: fc.nat(9) }),
);
const capacities = fc
  .array(
    fc.tuple(
      fc.constantFrom(...clusters),
      fc.dictionary(
        fc.constantFrom(...names, 'not-ours').map((name) => `team-a/${name}`),
        fc.nat(8),
      ),
    ),
    { maxLength: 3 },
  )
  .map(
    (entries) =>
      new Map<string, PodsByOwner | undefined>(
        entries.map(([cluster, pods]) => [cluster, { podsByOwner: new Map(Object.entries(pods)) }]),
      ),
  );

/**
 * The rule summed plainly over every workload: per cluster, the workloads placed there and the
 * requests of their pods a worker does not count yet, counted pods taken off the groups in order.
 */
function summedLoad(
  placed: Iterable<PlacedWorkload>,
  capacities: ReadonlyMap<string, PodsByOwner | undefined>,
): ClusterLoad {
  const byCluster: ClusterLoad = new Map();
  for (const workload of placed) {
    const load = byCluster.get(workload.cluster) ?? { workloads: 0, assumed: {} };
    byCluster.set(workload.cluster, load);
    load.workloads += 1;
    let counted = capacities.get(workload.cluster)?.podsByOwner.get(workload.key) ?? 0;
    for (const group of workload.demand) {
      const seen = Math.min(counted, group.count);
      counted -= seen;
      if (group.count > seen)
        load.assumed = addResources(load.assumed, scaleResources(group.requests, group.count - seen));
    }
  }
  return byCluster;
}

/** Zero amounts mean the same as absent ones to every reader; compare without them. */
function comparable(load: ClusterLoad) {
  return Object.fromEntries(
    [...load].map(([cluster, { workloads, assumed }]) => [
      cluster,
      {
        workloads,
        assumed: Object.fromEntries(Object.entries(assumed).filter(([, amount]) => amount !== 0)),
      },
    ]),
  );
}

describe('PlacedLoadIndex', () => {
  it('gives what a plain sum over every workload gives, after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), capacities, (operations, pods) => {
        const index = new PlacedLoadIndex();
        const oracle = new Map<number, PlacedWorkload>();
        for (const step of operations) {
          if (step.op === 'set') {
            index.set(String(step.uid), step.workload);
            oracle.set(step.uid, step.workload);
          } else {
            index.delete(String(step.uid));
            oracle.delete(step.uid);
          }
          const summed = summedLoad(oracle.values(), pods);
          expect(comparable(index.load(pods))).toEqual(comparable(summed));
          for (const cluster of ['worker-1', 'worker-2', 'worker-3'])
            expect(index.workloadsOn(cluster)).toBe(summed.get(cluster)?.workloads ?? 0);
        }
        expect(index.size).toBe(oracle.size);
        expect([...index.values()]).toEqual([...oracle.values()]);
      }),
      { numRuns: 300 },
    );
  });

  it('forgets a cluster once nothing is placed on it', () => {
    const index = new PlacedLoadIndex();
    const demand = [{ requests: { cpu: 500 }, count: 2 }];
    index.set('1', { cluster: 'worker-1', key: 'team-a/a', suspended: false, demand });
    index.set('1', { cluster: 'worker-2', key: 'team-a/a', suspended: false, demand });
    expect([...index.load(new Map()).keys()]).toEqual(['worker-2']);
    index.delete('1');
    expect(index.load(new Map()).size).toBe(0);
  });
});
