// The leader publishes each worker's capacity on its WorkerCluster and every other replica and
// the admin API plan from it (issue 31): what they rebuild must make placement decide exactly
// as the leader's own snapshot does, while the status stays small and names no other tenant.

import {
  type ClusterCandidate,
  chooseWorkerCluster,
  noPodTemplateAsks,
  PlacedLoadIndex,
  type PlacementRequest,
} from '@jobrelay/placement';
import { type Resources, subtractResources } from '@jobrelay/resources';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CapacityStatus,
  capacityMergePatch,
  capacitySnapshotOf,
  capacityStatusOf,
  nodeGroups,
  resourceQuantities,
  resourcesOf,
} from '../src/capacity-summary.ts';
import type { CapacitySnapshot, NodeCapacity } from '../src/worker-capacity.ts';

const Gi = 2 ** 30;

function node(name: string, allocatable: Resources, requested: Resources): NodeCapacity {
  return { name, allocatable, requested, free: subtractResources(allocatable, requested) };
}

function snapshotOf(nodes: NodeCapacity[], podsByOwner: Array<[string, number]> = []): CapacitySnapshot {
  const sum = (pick: (n: NodeCapacity) => Resources) =>
    nodes.reduce<Resources>((total, n) => {
      for (const [name, amount] of Object.entries(pick(n))) total[name] = (total[name] ?? 0) + amount;
      return total;
    }, {});
  return {
    nodes,
    allocatable: sum((n) => n.allocatable),
    requested: sum((n) => n.requested),
    podsByOwner: new Map(podsByOwner),
  };
}

const everyOwnerIsAMirror = { isMirror: () => true };

/** What placement reads of a snapshot: the multiset of node frees, cpu and memory allocatable, pod counts. */
function asPlacementReadsIt(snapshot: CapacitySnapshot, owners: readonly string[]) {
  const frees = snapshot.nodes
    .map((n) => JSON.stringify(Object.entries(n.free).sort(([a], [b]) => (a < b ? -1 : 1))))
    .sort();
  return {
    frees,
    cpu: snapshot.allocatable.cpu ?? 0,
    memory: snapshot.allocatable.memory ?? 0,
    requested: snapshot.requested,
    pods: owners.map((owner) => snapshot.podsByOwner.get(owner) ?? 0),
  };
}

function candidate(name: string, snapshot: CapacitySnapshot, assumed: Resources): ClusterCandidate {
  return {
    name,
    labels: {},
    active: true,
    cordoned: false,
    weight: 1,
    allowedNamespaces: [],
    activeWorkloads: 0,
    namespaces: new Map(),
    capacity: { nodes: snapshot.nodes, allocatable: snapshot.allocatable, assumed },
  };
}

function request(cpu: number, memory: number, count: number, policy: 'spread' | 'binpack'): PlacementRequest {
  return {
    namespace: 'team-a',
    excludedClusters: [],
    podGroups: [{ count, requests: { cpu, memory } }],
    policy,
    asks: noPodTemplateAsks,
    podSecurity: 'privileged',
  };
}

describe('nodeGroups', () => {
  it('counts nodes with the same allocatable and requests once, in the order of their first node', () => {
    const idle = { cpu: 4000, memory: 16 * Gi, pods: 110 };
    const groups = nodeGroups([
      node('kwok-1', idle, {}),
      node('kwok-2', idle, { cpu: 500, memory: Gi }),
      node('kwok-3', idle, {}),
      node('kwok-4', idle, { cpu: 500, memory: Gi }),
      node('gpu-1', { ...idle, 'nvidia.com/gpu': 8 }, {}),
    ]);
    expect(groups).toEqual([
      { count: 2, allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, requested: {} },
      {
        count: 2,
        allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
        requested: { cpu: '500m', memory: '1Gi' },
      },
      {
        count: 1,
        allocatable: { cpu: '4', memory: '16Gi', 'nvidia.com/gpu': '8', pods: '110' },
        requested: {},
      },
    ]);
  });

  it('keeps a thousand identical nodes as one group', () => {
    const nodes = Array.from({ length: 1000 }, (_, i) =>
      node(`kwok-${i}`, { cpu: 32_000, memory: 256 * Gi }, {}),
    );
    expect(nodeGroups(nodes)).toHaveLength(1);
    expect(nodeGroups(nodes)[0]!.count).toBe(1000);
  });
});

describe('capacityStatusOf', () => {
  const snapshot = snapshotOf(
    [node('a', { cpu: 4000, memory: 8 * Gi }, { cpu: 1000 }), node('b', { cpu: 4000, memory: 8 * Gi }, {})],
    [
      ['team-a/train', 2],
      ['kube-system/coredns-6f6b', 2],
      ['other-tenant/secret-project', 1],
    ],
  );

  it('lists the pods of jobrelay mirrors only, sorted by owner', () => {
    const status = capacityStatusOf(snapshot, { isMirror: (owner) => owner === 'team-a/train' });
    expect(status.podsByOwner).toEqual([{ owner: 'team-a/train', pods: 2 }]);
    expect(JSON.stringify(status)).not.toContain('secret-project');
  });

  it('keeps the totals people read, free less what placement assumes, and when it was observed', () => {
    const status = capacityStatusOf(snapshot, {
      ...everyOwnerIsAMirror,
      assumed: { cpu: 500 },
      observedAt: Date.parse('2026-12-03T20:00:00Z'),
    });
    expect(status).toMatchObject({
      nodes: 2,
      allocatable: { cpu: '8', memory: '16Gi' },
      free: { cpu: '6500m', memory: '16Gi' },
      observedTime: '2026-12-03T20:00:00.000Z',
      requested: { cpu: '1' },
    });
  });
});

describe('capacitySnapshotOf', () => {
  it('is undefined without node groups: nothing published, or only the totals of an older version', () => {
    expect(capacitySnapshotOf(undefined)).toBeUndefined();
    expect(capacitySnapshotOf(null)).toBeUndefined();
    expect(capacitySnapshotOf({ nodes: 3, allocatable: { cpu: '12' }, free: { cpu: '12' } })).toBeUndefined();
  });

  it('rebuilds an overcommitted node: free below 0 survives, as requests are what is kept', () => {
    const overcommitted = snapshotOf([node('a', { cpu: 1000 }, { cpu: 1500 })]);
    const rebuilt = capacitySnapshotOf(capacityStatusOf(overcommitted, everyOwnerIsAMirror))!;
    expect(rebuilt.nodes.map((n) => n.free)).toEqual([{ cpu: -500 }]);
  });

  it('survives the trip through JSON, as the apiserver stores it', () => {
    const snapshot = snapshotOf(
      [node('a', { cpu: 2500, memory: 3 * Gi + 7 }, { cpu: 1 })],
      [['team-a/j', 1]],
    );
    const stored = JSON.parse(
      JSON.stringify(capacityStatusOf(snapshot, everyOwnerIsAMirror)),
    ) as CapacityStatus;
    expect(asPlacementReadsIt(capacitySnapshotOf(stored)!, ['team-a/j'])).toEqual(
      asPlacementReadsIt(snapshot, ['team-a/j']),
    );
  });

  const resources = fc.record(
    {
      cpu: fc.integer({ min: 0, max: 64_000 }),
      memory: fc.integer({ min: 0, max: 512 * Gi }),
      'nvidia.com/gpu': fc.integer({ min: 0, max: 8 }),
    },
    { requiredKeys: [] },
  );
  const arbitrarySnapshot = fc
    .record({
      // Few distinct shapes, repeated: what grouping merges.
      shapes: fc.array(fc.tuple(resources, resources), { minLength: 1, maxLength: 4 }),
      picks: fc.array(fc.nat(), { maxLength: 30 }),
      pods: fc.array(
        fc.tuple(
          fc.constantFrom('team-a/a', 'team-a/b', 'team-b/c', 'tenant/x'),
          fc.integer({ min: 1, max: 50 }),
        ),
      ),
    })
    .map(({ shapes, picks, pods }) =>
      snapshotOf(
        picks.map((pick, i) => {
          const [allocatable, requested] = shapes[pick % shapes.length]!;
          return node(`n-${i}`, allocatable, requested);
        }),
        pods,
      ),
    );

  it('gives placement the same decisions, messages and load as the snapshot it was published from', () => {
    const mirrors = new Set(['team-a/a', 'team-a/b', 'team-b/c']);
    fc.assert(
      fc.property(
        arbitrarySnapshot,
        arbitrarySnapshot,
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 1, max: 32 * Gi }),
        fc.integer({ min: 1, max: 20 }),
        fc.constantFrom('spread' as const, 'binpack' as const),
        (first, second, cpu, memory, count, policy) => {
          const published = [first, second].map(
            (snapshot) =>
              capacitySnapshotOf(
                JSON.parse(
                  JSON.stringify(capacityStatusOf(snapshot, { isMirror: (owner) => mirrors.has(owner) })),
                ) as CapacityStatus,
              )!,
          );
          // Placed workloads whose pods the snapshots count (a mirror's pods), as the leader's index holds them.
          const index = new PlacedLoadIndex();
          [...mirrors].forEach((key, i) => {
            index.set(`uid-${i}`, {
              cluster: i % 2 === 0 ? 'one' : 'two',
              key,
              suspended: false,
              demand: [{ count: 10, requests: { cpu: 100, memory: Gi } }],
            });
          });
          const load = (snapshots: CapacitySnapshot[]) =>
            index.load(
              new Map([
                ['one', snapshots[0]],
                ['two', snapshots[1]],
              ]),
            );
          expect(load(published)).toEqual(load([first, second]));
          const candidates = (snapshots: CapacitySnapshot[]) => {
            const l = load(snapshots);
            return [
              candidate('one', snapshots[0]!, l.get('one')?.assumed ?? {}),
              candidate('two', snapshots[1]!, l.get('two')?.assumed ?? {}),
            ];
          };
          const asked = request(cpu, memory, count, policy);
          expect(chooseWorkerCluster(candidates(published), asked)).toEqual(
            chooseWorkerCluster(candidates([first, second]), asked),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('capacityMergePatch', () => {
  it('sets to null each resource the last published capacity had and this one has not', () => {
    const previous: CapacityStatus = {
      allocatable: { cpu: '4', 'example.com/fpga': '2' },
      free: { cpu: '4', 'example.com/fpga': '2' },
      requested: { cpu: '0', 'example.com/fpga': '0' },
    };
    const next: CapacityStatus = { allocatable: { cpu: '4' }, free: { cpu: '3' }, requested: { cpu: '1' } };
    expect(capacityMergePatch(previous, next)).toEqual({
      allocatable: { cpu: '4', 'example.com/fpga': null },
      free: { cpu: '3', 'example.com/fpga': null },
      requested: { cpu: '1', 'example.com/fpga': null },
    });
  });

  it('is the capacity itself when nothing was published before', () => {
    const next: CapacityStatus = { nodes: 1, allocatable: { cpu: '1' }, nodeGroups: [], podsByOwner: [] };
    expect(capacityMergePatch(undefined, next)).toEqual(next);
  });
});

describe('resource quantities', () => {
  it('turn every amount into a quantity and back', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('cpu', 'memory', 'ephemeral-storage', 'pods', 'hugepages-2Mi', 'example.com/fpga'),
          fc.integer({ min: 0, max: 2 ** 50 }),
        ),
        (amounts) => {
          expect(resourcesOf(resourceQuantities(amounts))).toEqual(amounts);
        },
      ),
    );
  });

  it('leave out a quantity that does not parse', () => {
    expect(resourcesOf({ cpu: '2', memory: 'lots' })).toEqual({ cpu: 2000 });
  });
});
