import { batchJobAdapter, rayClusterAdapter, rayJobAdapter } from '@jobrelay/kinds';
import { formatPlacementRecord, type PlacementRecord, RecordKeyring } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { trustRecordsSealedBy } from '../src/placement-trust.ts';
import { podDemandProblem, workloadKey, workloadPhase, workloadSummary } from '../src/workload-views.ts';

const placed: PlacementRecord = {
  cluster: 'w1',
  attempt: 2,
  placedAt: '2026-12-01T10:01:00Z',
  carried: { succeeded: 0, failed: 0 },
  excludedClusters: [],
};
// Sealed for the RayCluster below, as the controller writes records; the API believes only those.
const keys = new RecordKeyring(Buffer.alloc(32, 3));
trustRecordsSealedBy(keys);
const placedAnnotation = formatPlacementRecord(
  placed,
  { namespace: 'team-a', name: 'demo', uid: 'rc-1' },
  keys,
);

function rayCluster(overrides: { annotations?: Record<string, string>; suspend?: boolean } = {}) {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: {
      namespace: 'team-a',
      name: 'demo',
      uid: 'rc-1',
      creationTimestamp: '2026-12-01T10:00:00Z',
      labels: { app: 'demo' },
      annotations: overrides.annotations ?? {},
    },
    spec: {
      managedBy: 'kueue.x-k8s.io/multikueue',
      ...(overrides.suspend ? { suspend: true } : {}),
      headGroupSpec: {
        rayStartParams: {},
        template: { spec: { containers: [{ name: 'ray-head', resources: { requests: { cpu: '1' } } }] } },
      },
      workerGroupSpecs: [
        {
          groupName: 'workers',
          replicas: 2,
          minReplicas: 0,
          maxReplicas: 4,
          rayStartParams: {},
          template: { spec: { containers: [{ name: 'ray-worker', resources: { requests: { cpu: '1' } } }] } },
        },
      ],
    },
  };
}

describe('workloadPhase: one vocabulary from the adapter and the placement record', () => {
  const facts = (finished: boolean, suspended: boolean) => ({
    isFinished: () => finished,
    isSuspended: () => suspended,
  });
  const object = { metadata: { name: 'x' } };

  it.each([
    // finished, suspended, record, mirror seen -> phase
    [false, false, undefined, false, 'pending'],
    [false, false, { ...placed, cluster: undefined }, false, 'pending'],
    [false, false, placed, false, 'placed'],
    [false, false, placed, true, 'running'],
    [false, true, undefined, false, 'suspended'],
    [false, true, placed, true, 'suspended'],
    [true, false, placed, true, 'finished'],
    [true, true, undefined, false, 'finished'],
  ] as const)(
    'finished %s, suspended %s, record %j, mirror seen %s: %s',
    (finished, suspended, record, seen, phase) => {
      expect(
        workloadPhase(facts(finished, suspended), object, record as PlacementRecord | undefined, seen),
      ).toBe(phase);
    },
  );

  it('reads each kind through its adapter: a RayCluster never finishes, a RayJob finishes Complete, a Job on its condition', () => {
    expect(workloadPhase(rayClusterAdapter, rayCluster(), placed, true)).toBe('running');
    expect(workloadPhase(rayClusterAdapter, rayCluster({ suspend: true }), placed, true)).toBe('suspended');
    const rayJob = {
      metadata: { name: 'j' },
      spec: { managedBy: 'kueue.x-k8s.io/multikueue' },
      status: { jobDeploymentStatus: 'Complete', endTime: '2026-12-01T10:05:00Z' },
    };
    expect(workloadPhase(rayJobAdapter, rayJob, placed, false)).toBe('finished');
    const job = {
      metadata: { name: 'j' },
      spec: { template: {} },
      status: { conditions: [{ type: 'Failed', status: 'True' }] },
    };
    expect(workloadPhase(batchJobAdapter, job, placed, true)).toBe('finished');
  });
});

describe('workloadSummary', () => {
  it('names the kind as the API does and the object as Kubernetes does, with its pods and labels', () => {
    const summary = workloadSummary(
      rayClusterAdapter,
      rayCluster({ annotations: { 'jobrelay.dev/placement': placedAnnotation } }),
      true,
    );
    expect(summary).toEqual({
      kind: 'raycluster',
      apiVersion: 'ray.io/v1',
      objectKind: 'RayCluster',
      namespace: 'team-a',
      name: 'demo',
      uid: 'rc-1',
      phase: 'running',
      cluster: 'w1',
      attempt: 2,
      placedAt: '2026-12-01T10:01:00Z',
      waitingSince: null,
      createdAt: '2026-12-01T10:00:00Z',
      finishedAt: null,
      pods: 3,
      reason: null,
      labels: { app: 'demo' },
    });
  });

  it('says since when and why a pending workload waits; the phase follows the mirror seen', () => {
    const waiting = rayCluster({
      annotations: { 'jobrelay.dev/unschedulable': '0/2 clusters available: 2 do not serve RayCluster.' },
    });
    expect(workloadSummary(rayClusterAdapter, waiting, false)).toMatchObject({
      phase: 'pending',
      cluster: null,
      waitingSince: '2026-12-01T10:00:00.000Z',
      reason: '0/2 clusters available: 2 do not serve RayCluster.',
    });
    const object = rayCluster({ annotations: { 'jobrelay.dev/placement': placedAnnotation } });
    expect(workloadSummary(rayClusterAdapter, object, false).phase).toBe('placed');
    expect(workloadSummary(rayClusterAdapter, object, true).phase).toBe('running');
  });

  it('counts no pods for an object its adapter cannot read, rather than failing the list', () => {
    const broken = { metadata: { namespace: 'a', name: 'b', uid: 'u' }, spec: { managedBy: 'x' } };
    expect(workloadSummary(batchJobAdapter, broken, false).pods).toBe(0);
  });

  it('keys workloads as the controller does: kind/namespace/name', () => {
    expect(workloadKey(rayClusterAdapter, rayCluster())).toBe('raycluster/team-a/demo');
  });
});

describe('podDemandProblem: what a previewed manifest must give placement', () => {
  it('accepts whole pod counts and finite requests, and names the first that is not', () => {
    expect(podDemandProblem([{ requests: { cpu: 0.5, memory: 2 ** 30 }, count: 3 }])).toBeUndefined();
    expect(podDemandProblem([])).toBeUndefined();
    expect(podDemandProblem([{ requests: {}, count: Number.NaN }])).toBe(
      'pod group 1 has NaN pods, not a whole number',
    );
    expect(
      podDemandProblem([
        { requests: {}, count: 1 },
        { requests: {}, count: '2' as unknown as number },
      ]),
    ).toBe('pod group 2 has "2" pods, not a whole number');
    expect(podDemandProblem([{ requests: { cpu: Number.POSITIVE_INFINITY }, count: 1 }])).toBe(
      'pod group 1 requests Infinity cpu, not an amount',
    );
    expect(podDemandProblem([{ requests: { cpu: -1 }, count: 1 }])).toBe(
      'pod group 1 requests -1 cpu, not an amount',
    );
  });

  it('passes what the adapters read from real manifests', () => {
    expect(podDemandProblem(rayClusterAdapter.podDemand(rayCluster()))).toBeUndefined();
  });
});

describe('what a summary believes of the placement record, and why a workload waits', () => {
  const unsealed = JSON.stringify(placed);

  it('shows a record jobrelay did not seal for this very workload as no placement at all', () => {
    const forged = rayCluster({ annotations: { 'jobrelay.dev/placement': unsealed } });
    expect(workloadSummary(rayClusterAdapter, forged, false)).toMatchObject({
      phase: 'pending',
      cluster: null,
      attempt: null,
    });
    const copied = rayCluster({ annotations: { 'jobrelay.dev/placement': placedAnnotation } });
    copied.metadata.uid = 'rc-2';
    expect(workloadSummary(rayClusterAdapter, copied, false)).toMatchObject({
      phase: 'pending',
      cluster: null,
    });
  });

  it('says why a workload whose mirror was refused waits: the refusal until its retry, then why nothing fits, or that jobrelay gave up', () => {
    const refusedRecord = (retryAfter: string, extra: Partial<PlacementRecord> = {}) =>
      formatPlacementRecord(
        {
          attempt: 1,
          carried: { succeeded: 0, failed: 0 },
          excludedClusters: [],
          refusals: 1,
          refusedBy: ['w1'],
          retryAfter,
          lastReplacedBecause: 'cluster w1 refused the mirror (HTTP 403): exceeded quota',
          ...extra,
        } as PlacementRecord,
        { namespace: 'team-a', name: 'demo', uid: 'rc-1' },
        keys,
      );
    const unschedulable = { 'jobrelay.dev/unschedulable': '0/1 clusters available: 1 cordoned.' };
    const soon = new Date(Date.now() + 60_000).toISOString();
    const refused = rayCluster({
      annotations: { ...unschedulable, 'jobrelay.dev/placement': refusedRecord(soon) },
    });
    expect(workloadSummary(rayClusterAdapter, refused, false).reason).toBe(
      `cluster w1 refused the mirror (HTTP 403): exceeded quota; placed again after ${soon}`,
    );
    const past = '2026-12-01T10:00:05Z';
    const retried = rayCluster({
      annotations: { ...unschedulable, 'jobrelay.dev/placement': refusedRecord(past) },
    });
    expect(workloadSummary(rayClusterAdapter, retried, false).reason).toBe(
      '0/1 clusters available: 1 cordoned.',
    );
    const gaveUp = rayCluster({
      annotations: {
        'jobrelay.dev/placement': refusedRecord(past, { gaveUp: 'its mirror was refused 3 times' }),
      },
    });
    expect(workloadSummary(rayClusterAdapter, gaveUp, false)).toMatchObject({
      phase: 'pending',
      reason: 'jobrelay gave up on it: its mirror was refused 3 times',
    });
  });
});
