// Each kind's pod templates, as its controller will make pods from them, summarised as
// placement reads them (podTemplateAsks): what a WorkerCluster's podRestrictions judge.

import type { Job } from '@jobrelay/kinds';
import { noPodTemplateAsks, type PodTemplateAsks, podTemplateAsks } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { batchJobAdapter } from '../src/batch-job/batch-job-adapter.ts';
import { genericAdapter } from '../src/generic/generic-adapter.ts';
import { genericKindConfigSchema } from '../src/generic/generic-kind-config.ts';
import { jobSetKind, trainJobKind } from '../src/generic/generic-kind-examples.ts';
import { rayCheckName } from '../src/ray/ray-pod-templates.ts';
import { rayClusterAdapter } from '../src/ray-cluster/ray-cluster-adapter.ts';
import { rayJobAdapter } from '../src/ray-job/ray-job-adapter.ts';
import { originRayCluster, originRayJob, rayClusterSpec } from './ray/ray-fixtures.ts';

const asks = (more: Partial<PodTemplateAsks>): PodTemplateAsks => ({ ...noPodTemplateAsks, ...more });

function job(podSpec: NonNullable<Job['spec']>['template']['spec']): Job {
  return {
    metadata: { name: 'train', namespace: 'team-a' },
    spec: { managedBy: 'jobrelay.dev/dispatcher', template: { spec: podSpec } },
  };
}

describe('batch/v1 Job: its one template', () => {
  it.each<[string, Job, PodTemplateAsks]>([
    [
      'a plain pod runs as default',
      job({ containers: [{ name: 'main' }] }),
      asks({ serviceAccounts: [{ role: '', name: 'default' }] }),
    ],
    [
      'everything a worker admin may refuse',
      job({
        serviceAccountName: 'builder',
        nodeName: 'node-3',
        hostNetwork: true,
        hostIPC: true,
        initContainers: [{ name: 'setup', securityContext: { privileged: true } }],
        containers: [{ name: 'main', securityContext: { privileged: true } }],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
      }),
      asks({
        privileged: ['init container setup', 'container main'],
        hostPathVolumes: ['volume root'],
        hostNamespaces: ['hostNetwork', 'hostIPC'],
        nodeNames: ['nodeName node-3'],
        serviceAccounts: [{ role: '', name: 'builder' }],
      }),
    ],
  ])('%s', (_what, origin, expected) => {
    expect(podTemplateAsks(batchJobAdapter.podTemplates(origin))).toEqual(expected);
  });
});

describe('RayCluster: the head group and every worker group, as the operator builds the pods', () => {
  it('names each template by its group, a worker group scaled to zero too', () => {
    const spec = rayClusterSpec();
    spec.workerGroupSpecs!.push({
      groupName: 'gpu',
      replicas: 0,
      minReplicas: 0,
      maxReplicas: 4,
      template: {
        spec: {
          containers: [{ name: 'ray-worker', securityContext: { privileged: true } }],
          volumes: [{ name: 'dev', hostPath: { path: '/dev' } }],
        },
      },
    });
    expect(podTemplateAsks(rayClusterAdapter.podTemplates(originRayCluster(spec)))).toEqual(
      asks({
        privileged: ['container ray-worker in the worker group gpu'],
        hostPathVolumes: ['volume dev in the worker group gpu'],
        serviceAccounts: [
          { role: 'head group', name: 'default' },
          { role: 'worker group cpu', name: 'default' },
          { role: 'worker group gpu', name: 'default' },
        ],
      }),
    );
  });

  it("with in-tree autoscaling, the head runs as the RayCluster's name and carries the autoscaler's securityContext", () => {
    const origin = originRayCluster({
      enableInTreeAutoscaling: true,
      autoscalerOptions: { securityContext: { privileged: true } },
    });
    expect(podTemplateAsks(rayClusterAdapter.podTemplates(origin))).toEqual(
      asks({
        privileged: ['container autoscaler in the head group'],
        serviceAccounts: [
          { role: 'head group', name: 'demo' },
          { role: 'worker group cpu', name: 'default' },
        ],
      }),
    );
  });

  it('with in-tree autoscaling, a head template that names its account keeps it', () => {
    const spec = rayClusterSpec({ enableInTreeAutoscaling: true });
    spec.headGroupSpec.template.spec!.serviceAccountName = 'ray-head';
    const accounts = podTemplateAsks(rayClusterAdapter.podTemplates(originRayCluster(spec))).serviceAccounts;
    expect(accounts[0]).toEqual({ role: 'head group', name: 'ray-head' });
  });

  it.each([
    ['demo', 'demo'],
    ['x'.repeat(60), 'x'.repeat(50)],
    ['1st-cluster', 'rst-cluster'],
  ])("the operator's name for an account named after %s is %s (utils.CheckName)", (name, account) => {
    expect(rayCheckName(name)).toBe(account);
  });
});

describe('RayJob: its RayCluster and its submitter', () => {
  it('in K8sJobMode, the default submitter runs as default', () => {
    expect(podTemplateAsks(rayJobAdapter.podTemplates(originRayJob()))).toEqual(
      asks({
        serviceAccounts: [
          { role: 'head group', name: 'default' },
          { role: 'worker group cpu', name: 'default' },
          { role: 'submitter', name: 'default' },
        ],
      }),
    );
  });

  it('a submitter template of its own is judged like the others', () => {
    const origin = originRayJob({
      submitterPodTemplate: {
        spec: {
          serviceAccountName: 'submit',
          hostPID: true,
          restartPolicy: 'Never',
          containers: [{ name: 'submit' }],
        },
      },
    });
    const summary = podTemplateAsks(rayJobAdapter.podTemplates(origin));
    expect(summary.hostNamespaces).toEqual(['hostPID in the submitter']);
    expect(summary.serviceAccounts.at(-1)).toEqual({ role: 'submitter', name: 'submit' });
  });

  it("with in-tree autoscaling, its head's account is named only when the operator creates the RayCluster", () => {
    const origin = originRayJob({ rayClusterSpec: rayClusterSpec({ enableInTreeAutoscaling: true }) });
    expect(podTemplateAsks(rayJobAdapter.podTemplates(origin)).serviceAccounts[0]).toEqual({
      role: 'head group',
      unknown: 'the operator names after the RayCluster it creates',
    });
  });

  it('on an existing RayCluster (clusterSelector) in HTTPMode, it makes no pods of its own', () => {
    const origin = originRayJob({
      clusterSelector: { 'ray.io/cluster': 'shared' },
      submissionMode: 'HTTPMode',
    });
    expect(rayJobAdapter.podTemplates(origin)).toEqual([]);
  });
});

describe('generic kinds: the templates at their pod sets', () => {
  const jobSet = genericAdapter(genericKindConfigSchema.parse(jobSetKind));

  it('names each element of a pod set list by its place', () => {
    const object = {
      metadata: { name: 'js', namespace: 'team-a' },
      spec: {
        replicatedJobs: [
          { name: 'leader', template: { spec: { template: { spec: { containers: [{ name: 'l' }] } } } } },
          {
            name: 'workers',
            replicas: 0,
            template: {
              spec: { template: { spec: { hostNetwork: true, containers: [{ name: 'w' }] } } },
            },
          },
        ],
      },
    };
    expect(podTemplateAsks(jobSet.podTemplates(object))).toEqual(
      asks({
        hostNamespaces: ['hostNetwork in the spec.replicatedJobs[1]'],
        serviceAccounts: [
          { role: 'spec.replicatedJobs[0]', name: 'default' },
          { role: 'spec.replicatedJobs[1]', name: 'default' },
        ],
      }),
    );
  });

  it('a single template without a list is the workload’s one template', () => {
    const single = genericAdapter(
      genericKindConfigSchema.parse({
        ...jobSetKind,
        name: 'single',
        podSets: [{ template: 'spec.template' }],
      }),
    );
    const object = {
      metadata: {},
      spec: { template: { spec: { nodeName: 'n1', containers: [{ name: 'c' }] } } },
    };
    expect(podTemplateAsks(single.podTemplates(object))).toEqual(
      asks({ nodeNames: ['nodeName n1'], serviceAccounts: [{ role: '', name: 'default' }] }),
    );
  });

  it('a kind configured without pod sets has templates jobrelay cannot read', () => {
    const trainJob = genericAdapter(genericKindConfigSchema.parse(trainJobKind));
    expect(trainJob.podTemplates({ metadata: {}, spec: {} })).toBeUndefined();
    expect(podTemplateAsks(trainJob.podTemplates({ metadata: {}, spec: {} })).templatesUnknown).toBe(true);
  });
});
