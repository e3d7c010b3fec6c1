import { originLabel, originUidLabel } from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import type { RayJob, RayJobDeploymentStatus, RayJobStatus } from '../../src/ray/ray-types.ts';
import { rayJobAdapter } from '../../src/ray-job/ray-job-adapter.ts';
import {
  completeRayJobStatus,
  context,
  mirrorOf,
  originRayJob,
  rayClusterSpec,
  runningRayJobStatus,
} from '../ray/ray-fixtures.ts';

const noCarried = { succeeded: 0, failed: 0 };
const now = new Date('2026-01-05T10:05:00.750Z');
const gi = 2 ** 30;
const mi = 2 ** 20;

describe('rayJobAdapter: identity and policy', () => {
  it('is ray.io/v1 rayjobs, claims only the MultiKueue value', () => {
    expect(rayJobAdapter.name).toBe('rayjob');
    expect(rayJobAdapter.resource).toEqual({
      group: 'ray.io',
      version: 'v1',
      kind: 'RayJob',
      plural: 'rayjobs',
    });
    expect(rayJobAdapter.managedBy).toEqual({
      default: 'kueue.x-k8s.io/multikueue',
      accepted: ['kueue.x-k8s.io/multikueue'],
    });
    expect(rayJobAdapter.verification).toBe('real-controller');
    expect(rayJobAdapter.isManagedBy(originRayJob(), 'kueue.x-k8s.io/multikueue')).toBe(true);
    expect(
      rayJobAdapter.isManagedBy(
        originRayJob({ managedBy: 'ray.io/kuberay-operator' }),
        'kueue.x-k8s.io/multikueue',
      ),
    ).toBe(false);
  });
});

describe('rayJobAdapter.buildMirror', () => {
  it('copies the spec minus managedBy (deeply), with identity labels, and leaves the origin alone', () => {
    const origin = originRayJob();
    const before = structuredClone(origin);
    const mirror = rayJobAdapter.buildMirror(origin, context);
    expect(origin).toEqual(before);
    expect(mirror.apiVersion).toBe('ray.io/v1');
    expect(mirror.kind).toBe('RayJob');
    const { managedBy: _m, ...spec } = origin.spec!;
    expect(mirror.spec).toEqual(spec);
    expect(mirror.status).toBeUndefined();
    expect(mirror.metadata?.labels).toMatchObject({
      [originLabel]: 'mgmt-7f3a',
      [originUidLabel]: 'origin-rayjob-uid',
    });
    expect(mirror.metadata).not.toHaveProperty('uid');
    expect(mirror.metadata).not.toHaveProperty('finalizers');

    mirror.spec!.rayClusterSpec!.workerGroupSpecs![0]!.replicas = 8;
    expect(origin.spec!.rayClusterSpec!.workerGroupSpecs![0]!.replicas).toBe(2);
  });
});

describe('rayJobAdapter.mirrorSpecUpdate', () => {
  it('has nothing to patch while the mirror agrees', () => {
    const origin = originRayJob();
    expect(rayJobAdapter.mirrorSpecUpdate(origin, mirrorOf(origin))).toBeUndefined();
  });

  it('flows down suspend and resume', () => {
    const mirror = mirrorOf(originRayJob());
    expect(rayJobAdapter.mirrorSpecUpdate(originRayJob({ suspend: true }), mirror)).toEqual({
      suspend: true,
    });
    const suspended = mirrorOf(originRayJob({ suspend: true }));
    expect(rayJobAdapter.mirrorSpecUpdate(originRayJob(), suspended)).toEqual({ suspend: false });
  });

  it('never resumes a mirror its worker’s own admission holds suspended (a Kueue there), and says so', () => {
    const origin = originRayJob();
    // Built as jobrelay builds it: with the record of the suspend value it sent.
    const built = rayJobAdapter.buildMirror(origin, context);
    const held: RayJob = {
      ...built,
      spec: { ...built.spec!, suspend: true },
      status: { jobDeploymentStatus: 'Suspended' },
    };
    expect(rayJobAdapter.mirrorSpecUpdate(origin, held)).toBeUndefined();
    expect(rayJobAdapter.mirrorRecordUpdate(origin, held)).toBeUndefined();
    expect(rayJobAdapter.mirrorHeldByWorker(origin, held)).toBe(
      'its RayJob is suspended there (jobDeploymentStatus Suspended)',
    );
    expect(rayJobAdapter.mirrorHeldByWorker(originRayJob({ suspend: true }), held)).toBeUndefined();
  });

  it('flows down what the operator reads while running and what it reads on the next attempt', () => {
    const mirror = mirrorOf(originRayJob());
    expect(rayJobAdapter.mirrorSpecUpdate(originRayJob({ activeDeadlineSeconds: 600 }), mirror)).toEqual({
      activeDeadlineSeconds: 600,
    });
    expect(rayJobAdapter.mirrorSpecUpdate(originRayJob({ backoffLimit: 2 }), mirror)).toEqual({
      backoffLimit: 2,
    });
    // Edited while suspended, used by the attempt that starts on resume, as on one cluster.
    const edited = originRayJob({ suspend: true, entrypoint: 'python train.py --epochs 3' });
    expect(rayJobAdapter.mirrorSpecUpdate(edited, mirror)).toEqual({
      suspend: true,
      entrypoint: 'python train.py --epochs 3',
    });
    const bigger = originRayJob();
    bigger.spec!.rayClusterSpec!.workerGroupSpecs![0]!.replicas = 4;
    expect(rayJobAdapter.mirrorSpecUpdate(bigger, mirror)).toEqual({
      rayClusterSpec: { workerGroupSpecs: bigger.spec!.rayClusterSpec!.workerGroupSpecs },
    });
  });
});

describe('rayJobAdapter.originStatus', () => {
  it('is the mirror status field by field, without an observedGeneration (the operator writes none)', () => {
    const origin = originRayJob();
    const mirror = mirrorOf(origin, completeRayJobStatus());
    expect(rayJobAdapter.originStatus(origin, mirror, noCarried, now)).toEqual(completeRayJobStatus());
  });

  it('adds the counts of earlier attempts', () => {
    const origin = originRayJob();
    const mirror = mirrorOf(origin, completeRayJobStatus());
    expect(rayJobAdapter.originStatus(origin, mirror, { succeeded: 0, failed: 2 }, now)).toMatchObject({
      succeeded: 1,
      failed: 2,
    });
    // A new mirror without a status yet: the counts so far, nothing else.
    expect(rayJobAdapter.originStatus(origin, mirrorOf(origin), { succeeded: 0, failed: 2 }, now)).toEqual({
      failed: 2,
    });
    expect(rayJobAdapter.originStatus(origin, mirrorOf(origin), noCarried, now)).toEqual({});
  });

  it("maps an observedGeneration, should the operator write one, to the origin's generation", () => {
    const origin = originRayJob();
    const mirror = mirrorOf(origin, { ...runningRayJobStatus(), observedGeneration: 1 }, 1);
    expect(rayJobAdapter.originStatus(origin, mirror, noCarried, now)).toMatchObject({
      observedGeneration: 3,
    });
  });

  it('keeps the counts going forward across attempts (progress)', () => {
    const origin = originRayJob();
    expect(rayJobAdapter.progress.of(origin)).toEqual({ succeeded: 0, failed: 0 });
    origin.status = { ...runningRayJobStatus(), failed: 1 };
    expect(rayJobAdapter.progress.of(origin)).toEqual({ succeeded: 0, failed: 1 });
  });

  it('holds progress once a count was reached, and moves past what was carried when a count grows', () => {
    const origin = originRayJob();
    expect(rayJobAdapter.progress.holdsAny(null)).toBe(false);
    expect(rayJobAdapter.progress.holdsAny({ succeeded: 0, failed: 0 })).toBe(false);
    expect(rayJobAdapter.progress.holdsAny({ succeeded: 0, failed: 1 })).toBe(true);
    origin.status = { ...runningRayJobStatus(), failed: 1 };
    expect(rayJobAdapter.progress.movedPast(origin, null)).toBe(true);
    expect(rayJobAdapter.progress.movedPast(origin, { succeeded: 0, failed: 1 })).toBe(false);
  });

  it('refuses carried progress that is not its counts, naming the field', () => {
    expect(rayJobAdapter.progress.problem(null)).toBeUndefined();
    expect(rayJobAdapter.progress.problem({ succeeded: 1, failed: 0 })).toBeUndefined();
    expect(rayJobAdapter.progress.problem({ succeeded: 1 })).toMatch(/^failed: /);
    expect(rayJobAdapter.progress.problem('1/0')).toMatch(/^\(root\): /);
    expect(() =>
      rayJobAdapter.originStatus(originRayJob(), mirrorOf(originRayJob()), { succeeded: -1, failed: 0 }, now),
    ).toThrow(/^the carried progress is not a RayJob's: succeeded: /);
  });
});

describe('rayJobAdapter.sameStatus and statusViolations', () => {
  it('treats absent, zero and empty alike', () => {
    expect(rayJobAdapter.sameStatus(completeRayJobStatus(), completeRayJobStatus())).toBe(true);
    expect(rayJobAdapter.sameStatus({ succeeded: 0, failed: 0, rayJobInfo: {} }, undefined)).toBe(true);
    expect(rayJobAdapter.sameStatus(runningRayJobStatus(), completeRayJobStatus())).toBe(false);
  });

  it('accepts what the operator writes and refuses what the CRD schema refuses, nested fields included', () => {
    const origin = originRayJob();
    expect(rayJobAdapter.statusViolations(origin, completeRayJobStatus())).toEqual([]);
    // No enum on jobDeploymentStatus or jobStatus in the CRD.
    expect(rayJobAdapter.statusViolations(origin, { jobDeploymentStatus: 'SomethingNew' })).toEqual([]);
    const broken = {
      ...completeRayJobStatus(),
      endTime: 'soon',
      succeeded: '1',
      rayJobInfo: { startTime: 42 },
      rayClusterStatus: { ...runningRayJobStatus().rayClusterStatus, desiredCPU: 'lots' },
    };
    expect(rayJobAdapter.statusViolations(origin, broken)).toEqual([
      { field: 'status.endTime', message: 'must be an RFC 3339 date-time, not "soon"' },
      { field: 'status.succeeded', message: 'must be an integer, not "1"' },
      { field: 'status.rayJobInfo.startTime', message: 'must be a string, not 42' },
      { field: 'status.rayClusterStatus.desiredCPU', message: 'must be a resource quantity, not "lots"' },
    ]);
  });
});

describe('rayJobAdapter.isFinished and finishedAt', () => {
  const withStatus = (status: RayJobStatus): RayJob => ({ ...originRayJob(), status });

  it.each<[RayJobDeploymentStatus, boolean]>([
    ['', false],
    ['Initializing', false],
    ['Running', false],
    ['Waiting', false],
    ['Suspending', false],
    ['Suspended', false],
    ['Retrying', false],
    ['Complete', true],
    ['Failed', true],
  ])('jobDeploymentStatus %j: finished %s', (jobDeploymentStatus, finished) => {
    expect(rayJobAdapter.isFinished(withStatus({ ...runningRayJobStatus(), jobDeploymentStatus }))).toBe(
      finished,
    );
  });

  it('finishes on ValidationFailed only before anything was created (as Kueue counts it)', () => {
    expect(
      rayJobAdapter.isFinished(
        withStatus({
          jobDeploymentStatus: 'ValidationFailed',
          reason: 'ValidationFailed',
          message: 'invalid',
        }),
      ),
    ).toBe(true);
    expect(
      rayJobAdapter.isFinished(
        withStatus({ ...runningRayJobStatus(), jobDeploymentStatus: 'ValidationFailed' }),
      ),
    ).toBe(false);
    expect(rayJobAdapter.isFinished(originRayJob())).toBe(false);
  });

  it('finished at endTime, only when terminal', () => {
    expect(rayJobAdapter.finishedAt(withStatus(completeRayJobStatus()))).toEqual(
      new Date('2026-01-05T10:02:14Z'),
    );
    expect(rayJobAdapter.finishedAt(withStatus(runningRayJobStatus()))).toBeUndefined();
    expect(rayJobAdapter.finishedAt(withStatus({ jobDeploymentStatus: 'ValidationFailed' }))).toBeUndefined();
  });

  it('is suspended when spec.suspend is true', () => {
    expect(rayJobAdapter.isSuspended(originRayJob({ suspend: true }))).toBe(true);
    expect(rayJobAdapter.isSuspended(originRayJob())).toBe(false);
  });
});

describe('rayJobAdapter.suspendedBeforePlacementStatus', () => {
  it('is what the operator ends with for a RayJob created suspended', () => {
    const origin = originRayJob({ suspend: true });
    expect(rayJobAdapter.suspendedBeforePlacementStatus(origin, now)).toEqual({
      jobDeploymentStatus: 'Suspended',
      startTime: '2026-01-05T10:05:00Z',
      succeeded: 0,
      failed: 0,
      rayClusterStatus: { desiredCPU: '0', desiredGPU: '0', desiredMemory: '0', desiredTPU: '0', head: {} },
      rayJobInfo: {},
    });
    expect(
      rayJobAdapter.statusViolations(origin, rayJobAdapter.suspendedBeforePlacementStatus(origin, now)!),
    ).toEqual([]);
  });

  it('keeps an earlier start and counts, writes nothing once Suspended', () => {
    const origin = originRayJob({ suspend: true });
    origin.status = { ...runningRayJobStatus(), failed: 1 };
    expect(rayJobAdapter.suspendedBeforePlacementStatus(origin, now)).toMatchObject({
      startTime: '2026-01-05T10:00:02Z',
      failed: 1,
    });
    origin.status = { jobDeploymentStatus: 'Suspended' };
    expect(rayJobAdapter.suspendedBeforePlacementStatus(origin, now)).toBeUndefined();
  });

  it('writes nothing for a spec the operator refuses to suspend', () => {
    expect(
      rayJobAdapter.suspendedBeforePlacementStatus(
        originRayJob({ suspend: true, shutdownAfterJobFinishes: false }),
        now,
      ),
    ).toBeUndefined();
    expect(
      rayJobAdapter.suspendedBeforePlacementStatus(
        originRayJob({
          suspend: true,
          rayClusterSpec: undefined,
          clusterSelector: { 'ray.io/cluster': 'shared' },
        }),
        now,
      ),
    ).toBeUndefined();
  });
});

describe('rayJobAdapter.podDemand', () => {
  const head = { requests: { cpu: 1000, memory: 2 * gi }, count: 1 };
  const workers = { requests: { cpu: 1000, memory: 2 * gi }, count: 2 };
  const defaultSubmitter = { requests: { cpu: 500, memory: 200 * mi }, count: 1 };

  it("K8sJobMode (the default): the cluster plus the operator's default submitter pod", () => {
    expect(rayJobAdapter.podDemand(originRayJob())).toEqual([head, workers, defaultSubmitter]);
    expect(rayJobAdapter.podDemand(originRayJob({ submissionMode: undefined }))).toEqual([
      head,
      workers,
      defaultSubmitter,
    ]);
  });

  it('K8sJobMode with a submitter template: that pod (init containers included)', () => {
    const origin = originRayJob({
      submitterPodTemplate: {
        spec: {
          restartPolicy: 'Never',
          initContainers: [{ name: 'auth', resources: { requests: { cpu: '2' } } }],
          containers: [{ name: 'submit', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
        },
      },
    });
    expect(rayJobAdapter.podDemand(origin).at(-1)).toEqual({
      requests: { cpu: 2000, memory: 64 * mi },
      count: 1,
    });
  });

  it('SidecarMode: the submitter container joins the head pod', () => {
    expect(rayJobAdapter.podDemand(originRayJob({ submissionMode: 'SidecarMode' }))).toEqual([
      { requests: { cpu: 1500, memory: 2 * gi + 200 * mi }, count: 1 },
      workers,
    ]);
  });

  it('HTTPMode and InteractiveMode: the cluster alone', () => {
    expect(rayJobAdapter.podDemand(originRayJob({ submissionMode: 'HTTPMode' }))).toEqual([head, workers]);
    expect(rayJobAdapter.podDemand(originRayJob({ submissionMode: 'InteractiveMode' }))).toEqual([
      head,
      workers,
    ]);
  });

  it('on an existing cluster (clusterSelector): just the submitter', () => {
    const origin = originRayJob({
      rayClusterSpec: undefined,
      clusterSelector: { 'ray.io/cluster': 'shared' },
    });
    expect(rayJobAdapter.podDemand(origin)).toEqual([defaultSubmitter]);
    // clusterSelector wins over a rayClusterSpec, as in the operator.
    expect(
      rayJobAdapter.podDemand(originRayJob({ clusterSelector: { 'ray.io/cluster': 'shared' } })),
    ).toEqual([defaultSubmitter]);
  });

  it("clamps, multiplies by numOfHosts and autoscales the RayJob's cluster like a RayCluster", () => {
    const spec = rayClusterSpec({ enableInTreeAutoscaling: true });
    spec.workerGroupSpecs![0] = { ...spec.workerGroupSpecs![0]!, replicas: 9, maxReplicas: 3, numOfHosts: 2 };
    expect(
      rayJobAdapter.podDemand(originRayJob({ rayClusterSpec: spec, submissionMode: 'HTTPMode' })),
    ).toEqual([
      { requests: { cpu: 1500, memory: 2 * gi + 512 * mi }, count: 1 },
      { requests: { cpu: 1000, memory: 2 * gi }, count: 6 },
    ]);
  });
});
