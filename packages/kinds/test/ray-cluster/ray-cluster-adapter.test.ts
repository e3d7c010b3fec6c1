import {
  originLabel,
  originUidLabel,
  placementAttemptAnnotation,
  suspendSentAnnotation,
} from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import type { RayCluster, RayClusterStatus } from '../../src/ray/ray-types.ts';
import { rayClusterAdapter } from '../../src/ray-cluster/ray-cluster-adapter.ts';
import {
  context,
  mirrorOf,
  originRayCluster,
  rayClusterSpec,
  readyRayClusterStatus,
} from '../ray/ray-fixtures.ts';

const noCarried = { succeeded: 0, failed: 0 };
const now = new Date('2026-01-05T10:05:00Z');

describe('rayClusterAdapter: identity and policy', () => {
  it('is ray.io/v1 rayclusters, claims only the MultiKueue value, and is tested against the real operator', () => {
    expect(rayClusterAdapter.name).toBe('raycluster');
    expect(rayClusterAdapter.resource).toEqual({
      group: 'ray.io',
      version: 'v1',
      kind: 'RayCluster',
      plural: 'rayclusters',
    });
    // Never the operator's own value: that would run the object on the management cluster too.
    expect(rayClusterAdapter.managedBy).toEqual({
      default: 'kueue.x-k8s.io/multikueue',
      accepted: ['kueue.x-k8s.io/multikueue'],
    });
    expect(rayClusterAdapter.verification).toBe('real-controller');
  });

  it('is managed by exactly the configured value', () => {
    const origin = originRayCluster();
    expect(rayClusterAdapter.isManagedBy(origin, 'kueue.x-k8s.io/multikueue')).toBe(true);
    expect(rayClusterAdapter.isManagedBy(origin, 'ray.io/kuberay-operator')).toBe(false);
    expect(
      rayClusterAdapter.isManagedBy({ ...origin, spec: rayClusterSpec() }, 'kueue.x-k8s.io/multikueue'),
    ).toBe(false);
  });
});

describe('rayClusterAdapter.buildMirror', () => {
  it('copies the spec minus managedBy and sets the identity metadata, nothing else of the origin', () => {
    const origin = originRayCluster();
    const before = structuredClone(origin);
    const mirror = rayClusterAdapter.buildMirror(origin, { ...context, attempt: 2 });

    expect(origin).toEqual(before);
    expect(mirror.apiVersion).toBe('ray.io/v1');
    expect(mirror.kind).toBe('RayCluster');
    expect(mirror.spec).not.toHaveProperty('managedBy');
    const { managedBy: _m, ...specWithout } = origin.spec!;
    expect(mirror.spec).toEqual(specWithout);
    expect(mirror.status).toBeUndefined();
    expect(mirror.metadata).toEqual({
      name: 'demo',
      namespace: 'team-a',
      labels: {
        app: 'demo',
        'kueue.x-k8s.io/queue-name': 'team-a',
        [originLabel]: 'mgmt-7f3a',
        [originUidLabel]: 'origin-raycluster-uid',
      },
      annotations: { owner: 'ana', [placementAttemptAnnotation]: '2', [suspendSentAnnotation]: 'false' },
    });
  });

  // The worker's Kueue (the origin names its LocalQueue) suspends the mirror at creation and
  // resumes it once its quota admits it: a second gate, never fought.
  it('leaves a mirror its worker’s own admission holds suspended; sends the origin’s own suspend and resume once', () => {
    const origin = originRayCluster();
    const built = rayClusterAdapter.buildMirror(origin, context);
    const held: RayCluster = {
      ...built,
      spec: { ...built.spec!, suspend: true },
      status: { state: 'suspended' },
    };
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, held)).toBeUndefined();
    expect(rayClusterAdapter.mirrorRecordUpdate(origin, held)).toBeUndefined();
    expect(rayClusterAdapter.mirrorHeldByWorker(origin, held)).toBe(
      'its RayCluster is suspended there (state suspended)',
    );
    expect(rayClusterAdapter.mirrorHeldByWorker(origin, built)).toBeUndefined();

    const suspended: RayCluster = { ...origin, spec: { ...origin.spec!, suspend: true } };
    expect(rayClusterAdapter.mirrorSpecUpdate(suspended, built)).toEqual({ suspend: true });
    expect(rayClusterAdapter.mirrorRecordUpdate(suspended, built)).toEqual({
      [suspendSentAnnotation]: 'true',
    });
    expect(rayClusterAdapter.mirrorHeldByWorker(suspended, held)).toBeUndefined();

    const sentSuspend: RayCluster = {
      ...held,
      metadata: {
        ...held.metadata,
        annotations: { ...held.metadata?.annotations, [suspendSentAnnotation]: 'true' },
      },
    };
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, sentSuspend)).toEqual({ suspend: false });
    expect(rayClusterAdapter.mirrorHeldByWorker(origin, sentSuspend)).toBeUndefined();
  });

  it('is a deep copy: changing the mirror changes nothing of the origin', () => {
    const origin = originRayCluster();
    const mirror = rayClusterAdapter.buildMirror(origin, context);
    mirror.spec!.workerGroupSpecs![0]!.replicas = 9;
    mirror.spec!.headGroupSpec.template.spec!.containers[0]!.image = 'changed';
    mirror.metadata!.labels!.app = 'changed';
    expect(origin.spec!.workerGroupSpecs![0]!.replicas).toBe(2);
    expect(origin.spec!.headGroupSpec.template.spec!.containers[0]!.image).toBe('rayproject/ray:2.46.0');
    expect(origin.metadata!.labels!.app).toBe('demo');
  });

  it('refuses an origin that was not read from an apiserver', () => {
    const origin = originRayCluster();
    delete origin.metadata!.uid;
    expect(() => rayClusterAdapter.buildMirror(origin, context)).toThrow(/uid/);
  });
});

describe('rayClusterAdapter.mirrorSpecUpdate', () => {
  it('has nothing to patch while the mirror agrees (its own defaults and extra fields do not count)', () => {
    const origin = originRayCluster();
    const mirror = mirrorOf(origin);
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toBeUndefined();
    // The worker's apiserver defaulted more than the origin states: no opinion, no patch.
    mirror.spec!.headGroupSpec.template.spec!.containers[0]!.imagePullPolicy = 'IfNotPresent';
    mirror.spec!.workerGroupSpecs![0]!.scaleStrategy = {};
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toBeUndefined();
  });

  it('suspends and resumes: suspend is a boolean, absent means false', () => {
    const origin = originRayCluster({ suspend: true });
    const running = mirrorOf(originRayCluster());
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, running)).toEqual({ suspend: true });

    const suspended = mirrorOf(originRayCluster({ suspend: true }));
    expect(rayClusterAdapter.mirrorSpecUpdate(originRayCluster({ suspend: false }), suspended)).toEqual({
      suspend: false,
    });
    expect(rayClusterAdapter.mirrorSpecUpdate(originRayCluster(), suspended)).toEqual({ suspend: false });
  });

  it('sends the whole worker group array when a group changes (a merge patch replaces arrays)', () => {
    const origin = originRayCluster({
      workerGroupSpecs: [
        ...rayClusterSpec().workerGroupSpecs!,
        {
          groupName: 'gpu',
          replicas: 1,
          minReplicas: 0,
          maxReplicas: 2,
          template: { spec: { containers: [{ name: 'ray-worker', image: 'rayproject/ray:2.46.0-gpu' }] } },
        },
      ],
    });
    const mirror = mirrorOf(origin);
    origin.spec!.workerGroupSpecs![1]!.replicas = 2;
    const patch = rayClusterAdapter.mirrorSpecUpdate(origin, mirror);
    expect(patch).toEqual({ workerGroupSpecs: origin.spec!.workerGroupSpecs });
    expect(Object.keys(patch!)).toEqual(['workerGroupSpecs']);
    // A copy: patching it later cannot change the origin.
    (patch as { workerGroupSpecs: { replicas: number }[] }).workerGroupSpecs[1]!.replicas = 7;
    expect(origin.spec!.workerGroupSpecs![1]!.replicas).toBe(2);
  });

  it('flows down min/max replicas, numOfHosts, added groups and template changes', () => {
    const base = originRayCluster();
    const mirror = mirrorOf(base);
    for (const change of [
      (o: RayCluster) => {
        o.spec!.workerGroupSpecs![0]!.maxReplicas = 10;
      },
      (o: RayCluster) => {
        o.spec!.workerGroupSpecs![0]!.numOfHosts = 2;
      },
      (o: RayCluster) => {
        o.spec!.workerGroupSpecs![0]!.template.spec!.containers[0]!.image = 'rayproject/ray:2.47.0';
      },
      (o: RayCluster) => {
        o.spec!.workerGroupSpecs!.push({
          ...structuredClone(o.spec!.workerGroupSpecs![0]!),
          groupName: 'more',
        });
      },
    ]) {
      const origin = structuredClone(base);
      change(origin);
      expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toEqual({
        workerGroupSpecs: origin.spec!.workerGroupSpecs,
      });
    }
  });

  it('patches an object field by field, never managedBy', () => {
    const origin = originRayCluster();
    const mirror = mirrorOf(origin);
    origin.spec!.headGroupSpec.rayStartParams = { 'dashboard-host': '0.0.0.0', 'num-cpus': '0' };
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toEqual({
      headGroupSpec: { rayStartParams: { 'num-cpus': '0' } },
    });
  });

  it('with in-tree autoscaling, keeps the autoscaler-owned replicas and workersToDelete of the mirror', () => {
    const origin = originRayCluster({ enableInTreeAutoscaling: true });
    const mirror = mirrorOf(origin);
    // The autoscaler scaled the mirror up and marked a pod for deletion.
    mirror.spec!.workerGroupSpecs![0]!.replicas = 4;
    mirror.spec!.workerGroupSpecs![0]!.scaleStrategy = { workersToDelete: ['demo-cpu-worker-abcde'] };
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toBeUndefined();

    // The user raises maxReplicas and adds a group: the array goes whole, with the mirror's
    // autoscaled values for the group it has and the origin's for the new one.
    origin.spec!.workerGroupSpecs![0]!.maxReplicas = 8;
    origin.spec!.workerGroupSpecs!.push({
      ...structuredClone(origin.spec!.workerGroupSpecs![0]!),
      groupName: 'burst',
      replicas: 1,
    });
    const patch = rayClusterAdapter.mirrorSpecUpdate(origin, mirror) as { workerGroupSpecs: object[] };
    expect(patch.workerGroupSpecs).toEqual([
      {
        ...origin.spec!.workerGroupSpecs![0],
        replicas: 4,
        scaleStrategy: { workersToDelete: ['demo-cpu-worker-abcde'] },
      },
      origin.spec!.workerGroupSpecs![1],
    ]);
  });

  it("without autoscaling, the origin's replicas win over the mirror's", () => {
    const origin = originRayCluster();
    const mirror = mirrorOf(origin);
    mirror.spec!.workerGroupSpecs![0]!.replicas = 4;
    expect(rayClusterAdapter.mirrorSpecUpdate(origin, mirror)).toEqual({
      workerGroupSpecs: origin.spec!.workerGroupSpecs,
    });
  });
});

describe('rayClusterAdapter.originStatus', () => {
  it('is the mirror status field by field, as the operator wrote it', () => {
    const origin = originRayCluster();
    const mirror = mirrorOf(origin, readyRayClusterStatus(1), 1);
    const status = rayClusterAdapter.originStatus(origin, mirror, noCarried, now) as RayClusterStatus;
    const { observedGeneration, ...rest } = status;
    const { observedGeneration: _mirrors, ...mirrorRest } = readyRayClusterStatus();
    expect(rest).toEqual(mirrorRest);
    // The origin's own generation (3), not the mirror's (1): the mirror has observed a spec
    // that matches the origin's.
    expect(observedGeneration).toBe(3);
  });

  it('is a copy: changing it changes nothing of the mirror', () => {
    const origin = originRayCluster();
    const mirror = mirrorOf(origin, readyRayClusterStatus());
    const status = rayClusterAdapter.originStatus(origin, mirror, noCarried, now) as RayClusterStatus;
    status.conditions![0]!.status = 'False';
    status.head!.podIP = 'x';
    expect(mirror.status).toEqual(readyRayClusterStatus());
  });

  it("keeps the origin's observedGeneration while the mirror lags or a spec patch is pending", () => {
    const origin = originRayCluster();
    origin.status = { ...readyRayClusterStatus(), observedGeneration: 2 };
    // The mirror's controller has not observed the mirror's latest generation yet.
    const lagging = mirrorOf(origin, readyRayClusterStatus(1), 2);
    expect(rayClusterAdapter.originStatus(origin, lagging, noCarried, now)).toMatchObject({
      observedGeneration: 2,
    });
    // The origin changed replicas; the mirror does not have them yet.
    const behind = mirrorOf(origin, readyRayClusterStatus(1), 1);
    origin.spec!.workerGroupSpecs![0]!.replicas = 3;
    expect(rayClusterAdapter.originStatus(origin, behind, noCarried, now)).toMatchObject({
      observedGeneration: 2,
    });
    // Without an earlier value there is none to keep.
    delete origin.status.observedGeneration;
    expect(rayClusterAdapter.originStatus(origin, behind, noCarried, now)).not.toHaveProperty(
      'observedGeneration',
    );
  });

  it('is empty while the mirror has no status yet (a new placement shows nothing stale)', () => {
    const origin = originRayCluster();
    origin.status = readyRayClusterStatus();
    expect(
      rayClusterAdapter.originStatus(origin, mirrorOf(origin), { succeeded: 4, failed: 1 }, now),
    ).toEqual({});
  });
});

describe('rayClusterAdapter.sameStatus and statusOf', () => {
  it('treats absent, zero and empty alike (every field is omitempty), and nothing else', () => {
    const status = readyRayClusterStatus();
    expect(rayClusterAdapter.sameStatus(status, structuredClone(status))).toBe(true);
    expect(rayClusterAdapter.sameStatus(undefined, {})).toBe(true);
    expect(
      rayClusterAdapter.sameStatus({ state: 'ready', reason: '', endpoints: {} }, { state: 'ready' }),
    ).toBe(true);
    expect(rayClusterAdapter.sameStatus({ readyWorkerReplicas: 0 }, {})).toBe(true);
    expect(rayClusterAdapter.sameStatus(status, { ...status, readyWorkerReplicas: 1 })).toBe(false);
    expect(rayClusterAdapter.sameStatus(status, { ...status, state: 'suspended' })).toBe(false);
    expect(
      rayClusterAdapter.sameStatus(status, { ...status, head: { ...status.head, podIP: '10.128.0.6' } }),
    ).toBe(false);
  });

  it('reads the status', () => {
    const origin = originRayCluster();
    expect(rayClusterAdapter.statusOf(origin)).toBeUndefined();
    origin.status = readyRayClusterStatus();
    expect(rayClusterAdapter.statusOf(origin)).toBe(origin.status);
  });
});

describe('rayClusterAdapter.statusViolations (the CRD schema)', () => {
  const origin = originRayCluster();

  it('accepts what the operator writes, any state string (the CRD has no enum) and a null lastUpdateTime', () => {
    expect(rayClusterAdapter.statusViolations(origin, readyRayClusterStatus())).toEqual([]);
    expect(rayClusterAdapter.statusViolations(origin, {})).toEqual([]);
    expect(
      rayClusterAdapter.statusViolations(origin, {
        state: 'something-new',
        lastUpdateTime: null,
        desiredCPU: 3,
      }),
    ).toEqual([]);
  });

  it('refuses what the schema refuses, naming the field', () => {
    const status = readyRayClusterStatus();
    status.conditions![0]!.status = 'Maybe' as 'True';
    status.conditions![1]!.type = 'HeadPodReady';
    status.conditions![2]!.reason = '';
    status.conditions![3]!.lastTransitionTime = '2026-01-05 10:00:01';
    const broken = {
      ...status,
      desiredMemory: '6 GiB',
      readyWorkerReplicas: 1.5,
      stateTransitionTimes: { ready: 'yesterday' },
      head: 'demo-head',
    };
    expect(rayClusterAdapter.statusViolations(origin, broken).map((v) => v.field)).toEqual([
      'status.desiredMemory',
      'status.readyWorkerReplicas',
      'status.stateTransitionTimes.ready',
      'status.head',
      'status.conditions[0].status',
      'status.conditions[1].type',
      'status.conditions[2].reason',
      'status.conditions[3].lastTransitionTime',
    ]);
  });

  it('requires every metav1.Condition field', () => {
    const violations = rayClusterAdapter.statusViolations(origin, {
      conditions: [{ type: 'HeadPodReady', status: 'True' }],
    });
    expect(violations).toEqual([
      { field: 'status.conditions[0].lastTransitionTime', message: 'is required' },
      { field: 'status.conditions[0].reason', message: 'is required' },
      { field: 'status.conditions[0].message', message: 'is required' },
    ]);
  });
});

describe('rayClusterAdapter predicates', () => {
  it('never finishes: a RayCluster is long-running, suspended or not', () => {
    for (const state of ['ready', 'suspended', 'failed'] as const) {
      const origin = originRayCluster({ suspend: state === 'suspended' });
      origin.status = { ...readyRayClusterStatus(), state };
      expect(rayClusterAdapter.isFinished(origin)).toBe(false);
      expect(rayClusterAdapter.finishedAt(origin)).toBeUndefined();
    }
  });

  it('is suspended when spec.suspend is true', () => {
    expect(rayClusterAdapter.isSuspended(originRayCluster({ suspend: true }))).toBe(true);
    expect(rayClusterAdapter.isSuspended(originRayCluster({ suspend: false }))).toBe(false);
    expect(rayClusterAdapter.isSuspended(originRayCluster())).toBe(false);
  });

  it('keeps no progress across attempts, and has no seed or terminal status to write', () => {
    const adapter: Record<string, unknown> = rayClusterAdapter;
    for (const member of [
      'progress',
      'mirrorBookkeepingProblem',
      'mirrorStatusSeed',
      'decidedOutcomeStatus',
      'gaveUpStatus',
    ]) {
      expect(adapter[member]).toBeUndefined();
    }
  });
});

describe('rayClusterAdapter.podDemand', () => {
  const gi = 2 ** 30;
  const mi = 2 ** 20;

  it('is the head pod and each worker group, replicas times numOfHosts', () => {
    const origin = originRayCluster({
      workerGroupSpecs: [{ ...rayClusterSpec().workerGroupSpecs![0]!, replicas: 3, numOfHosts: 2 }],
    });
    expect(rayClusterAdapter.podDemand(origin)).toEqual([
      { requests: { cpu: 1000, memory: 2 * gi }, count: 1 },
      { requests: { cpu: 1000, memory: 2 * gi }, count: 6 },
    ]);
  });

  it('clamps replicas to [minReplicas, maxReplicas] as the operator does', () => {
    const group = rayClusterSpec().workerGroupSpecs![0]!;
    const counts = (groups: object[]) =>
      rayClusterAdapter
        .podDemand(originRayCluster({ workerGroupSpecs: groups as (typeof group)[] }))
        .map((g) => g.count);
    expect(counts([{ ...group, replicas: 9, minReplicas: 1, maxReplicas: 5 }])).toEqual([1, 5]);
    expect(counts([{ ...group, replicas: 0, minReplicas: 2, maxReplicas: 5 }])).toEqual([1, 2]);
    // Replicas unset: minReplicas.
    expect(counts([{ ...group, replicas: undefined, minReplicas: 3 }])).toEqual([1, 3]);
    // minReplicas > maxReplicas: maxReplicas.
    expect(counts([{ ...group, replicas: 4, minReplicas: 6, maxReplicas: 2 }])).toEqual([1, 2]);
    // The CRD defaults (min 0, max 2147483647, numOfHosts 1) when a hand-built object lacks them.
    expect(counts([{ groupName: 'g', replicas: 7, template: group.template }])).toEqual([1, 7]);
    // A suspended group and a group scaled to zero run no pods; an explicit numOfHosts 0 neither.
    expect(
      counts([
        { ...group, suspend: true },
        { ...group, groupName: 'zero', replicas: 0, minReplicas: 0 },
        { ...group, groupName: 'nohosts', numOfHosts: 0 },
      ]),
    ).toEqual([1]);
  });

  it('includes init containers, overhead and the injected wait-gcs-ready init container', () => {
    const origin = originRayCluster({
      workerGroupSpecs: [
        {
          groupName: 'small',
          replicas: 1,
          minReplicas: 0,
          maxReplicas: 1,
          template: {
            spec: {
              // Tiny workers (sandbox-sized): the operator's init container (200m, 256Mi) is larger.
              containers: [{ name: 'ray-worker', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
              overhead: { cpu: '50m' },
            },
          },
        },
        {
          groupName: 'prep',
          replicas: 1,
          minReplicas: 0,
          maxReplicas: 1,
          template: {
            spec: {
              initContainers: [{ name: 'fetch', resources: { requests: { cpu: '4', memory: '1Gi' } } }],
              containers: [{ name: 'ray-worker', resources: { requests: { cpu: '1', memory: '2Gi' } } }],
            },
          },
        },
      ],
    });
    const [, small, prep] = rayClusterAdapter.podDemand(origin);
    expect(small).toEqual({ requests: { cpu: 250, memory: 256 * mi }, count: 1 });
    expect(prep).toEqual({ requests: { cpu: 4000, memory: 2 * gi }, count: 1 });
  });

  it('adds the autoscaler sidecar to the head pod when in-tree autoscaling is on', () => {
    const head = (spec: Parameters<typeof originRayCluster>[0]) =>
      rayClusterAdapter.podDemand(originRayCluster(spec))[0];
    expect(head({ enableInTreeAutoscaling: true })).toEqual({
      requests: { cpu: 1500, memory: 2 * gi + 512 * mi },
      count: 1,
    });
    expect(
      head({
        enableInTreeAutoscaling: true,
        autoscalerOptions: { resources: { requests: { cpu: '200m', memory: '256Mi' } } },
      }),
    ).toEqual({ requests: { cpu: 1200, memory: 2 * gi + 256 * mi }, count: 1 });
    expect(head({ enableInTreeAutoscaling: false })).toEqual({
      requests: { cpu: 1000, memory: 2 * gi },
      count: 1,
    });
  });

  it('asks for nothing without a spec', () => {
    expect(rayClusterAdapter.podDemand({ metadata: { name: 'x' } })).toEqual([]);
  });
});
