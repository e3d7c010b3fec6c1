import type { PlainJson } from '@jobrelay/kube/plain-json';
import { podRequests } from '@jobrelay/resources';
import type { V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { chooseWorkerCluster } from '../src/choose-worker-cluster.ts';
import type { PlacedWorkload } from '../src/placed-load.ts';
import type { WorkloadFacts } from '../src/placement-inputs.ts';
import {
  clusterCandidates,
  clusterLoad,
  type KindedWorkload,
  loadOfPlaced,
  type PlacementClusterInput,
  type PlacementSettings,
  placedWorkload,
  placedWorkloadOf,
  placementRecordOf,
  placementRequestFor,
  waitingSince,
} from '../src/placement-inputs.ts';
import {
  formatPlacementRecord,
  nothingCarried,
  type PlacementRecord,
  parsePlacementRecord,
} from '../src/placement-record.ts';
import { noPodTemplateAsks } from '../src/pod-template-asks.ts';
import { RecordKeyring } from '../src/record-seal.ts';

const Gi = 2 ** 30;

/**
 * A batch/v1 Job as @jobrelay/kinds reads it (its `Job`): plain JSON. Spelled out here, not
 * imported, because kinds depends on placement; placement's tests depending on kinds would make
 * the two packages a ring.
 */
type Job = PlainJson<V1Job>;

/** The keys the tests' records are sealed with, as the controller's are. */
const keys = new RecordKeyring(Buffer.alloc(32, 7));

/** The facts placement reads of a Job, as the batch/v1 Job adapter in @jobrelay/kinds gives them. */
const jobFacts: WorkloadFacts<Job> = {
  name: 'job',
  resource: { kind: 'Job' },
  isFinished: (j) => (j.status?.conditions ?? []).some((c) => c.type === 'Complete' && c.status === 'True'),
  isSuspended: (j) => j.spec?.suspend === true,
  podDemand: (j) =>
    j.spec?.template.spec
      ? [
          {
            requests: podRequests(j.spec.template.spec),
            count: Math.min(j.spec.parallelism ?? 1, j.spec.completions ?? j.spec.parallelism ?? 1),
          },
        ]
      : [],
  podTemplates: (j) => (j.spec?.template.spec ? [{ role: '', spec: j.spec.template.spec }] : []),
};

/** The management cluster's namespaces as the controller's cache holds them: team-a enforces baseline. */
const managementNamespaces = new Map<string, { metadata: { labels: Record<string, string> } }>([
  ['team-a', { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } }],
  ['open', { metadata: { labels: {} } }],
]);

/** The controller's settings: a default policy, jobrelay-system, the namespaces above. */
function settings(defaultPolicy: 'spread' | 'binpack' = 'spread'): PlacementSettings {
  return { defaultPolicy, systemNamespace: 'jobrelay-system', namespaces: managementNamespaces };
}
const kinded = (jobs: Job[]) => jobs.map((workload) => ({ workload, facts: jobFacts }));

/** A managed origin Job: one pod asking for `cpu` and 1Gi, `parallelism` at once. */
function unsealedJob(
  name: string,
  options: {
    annotations?: Record<string, string>;
    cpu?: string;
    parallelism?: number;
    completions?: number;
    suspend?: boolean;
    finished?: boolean;
    createdAt?: string;
  } = {},
): Job {
  return {
    metadata: {
      name,
      namespace: 'team-a',
      uid: `uid-${name}`,
      annotations: options.annotations ?? {},
      ...(options.createdAt ? { creationTimestamp: options.createdAt } : {}),
    },
    spec: {
      managedBy: 'jobrelay.dev/dispatcher',
      ...(options.parallelism !== undefined ? { parallelism: options.parallelism } : {}),
      ...(options.completions !== undefined ? { completions: options.completions } : {}),
      ...(options.suspend !== undefined ? { suspend: options.suspend } : {}),
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'busybox',
              resources: { requests: { cpu: options.cpu ?? '1', memory: '1Gi' } },
            },
          ],
        },
      },
    },
    ...(options.finished
      ? { status: { conditions: [{ type: 'Complete', status: 'True' }] } }
      : { status: {} }),
  };
}

/** A Job whose placement record (from `placedOn`) is sealed for it, as the controller writes them. */
function job(name: string, options: Parameters<typeof unsealedJob>[1] = {}): Job {
  const made = unsealedJob(name, options);
  const annotations = made.metadata!.annotations!;
  const parsed = parsePlacementRecord(annotations['jobrelay.dev/placement']);
  if (parsed.kind === 'ok') {
    annotations['jobrelay.dev/placement'] = formatPlacementRecord(
      parsed.record,
      { namespace: 'team-a', name, uid: `uid-${name}` },
      keys,
    );
  }
  return made;
}

function placedOn(cluster: string): Record<string, string> {
  return {
    // Sealed by job() for the Job it goes on.
    'jobrelay.dev/placement': JSON.stringify({
      attempt: 1,
      carried: nothingCarried,
      excludedClusters: [],
      cluster,
    }),
  };
}

function cluster(name: string, overrides: Partial<PlacementClusterInput> = {}): PlacementClusterInput {
  return {
    name,
    labels: {},
    spec: {},
    state: { active: true, reason: 'Connected' },
    namespaces: new Map(),
    capacity: {
      nodes: [{ name: `${name}-node`, free: { cpu: 4000, memory: 16 * Gi } }],
      allocatable: { cpu: 4000, memory: 16 * Gi },
    },
    ...overrides,
  };
}

describe('placementRequestFor', () => {
  it('reads the pin, the selector and the policy annotation, and the pods that run at once', () => {
    const result = placementRequestFor(
      job('pinned', {
        annotations: {
          'jobrelay.dev/cluster': ' worker-2 ',
          'jobrelay.dev/cluster-selector': 'region=eu',
          'jobrelay.dev/placement-policy': 'binpack',
        },
        cpu: '500m',
        parallelism: 3,
        completions: 2,
      }),
      undefined,
      settings('spread'),
      jobFacts,
    );
    expect(result).toEqual({
      kind: 'ok',
      request: {
        namespace: 'team-a',
        excludedClusters: [],
        pinnedCluster: 'worker-2',
        clusterSelector: { requirements: [{ key: 'region', operator: 'Equals', values: ['eu'] }] },
        podGroups: [{ requests: { cpu: 500, memory: Gi }, count: 2 }],
        kind: { name: 'job', label: 'Job' },
        policy: 'binpack',
        asks: { ...noPodTemplateAsks, serviceAccounts: [{ role: '', name: 'default' }] },
        podSecurity: 'baseline',
      },
    });
  });

  it('takes the default policy, no pin and no selector when the annotations are absent or blank', () => {
    const result = placementRequestFor(
      job('plain', { annotations: { 'jobrelay.dev/cluster-selector': '  ', 'jobrelay.dev/cluster': ' ' } }),
      undefined,
      settings('binpack'),
      jobFacts,
    );
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    expect(result.request.policy).toBe('binpack');
    expect(result.request).not.toHaveProperty('pinnedCluster');
    expect(result.request).not.toHaveProperty('clusterSelector');
    expect(result.request.podGroups.map((g) => g.count)).toEqual([1]);
  });

  it("keeps the previous attempt's excluded clusters", () => {
    const previous: PlacementRecord = { attempt: 2, carried: nothingCarried, excludedClusters: ['worker-1'] };
    const result = placementRequestFor(job('again'), previous, settings('spread'), jobFacts);
    expect(result.kind === 'ok' && result.request.excludedClusters).toEqual(['worker-1']);
  });

  it('asks to avoid the clusters that refused its mirror, and nothing when none did', () => {
    const refused: PlacementRecord = {
      attempt: 1,
      carried: nothingCarried,
      excludedClusters: [],
      refusals: 2,
      refusedBy: ['worker-1', 'worker-3'],
    };
    const result = placementRequestFor(job('refused'), refused, settings('spread'), jobFacts);
    expect(result.kind === 'ok' && result.request.avoidedClusters).toEqual(['worker-1', 'worker-3']);
    const fresh = placementRequestFor(job('fresh'), undefined, settings('spread'), jobFacts);
    expect(fresh.kind === 'ok' && fresh.request).not.toHaveProperty('avoidedClusters');
  });

  it('names the annotation when the selector does not parse', () => {
    const result = placementRequestFor(
      job('bad-selector', { annotations: { 'jobrelay.dev/cluster-selector': 'region in eu' } }),
      undefined,
      settings('spread'),
      jobFacts,
    );
    expect(result.kind).toBe('invalid');
    expect(result.kind === 'invalid' && result.message).toMatch(
      /^annotation jobrelay\.dev\/cluster-selector is not a valid label selector: \S/,
    );
  });

  it('names the allowed policies when the policy annotation is unknown', () => {
    const result = placementRequestFor(
      job('bad-policy', { annotations: { 'jobrelay.dev/placement-policy': 'random' } }),
      undefined,
      settings('spread'),
      jobFacts,
    );
    expect(result).toEqual({
      kind: 'invalid',
      message: 'annotation jobrelay.dev/placement-policy must be one of spread, binpack, got "random"',
    });
  });

  it.each(['kube-system', 'kube-public', 'default', 'jobrelay-system'])(
    'never places a workload in the system namespace %s, whatever it asks',
    (namespace) => {
      const workload = job('sys', { annotations: { 'jobrelay.dev/cluster': 'worker-1' } });
      workload.metadata!.namespace = namespace;
      expect(placementRequestFor(workload, undefined, settings(), jobFacts)).toEqual({
        kind: 'invalid',
        message: `namespace ${namespace} is a system namespace: jobrelay never dispatches from it`,
      });
    },
  );

  it("takes the system namespace from the controller's settings", () => {
    const workload = job('own');
    workload.metadata!.namespace = 'dispatch';
    const result = placementRequestFor(
      workload,
      undefined,
      { ...settings(), systemNamespace: 'dispatch' },
      jobFacts,
    );
    expect(result).toEqual({
      kind: 'invalid',
      message: 'namespace dispatch is a system namespace: jobrelay never dispatches from it',
    });
  });

  it('waits, saying so, while its namespace is not in the cache: its Pod Security level is not known', () => {
    const workload = job('new-team');
    workload.metadata!.namespace = 'team-new';
    expect(placementRequestFor(workload, undefined, settings(), jobFacts)).toEqual({
      kind: 'invalid',
      message: 'namespace team-new is not known yet: its Pod Security level cannot be read',
    });
  });

  it("carries its namespace's Pod Security level and what its pod templates ask", () => {
    const privileged = job('root');
    privileged.spec!.template.spec!.containers[0]!.securityContext = { privileged: true };
    privileged.spec!.template.spec!.serviceAccountName = 'builder';
    const result = placementRequestFor(privileged, undefined, settings(), jobFacts);
    expect(result.kind === 'ok' && result.request.podSecurity).toBe('baseline');
    expect(result.kind === 'ok' && result.request.asks).toEqual({
      ...noPodTemplateAsks,
      privileged: ['container main'],
      serviceAccounts: [{ role: '', name: 'builder' }],
    });
    const open = job('open');
    open.metadata!.namespace = 'open';
    const unlabelled = placementRequestFor(open, undefined, settings(), jobFacts);
    expect(unlabelled.kind === 'ok' && unlabelled.request.podSecurity).toBe('privileged');
  });

  it("uses the caller's pod demand, so a cache is honoured", () => {
    const seen: string[] = [];
    const result = placementRequestFor(job('cached'), undefined, settings('spread'), jobFacts, (j) => {
      seen.push(j.metadata!.name!);
      return [{ requests: { cpu: 7 }, count: 1 }];
    });
    expect(seen).toEqual(['cached']);
    expect(result.kind === 'ok' && result.request.podGroups).toEqual([{ requests: { cpu: 7 }, count: 1 }]);
  });
});

describe('clusterLoad', () => {
  it('counts unfinished Jobs per cluster and assumes the requests of pods not yet seen', () => {
    const origins = [
      job('a', { annotations: placedOn('worker-1'), parallelism: 2 }),
      job('b', { annotations: placedOn('worker-1') }),
      job('done', { annotations: placedOn('worker-1'), finished: true }),
      job('waiting'),
    ];
    // One of a's two pods is already running there (the worker's pod watch counts it).
    const capacities = new Map([['worker-1', { podsByOwner: new Map([['team-a/a', 1]]) }]]);
    const load = clusterLoad(kinded(origins), capacities, new Map(), keys);
    expect([...load.keys()]).toEqual(['worker-1']);
    expect(load.get('worker-1')).toEqual({ workloads: 2, assumed: { cpu: 2000, memory: 2 * Gi } });
  });

  it('counts placements written but not yet in the cache, by origin UID', () => {
    const load = clusterLoad(
      kinded([job('fresh', { cpu: '2' })]),
      new Map(),
      new Map([['uid-fresh', 'worker-2']]),
      keys,
    );
    expect(load.get('worker-2')).toEqual({ workloads: 1, assumed: { cpu: 2000, memory: Gi } });
  });

  it('counts a suspended Job against maxActiveWorkloads but assumes none of its requests', () => {
    const load = clusterLoad(
      kinded([job('paused', { annotations: placedOn('worker-1'), suspend: true })]),
      new Map(),
      new Map(),
      keys,
    );
    expect(load.get('worker-1')).toEqual({ workloads: 1, assumed: {} });
  });

  it('assumes nothing once every pod runs', () => {
    const capacities = new Map([['worker-1', { podsByOwner: new Map([['team-a/a', 3]]) }]]);
    const load = clusterLoad(
      kinded([job('a', { annotations: placedOn('worker-1'), parallelism: 3 })]),
      capacities,
      new Map(),
      keys,
    );
    expect(load.get('worker-1')).toEqual({ workloads: 1, assumed: {} });
  });
});

describe('placementRecordOf', () => {
  it('parses the record once per object: the same object gives the same parse', () => {
    const placed = job('a', { annotations: placedOn('worker-1') });
    const first = placementRecordOf(placed, keys);
    expect(first).toEqual({
      kind: 'ok',
      record: { attempt: 1, carried: nothingCarried, excludedClusters: [], cluster: 'worker-1' },
    });
    expect(placementRecordOf(placed, keys)).toBe(first);
  });

  it('parses the version that replaced it in the cache afresh', () => {
    const before = job('a', { annotations: placedOn('worker-1') });
    placementRecordOf(before, keys);
    // The cache replaces an updated object (a new metadata object), never changes it in place.
    const annotations = job('a', { annotations: placedOn('worker-2') }).metadata!.annotations;
    const after = { ...before, metadata: { ...before.metadata, annotations } };
    const parsed = placementRecordOf(after, keys);
    expect(parsed.kind === 'ok' && parsed.record.cluster).toBe('worker-2');
  });

  it('checks a record text once across versions of one workload, and afresh on another workload or keyring', () => {
    const first = job('a', { annotations: placedOn('worker-1') });
    const parsed = placementRecordOf(first, keys);
    // A status write: a new object, the same record text.
    const next = { ...first, metadata: { ...first.metadata, resourceVersion: '2' } };
    expect(placementRecordOf(next, keys)).toBe(parsed);
    // The same text copied onto another workload: its seal names the first one.
    const copied = { ...first, metadata: { ...first.metadata, uid: 'uid-b' } };
    expect(placementRecordOf(copied, keys).kind).toBe('untrusted');
    // And the first one's, read again (afresh: one text is remembered for one workload), is still its own.
    expect(placementRecordOf({ ...next, metadata: { ...next.metadata } }, keys)).toEqual(parsed);
    // Another keyring that does not hold the sealing key: unverifiable, whatever was read before.
    const other = new RecordKeyring(Buffer.alloc(32, 9));
    expect(placementRecordOf({ ...next, metadata: { ...next.metadata } }, other).kind).toBe('unverifiable');
  });

  it('is none without a record, and untrusted for a damaged one', () => {
    expect(placementRecordOf(job('waiting'), keys)).toEqual({ kind: 'none' });
    expect(placementRecordOf({}, keys)).toEqual({ kind: 'none' });
    const damaged = job('damaged', { annotations: { 'jobrelay.dev/placement': '{' } });
    expect(placementRecordOf(damaged, keys)).toEqual({ kind: 'untrusted', problem: 'it is not JSON' });
  });
});

describe('placedWorkload', () => {
  const demand = [{ requests: { cpu: 1000, memory: Gi }, count: 2 }];
  const rows: Array<{
    name: string;
    workload: Job;
    assumedCluster?: string;
    expected: PlacedWorkload | undefined;
  }> = [
    {
      name: 'placed and running: its cluster, its key and the pods it runs at once',
      workload: job('a', { annotations: placedOn('worker-1'), parallelism: 2 }),
      expected: { cluster: 'worker-1', key: 'team-a/a', suspended: false, demand },
    },
    {
      name: 'suspended: counts as a job there, with no pod demand',
      workload: job('paused', { annotations: placedOn('worker-1'), parallelism: 2, suspend: true }),
      expected: { cluster: 'worker-1', key: 'team-a/paused', suspended: true, demand: [] },
    },
    {
      name: 'finished: not placed anywhere any more',
      workload: job('done', { annotations: placedOn('worker-1'), finished: true }),
      assumedCluster: 'worker-2',
      expected: undefined,
    },
    {
      name: 'not placed and not assumed: nowhere',
      workload: job('waiting'),
      expected: undefined,
    },
    {
      name: 'no cluster in its record yet: the cluster it is assumed on (the write not yet seen)',
      workload: job('fresh', { parallelism: 2 }),
      assumedCluster: 'worker-2',
      expected: { cluster: 'worker-2', key: 'team-a/fresh', suspended: false, demand },
    },
    {
      name: 'a cluster in its record: that one, whatever is assumed',
      workload: job('seen', { annotations: placedOn('worker-1'), parallelism: 2 }),
      assumedCluster: 'worker-2',
      expected: { cluster: 'worker-1', key: 'team-a/seen', suspended: false, demand },
    },
  ];

  it.each(rows)('$name', ({ workload, assumedCluster, expected }) => {
    expect(placedWorkload({ workload, facts: jobFacts }, assumedCluster, keys)).toEqual(expected);
  });

  it.each(rows)('from a reading its caller made already: $name', ({ workload, assumedCluster, expected }) => {
    const read = { finished: jobFacts.isFinished(workload), placement: placementRecordOf(workload, keys) };
    expect(placedWorkloadOf({ workload, facts: jobFacts }, read, assumedCluster)).toEqual(expected);
  });

  it('takes the pod demand from the caller, so its cache is honoured, and asks none for a suspended one', () => {
    const asked: string[] = [];
    const demandOf = ({ workload }: KindedWorkload) => {
      asked.push(workload.metadata!.name!);
      return [{ requests: { cpu: 7 }, count: 1 }];
    };
    const running = job('a', { annotations: placedOn('worker-1') });
    const paused = job('b', { annotations: placedOn('worker-1'), suspend: true });
    expect(placedWorkload({ workload: running, facts: jobFacts }, undefined, keys, demandOf)?.demand).toEqual(
      [{ requests: { cpu: 7 }, count: 1 }],
    );
    expect(placedWorkload({ workload: paused, facts: jobFacts }, undefined, keys, demandOf)?.demand).toEqual(
      [],
    );
    expect(asked).toEqual(['a']);
  });
});

describe('loadOfPlaced', () => {
  const cpu = (n: number) => ({ requests: { cpu: n * 1000, memory: Gi }, count: 1 });
  const placed = (
    cluster: string,
    name: string,
    overrides: Partial<PlacedWorkload> = {},
  ): PlacedWorkload => ({
    cluster,
    key: `team-a/${name}`,
    suspended: false,
    demand: [{ requests: { cpu: 1000, memory: Gi }, count: 3 }],
    ...overrides,
  });
  const rows: Array<{
    name: string;
    placed: PlacedWorkload[];
    podsByOwner?: Record<string, Record<string, number>>;
    expected: Record<string, { workloads: number; assumed: Record<string, number> }>;
  }> = [
    {
      name: 'nothing placed: no cluster has load',
      placed: [],
      expected: {},
    },
    {
      name: 'every pod not yet seen is assumed, per cluster',
      placed: [placed('worker-1', 'a'), placed('worker-1', 'b'), placed('worker-2', 'c')],
      expected: {
        'worker-1': { workloads: 2, assumed: { cpu: 6000, memory: 6 * Gi } },
        'worker-2': { workloads: 1, assumed: { cpu: 3000, memory: 3 * Gi } },
      },
    },
    {
      name: 'pods the worker already counts for the owner reduce what is assumed',
      placed: [placed('worker-1', 'a'), placed('worker-1', 'b')],
      podsByOwner: { 'worker-1': { 'team-a/a': 2, 'team-a/other': 5 } },
      expected: { 'worker-1': { workloads: 2, assumed: { cpu: 4000, memory: 4 * Gi } } },
    },
    {
      name: 'more pods counted than demanded assume nothing, never less than nothing',
      placed: [placed('worker-1', 'a')],
      podsByOwner: { 'worker-1': { 'team-a/a': 9 } },
      expected: { 'worker-1': { workloads: 1, assumed: {} } },
    },
    {
      name: 'counted pods come off the groups in order (a head first, then workers)',
      placed: [placed('worker-1', 'ray', { demand: [cpu(4), { ...cpu(1), count: 3 }] })],
      podsByOwner: { 'worker-1': { 'team-a/ray': 2 } },
      expected: { 'worker-1': { workloads: 1, assumed: { cpu: 2000, memory: 2 * Gi } } },
    },
    {
      name: 'a suspended one counts as a job and assumes nothing',
      placed: [placed('worker-1', 'paused', { suspended: true, demand: [] })],
      expected: { 'worker-1': { workloads: 1, assumed: {} } },
    },
  ];

  it.each(rows)('$name', ({ placed: workloads, podsByOwner = {}, expected }) => {
    const capacities = new Map(
      Object.entries(podsByOwner).map(([cluster, pods]) => [
        cluster,
        { podsByOwner: new Map(Object.entries(pods)) },
      ]),
    );
    expect(Object.fromEntries(loadOfPlaced(workloads, capacities))).toEqual(expected);
  });

  it('sums to what clusterLoad computes from the whole workloads', () => {
    const origins = [
      job('a', { annotations: placedOn('worker-1'), parallelism: 2 }),
      job('paused', { annotations: placedOn('worker-1'), suspend: true }),
      job('fresh', { cpu: '2' }),
      job('done', { annotations: placedOn('worker-2'), finished: true }),
    ];
    const assumed = new Map([['uid-fresh', 'worker-2']]);
    const capacities = new Map([['worker-1', { podsByOwner: new Map([['team-a/a', 1]]) }]]);
    const each = kinded(origins).flatMap((entry) => {
      const one = placedWorkload(entry, assumed.get(entry.workload.metadata!.uid!), keys);
      return one ? [one] : [];
    });
    expect(loadOfPlaced(each, capacities)).toEqual(clusterLoad(kinded(origins), capacities, assumed, keys));
    expect(Object.fromEntries(loadOfPlaced(each, capacities))).toEqual({
      'worker-1': { workloads: 2, assumed: { cpu: 1000, memory: Gi } },
      'worker-2': { workloads: 1, assumed: { cpu: 2000, memory: Gi } },
    });
  });
});

describe('clusterCandidates', () => {
  it('maps spec, state, namespaces, capacity and load onto the candidate', () => {
    const workerNamespaces = new Map([['team-a', { metadata: { labels: {} } }]]);
    const inputs = [
      cluster('worker-1', {
        labels: { region: 'eu' },
        spec: {
          weight: 2,
          maxActiveWorkloads: 5,
          allowedNamespaces: ['team-a'],
          podRestrictions: { refusePrivileged: true, allowedServiceAccounts: ['default'] },
        },
        namespaces: workerNamespaces,
      }),
      cluster('worker-2', {
        spec: { drain: true, podRestrictions: { refusePrivileged: 'yes', refuseEverything: true } },
        state: { active: false, reason: 'Unreachable' },
        namespaces: undefined,
      }),
      cluster('worker-3', { spec: { unschedulable: true }, capacity: undefined, namespaces: undefined }),
    ];
    const load = new Map([['worker-1', { workloads: 3, assumed: { cpu: 1000 } }]]);
    expect(clusterCandidates(inputs, load)).toEqual([
      {
        name: 'worker-1',
        labels: { region: 'eu' },
        active: true,
        inactiveReason: 'Connected',
        cordoned: false,
        weight: 2,
        allowedNamespaces: ['team-a'],
        maxActiveWorkloads: 5,
        activeWorkloads: 3,
        podRestrictions: { refusePrivileged: true, allowedServiceAccounts: ['default'] },
        namespaces: workerNamespaces,
        capacity: {
          nodes: [{ name: 'worker-1-node', free: { cpu: 4000, memory: 16 * Gi } }],
          allocatable: { cpu: 4000, memory: 16 * Gi },
          assumed: { cpu: 1000 },
        },
      },
      {
        name: 'worker-2',
        labels: {},
        active: false,
        inactiveReason: 'Unreachable',
        cordoned: true,
        weight: 1,
        allowedNamespaces: [],
        activeWorkloads: 0,
        podRestrictionsProblem:
          'spec.podRestrictions.refusePrivileged: must be true or false; spec.podRestrictions: unknown field refuseEverything',
        capacity: {
          nodes: [{ name: 'worker-2-node', free: { cpu: 4000, memory: 16 * Gi } }],
          allocatable: { cpu: 4000, memory: 16 * Gi },
          assumed: {},
        },
      },
      {
        name: 'worker-3',
        labels: {},
        active: true,
        inactiveReason: 'Connected',
        cordoned: true,
        weight: 1,
        allowedNamespaces: [],
        activeWorkloads: 0,
      },
    ]);
  });

  it('together with clusterLoad, steers a burst away from the cluster its placements fill', () => {
    // Two equal clusters; a 3-cpu Job was just placed on worker-1 (not yet in the cache).
    const clusters = [cluster('worker-1'), cluster('worker-2')];
    const origins = [job('first', { cpu: '3' }), job('second', { cpu: '3' })];
    const assumed = new Map([['uid-first', 'worker-1']]);
    const request = placementRequestFor(origins[1]!, undefined, settings('spread'), jobFacts);
    if (request.kind !== 'ok') throw new Error(request.message);
    const decision = chooseWorkerCluster(
      clusterCandidates(clusters, clusterLoad(kinded(origins), new Map(), assumed, keys)),
      request.request,
    );
    expect(decision.kind === 'placed' && decision.cluster).toBe('worker-2');
    // Without the assumed placement the tie is broken by name: worker-1. So the load decided.
    const blind = chooseWorkerCluster(clusterCandidates(clusters, new Map()), request.request);
    expect(blind.kind === 'placed' && blind.cluster).toBe('worker-1');
  });
});

describe('waitingSince', () => {
  const created = '2025-03-01T10:00:00.000Z';

  it("is the record's waitingSince when the Job was placed again", () => {
    const record: PlacementRecord = {
      attempt: 2,
      carried: nothingCarried,
      excludedClusters: [],
      waitingSince: '2025-03-01T11:30:00.000Z',
    };
    expect(waitingSince(job('a', { createdAt: created }), record)?.toISOString()).toBe(
      '2025-03-01T11:30:00.000Z',
    );
  });

  it("is the Job's creation for a first attempt, or when the record's time is damaged", () => {
    const first = job('a', { createdAt: created });
    expect(waitingSince(first, undefined)?.toISOString()).toBe(created);
    const damaged: PlacementRecord = {
      attempt: 2,
      carried: nothingCarried,
      excludedClusters: [],
      waitingSince: 'yesterday-ish',
    };
    expect(waitingSince(first, damaged)?.toISOString()).toBe(created);
  });

  it('is undefined when nothing says when', () => {
    expect(waitingSince(job('a'), undefined)).toBeUndefined();
  });
});

describe('several pod groups (a RayCluster: a head and a worker group)', () => {
  const head = { requests: { cpu: 2000, memory: 4 * Gi }, count: 1 };
  const workers = { requests: { cpu: 1000, memory: Gi }, count: 3 };
  const rayFacts: WorkloadFacts<Job> = {
    ...jobFacts,
    name: 'raycluster',
    resource: { kind: 'RayCluster' },
    podDemand: () => [head, workers],
  };

  it('assumes every group’s pods, taking counted pods off the groups in order', () => {
    const capacities = new Map([['worker-1', { podsByOwner: new Map([['team-a/ray', 2]]) }]]);
    const load = clusterLoad(
      [{ workload: job('ray', { annotations: placedOn('worker-1') }), facts: rayFacts }],
      capacities,
      new Map(),
      keys,
    );
    // The head and one worker run: two workers are still assumed.
    expect(load.get('worker-1')).toEqual({ workloads: 1, assumed: { cpu: 2000, memory: 2 * Gi } });
  });

  it('needs a node for the largest pod of each group and the total for all of them', () => {
    const request = placementRequestFor(job('ray'), undefined, settings('spread'), rayFacts);
    if (request.kind !== 'ok') throw new Error(request.message);
    expect(request.request.kind).toEqual({ name: 'raycluster', label: 'RayCluster' });
    const small = cluster('small', {
      capacity: {
        nodes: [{ name: 'n', free: { cpu: 1500, memory: 16 * Gi } }],
        allocatable: { cpu: 1500, memory: 16 * Gi },
      },
    });
    const decision = chooseWorkerCluster(clusterCandidates([small], new Map()), request.request);
    expect(decision).toEqual({
      kind: 'unschedulable',
      message: '0/1 clusters available: 1 insufficient cpu (requests 2, largest free node 1500m).',
    });
    const roomy = cluster('roomy', {
      capacity: {
        nodes: [
          { name: 'n1', free: { cpu: 2000, memory: 8 * Gi } },
          { name: 'n2', free: { cpu: 2000, memory: 8 * Gi } },
        ],
        allocatable: { cpu: 4000, memory: 16 * Gi },
      },
    });
    const total = chooseWorkerCluster(clusterCandidates([roomy], new Map()), request.request);
    expect(total.kind === 'unschedulable' && total.message).toBe(
      '0/1 clusters available: 1 insufficient cpu in total (4 pods need 5, free 4).',
    );
  });

  it('skips a cluster that does not serve the kind, saying so', () => {
    const request = placementRequestFor(job('ray'), undefined, settings('spread'), rayFacts);
    if (request.kind !== 'ok') throw new Error(request.message);
    const decision = chooseWorkerCluster(
      clusterCandidates([cluster('jobs-only', { servedKinds: ['job'] })], new Map()),
      request.request,
    );
    expect(decision.kind === 'unschedulable' && decision.message).toBe(
      '0/1 clusters available: 1 does not serve RayCluster.',
    );
  });
});
