import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PodResourceFields, podRequests } from '../src/pod-requests.ts';
import { addResources, type Resources } from '../src/resource-quantity.ts';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

type Quantities = Record<string, string>;

let containerCount = 0;
const container = (requests?: Quantities, limits?: Quantities): V1Container => ({
  name: `c${containerCount++}`,
  resources: { ...(requests && { requests }), ...(limits && { limits }) },
});
const sidecar = (requests?: Quantities, limits?: Quantities): V1Container => ({
  ...container(requests, limits),
  restartPolicy: 'Always',
});
const pod = (containers: V1Container[], more: Partial<PodResourceFields> = {}): PodResourceFields => ({
  containers,
  ...more,
});
const podLevel = (requests?: Quantities, limits?: Quantities): V1ResourceRequirements => ({
  ...(requests && { requests }),
  ...(limits && { limits }),
});

// Expected values are what kube-scheduler computes for the pod the Job controller would
// create: each spec went through SetDefaults_Pod and resource.PodRequests of Kubernetes
// v1.35.4 (PodLevelResources on, as by default), cpu read with MilliValue, the rest with Value.
const cases: { name: string; spec: PodResourceFields; expected: Resources }[] = [
  { name: 'no containers asks for nothing', spec: pod([]), expected: {} },
  { name: 'a container without resources asks for nothing', spec: pod([{ name: 'bare' }]), expected: {} },
  {
    name: 'one container: its requests',
    spec: pod([container({ cpu: '500m', memory: '128Mi' })]),
    expected: { cpu: 500, memory: 128 * Mi },
  },
  {
    name: 'a limit stands in for a missing request',
    spec: pod([container(undefined, { cpu: '2', memory: '1Gi' })]),
    expected: { cpu: 2000, memory: Gi },
  },
  {
    name: 'a request wins over its limit',
    spec: pod([container({ cpu: '250m' }, { cpu: '2', memory: '1Gi' })]),
    expected: { cpu: 250, memory: Gi },
  },
  {
    name: 'regular containers add up',
    spec: pod([
      container({ cpu: '500m', memory: '1Gi' }),
      container({ cpu: '1500m' }),
      container(undefined, { memory: '512Mi' }),
    ]),
    expected: { cpu: 2000, memory: 1.5 * Gi },
  },
  {
    name: 'extended resources, hugepages and ephemeral storage count too',
    spec: pod([
      container({ 'nvidia.com/gpu': '1', 'ephemeral-storage': '10Gi' }, { 'hugepages-2Mi': '4Mi' }),
      container(undefined, { 'nvidia.com/gpu': '2' }),
    ]),
    expected: { 'nvidia.com/gpu': 3, 'ephemeral-storage': 10 * Gi, 'hugepages-2Mi': 4 * Mi },
  },
  {
    name: 'an init container bigger than the regular ones sets that resource only',
    spec: pod([container({ cpu: '1', memory: '2Gi' })], {
      initContainers: [container({ cpu: '3', memory: '1Gi' })],
    }),
    expected: { cpu: 3000, memory: 2 * Gi },
  },
  {
    name: 'init containers run one at a time: the largest counts, not their sum',
    spec: pod([container({ cpu: '1' })], {
      initContainers: [container({ cpu: '2' }), container({ cpu: '2' })],
    }),
    expected: { cpu: 2000 },
  },
  {
    name: 'an init container can ask for what no regular container does',
    spec: pod([container({ cpu: '1' })], { initContainers: [container({ 'example.com/dongle': '1' })] }),
    expected: { cpu: 1000, 'example.com/dongle': 1 },
  },
  {
    name: 'a sidecar runs alongside the regular containers',
    spec: pod([container({ cpu: '1', memory: '1Gi' })], {
      initContainers: [sidecar({ cpu: '200m', memory: '100Mi' })],
    }),
    expected: { cpu: 1200, memory: Gi + 100 * Mi },
  },
  {
    name: 'an init container after a sidecar runs alongside it',
    spec: pod([container({ cpu: '1' })], {
      initContainers: [sidecar({ cpu: '500m' }), container({ cpu: '2' })],
    }),
    expected: { cpu: 2500 },
  },
  {
    name: 'an init container before a sidecar does not run alongside it',
    spec: pod([container({ cpu: '1' })], {
      initContainers: [container({ cpu: '2' }), sidecar({ cpu: '500m' })],
    }),
    expected: { cpu: 2000 },
  },
  {
    name: 'sidecars and init containers mixed, each resource on its own, plus overhead',
    spec: pod([container(undefined, { cpu: '1', memory: '1Gi' }), container({ cpu: '500m' })], {
      initContainers: [
        container({ cpu: '3' }),
        sidecar({ cpu: '200m', memory: '100Mi' }),
        container({ memory: '2Gi' }),
      ],
      overhead: { cpu: '100m' },
    }),
    expected: { cpu: 3100, memory: 2 * Gi + 100 * Mi },
  },
  {
    name: 'a sidecar defaults its request to its limit too',
    spec: pod([container({ cpu: '1' })], { initContainers: [sidecar(undefined, { cpu: '1' })] }),
    expected: { cpu: 2000 },
  },
  {
    name: 'an init container restartPolicy other than Always is an ordinary init container',
    spec: pod([container({ cpu: '1' })], {
      initContainers: [{ ...container({ cpu: '500m' }), restartPolicy: 'OnFailure' }],
    }),
    expected: { cpu: 1000 },
  },
  {
    name: 'overhead is added on top, resources of its own included',
    spec: pod([container({ cpu: '1' })], { overhead: { cpu: '250m', memory: '120Mi' } }),
    expected: { cpu: 1250, memory: 120 * Mi },
  },
  {
    name: 'a zero request is kept as an explicit zero',
    spec: pod([container({ cpu: '0', memory: '0' })]),
    expected: { cpu: 0, memory: 0 },
  },
  {
    name: 'quantities are canonical: cpu in millicores, the rest in units, rounded up',
    spec: pod([container({ cpu: '0.1', memory: '129e6', 'ephemeral-storage': '1.5Ki' })]),
    expected: { cpu: 100, memory: 129_000_000, 'ephemeral-storage': 1536 },
  },
  {
    name: 'pod-level requests replace the containers’ cpu and memory',
    spec: pod([container({ cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' })], {
      resources: podLevel({ cpu: '2', memory: '4Gi' }),
    }),
    expected: { cpu: 2000, memory: 4 * Gi, 'nvidia.com/gpu': 1 },
  },
  {
    name: 'pod-level requests for other resources are ignored',
    spec: pod([container({ 'nvidia.com/gpu': '1' })], { resources: podLevel({ 'nvidia.com/gpu': '4' }) }),
    expected: { 'nvidia.com/gpu': 1 },
  },
  {
    name: 'a pod-level limit stands in for requests no container makes',
    spec: pod([container({ cpu: '1' })], { resources: podLevel(undefined, { cpu: '4', memory: '2Gi' }) }),
    expected: { cpu: 1000, memory: 2 * Gi },
  },
  {
    name: 'a pod-level hugepages limit wins over the containers’ hugepages',
    spec: pod([container({ 'hugepages-2Mi': '4Mi' }, { 'hugepages-2Mi': '4Mi' })], {
      resources: podLevel(undefined, { 'hugepages-2Mi': '8Mi' }),
    }),
    expected: { 'hugepages-2Mi': 8 * Mi },
  },
  {
    name: 'pod-level requests come before overhead',
    spec: pod([container({ cpu: '1' })], { resources: podLevel({ cpu: '2' }), overhead: { cpu: '100m' } }),
    expected: { cpu: 2100 },
  },
];
// (end of cases)

describe('podRequests', () => {
  it.each(cases)('$name', ({ spec, expected }) => {
    expect(podRequests(spec)).toEqual(expected);
  });

  it('skips values that are not quantities and keeps the rest', () => {
    const spec = pod([container({ cpu: 'lots', memory: '1Gi' }, { 'nvidia.com/gpu': 'one' })], {
      overhead: { cpu: '-1' },
      resources: podLevel({ memory: 'big' }),
    });
    expect(podRequests(spec)).toEqual({ memory: Gi });
  });

  it('does not fall back to the limit when the request is there but unreadable', () => {
    expect(podRequests(pod([container({ cpu: 'lots' }, { cpu: '2' })]))).toEqual({});
  });

  it('tolerates a spec without containers, as a partial object from the API can be', () => {
    expect(podRequests({} as PodResourceFields)).toEqual({});
  });

  const quantities = (resource: string) =>
    resource === 'cpu'
      ? fc.constantFrom('0', '100m', '250m', '1', '1.5', '2')
      : fc.constantFrom('0', '64Mi', '1Gi', '1', '3');
  const requests = fc
    .subarray(['cpu', 'memory', 'nvidia.com/gpu'])
    .chain((names) => fc.tuple(...names.map((name) => quantities(name).map((q) => [name, q] as const))))
    .map((entries) => Object.fromEntries(entries) as Quantities);
  const amount = (r: Resources, name: string) => r[name] ?? 0;

  it('regular containers alone add up, in any order', () => {
    fc.assert(
      fc.property(fc.array(requests, { maxLength: 5 }), (all) => {
        const total = all.map((r) => podRequests(pod([container(r)]))).reduce(addResources, {});
        expect(podRequests(pod(all.map((r) => container(r))))).toEqual(total);
        expect(podRequests(pod(all.map((r) => container(r)).reverse()))).toEqual(total);
      }),
    );
  });

  it('never asks for less than any single container needs', () => {
    fc.assert(
      fc.property(
        fc.array(requests, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(requests, fc.boolean()), { maxLength: 3 }),
        (regular, init) => {
          const total = podRequests(
            pod(
              regular.map((r) => container(r)),
              { initContainers: init.map(([r, always]) => (always ? sidecar(r) : container(r))) },
            ),
          );
          for (const r of [...regular, ...init.map(([q]) => q)]) {
            for (const [name, need] of Object.entries(podRequests(pod([container(r)])))) {
              expect(amount(total, name)).toBeGreaterThanOrEqual(need);
            }
          }
        },
      ),
    );
  });

  it('an init container no bigger than a regular one changes nothing', () => {
    fc.assert(
      fc.property(fc.array(requests, { minLength: 1, maxLength: 3 }), fc.nat(), (regular, pick) => {
        const spec = pod(regular.map((r) => container(r)));
        const copy = container(regular[pick % regular.length]);
        expect(podRequests({ ...spec, initContainers: [copy] })).toEqual(podRequests(spec));
      }),
    );
  });

  it('overhead adds exactly itself', () => {
    fc.assert(
      fc.property(fc.array(requests, { maxLength: 3 }), requests, (regular, overhead) => {
        const spec = pod(regular.map((r) => container(r)));
        const extra = podRequests(pod([container(overhead)]));
        expect(podRequests({ ...spec, overhead })).toEqual(addResources(podRequests(spec), extra));
      }),
    );
  });
});
