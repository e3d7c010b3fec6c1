// podsOf: how the admin API finds the pods of a workload's mirror on its worker, per kind.
import { describe, expect, it } from 'vitest';
import { batchJobAdapter } from '../src/batch-job/batch-job-adapter.ts';
import { genericAdapter } from '../src/generic/generic-adapter.ts';
import { genericKindConfig, genericKindConfigSchema } from '../src/generic/generic-kind-config.ts';
import { genericKindExamples, jobSetKind } from '../src/generic/generic-kind-examples.ts';
import { builtInKinds } from '../src/kind-list.ts';
import { rayClusterAdapter } from '../src/ray-cluster/ray-cluster-adapter.ts';
import { rayJobAdapter } from '../src/ray-job/ray-job-adapter.ts';
import { mirrorOf, originRayCluster, originRayJob, runningRayJobStatus } from './ray/ray-fixtures.ts';

describe('podsOf', () => {
  it('is implemented by every built-in kind and every ready-made generic kind', () => {
    for (const adapter of builtInKinds) expect(adapter.podsOf, adapter.name).toBeTypeOf('function');
    for (const [name, config] of Object.entries(genericKindExamples)) {
      const adapter = genericAdapter(genericKindConfigSchema.parse(config));
      expect(adapter.podsOf({ metadata: { name: 'w' } }), name).toHaveLength(1);
    }
  });

  it("finds a Job's pods by its controller-uid (never an earlier Job's of the same name)", () => {
    expect(batchJobAdapter.podsOf({ metadata: { name: 'train', uid: 'u-1' } })).toEqual([
      { labelSelector: 'batch.kubernetes.io/controller-uid=u-1', description: "the Job's pods" },
    ]);
    expect(batchJobAdapter.podsOf({ metadata: { name: 'train' } })).toEqual([
      { labelSelector: 'batch.kubernetes.io/job-name=train', description: "the Job's pods" },
    ]);
  });

  it("finds a RayCluster's head and workers by ray.io/cluster", () => {
    const mirror = mirrorOf(originRayCluster());
    expect(rayClusterAdapter.podsOf(mirror)).toEqual([
      {
        labelSelector: `ray.io/cluster=${mirror.metadata!.name}`,
        description: `RayCluster ${mirror.metadata!.name}`,
      },
    ]);
  });

  it("finds a RayJob's RayCluster (once the operator named it) and its submitter Job in K8sJobMode", () => {
    const origin = originRayJob();
    const name = origin.metadata!.name!;
    const submitter = {
      labelSelector: `batch.kubernetes.io/job-name=${name}`,
      description: `submitter Job ${name}`,
    };
    // Before the operator created its RayCluster: only the submitter can be named.
    expect(rayJobAdapter.podsOf(mirrorOf(origin))).toEqual([submitter]);
    expect(rayJobAdapter.podsOf(mirrorOf(origin, runningRayJobStatus()))).toEqual([
      { labelSelector: 'ray.io/cluster=demo-k2x9p', description: 'RayCluster demo-k2x9p' },
      submitter,
    ]);
    // SidecarMode submits from a container of the head pod; HTTPMode has no submitter pod.
    for (const submissionMode of ['SidecarMode', 'HTTPMode'] as const) {
      expect(rayJobAdapter.podsOf(mirrorOf(originRayJob({ submissionMode }), runningRayJobStatus()))).toEqual(
        [{ labelSelector: 'ray.io/cluster=demo-k2x9p', description: 'RayCluster demo-k2x9p' }],
      );
    }
    // On an existing cluster (clusterSelector) that cluster's pods are not the RayJob's.
    const onExisting = originRayJob({ clusterSelector: { 'ray.io/cluster': 'shared' } });
    expect(
      rayJobAdapter.podsOf(mirrorOf(onExisting, { ...runningRayJobStatus(), rayClusterName: 'shared' })),
    ).toEqual([submitter]);
  });

  it('finds a generic kind’s pods by its configured podLabel, and none without one', () => {
    const jobSet = genericAdapter(genericKindConfigSchema.parse(jobSetKind));
    expect(jobSet.podsOf({ metadata: { name: 'train' } })).toEqual([
      { labelSelector: 'jobset.sigs.k8s.io/jobset-name=train', description: "JobSet train's pods" },
    ]);
    const { podLabel: _none, ...unlabelled } = jobSetKind;
    expect(
      genericAdapter(genericKindConfigSchema.parse(unlabelled)).podsOf({ metadata: { name: 't' } }),
    ).toEqual([]);
    const bad = genericKindConfig({ ...jobSetKind, podLabel: 'not a label/' });
    expect(bad).toEqual({
      ok: false,
      problem: 'podLabel: must be a label key such as jobset.sigs.k8s.io/jobset-name',
    });
  });
});
