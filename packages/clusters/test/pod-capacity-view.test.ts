// The capacity cache keeps a view of each pod and node on a worker (podCapacityView,
// nodeCapacityView): what it computes from one must come out the same from the view as from the
// whole object, and a change it does not read (samePodCapacity, sameNodeCapacity) must be
// exactly one that leaves those results as they were.

import type { PlainJson } from '@jobrelay/kube';
import { podRequests } from '@jobrelay/resources';
import type { V1Node, V1Pod } from '@kubernetes/client-node';

type Pod = PlainJson<V1Pod>;

import { describe, expect, it } from 'vitest';
import {
  nodeCapacityView,
  podCapacityView,
  sameNodeCapacity,
  samePodCapacity,
} from '../src/worker-capacity.ts';

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

describe('samePodCapacity', () => {
  const running = podCapacityView(pod({}));
  it('holds across a change capacity does not read: Pending to Running, a new version', () => {
    const pending = podCapacityView(pod({}, 'Pending'));
    const later = podCapacityView({ ...pod({}), metadata: { ...pod({}).metadata, resourceVersion: '43' } });
    expect(samePodCapacity(pending, running)).toBe(true);
    expect(samePodCapacity(running, later)).toBe(true);
  });

  const changes: Array<[string, Pod]> = [
    ['bound to a node', podCapacityView(pod({ nodeName: undefined }, 'Pending'))],
    ['on another node', podCapacityView(pod({ nodeName: 'kwok-node-2' }))],
    ['terminal', podCapacityView(pod({}, 'Succeeded'))],
    [
      'resized in place',
      podCapacityView(
        pod({ containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '2' } } }] }),
      ),
    ],
    [
      'another owner',
      podCapacityView({ ...pod({}), metadata: { ...pod({}).metadata, ownerReferences: [] } }),
    ],
  ];
  for (const [name, changed] of changes) {
    it(`fails when it is ${name}`, () => {
      expect(samePodCapacity(changed, running)).toBe(false);
      expect(samePodCapacity(running, changed)).toBe(false);
    });
  }
});

describe('nodeCapacityView and sameNodeCapacity', () => {
  type Node = PlainJson<V1Node>;
  const node = (change: (n: Node) => void = () => {}): Node => {
    const whole: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'kwok-node-1', resourceVersion: '7', labels: { type: 'kwok' } },
      spec: { taints: [{ key: 'soft', value: 'x', effect: 'PreferNoSchedule' }] },
      status: {
        allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
        capacity: { cpu: '32', memory: '256Gi', pods: '110' },
        images: [{ names: ['registry.example/big:1'], sizeBytes: 1 }],
        conditions: [
          { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: '2026-12-05T10:00:00Z' },
          { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-12-05T10:00:00Z' },
        ],
      },
    };
    change(whole);
    return nodeCapacityView(whole);
  };
  const base = node();

  it('keeps what capacity reads and nothing else', () => {
    expect(base).toEqual({
      metadata: { name: 'kwok-node-1', resourceVersion: '7' },
      spec: {},
      status: {
        allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
  });

  it('holds across a heartbeat', () => {
    const beat = node((n) => {
      n.metadata!.resourceVersion = '8';
      for (const c of n.status!.conditions!) c.lastHeartbeatTime = '2026-12-05T10:00:10Z';
    });
    expect(sameNodeCapacity(base, beat)).toBe(true);
  });

  const changes: Array<[string, (n: Node) => void]> = [
    ['cordoned', (n) => Object.assign(n.spec!, { unschedulable: true })],
    ['tainted NoSchedule', (n) => n.spec!.taints!.push({ key: 'gpu', effect: 'NoSchedule' })],
    ['tainted NoExecute', (n) => n.spec!.taints!.push({ key: 'gone', effect: 'NoExecute' })],
    ['not Ready', (n) => Object.assign(n.status!.conditions![1]!, { status: 'False' })],
    ['Ready unknown', (n) => n.status!.conditions!.splice(1, 1)],
    ['given more memory', (n) => Object.assign(n.status!.allocatable!, { memory: '512Gi' })],
    ['given a GPU', (n) => Object.assign(n.status!.allocatable!, { 'nvidia.com/gpu': '8' })],
  ];
  for (const [name, change] of changes) {
    it(`fails when it is ${name}`, () => {
      expect(sameNodeCapacity(base, node(change))).toBe(false);
      expect(sameNodeCapacity(node(change), base)).toBe(false);
    });
  }
});
