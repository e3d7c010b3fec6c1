// The capacity cache keeps a view of each pod on a worker (podCapacityView): what it computes
// from a pod must come out the same from the view as from the whole pod.

import type { PlainJson } from '@jobrelay/kube';
import { podRequests } from '@jobrelay/placement';
import type { V1Pod } from '@kubernetes/client-node';

type Pod = PlainJson<V1Pod>;

import { describe, expect, it } from 'vitest';
import { podCapacityView } from '../src/worker-capacity.ts';

function pod(spec: Partial<NonNullable<Pod['spec']>>, phase = 'Running'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'train-0-abcde',
      namespace: 'team-a',
      uid: 'pod-uid',
      resourceVersion: '42',
      labels: { 'batch.kubernetes.io/controller-uid': 'job-uid', 'job-name': 'train' },
      annotations: { 'batch.kubernetes.io/job-completion-index': '0' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-the-controller', uid: 'cm' },
        { apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: 'job-uid', controller: true },
      ],
    },
    spec: {
      nodeName: 'kwok-node-1',
      restartPolicy: 'Never',
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [
        {
          name: 'main',
          image: 'busybox',
          command: ['sh', '-c', 'sleep 1'],
          env: [{ name: 'A', value: 'b'.repeat(1000) }],
          resources: { requests: { cpu: '500m' }, limits: { cpu: '1', memory: '1Gi' } },
        },
        { name: 'helper', image: 'busybox', resources: { requests: { memory: '64Mi' } } },
      ],
      ...spec,
    },
    status: { phase, podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const pods: Array<[string, Pod]> = [
  ['plain containers', pod({})],
  [
    'a sidecar and an init container',
    pod({
      initContainers: [
        {
          name: 'sidecar',
          image: 'envoy',
          restartPolicy: 'Always',
          resources: { requests: { cpu: '100m' } },
        },
        { name: 'setup', image: 'busybox', resources: { requests: { cpu: '4', memory: '2Gi' } } },
      ],
    }),
  ],
  [
    'pod-level resources and overhead',
    pod({ resources: { limits: { cpu: '3' } }, overhead: { cpu: '250m' } }),
  ],
  ['not bound to a node yet', pod({ nodeName: undefined }, 'Pending')],
];

describe('podCapacityView', () => {
  for (const [name, whole] of pods) {
    it(`keeps what capacity reads: ${name}`, () => {
      const view = podCapacityView(structuredClone(whole));
      expect(podRequests(view.spec!)).toEqual(podRequests(whole.spec!));
      expect(view.spec?.nodeName).toBe(whole.spec?.nodeName);
      expect(view.status?.phase).toBe(whole.status?.phase);
      expect(view.metadata?.ownerReferences).toEqual([whole.metadata!.ownerReferences![1]]);
      for (const field of ['name', 'namespace', 'uid', 'resourceVersion'] as const)
        expect(view.metadata?.[field]).toBe(whole.metadata?.[field]);
    });
  }

  it('drops what capacity never reads', () => {
    const view = podCapacityView(pods[0]![1]);
    expect(view.metadata?.labels).toBeUndefined();
    expect(view.spec?.volumes).toBeUndefined();
    expect(view.spec?.containers[0]).toEqual({
      name: 'main',
      resources: { requests: { cpu: '500m' }, limits: { cpu: '1', memory: '1Gi' } },
    });
    expect(view.status).toEqual({ phase: 'Running' });
  });
});
