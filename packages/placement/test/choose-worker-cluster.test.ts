import {
  type LabelRequirement,
  parseLabelSelector,
  type Resources,
  resourceAmount,
} from '@jobrelay/resources';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClusterCandidate,
  chooseWorkerCluster,
  clusterVerdicts,
  type PlacementDecision,
  type PlacementRequest,
  type ScoringPolicy,
  scoringPolicies,
} from '../src/choose-worker-cluster.ts';
import type { PodRestrictions } from '../src/pod-restrictions.ts';
import type { PodSecurityLevel } from '../src/pod-security.ts';
import { noPodTemplateAsks, type PodTemplateAsks } from '../src/pod-template-asks.ts';

const Gi = 2 ** 30;
const gpu = 'nvidia.com/gpu';

/** Quantities as a person writes them ("500m", "16Gi", "2") in the integer units placement compares. */
function amounts(quantities: Readonly<Record<string, string>>): Resources {
  return Object.fromEntries(
    Object.entries(quantities).map(([resource, quantity]) => {
      const amount = resourceAmount(resource, quantity);
      if (amount === undefined) throw new Error(`test setup: "${quantity}" is not a ${resource} quantity`);
      return [resource, amount];
    }),
  );
}

/** A node's free cpu and memory, plus any other resource: `['4', '16Gi', { [gpu]: '1' }]`. */
type NodeSpec = readonly [cpu: string, memory: string, others?: Readonly<Record<string, string>>];

const nodeResources = ([cpu, memory, others = {}]: NodeSpec): Resources =>
  amounts({ cpu, memory, ...others });

/**
 * A WorkerCluster as placement sees it: active, uncordoned, weight 1, open to all namespaces,
 * no pod restrictions, its namespaces listed (none yet), capacity unknown.
 */
class CandidateBuilder {
  private candidate: ClusterCandidate;
  private nodeSpecs: NodeSpec[] | undefined;
  private allocatableSpec: NodeSpec | undefined;
  private assumedRequests: Resources = {};
  private workerNamespaces: Map<string, { metadata: { labels: Record<string, string> } }> | undefined =
    new Map();

  constructor(name: string) {
    this.candidate = {
      name,
      labels: {},
      active: true,
      cordoned: false,
      weight: 1,
      allowedNamespaces: [],
      activeWorkloads: 0,
    };
  }

  /** spec.podRestrictions. */
  restricting(podRestrictions: PodRestrictions): this {
    this.candidate = { ...this.candidate, podRestrictions };
    return this;
  }

  /** spec.podRestrictions did not parse. */
  unreadableRestrictions(problem: string): this {
    this.candidate = { ...this.candidate, podRestrictionsProblem: problem };
    return this;
  }

  /** A namespace that exists on the worker, with these labels. */
  namespace(name: string, labels: Record<string, string> = {}): this {
    this.workerNamespaces?.set(name, { metadata: { labels } });
    return this;
  }

  /** Its namespaces have not been listed yet. */
  namespacesUnknown(): this {
    this.workerNamespaces = undefined;
    return this;
  }

  labels(labels: Record<string, string>): this {
    this.candidate = { ...this.candidate, labels };
    return this;
  }

  /** Capacity known: each node's free resources. The cluster is otherwise empty unless allocatable() says more. */
  nodes(...nodes: NodeSpec[]): this {
    this.nodeSpecs = nodes;
    return this;
  }

  /** The whole cluster's allocatable resources, when some of it is already in use. */
  allocatable(spec: NodeSpec): this {
    this.allocatableSpec = spec;
    return this;
  }

  /** Requests of Jobs placed there whose pods do not exist yet, in integer units (`{ cpu: 1000 }`). */
  assumed(resources: Resources): this {
    this.assumedRequests = resources;
    return this;
  }

  inactive(reason?: string): this {
    this.candidate = {
      ...this.candidate,
      active: false,
      ...(reason === undefined ? {} : { inactiveReason: reason }),
    };
    return this;
  }

  cordoned(): this {
    this.candidate = { ...this.candidate, cordoned: true };
    return this;
  }

  weight(weight: number): this {
    this.candidate = { ...this.candidate, weight };
    return this;
  }

  allowing(...namespaces: string[]): this {
    this.candidate = { ...this.candidate, allowedNamespaces: namespaces };
    return this;
  }

  activeWorkloads(activeWorkloads: number): this {
    this.candidate = { ...this.candidate, activeWorkloads };
    return this;
  }

  maxActiveWorkloads(maxActiveWorkloads: number): this {
    this.candidate = { ...this.candidate, maxActiveWorkloads };
    return this;
  }

  build(): ClusterCandidate {
    const candidate: ClusterCandidate = structuredClone(this.candidate);
    if (this.workerNamespaces) candidate.namespaces = new Map(this.workerNamespaces);
    if (this.nodeSpecs === undefined) return candidate;
    const nodes = this.nodeSpecs.map((spec, index) => ({
      name: `${candidate.name}-node-${index}`,
      free: nodeResources(spec),
    }));
    const allocatable = this.allocatableSpec
      ? nodeResources(this.allocatableSpec)
      : nodes.reduce<Resources>((sum, node) => {
          for (const [name, amount] of Object.entries(node.free)) sum[name] = (sum[name] ?? 0) + amount;
          return sum;
        }, {});
    return { ...candidate, capacity: { nodes, allocatable, assumed: { ...this.assumedRequests } } };
  }
}

/**
 * A Job in namespace default, one pod of 1 cpu and 1Gi, no selector, no pin, spread, asking
 * nothing beyond resources, from a namespace that enforces no Pod Security level.
 */
class JobBuilder {
  private request: PlacementRequest = {
    namespace: 'default',
    excludedClusters: [],
    podGroups: [{ requests: amounts({ cpu: '1', memory: '1Gi' }), count: 1 }],
    policy: 'spread',
    asks: noPodTemplateAsks,
    podSecurity: 'privileged',
  };

  /** What its pod templates ask beyond resources (the rest as none). */
  asking(asks: Partial<PodTemplateAsks>): this {
    this.request = { ...this.request, asks: { ...noPodTemplateAsks, ...asks } };
    return this;
  }

  /** The Pod Security level its namespace enforces on the management cluster. */
  enforcedHere(podSecurity: PodSecurityLevel): this {
    this.request = { ...this.request, podSecurity };
    return this;
  }

  /** What one pod requests, as quantities; replaces the default 1 cpu / 1Gi. */
  requests(quantities: Readonly<Record<string, string>>): this {
    const [group] = this.request.podGroups;
    this.request = { ...this.request, podGroups: [{ ...group!, requests: amounts(quantities) }] };
    return this;
  }

  pods(pods: number): this {
    const [group] = this.request.podGroups;
    this.request = { ...this.request, podGroups: [{ ...group!, count: pods }] };
    return this;
  }

  inNamespace(namespace: string): this {
    this.request = { ...this.request, namespace };
    return this;
  }

  /** The jobrelay.dev/cluster-selector annotation's text. */
  selector(text: string): this {
    const parsed = parseLabelSelector(text);
    if (!parsed.ok) throw new Error(`test setup: selector "${text}": ${parsed.problem}`);
    this.request = { ...this.request, clusterSelector: parsed.selector };
    return this;
  }

  pinnedTo(cluster: string): this {
    this.request = { ...this.request, pinnedCluster: cluster };
    return this;
  }

  excluding(...clusters: string[]): this {
    this.request = { ...this.request, excludedClusters: clusters };
    return this;
  }

  /** Clusters that refused this Job's mirror before. */
  avoiding(...clusters: string[]): this {
    this.request = { ...this.request, avoidedClusters: clusters };
    return this;
  }

  policy(policy: ScoringPolicy): this {
    this.request = { ...this.request, policy };
    return this;
  }

  build(): PlacementRequest {
    return structuredClone(this.request);
  }
}

const cluster = (name: string) => new CandidateBuilder(name);
const job = () => new JobBuilder();

function expectPlaced(decision: PlacementDecision): Extract<PlacementDecision, { kind: 'placed' }> {
  if (decision.kind !== 'placed') throw new Error(`expected a placement, got: ${decision.message}`);
  return decision;
}

function decide(request: JobBuilder, ...clusters: CandidateBuilder[]): PlacementDecision {
  return chooseWorkerCluster(
    clusters.map((candidate) => candidate.build()),
    request.build(),
  );
}

/** Room for the default Job and then some. */
const roomy: NodeSpec = ['8', '32Gi'];

describe('chooseWorkerCluster: each filter alone', () => {
  it.each([
    {
      name: 'excluded',
      request: job().excluding('a'),
      candidate: cluster('a').nodes(roomy),
      reason: 'excluded (an object of the same name that jobrelay does not own is there)',
    },
    {
      name: 'pinned elsewhere',
      request: job().pinnedTo('b'),
      candidate: cluster('a').nodes(roomy),
      reason: 'not the pinned cluster b',
    },
    {
      name: 'not active, with the condition reason',
      request: job(),
      candidate: cluster('a').nodes(roomy).inactive('Unreachable'),
      reason: 'not active (Unreachable)',
    },
    {
      name: 'not active, no reason given',
      request: job(),
      candidate: cluster('a').nodes(roomy).inactive(),
      reason: 'not active (unknown)',
    },
    {
      name: 'cordoned',
      request: job(),
      candidate: cluster('a').nodes(roomy).cordoned(),
      reason: 'cordoned',
    },
    {
      name: 'selector mismatch',
      request: job().selector('region=eu'),
      candidate: cluster('a').nodes(roomy).labels({ region: 'us' }),
      reason: 'did not match selector region=eu',
    },
    {
      name: 'selector mismatch on a cluster without labels',
      request: job().selector('region=eu'),
      candidate: cluster('a').nodes(roomy),
      reason: 'did not match selector region=eu',
    },
    {
      name: 'selector mismatch, quoted in canonical form',
      request: job().selector(' region == eu , tier in (silver, gold, silver)'),
      candidate: cluster('a').nodes(roomy).labels({ region: 'eu', tier: 'bronze' }),
      reason: 'did not match selector region=eu,tier in (gold,silver)',
    },
    {
      name: 'namespace not allowed',
      request: job(),
      candidate: cluster('a').nodes(roomy).allowing('team-a', 'team-b'),
      reason: 'does not allow namespace default',
    },
    {
      name: 'at maxActiveWorkloads',
      request: job(),
      candidate: cluster('a').nodes(roomy).maxActiveWorkloads(3).activeWorkloads(3),
      reason: 'at maxActiveWorkloads (3)',
    },
    {
      name: 'beyond maxActiveWorkloads (lowered after placements)',
      request: job(),
      candidate: cluster('a').nodes(roomy).maxActiveWorkloads(3).activeWorkloads(5),
      reason: 'at maxActiveWorkloads (3)',
    },
    {
      name: 'maxActiveWorkloads 0',
      request: job(),
      candidate: cluster('a').nodes(roomy).maxActiveWorkloads(0),
      reason: 'at maxActiveWorkloads (0)',
    },
    {
      name: 'pod restrictions refuse a privileged container',
      request: job().asking({ privileged: ['container main'] }),
      candidate: cluster('a').nodes(roomy).restricting({ refusePrivileged: true }),
      reason: 'refuses privileged pods (container main)',
    },
    {
      name: 'pod restrictions refuse a hostPath volume',
      request: job().asking({ hostPathVolumes: ['volume docker'] }),
      candidate: cluster('a').nodes(roomy).restricting({ refuseHostPath: true }),
      reason: 'refuses hostPath volumes (volume docker)',
    },
    {
      name: 'pod restrictions refuse host namespaces',
      request: job().asking({ hostNamespaces: ['hostNetwork', 'hostPID'] }),
      candidate: cluster('a').nodes(roomy).restricting({ refuseHostNamespaces: true }),
      reason: 'refuses host namespaces (hostNetwork, hostPID)',
    },
    {
      name: 'pod restrictions refuse a node by name',
      request: job().asking({ nodeNames: ['nodeName node-1'] }),
      candidate: cluster('a').nodes(roomy).restricting({ refuseNodeName: true }),
      reason: 'refuses pods bound to a node by name (nodeName node-1)',
    },
    {
      name: 'pod restrictions refuse a service account not listed',
      request: job().asking({ serviceAccounts: [{ role: '', name: 'builder' }] }),
      candidate: cluster('a')
        .nodes(roomy)
        .restricting({ allowedServiceAccounts: ['default'] }),
      reason: 'does not allow service account builder',
    },
    {
      name: 'pod restrictions that do not parse refuse everything',
      request: job(),
      candidate: cluster('a')
        .nodes(roomy)
        .unreadableRestrictions('spec.podRestrictions.refusePrivileged: must be true or false'),
      reason: 'podRestrictions not readable (spec.podRestrictions.refusePrivileged: must be true or false)',
    },
    {
      name: 'its namespace of that name enforces nothing, baseline here',
      request: job().inNamespace('team-a').enforcedHere('baseline'),
      candidate: cluster('a').nodes(roomy).namespace('team-a'),
      reason: 'namespace team-a enforces privileged there, baseline here',
    },
    {
      name: 'its namespace of that name enforces baseline, restricted here',
      request: job().inNamespace('team-a').enforcedHere('restricted'),
      candidate: cluster('a')
        .nodes(roomy)
        .namespace('team-a', { 'pod-security.kubernetes.io/enforce': 'baseline' }),
      reason: 'namespace team-a enforces baseline there, restricted here',
    },
    {
      name: 'its namespaces not listed yet',
      request: job(),
      candidate: cluster('a').nodes(roomy).namespacesUnknown(),
      reason: 'namespaces not known yet',
    },
    {
      name: 'capacity not known yet',
      request: job(),
      candidate: cluster('a'),
      reason: 'capacity not known yet',
    },
    {
      name: 'no node has the cpu (whole cores)',
      request: job().requests({ cpu: '8' }),
      candidate: cluster('a').nodes(['4', '16Gi'], ['2', '8Gi']),
      reason: 'insufficient cpu (requests 8, largest free node 4)',
    },
    {
      name: 'no node has the cpu (millicores)',
      request: job().requests({ cpu: '1.5' }),
      candidate: cluster('a').nodes(['1', '16Gi'], ['500m', '16Gi']),
      reason: 'insufficient cpu (requests 1500m, largest free node 1)',
    },
    {
      name: 'no node has the memory',
      request: job().requests({ cpu: '1', memory: '32Gi' }),
      candidate: cluster('a').nodes(['8', '16Gi'], ['8', '8Gi']),
      reason: 'insufficient memory (requests 32Gi, largest free node 16Gi)',
    },
    {
      name: 'no node has the memory (not whole Gi)',
      request: job().requests({ memory: '1536Mi' }),
      candidate: cluster('a').nodes(['8', '1Gi']),
      reason: 'insufficient memory (requests 1536Mi, largest free node 1Gi)',
    },
    {
      name: 'no node has two GPUs',
      request: job().requests({ cpu: '1', [gpu]: '2' }),
      candidate: cluster('a').nodes(['8', '32Gi', { [gpu]: '1' }], ['8', '32Gi', { [gpu]: '1' }]),
      reason: 'insufficient nvidia.com/gpu (requests 2, largest free node 1)',
    },
    {
      name: 'no node has any GPU',
      request: job().requests({ cpu: '1', [gpu]: '1' }),
      candidate: cluster('a').nodes(roomy),
      reason: 'insufficient nvidia.com/gpu (requests 1, largest free node 0)',
    },
    {
      name: 'no schedulable node at all',
      request: job(),
      candidate: cluster('a').nodes(),
      reason: 'insufficient cpu (requests 1, largest free node 0)',
    },
    {
      name: 'each resource is somewhere, but not together on one node',
      request: job().requests({ cpu: '4', memory: '8Gi' }),
      candidate: cluster('a').nodes(['8', '1Gi'], ['1', '16Gi']),
      reason: 'no single node fits one pod',
    },
    {
      name: 'cpu short in total',
      request: job().requests({ cpu: '3' }).pods(3),
      candidate: cluster('a').nodes(['4', '16Gi'], ['4', '16Gi']),
      reason: 'insufficient cpu in total (3 pods need 9, free 8)',
    },
    {
      name: 'memory short in total',
      request: job().requests({ memory: '4Gi' }).pods(4),
      candidate: cluster('a').nodes(['8', '8Gi'], ['8', '4Gi']),
      reason: 'insufficient memory in total (4 pods need 16Gi, free 12Gi)',
    },
    {
      name: 'GPUs short in total',
      request: job()
        .requests({ cpu: '1', [gpu]: '1' })
        .pods(3),
      candidate: cluster('a').nodes(['8', '32Gi', { [gpu]: '1' }], ['8', '32Gi', { [gpu]: '1' }]),
      reason: 'insufficient nvidia.com/gpu in total (3 pods need 3, free 2)',
    },
    {
      name: 'several resources short in total: the first by name',
      request: job().requests({ memory: '8Gi', cpu: '4' }).pods(3),
      candidate: cluster('a').nodes(['4', '8Gi'], ['4', '8Gi']),
      reason: 'insufficient cpu in total (3 pods need 12, free 8)',
    },
    {
      name: 'assumed requests reduce the free cpu',
      request: job().requests({ cpu: '3' }).pods(2),
      candidate: cluster('a').nodes(['4', '16Gi'], ['4', '16Gi']).assumed({ cpu: 3000 }),
      reason: 'insufficient cpu in total (2 pods need 6, free 5)',
    },
    {
      name: 'assumed requests leave millicores',
      request: job().pods(2),
      candidate: cluster('a').nodes(['4', '16Gi']).assumed({ cpu: 3500 }),
      reason: 'insufficient cpu in total (2 pods need 2, free 500m)',
    },
    {
      name: 'assumed requests reduce the free memory',
      request: job().requests({ memory: '4Gi' }).pods(2),
      candidate: cluster('a')
        .nodes(['8', '16Gi'])
        .assumed({ memory: 10 * Gi }),
      reason: 'insufficient memory in total (2 pods need 8Gi, free 6Gi)',
    },
    {
      name: 'assumed requests beyond the free total show as nothing free',
      request: job().pods(2),
      candidate: cluster('a').nodes(['4', '16Gi'], ['4', '16Gi']).assumed({ cpu: 10_000 }),
      reason: 'insufficient cpu in total (2 pods need 2, free 0)',
    },
  ])('$name', ({ request, candidate, reason }) => {
    expect(decide(request, candidate)).toEqual({
      kind: 'unschedulable',
      message: `0/1 clusters available: 1 ${reason}.`,
    });
  });

  it.each([
    {
      name: 'a pod exactly the size of the largest free node',
      request: job().requests({ cpu: '4', memory: '16Gi' }),
      candidate: cluster('a').nodes(['4', '16Gi'], ['2', '8Gi']),
    },
    {
      name: 'pods exactly filling the free total',
      request: job().requests({ cpu: '2', memory: '4Gi' }).pods(4),
      candidate: cluster('a').nodes(['4', '8Gi'], ['4', '8Gi']),
    },
    {
      name: 'assumed requests leaving exactly enough',
      request: job().requests({ cpu: '1' }).pods(3),
      candidate: cluster('a').nodes(['4', '16Gi']).assumed({ cpu: 1000 }),
    },
    {
      name: 'a zero request for a resource the cluster lacks',
      request: job().requests({ cpu: '1', [gpu]: '0' }),
      candidate: cluster('a').nodes(roomy),
    },
    {
      name: 'the Job namespace among the allowed ones',
      request: job().inNamespace('team-b'),
      candidate: cluster('a').nodes(roomy).allowing('team-a', 'team-b'),
    },
    {
      name: 'one below maxActiveWorkloads',
      request: job(),
      candidate: cluster('a').nodes(roomy).maxActiveWorkloads(3).activeWorkloads(2),
    },
    {
      name: 'pinned to this cluster',
      request: job().pinnedTo('a'),
      candidate: cluster('a').nodes(roomy),
    },
    {
      name: 'another cluster excluded',
      request: job().excluding('b'),
      candidate: cluster('a').nodes(roomy),
    },
  ])('passes with $name', ({ request, candidate }) => {
    expect(decide(request, candidate)).toMatchObject({ kind: 'placed', cluster: 'a' });
  });
});

describe('chooseWorkerCluster: filter order', () => {
  // Each candidate fails several filters; the first in the order is the one reported.
  it.each([
    {
      name: 'excluded before everything else',
      request: job().excluding('a').pinnedTo('b').selector('region=eu'),
      candidate: cluster('a').inactive('Unreachable').cordoned().allowing('team-a'),
      reason: 'excluded (an object of the same name that jobrelay does not own is there)',
    },
    {
      name: 'pinned elsewhere before not active',
      request: job().pinnedTo('b').selector('region=eu'),
      candidate: cluster('a').inactive('Unreachable').cordoned(),
      reason: 'not the pinned cluster b',
    },
    {
      name: 'not active before cordoned',
      request: job().selector('region=eu'),
      candidate: cluster('a').inactive('Unreachable').cordoned().allowing('team-a'),
      reason: 'not active (Unreachable)',
    },
    {
      name: 'cordoned before the selector',
      request: job().selector('region=eu'),
      candidate: cluster('a').cordoned().allowing('team-a').maxActiveWorkloads(0),
      reason: 'cordoned',
    },
    {
      name: 'the selector before the namespace',
      request: job().selector('region=eu'),
      candidate: cluster('a').labels({ region: 'us' }).allowing('team-a').maxActiveWorkloads(0),
      reason: 'did not match selector region=eu',
    },
    {
      name: 'the namespace before maxActiveWorkloads',
      request: job(),
      candidate: cluster('a').allowing('team-a').maxActiveWorkloads(0),
      reason: 'does not allow namespace default',
    },
    {
      name: 'maxActiveWorkloads before capacity',
      request: job(),
      candidate: cluster('a').maxActiveWorkloads(1).activeWorkloads(1),
      reason: 'at maxActiveWorkloads (1)',
    },
    {
      name: 'maxActiveWorkloads before pod restrictions',
      request: job().asking({ privileged: ['container main'] }),
      candidate: cluster('a').maxActiveWorkloads(0).restricting({ refusePrivileged: true }),
      reason: 'at maxActiveWorkloads (0)',
    },
    {
      name: 'pod restrictions before the namespace there',
      request: job()
        .inNamespace('team-a')
        .enforcedHere('baseline')
        .asking({ privileged: ['container main'] }),
      candidate: cluster('a').restricting({ refusePrivileged: true }).namespace('team-a'),
      reason: 'refuses privileged pods (container main)',
    },
    {
      name: 'the namespace there before capacity',
      request: job().inNamespace('team-a').enforcedHere('baseline').requests({ cpu: '64' }),
      candidate: cluster('a').nodes(['4', '16Gi']).namespace('team-a'),
      reason: 'namespace team-a enforces privileged there, baseline here',
    },
    {
      name: 'maxActiveWorkloads before fit',
      request: job().requests({ cpu: '64' }),
      candidate: cluster('a').nodes(['4', '16Gi']).maxActiveWorkloads(1).activeWorkloads(1),
      reason: 'at maxActiveWorkloads (1)',
    },
    {
      name: 'one pod on a node before the total',
      request: job().requests({ cpu: '8' }).pods(3),
      candidate: cluster('a').nodes(['4', '16Gi'], ['4', '16Gi']),
      reason: 'insufficient cpu (requests 8, largest free node 4)',
    },
    {
      name: 'per-node shortage named by the first resource requested',
      request: job().requests({ cpu: '8', memory: '64Gi' }),
      candidate: cluster('a').nodes(['4', '16Gi']),
      reason: 'insufficient cpu (requests 8, largest free node 4)',
    },
  ])('$name', ({ request, candidate, reason }) => {
    expect(decide(request, candidate)).toEqual({
      kind: 'unschedulable',
      message: `0/1 clusters available: 1 ${reason}.`,
    });
  });
});

describe('chooseWorkerCluster: why nothing fits', () => {
  it('reproduces the example from the issue', () => {
    const decision = decide(
      job().selector('region=eu').requests({ cpu: '8' }),
      cluster('a').labels({ region: 'eu' }).nodes(roomy).cordoned(),
      cluster('b').labels({ region: 'us' }).nodes(roomy),
      cluster('c').labels({ region: 'eu' }).nodes(['4', '16Gi'], ['2', '8Gi']),
    );
    expect(decision).toEqual({
      kind: 'unschedulable',
      message:
        '0/3 clusters available: 1 cordoned, 1 did not match selector region=eu, 1 insufficient cpu (requests 8, largest free node 4).',
    });
  });

  it('counts every reason and sorts them by text, whatever the order of the clusters', () => {
    const eu = { region: 'eu' };
    const decision = decide(
      job().selector('region=eu').excluding('x01').requests({ cpu: '8', memory: '8Gi' }).pods(2),
      cluster('x12').labels(eu).nodes(['16', '1Gi'], ['1', '64Gi']),
      cluster('x03').inactive('Unreachable'),
      cluster('x09').labels(eu),
      cluster('x05').cordoned(),
      cluster('x11').labels(eu).nodes(['8', '16Gi']),
      cluster('x01').labels(eu).nodes(roomy),
      cluster('x07').labels(eu).allowing('team-a'),
      cluster('x04').inactive('CredentialsExpired'),
      cluster('x10').labels(eu).nodes(['4', '16Gi']),
      cluster('x06').labels({ region: 'us' }),
      cluster('x02').inactive('Unreachable'),
      cluster('x08').labels(eu).activeWorkloads(2).maxActiveWorkloads(2),
    );
    expect(decision).toEqual({
      kind: 'unschedulable',
      message:
        '0/12 clusters available: 1 at maxActiveWorkloads (2), 1 capacity not known yet, 1 cordoned, ' +
        '1 did not match selector region=eu, 1 does not allow namespace default, ' +
        '1 excluded (an object of the same name that jobrelay does not own is there), ' +
        '1 insufficient cpu (requests 8, largest free node 4), ' +
        '1 insufficient cpu in total (2 pods need 16, free 8), 1 no single node fits one pod, ' +
        '1 not active (CredentialsExpired), 2 not active (Unreachable).',
    });
  });

  it.each([
    {
      name: 'the same shortage counts once per cluster',
      clusters: [cluster('a').nodes(['4', '16Gi']), cluster('b').nodes(['4', '16Gi'])],
      message: '0/2 clusters available: 2 insufficient cpu (requests 8, largest free node 4).',
    },
    {
      name: 'one resource short on several clusters is one reason, naming the most any of them had free',
      clusters: [cluster('a').nodes(['4', '16Gi']), cluster('b').nodes(['2', '16Gi'])],
      message: '0/2 clusters available: 2 insufficient cpu (requests 8, largest free node 4).',
    },
    {
      name: 'one reason for many clusters',
      clusters: [cluster('a').cordoned(), cluster('b').cordoned(), cluster('c').cordoned()],
      message: '0/3 clusters available: 3 cordoned.',
    },
  ])('$name', ({ clusters, message }) => {
    expect(decide(job().requests({ cpu: '8' }), ...clusters)).toEqual({ kind: 'unschedulable', message });
  });

  it('names the pin for every other cluster and the pinned cluster own reason', () => {
    expect(
      decide(job().pinnedTo('b'), cluster('a').nodes(roomy), cluster('b').nodes(roomy).cordoned()),
    ).toEqual({
      kind: 'unschedulable',
      message: '0/2 clusters available: 1 cordoned, 1 not the pinned cluster b.',
    });
  });

  it('a pin to a cluster that does not exist fails everywhere', () => {
    expect(decide(job().pinnedTo('gone'), cluster('a').nodes(roomy), cluster('b').nodes(roomy))).toEqual({
      kind: 'unschedulable',
      message: '0/2 clusters available: 2 not the pinned cluster gone.',
    });
  });

  it('says so when no WorkerCluster is registered', () => {
    expect(decide(job())).toEqual({
      kind: 'unschedulable',
      message: '0/0 clusters available: no WorkerCluster is registered.',
    });
  });
});

describe('chooseWorkerCluster: a mirror never gains privileges', () => {
  const enforcing = (level: string) => ({ 'pod-security.kubernetes.io/enforce': level });

  it.each([
    {
      there: undefined,
      here: 'restricted' as const,
      why: 'no namespace of that name there: jobrelay creates it with these labels',
    },
    { there: 'restricted', here: 'baseline' as const, why: 'stricter there' },
    { there: 'baseline', here: 'baseline' as const, why: 'equal' },
    {
      there: 'nonsense',
      here: 'restricted' as const,
      why: 'a level Pod Security admission cannot read enforces restricted',
    },
    { there: 'privileged', here: 'privileged' as const, why: 'nothing enforced on either side' },
  ])('places where the namespace there enforces $there against $here here ($why)', ({ there, here }) => {
    const candidate = cluster('a').nodes(roomy);
    if (there) candidate.namespace('team-a', enforcing(there));
    expect(decide(job().inNamespace('team-a').enforcedHere(here), candidate).kind).toBe('placed');
  });

  it('goes to the one cluster that neither refuses its pods nor runs them more leniently, saying why not the others', () => {
    const request = job()
      .inNamespace('team-a')
      .enforcedHere('baseline')
      .asking({ hostNamespaces: ['hostNetwork'], serviceAccounts: [{ role: '', name: 'default' }] });
    const clusters = [
      cluster('a').nodes(roomy).restricting({ refuseHostNamespaces: true }),
      cluster('b').nodes(roomy).namespace('team-a'),
      cluster('c')
        .nodes(roomy)
        .namespace('team-a', enforcing('baseline'))
        .restricting({ refusePrivileged: true }),
    ];
    const decision = expectPlaced(decide(request, ...clusters));
    expect(decision.cluster).toBe('c');
    expect(decision.message).toMatch(
      /; 1\/3 clusters feasible\. 2 filtered: 1 namespace team-a enforces privileged there, baseline here, 1 refuses host namespaces \(hostNetwork\)\.$/,
    );
    // The placement preview explains each cluster in the same words.
    expect(
      clusterVerdicts(
        clusters.map((c) => c.build()),
        request.build(),
      ),
    ).toEqual([
      { name: 'c', eligible: true, score: expect.any(Number), reason: null },
      { name: 'a', eligible: false, score: null, reason: 'refuses host namespaces (hostNetwork)' },
      {
        name: 'b',
        eligible: false,
        score: null,
        reason: 'namespace team-a enforces privileged there, baseline here',
      },
    ]);
  });

  it('waits when every cluster refuses, counting the reasons kube-scheduler style', () => {
    const request = job().asking({ privileged: ['container main'] });
    expect(
      decide(
        request,
        cluster('a').nodes(roomy).restricting({ refusePrivileged: true }),
        cluster('b').nodes(roomy).restricting({ refusePrivileged: true, refuseHostPath: true }),
        cluster('c').nodes(roomy).cordoned(),
      ),
    ).toEqual({
      kind: 'unschedulable',
      message: '0/3 clusters available: 1 cordoned, 2 refuses privileged pods (container main).',
    });
  });
});

describe('chooseWorkerCluster: Jobs that request nothing', () => {
  it.each<{ name: string; requests: Record<string, string> }>([
    { name: 'no requests at all', requests: {} },
    { name: 'only zero requests', requests: { cpu: '0', memory: '0', [gpu]: '0' } },
  ])('skip the fit filter: $name', ({ requests }) => {
    const decision = decide(
      job().requests(requests).pods(5),
      cluster('unknown'),
      cluster('empty-nodes').nodes(['0', '0']),
      cluster('no-nodes').nodes(),
      cluster('overcommitted').nodes(['1', '1Gi']).assumed({ cpu: 64_000 }),
    );
    expect(
      expectPlaced(decision)
        .ranking.map((r) => r.name)
        .sort(),
    ).toEqual(['empty-nodes', 'no-nodes', 'overcommitted', 'unknown']);
  });

  it('still go through every other filter', () => {
    expect(decide(job().requests({}), cluster('a').cordoned(), cluster('b').inactive('Unreachable'))).toEqual(
      {
        kind: 'unschedulable',
        message: '0/2 clusters available: 1 cordoned, 1 not active (Unreachable).',
      },
    );
  });

  it('score a cluster of unknown capacity in the middle (50)', () => {
    const decision = decide(job().requests({}), cluster('unknown'), cluster('empty').nodes(roomy));
    expect(decision).toMatchObject({
      kind: 'placed',
      cluster: 'empty',
      ranking: [
        { name: 'empty', score: 100 },
        { name: 'unknown', score: 50 },
      ],
    });
  });
});

describe('chooseWorkerCluster: selector operators', () => {
  interface SelectorCase {
    selector: string;
    labels: Record<string, string>;
    matches: boolean;
    /** How the reason quotes the selector when it does not match. */
    canonical?: string;
  }

  it.each<SelectorCase>([
    { selector: 'region=eu', labels: { region: 'eu' }, matches: true },
    { selector: 'region==eu', labels: { region: 'eu', tier: 'gold' }, matches: true },
    { selector: 'region=eu', labels: { region: 'us' }, matches: false, canonical: 'region=eu' },
    { selector: 'region==eu', labels: {}, matches: false, canonical: 'region=eu' },
    { selector: 'region!=eu', labels: { region: 'us' }, matches: true },
    { selector: 'region!=eu', labels: {}, matches: true },
    { selector: 'region!=eu', labels: { region: 'eu' }, matches: false, canonical: 'region!=eu' },
    { selector: 'tier in (silver,gold)', labels: { tier: 'gold' }, matches: true },
    {
      selector: 'tier in (silver,gold)',
      labels: { tier: 'bronze' },
      matches: false,
      canonical: 'tier in (gold,silver)',
    },
    { selector: 'tier in (silver,gold)', labels: {}, matches: false, canonical: 'tier in (gold,silver)' },
    { selector: 'tier notin (bronze)', labels: { tier: 'gold' }, matches: true },
    { selector: 'tier notin (bronze)', labels: {}, matches: true },
    {
      selector: 'tier notin (bronze,bronze)',
      labels: { tier: 'bronze' },
      matches: false,
      canonical: 'tier notin (bronze)',
    },
    { selector: 'gpu', labels: { gpu: '' }, matches: true },
    { selector: 'gpu', labels: { region: 'eu' }, matches: false, canonical: 'gpu' },
    { selector: '!spot', labels: { region: 'eu' }, matches: true },
    { selector: '!spot', labels: { spot: 'true' }, matches: false, canonical: '!spot' },
    { selector: '!spot', labels: { spot: '' }, matches: false, canonical: '!spot' },
    { selector: 'region=eu, !spot', labels: { region: 'eu' }, matches: true },
    {
      selector: 'region=eu, !spot',
      labels: { region: 'eu', spot: 'true' },
      matches: false,
      canonical: 'region=eu,!spot',
    },
    { selector: 'jobrelay.dev/pool in (batch)', labels: { 'jobrelay.dev/pool': 'batch' }, matches: true },
    { selector: '', labels: {}, matches: true },
  ])('$selector on $labels: matches $matches', ({ selector, labels, matches, canonical }) => {
    const decision = decide(job().selector(selector), cluster('a').labels(labels).nodes(roomy));
    if (matches) expect(decision).toMatchObject({ kind: 'placed', cluster: 'a' });
    else {
      expect(decision).toEqual({
        kind: 'unschedulable',
        message: `0/1 clusters available: 1 did not match selector ${canonical}.`,
      });
    }
  });
});

describe('chooseWorkerCluster: scoring', () => {
  // a is half used (4 of 8 cpu, 16Gi of 32Gi free); b is empty; c would be the fullest but is cordoned.
  const halfUsed = () => cluster('a').nodes(['4', '16Gi']).allocatable(['8', '32Gi']);
  const empty = () => cluster('b').nodes(['8', '32Gi']);
  const medium = job().requests({ cpu: '2', memory: '4Gi' });

  it('spread picks the cluster left with the largest free fraction', () => {
    // a: cpu 2/8 free after, memory 12/32 -> 31.25; b: 6/8 and 28/32 -> 81.25.
    expect(decide(medium, halfUsed(), empty(), cluster('c').nodes(['2', '8Gi']).cordoned())).toEqual({
      kind: 'placed',
      cluster: 'b',
      ranking: [
        { name: 'b', score: 81.25 },
        { name: 'a', score: 31.25 },
      ],
      message: 'placed on b by spread (score 81.25; a 31.25); 2/3 clusters feasible. 1 filtered: 1 cordoned.',
    });
  });

  it('ranks on whole points, and within a point sends the workload where fewer are active', () => {
    // a: 99.18 with 5 active; b: 98.55 (100m of cpu assumed) with none. Other tenants' pods move
    // scores by such fractions; ranking on them sent most workloads to a few identical clusters.
    const small = job().requests({ cpu: '100m', memory: '128Mi' });
    const busy = () => cluster('a').nodes(['8', '32Gi']).activeWorkloads(5);
    const placed = expectPlaced(
      decide(small, busy(), cluster('b').nodes(['8', '32Gi']).assumed({ cpu: 100 })),
    );
    expect(placed.cluster).toBe('b');
    expect(placed.message).toBe(
      'placed on b by spread (score 98.55; a 99.18); 2/2 clusters feasible. Within a point of a, it has fewer active workloads.',
    );
    // A whole point or more apart, the score decides whatever is active.
    const fuller = cluster('b').nodes(['8', '32Gi']).assumed({ cpu: 2000 });
    expect(expectPlaced(decide(small, busy(), fuller)).cluster).toBe('a');
  });

  it('binpack picks the fullest cluster that still fits', () => {
    const fullerButTooSmall = cluster('d').nodes(['1', '4Gi']).allocatable(['8', '32Gi']);
    expect(decide(medium.policy('binpack'), halfUsed(), empty(), fullerButTooSmall)).toEqual({
      kind: 'placed',
      cluster: 'a',
      ranking: [
        { name: 'a', score: 68.75 },
        { name: 'b', score: 18.75 },
      ],
      message:
        'placed on a by binpack (score 68.75; b 18.75); 2/3 clusters feasible. 1 filtered: 1 insufficient cpu (requests 2, largest free node 1).',
    });
  });

  it.each([
    // a: an empty 4-cpu cluster; b: 6 of 12 cpu free. Memory is all free on both.
    { pods: 1, chosen: 'a', ranking: ['a 87.5', 'b 70.83'] },
    // Four pods leave a with nothing, b with 2/12.
    { pods: 4, chosen: 'b', ranking: ['b 58.33', 'a 50'] },
  ])('spread weighs the free fraction after all $pods pods are placed', ({ pods, chosen, ranking }) => {
    const decision = decide(
      job().requests({ cpu: '1' }).pods(pods),
      cluster('a').nodes(['4', '16Gi']),
      cluster('b').nodes(['6', '16Gi']).allocatable(['12', '16Gi']),
    );
    const placed = expectPlaced(decision);
    expect(placed.cluster).toBe(chosen);
    expect(placed.ranking.map((r) => `${r.name} ${r.score}`)).toEqual(ranking);
  });

  it('scores memory and cpu alike, and counts assumed requests as used', () => {
    // Both have 8 cpu and 32Gi; a's pods-to-be hold 4 cpu and 16Gi of it.
    const decision = decide(
      job().requests({ cpu: '2', memory: '4Gi' }),
      cluster('a')
        .nodes(['8', '32Gi'])
        .assumed({ cpu: 4000, memory: 16 * Gi }),
      cluster('b').nodes(['8', '32Gi']),
    );
    expect(decision).toMatchObject({
      cluster: 'b',
      ranking: [
        { name: 'b', score: 81.25 },
        { name: 'a', score: 31.25 },
      ],
    });
  });

  it('a pinned cluster wins over a better-scored one', () => {
    const decision = decide(
      job().requests({ cpu: '1' }).pinnedTo('small'),
      cluster('big').nodes(['64', '256Gi']),
      cluster('small').nodes(['2', '8Gi']).allocatable(['8', '32Gi']),
    );
    // small: cpu 1/8 free after, memory 8/32 -> 18.75.
    expect(decision).toEqual({
      kind: 'placed',
      cluster: 'small',
      ranking: [{ name: 'small', score: 18.75 }],
      message:
        'placed on small by spread (score 18.75); 1/2 clusters feasible. 1 filtered: 1 not the pinned cluster small.',
    });
  });

  it.each([
    {
      name: 'weight 2 beats a better raw score',
      // a: 4/8 cpu and 16/32Gi free after -> 50, doubled; b: 6/8 and all memory -> 87.5.
      clusters: [
        cluster('a').nodes(['6', '16Gi']).allocatable(['8', '32Gi']).weight(2),
        cluster('b').nodes(['8', '32Gi']),
      ],
      policy: 'spread' as const,
      message: 'placed on a by spread (score 100; b 87.5); 2/2 clusters feasible.',
    },
    {
      name: 'weight 0.5 halves the score',
      clusters: [
        cluster('a').nodes(['8', '32Gi']).weight(0.5),
        cluster('b').nodes(['6', '16Gi']).allocatable(['8', '32Gi']),
      ],
      policy: 'spread' as const,
      message: 'placed on b by spread (score 50; a 43.75); 2/2 clusters feasible.',
    },
    {
      name: 'weight 0 alone is still chosen',
      clusters: [cluster('a').nodes(['8', '32Gi']).weight(0)],
      policy: 'spread' as const,
      message: 'placed on a by spread (score 0); 1/1 clusters feasible.',
    },
    {
      name: 'weight 0 loses to a worse raw score',
      clusters: [
        cluster('a').nodes(['8', '32Gi']).weight(0),
        cluster('b').nodes(['2', '16Gi']).allocatable(['8', '32Gi']),
      ],
      policy: 'spread' as const,
      message: 'placed on b by spread (score 25; a 0); 2/2 clusters feasible.',
    },
    {
      name: 'weight 0 loses even to a cluster scoring 0 (spread, left full)',
      clusters: [
        cluster('a').nodes(['8', '32Gi']).weight(0),
        cluster('b').nodes(['2', '0']).allocatable(['8', '32Gi']),
      ],
      policy: 'spread' as const,
      message: 'placed on b by spread (score 0; a 0); 2/2 clusters feasible.',
    },
  ])('$name', ({ clusters, policy, message }) => {
    const decision = decide(job().requests({ cpu: '2' }).policy(policy), ...clusters);
    expect(decision.message).toBe(message);
  });

  it('weight 0 loses even to a cluster scoring 0 (binpack, a GPU-only Job on empty clusters) with more active Jobs', () => {
    const decision = decide(
      job()
        .requests({ [gpu]: '1' })
        .policy('binpack'),
      cluster('a')
        .nodes(['8', '32Gi', { [gpu]: '1' }])
        .weight(0),
      cluster('b')
        .nodes(['8', '32Gi', { [gpu]: '1' }])
        .activeWorkloads(7),
    );
    expect(decision).toMatchObject({
      cluster: 'b',
      ranking: [
        { name: 'b', score: 0 },
        { name: 'a', score: 0 },
      ],
    });
  });

  it('breaks ties by fewer active Jobs, then by name', () => {
    const decision = decide(
      job(),
      cluster('a').nodes(roomy).activeWorkloads(3),
      cluster('c').nodes(roomy).activeWorkloads(1),
      cluster('d').nodes(roomy).activeWorkloads(0),
      cluster('b').nodes(roomy).activeWorkloads(1),
    );
    const { cluster: chosen, ranking } = expectPlaced(decision);
    expect(chosen).toBe('d');
    expect(ranking.map((r) => r.name)).toEqual(['d', 'b', 'c', 'a']);
    expect(new Set(ranking.map((r) => r.score)).size).toBe(1);
  });

  it('returns the whole ranking and names the others in the message, best first', () => {
    const decision = decide(
      job().requests({ cpu: '2' }),
      cluster('quarter').nodes(['4', '32Gi']).allocatable(['8', '32Gi']),
      cluster('empty').nodes(['8', '32Gi']),
      cluster('half').nodes(['6', '32Gi']).allocatable(['8', '32Gi']),
      cluster('gone').inactive('Unreachable'),
      cluster('drained').cordoned(),
    );
    // Memory is all free everywhere: (cpu free after / 8 + 1) / 2.
    expect(decision).toEqual({
      kind: 'placed',
      cluster: 'empty',
      ranking: [
        { name: 'empty', score: 87.5 },
        { name: 'half', score: 75 },
        { name: 'quarter', score: 62.5 },
      ],
      message:
        'placed on empty by spread (score 87.5; half 75, quarter 62.5); 3/5 clusters feasible. 2 filtered: 1 cordoned, 1 not active (Unreachable).',
    });
  });
});

describe('chooseWorkerCluster: 30 one-cpu pods over three clusters', () => {
  const shapes: Record<string, NodeSpec[]> = {
    small: [
      ['4', '16Gi'],
      ['4', '16Gi'],
    ],
    medium: [
      ['8', '32Gi'],
      ['8', '32Gi'],
    ],
    large: [['16', '64Gi']],
  };

  /** Places one Job after another, each added to its cluster's assumed requests and active Jobs. */
  function simulate(policy: ScoringPolicy): string[] {
    const placed = new Map(Object.keys(shapes).map((name) => [name, 0]));
    const sequence: string[] = [];
    for (let i = 0; i < 30; i++) {
      const candidates = Object.entries(shapes).map(([name, nodes]) => {
        const count = placed.get(name)!;
        return cluster(name)
          .nodes(...nodes)
          .assumed({ cpu: 1000 * count, memory: Gi * count })
          .activeWorkloads(count);
      });
      const decision = decide(job().policy(policy), ...candidates);
      if (decision.kind !== 'placed') throw new Error(`placement ${i + 1}: ${decision.message}`);
      placed.set(decision.cluster, placed.get(decision.cluster)! + 1);
      sequence.push(decision.cluster);
    }
    return sequence;
  }

  function runs(sequence: readonly string[]): Array<{ cluster: string; length: number }> {
    const result: Array<{ cluster: string; length: number }> = [];
    for (const name of sequence) {
      const last = result.at(-1);
      if (last?.cluster === name) last.length++;
      else result.push({ cluster: name, length: 1 });
    }
    return result;
  }

  it('spread shares them out in proportion to size', () => {
    const sequence = simulate('spread');
    const count = (name: string) => sequence.filter((placed) => placed === name).length;
    for (const name of Object.keys(shapes)) expect(count(name)).toBeGreaterThanOrEqual(5);
    // medium and large both have 16 cpu; small has 8.
    expect(count('medium')).toBeGreaterThan(count('small'));
    expect(count('large')).toBeGreaterThan(count('small'));
    expect(Math.abs(count('medium') - count('large'))).toBeLessThanOrEqual(1);
    // Equal free fractions at the end: 25% of 8, 16 and 16 cpu left.
    expect({ small: count('small'), medium: count('medium'), large: count('large') }).toEqual({
      small: 6,
      medium: 12,
      large: 12,
    });
  });

  it('binpack fills one cluster before starting the next', () => {
    const sequence = simulate('binpack');
    // small (8 cpu) is the fullest after a first pod, so it takes 8; then large and medium, tied, by name.
    expect(runs(sequence)).toEqual([
      { cluster: 'small', length: 8 },
      { cluster: 'large', length: 16 },
      { cluster: 'medium', length: 6 },
    ]);
  });
});

describe('chooseWorkerCluster: properties', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];
  const labelKey = fc.constantFrom('region', 'tier', 'spot');
  const labelValue = fc.constantFrom('eu', 'us', 'gold', '');

  const requirement: fc.Arbitrary<LabelRequirement> = fc.oneof(
    fc.record({
      key: labelKey,
      operator: fc.constantFrom('In' as const, 'NotIn' as const),
      values: fc.uniqueArray(labelValue, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({
      key: labelKey,
      operator: fc.constantFrom('Equals' as const, 'NotEquals' as const),
      values: labelValue.map((value) => [value]),
    }),
    fc.record({
      key: labelKey,
      operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const),
      values: fc.constant<string[]>([]),
    }),
  );

  /** Mostly `usual`; one time in five, anything `unusual` gives. Keeps each filter failing rarely enough that placements happen. */
  const mostly = <T, U>(usual: T, unusual: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: unusual });

  /** Amounts in steps of half a cpu and 1Gi (negative steps: overcommitted), GPUs only sometimes. */
  const resources = (min: number, max: number, gpus: number): fc.Arbitrary<Resources> =>
    fc
      .tuple(
        fc.integer({ min, max }),
        fc.integer({ min, max }),
        mostly(undefined, fc.integer({ min: 0, max: gpus })),
      )
      .map(([cpu, memory, gpuCount]) => ({
        cpu: cpu * 500,
        memory: memory * Gi,
        ...(gpuCount === undefined ? {} : { [gpu]: gpuCount }),
      }));

  const candidate: fc.Arbitrary<ClusterCandidate> = fc.record({
    name: fc.constantFrom(...names),
    labels: fc.dictionary(labelKey, labelValue, { maxKeys: 3 }),
    active: mostly(true, fc.boolean()),
    inactiveReason: fc.option(fc.constantFrom('Unreachable', 'CredentialsExpired'), { nil: undefined }),
    cordoned: mostly(false, fc.boolean()),
    // Weight 0 two times in five: a weight-0 cluster among others that pass (a branch the property
    // below must reach over 30 times) came 29-56 times in 3,000 runs at one in five, failing a run.
    weight: fc.constantFrom(0, 0, 0.5, 1, 2),
    allowedNamespaces: mostly([], fc.subarray(['default', 'team-a'])),
    maxActiveWorkloads: mostly(undefined, fc.integer({ min: 0, max: 3 })),
    activeWorkloads: fc.integer({ min: 0, max: 4 }),
    podRestrictions: mostly(
      undefined,
      fc.constantFrom({ refusePrivileged: true }, { refuseHostPath: false }),
    ),
    namespaces: mostly(
      new Map(),
      fc.option(
        fc
          .constantFrom('privileged', 'baseline', 'restricted', 'nonsense')
          .map(
            (level) =>
              new Map([
                ['team-a', { metadata: { labels: { 'pod-security.kubernetes.io/enforce': level } } }],
              ]),
          ),
        { nil: undefined, freq: 4 },
      ),
    ),
    capacity: fc.option(
      fc.record({
        nodes: fc.array(fc.record({ name: fc.constantFrom('n1', 'n2', 'n3'), free: resources(-1, 16, 2) }), {
          maxLength: 3,
        }),
        allocatable: resources(0, 32, 4),
        assumed: mostly({}, resources(0, 16, 2)),
      }),
      { nil: undefined, freq: 8 },
    ),
  });

  const request: fc.Arbitrary<PlacementRequest> = fc.record({
    namespace: mostly('default', fc.constantFrom('default', 'team-a')),
    excludedClusters: mostly([], fc.subarray(names, { maxLength: 2 })),
    clusterSelector: mostly(undefined, fc.record({ requirements: fc.array(requirement, { maxLength: 2 }) })),
    pinnedCluster: mostly(undefined, fc.constantFrom('a', 'b', 'zz')),
    podGroups: fc.array(fc.record({ requests: resources(0, 6, 1), count: fc.integer({ min: 0, max: 4 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
    policy: fc.constantFrom(...scoringPolicies),
    asks: mostly(noPodTemplateAsks, fc.constant({ ...noPodTemplateAsks, privileged: ['container main'] })),
    podSecurity: mostly<PodSecurityLevel, PodSecurityLevel>(
      'privileged',
      fc.constantFrom('baseline', 'restricted'),
    ),
  });

  const candidates = fc.uniqueArray(candidate, { selector: (c) => c.name, maxLength: names.length });

  function requirementHolds(
    { key, operator, values }: LabelRequirement,
    labels: Record<string, string>,
  ): boolean {
    const value = Object.hasOwn(labels, key) ? labels[key] : undefined;
    if (operator === 'Exists') return value !== undefined;
    if (operator === 'DoesNotExist') return value === undefined;
    const listed = value !== undefined && values.includes(value);
    return operator === 'In' || operator === 'Equals' ? listed : !listed;
  }

  /** Every filter of the issue, written out again independently of the implementation. */
  function passesEveryFilter(c: ClusterCandidate, r: PlacementRequest): boolean {
    if (r.excludedClusters.includes(c.name)) return false;
    if (r.pinnedCluster !== undefined && r.pinnedCluster !== c.name) return false;
    if (!c.active || c.cordoned) return false;
    if (r.clusterSelector?.requirements.some((req) => !requirementHolds(req, c.labels))) return false;
    if (c.allowedNamespaces.length > 0 && !c.allowedNamespaces.includes(r.namespace)) return false;
    if (c.maxActiveWorkloads !== undefined && c.activeWorkloads >= c.maxActiveWorkloads) return false;
    if (c.podRestrictions?.refusePrivileged && r.asks.privileged.length > 0) return false;
    if (!c.namespaces) return false;
    const enforced = c.namespaces.get(r.namespace)?.metadata?.labels?.['pod-security.kubernetes.io/enforce'];
    const strictness = (level: string | undefined) =>
      level === undefined ? 0 : (({ privileged: 0, baseline: 1 } as Record<string, number>)[level] ?? 2);
    if (c.namespaces.get(r.namespace) && strictness(enforced) < strictness(r.podSecurity)) return false;
    const groups = r.podGroups
      .map((group) => ({
        ...group,
        requested: Object.entries(group.requests).filter(([, amount]) => amount > 0),
      }))
      .filter((group) => group.requested.length > 0);
    if (groups.length === 0) return true;
    if (!c.capacity) return false;
    const { nodes, assumed } = c.capacity;
    const onePodOfEachFits = groups.every((group) =>
      nodes.some((node) => group.requested.every(([name, amount]) => amount <= (node.free[name] ?? 0))),
    );
    // Zero pods at once (parallelism 0) need nothing in total, even where the free total is negative.
    const total: Record<string, number> = {};
    for (const group of groups)
      for (const [name, amount] of group.requested) total[name] = (total[name] ?? 0) + amount * group.count;
    const allPodsFit = Object.entries(total).every(([name, amount]) => {
      const free = nodes.reduce((sum, node) => sum + (node.free[name] ?? 0), 0) - (assumed[name] ?? 0);
      return amount === 0 || amount <= free;
    });
    return onePodOfEachFits && allPodsFit;
  }

  it('places only on a cluster passing every filter, and is unschedulable only when none does', () => {
    const seen = { placed: 0, unschedulable: 0, choiceAmongSeveral: 0, weightZeroAmongOthers: 0 };
    fc.assert(
      fc.property(candidates, request, (cs, r) => {
        const before = structuredClone({ cs, r });
        const decision = chooseWorkerCluster(cs, r);
        expect({ cs, r }).toEqual(before);

        const passing = cs.filter((c) => passesEveryFilter(c, r));
        seen[decision.kind]++;
        if (passing.length > 1) seen.choiceAmongSeveral++;
        if (passing.some((c) => c.weight === 0) && passing.some((c) => c.weight > 0))
          seen.weightZeroAmongOthers++;
        if (decision.kind === 'unschedulable') {
          expect(passing).toEqual([]);
          expect(decision.message).toMatch(new RegExp(`^0/${cs.length} clusters available: .+\\.$`));
          return;
        }
        const chosen = cs.find((c) => c.name === decision.cluster);
        expect(chosen && passesEveryFilter(chosen, r)).toBe(true);
        expect(decision.ranking.map((s) => s.name).sort()).toEqual(passing.map((c) => c.name).sort());
        expect(decision.ranking[0]?.name).toBe(decision.cluster);
        expect(decision.message).toContain(`placed on ${decision.cluster} by ${r.policy} (score `);
        expect(decision.message).toContain(`; ${passing.length}/${cs.length} clusters feasible.`);
        // A weight-0 cluster is a last resort.
        if (chosen?.weight === 0) expect(passing.every((c) => c.weight === 0)).toBe(true);
        // Best first: score in whole points, then fewer active Jobs, then name (among clusters of like weight).
        const byName = new Map(cs.map((c) => [c.name, c]));
        for (let i = 1; i < decision.ranking.length; i++) {
          const previous = decision.ranking[i - 1]!;
          const next = decision.ranking[i]!;
          const p = byName.get(previous.name)!;
          const n = byName.get(next.name)!;
          if (p.weight > 0 !== n.weight > 0) {
            expect(p.weight).toBeGreaterThan(0);
            continue;
          }
          const order = [
            Math.round(next.score) - Math.round(previous.score),
            p.activeWorkloads - n.activeWorkloads,
            p.name < n.name ? -1 : 1,
          ];
          expect(order.find((x) => x !== 0)).toBeLessThan(0);
        }
      }),
      { numRuns: 3000 },
    );
    // The generators must reach every branch often enough for the property to mean something.
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(30);
  });

  it('clusterVerdicts agrees with chooseWorkerCluster: the same eligible clusters and scores, a reason for every other one', () => {
    fc.assert(
      fc.property(candidates, request, (cs, r) => {
        const decision = chooseWorkerCluster(cs, r);
        const verdicts = clusterVerdicts(cs, r);
        expect(verdicts.map((v) => v.name).sort()).toEqual(cs.map((c) => c.name).sort());
        const eligible = verdicts.filter((v) => v.eligible);
        expect(eligible).toEqual(
          (decision.kind === 'placed' ? decision.ranking : []).map((s) => ({
            ...s,
            eligible: true,
            reason: null,
          })),
        );
        expect(verdicts.slice(0, eligible.length)).toEqual(eligible);
        for (const verdict of verdicts.filter((v) => !v.eligible)) {
          expect(verdict.score).toBeNull();
          expect(verdict.reason).toMatch(/^[a-z]/);
          expect(passesEveryFilter(cs.find((c) => c.name === verdict.name)!, r)).toBe(false);
          // Each reason is one of those the decision's message counts.
          if (decision.kind === 'unschedulable' && !verdict.reason!.startsWith('insufficient'))
            expect(decision.message).toContain(verdict.reason);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('is deterministic: the same inputs in any order give the same cluster', () => {
    fc.assert(
      fc.property(
        candidates.chain((cs) =>
          fc.tuple(fc.constant(cs), fc.shuffledSubarray(cs, { minLength: cs.length })),
        ),
        request,
        ([cs, shuffled], r) => {
          const first = chooseWorkerCluster(cs, r);
          const second = chooseWorkerCluster(shuffled, r);
          expect(second).toEqual(first);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('chooseWorkerCluster: clusters that refused the Job’s mirror', () => {
  it('ranks them after every other feasible cluster, whatever their score, and says so', () => {
    // a is far emptier (it would win on score), but it refused this Job before.
    const decision = expectPlaced(
      decide(job().avoiding('a'), cluster('a').nodes(['64', '256Gi']), cluster('b').nodes(['2', '4Gi'])),
    );
    expect(decision.cluster).toBe('b');
    expect(decision.ranking.map((r) => r.name)).toEqual(['b', 'a']);
    expect(decision.message).toContain('Ranked last, having refused its mirror before: a.');
  });

  it('still chooses one when nothing else fits: a refusal may have been a passing quota', () => {
    const decision = expectPlaced(
      decide(job().avoiding('a'), cluster('a').nodes(roomy), cluster('b').nodes(roomy).cordoned()),
    );
    expect(decision.cluster).toBe('a');
  });
});
