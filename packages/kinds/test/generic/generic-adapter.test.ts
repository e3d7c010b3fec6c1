import {
  originLabel,
  originUidLabel,
  placementAttemptAnnotation,
  suspendSentAnnotation,
} from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import { type GenericWorkload, genericAdapter } from '../../src/generic/generic-adapter.ts';
import { genericKindConfigSchema } from '../../src/generic/generic-kind-config.ts';
import {
  appWrapperKind,
  jobSetKind,
  pipelineRunKind,
  trainJobKind,
} from '../../src/generic/generic-kind-examples.ts';
import type { MirrorBuildContext } from '../../src/workload-kind-adapter.ts';

const jobSet = genericAdapter(genericKindConfigSchema.parse(jobSetKind));
const pipelineRun = genericAdapter(genericKindConfigSchema.parse(pipelineRunKind));
const appWrapper = genericAdapter(genericKindConfigSchema.parse(appWrapperKind));
const trainJob = genericAdapter(genericKindConfigSchema.parse(trainJobKind));

const context: MirrorBuildContext = {
  originId: 'mgmt-7f3a',
  attempt: 1,
  carried: { succeeded: 0, failed: 0 },
  now: new Date('2026-01-05T10:00:00Z'),
};
const now = new Date('2026-01-05T10:05:00Z');
const noCarried = { succeeded: 0, failed: 0 };

function originJobSet(): GenericWorkload {
  return {
    apiVersion: 'jobset.x-k8s.io/v1alpha2',
    kind: 'JobSet',
    metadata: { name: 'train', namespace: 'team-a', uid: 'js-uid', generation: 2, labels: { app: 'train' } },
    spec: {
      managedBy: 'jobrelay.dev/dispatcher',
      suspend: false,
      replicatedJobs: [
        {
          name: 'workers',
          replicas: 2,
          template: {
            spec: {
              parallelism: 4,
              completions: 4,
              template: {
                spec: { containers: [{ name: 'w', resources: { requests: { cpu: '2', memory: '1Gi' } } }] },
              },
            },
          },
        },
        {
          name: 'driver',
          template: {
            spec: {
              template: { spec: { containers: [{ name: 'd', resources: { requests: { cpu: '500m' } } }] } },
            },
          },
        },
      ],
    },
  };
}

function mirrorOf(
  origin: GenericWorkload,
  status?: GenericWorkload['status'],
  generation = 1,
): GenericWorkload {
  const { managedBy: _m, ...spec } = structuredClone(origin.spec!);
  return {
    ...structuredClone(origin),
    metadata: { ...origin.metadata, uid: 'mirror-uid', generation },
    spec,
    ...(status ? { status } : {}),
  };
}

describe('genericAdapter: identity', () => {
  it('takes GVK, plural and managedBy from the configuration, and says whether it was run on the real controller', () => {
    expect(jobSet.name).toBe('jobset');
    expect(jobSet.resource).toEqual({
      group: 'jobset.x-k8s.io',
      version: 'v1alpha2',
      kind: 'JobSet',
      plural: 'jobsets',
    });
    expect(jobSet.managedBy).toEqual({ default: 'jobrelay.dev/dispatcher' });
    expect(trainJob.managedBy).toEqual({
      default: 'kueue.x-k8s.io/multikueue',
      accepted: ['kueue.x-k8s.io/multikueue'],
    });
    // jobSetKind as shipped is what e2e/test/jobset-generic.test.ts runs on JobSet's real controller;
    // the same kind configured otherwise (or another example) was not run here.
    expect(jobSet.verification).toBe('real-controller');
    expect(trainJob.verification).toBe('generic-untested');
    const changed = genericKindConfigSchema.parse({ ...jobSetKind, finishedConditions: [] });
    expect(genericAdapter(changed).verification).toBe('generic-untested');
    expect(jobSet.isManagedBy(originJobSet(), 'jobrelay.dev/dispatcher')).toBe(true);
    expect(jobSet.isManagedBy(originJobSet(), 'other.io/x')).toBe(false);
  });
});

describe('genericAdapter.buildMirror', () => {
  it('copies the spec minus managedBy, deeply, with identity metadata; the origin is untouched', () => {
    const origin = originJobSet();
    origin.status = { conditions: [] };
    const before = structuredClone(origin);
    const mirror = jobSet.buildMirror(origin, context);
    expect(origin).toEqual(before);
    const { managedBy: _m, ...spec } = origin.spec!;
    expect(mirror).toEqual({
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: {
        name: 'train',
        namespace: 'team-a',
        labels: { app: 'train', [originLabel]: 'mgmt-7f3a', [originUidLabel]: 'js-uid' },
        annotations: { [placementAttemptAnnotation]: '1', [suspendSentAnnotation]: 'false' },
      },
      spec,
    });
    (mirror.spec!.replicatedJobs as { replicas: number }[])[0]!.replicas = 5;
    expect((origin.spec!.replicatedJobs as { replicas: number }[])[0]!.replicas).toBe(2);
  });
});

describe('genericAdapter.mirrorSpecUpdate', () => {
  it('sends the suspend field as the origin’s transitions only: a worker’s own hold stays (a Kueue there)', () => {
    const origin = originJobSet();
    const built = jobSet.buildMirror(origin, context);
    const held: GenericWorkload = { ...built, spec: { ...built.spec, suspend: true } };
    expect(jobSet.mirrorSpecUpdate(origin, held)).toBeUndefined();
    expect(jobSet.mirrorRecordUpdate(origin, held)).toBeUndefined();
    expect(jobSet.mirrorHeldByWorker(origin, held)).toBe('its JobSet is suspended there');
    expect(jobSet.mirrorHeldByWorker(origin, built)).toBeUndefined();
    const suspended: GenericWorkload = { ...origin, spec: { ...origin.spec, suspend: true } };
    expect(jobSet.mirrorSpecUpdate(suspended, held)).toEqual({ suspend: true });
    expect(jobSet.mirrorRecordUpdate(suspended, held)).toEqual({ [suspendSentAnnotation]: 'true' });
    expect(jobSet.mirrorHeldByWorker(suspended, held)).toBeUndefined();
  });

  it('flows down only the suspend field by default, as a boolean', () => {
    const origin = originJobSet();
    const mirror = mirrorOf(origin);
    expect(jobSet.mirrorSpecUpdate(origin, mirror)).toBeUndefined();
    origin.spec!.suspend = true;
    expect(jobSet.mirrorSpecUpdate(origin, mirror)).toEqual({ suspend: true });
    delete origin.spec!.suspend;
    mirror.spec!.suspend = true;
    expect(jobSet.mirrorSpecUpdate(origin, mirror)).toEqual({ suspend: false });
    // Other fields do not flow unless configured.
    (origin.spec!.replicatedJobs as { replicas: number }[])[0]!.replicas = 9;
    mirror.spec!.suspend = false;
    expect(jobSet.mirrorSpecUpdate(origin, mirror)).toBeUndefined();
  });

  it('flows down configured fields (a PipelineRun is cancelled through spec.status)', () => {
    const origin: GenericWorkload = {
      metadata: { name: 'build', namespace: 'ci', uid: 'pr-uid', generation: 1 },
      spec: { managedBy: 'jobrelay.dev/dispatcher', pipelineRef: { name: 'build' } },
    };
    const mirror = mirrorOf(origin);
    expect(pipelineRun.mirrorSpecUpdate(origin, mirror)).toBeUndefined();
    origin.spec!.status = 'Cancelled';
    expect(pipelineRun.mirrorSpecUpdate(origin, mirror)).toEqual({ status: 'Cancelled' });
  });

  it('patches nested fields as nested objects', () => {
    const adapter = genericAdapter(
      genericKindConfigSchema.parse({
        ...trainJobKind,
        name: 'pytorchjob',
        suspendField: 'spec.runPolicy.suspend',
        mutableSpecFields: ['runPolicy.suspend', 'runPolicy.activeDeadlineSeconds'],
      }),
    );
    const origin: GenericWorkload = {
      metadata: { name: 'p', namespace: 'ml', uid: 'p-uid' },
      spec: { runPolicy: { suspend: true, activeDeadlineSeconds: 60 } },
    };
    const mirror: GenericWorkload = { metadata: origin.metadata, spec: { runPolicy: { backoffLimit: 3 } } };
    expect(adapter.mirrorSpecUpdate(origin, mirror)).toEqual({
      runPolicy: { suspend: true, activeDeadlineSeconds: 60 },
    });
    expect(adapter.isSuspended(origin)).toBe(true);
  });
});

describe('genericAdapter.originStatus and sameStatus', () => {
  const status = {
    conditions: [
      {
        type: 'Completed',
        status: 'True',
        reason: 'AllJobsCompleted',
        message: 'jobset completed successfully',
        lastTransitionTime: '2026-01-05T10:04:00Z',
      },
    ],
    replicatedJobsStatus: [{ name: 'workers', ready: 0, succeeded: 2, failed: 0, active: 0, suspended: 0 }],
    terminalState: 'Completed',
    restarts: 0,
  };

  it('is the mirror status verbatim, a copy', () => {
    const origin = originJobSet();
    const mirror = mirrorOf(origin, structuredClone(status));
    const result = jobSet.originStatus(origin, mirror, noCarried, now);
    expect(result).toEqual(status);
    (result as typeof status).conditions[0]!.status = 'False';
    expect(mirror.status).toEqual(status);
  });

  it("reports the origin's own observedGeneration once the mirror has observed the matching spec", () => {
    const origin = originJobSet();
    const mirror = mirrorOf(origin, { ...structuredClone(status), observedGeneration: 1 }, 1);
    expect(jobSet.originStatus(origin, mirror, noCarried, now)).toEqual({ ...status, observedGeneration: 2 });
  });

  it('compares with absent and empty alike, but not zero or empty strings', () => {
    expect(jobSet.sameStatus(undefined, { conditions: [] })).toBe(true);
    expect(jobSet.sameStatus({ a: null }, {})).toBe(true);
    expect(jobSet.sameStatus({ restarts: 0 }, {})).toBe(false);
    expect(jobSet.sameStatus(status, structuredClone(status))).toBe(true);
  });

  it("knows no schema: the kind's apiserver validates", () => {
    expect(jobSet.statusViolations(originJobSet(), { anything: 1 })).toEqual([]);
  });
});

describe('genericAdapter predicates', () => {
  const withStatus = (status: GenericWorkload['status']): GenericWorkload => ({ ...originJobSet(), status });

  it('finishes when a configured condition has its status', () => {
    expect(jobSet.isFinished(originJobSet())).toBe(false);
    expect(jobSet.isFinished(withStatus({ conditions: [{ type: 'Completed', status: 'False' }] }))).toBe(
      false,
    );
    expect(jobSet.isFinished(withStatus({ conditions: [{ type: 'Suspended', status: 'True' }] }))).toBe(
      false,
    );
    const failed = withStatus({
      conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: '2026-01-05T10:03:00Z' }],
    });
    expect(jobSet.isFinished(failed)).toBe(true);
    expect(jobSet.finishedAt(failed)).toEqual(new Date('2026-01-05T10:03:00Z'));
    // Tekton: Succeeded=False is a finish too.
    expect(pipelineRun.isFinished(withStatus({ conditions: [{ type: 'Succeeded', status: 'False' }] }))).toBe(
      true,
    );
    expect(
      pipelineRun.isFinished(withStatus({ conditions: [{ type: 'Succeeded', status: 'Unknown' }] })),
    ).toBe(false);
  });

  it('finishes when a configured field has a finishing value (AppWrapper phases), with no time', () => {
    expect(appWrapper.isFinished(withStatus({ phase: 'Running' }))).toBe(false);
    expect(appWrapper.isFinished(withStatus({ phase: 'Succeeded' }))).toBe(true);
    expect(appWrapper.finishedAt(withStatus({ phase: 'Failed' }))).toBeUndefined();
  });

  it('is suspended through the configured field; never without one', () => {
    const origin = originJobSet();
    expect(jobSet.isSuspended(origin)).toBe(false);
    origin.spec!.suspend = true;
    expect(jobSet.isSuspended(origin)).toBe(true);
    expect(pipelineRun.isSuspended(origin)).toBe(false);
  });
});

describe('genericAdapter.podDemand', () => {
  it('follows the configured pod sets: replicas x parallelism per replicated Job, defaults for absent counts', () => {
    expect(jobSet.podDemand(originJobSet())).toEqual([
      { requests: { cpu: 2000, memory: 2 ** 30 }, count: 8 },
      { requests: { cpu: 500 }, count: 1 },
    ]);
  });

  it('asks for nothing without pod sets, and skips elements without a template', () => {
    expect(trainJob.podDemand({ metadata: {}, spec: { trainer: { numNodes: 4 } } })).toEqual([]);
    expect(jobSet.podDemand({ metadata: {}, spec: { replicatedJobs: [{ name: 'empty' }] } })).toEqual([]);
    expect(jobSet.podDemand({ metadata: {}, spec: {} })).toEqual([]);
  });

  it('handles a single pod set at a fixed path', () => {
    const adapter = genericAdapter(
      genericKindConfigSchema.parse({
        ...jobSetKind,
        name: 'single',
        podSets: [{ template: 'spec.template', count: [{ path: 'spec.size', default: 1 }] }],
      }),
    );
    const object: GenericWorkload = {
      spec: {
        size: 3,
        template: { spec: { containers: [{ name: 'c', resources: { limits: { cpu: '1' } } }] } },
      },
    };
    expect(adapter.podDemand(object)).toEqual([{ requests: { cpu: 1000 }, count: 3 }]);
  });
});
