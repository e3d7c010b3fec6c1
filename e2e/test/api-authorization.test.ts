// The admin API's authorization policy as one matrix: every route × every kind of caller, each
// cell asserted against the real API (TokenReview and SubjectAccessReview by the management
// apiserver). A refusal names exactly the permission that is missing, and a refused mutation
// changes nothing; an allowed cell gets the route's real answer, on targets chosen so that
// allowed mutations are harmless. Then the stream cases (access removed mid-stream ends a watch
// and a log follow) and what a drain status shows a caller of one namespace.
import { type Identity, simulatedLogLines, teamNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiCaller, type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import { startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import { fleetWriteVersions } from '../src/fleet-writes.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { collectServerSentEvents } from '../src/server-sent-events.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const workerNames = sandbox.workers.map((w) => w.name);
const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
const workerClusters = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

/** A throwaway WorkerCluster whose kubeconfig Secret does not exist: it never connects, so
 * cordoning, draining or deleting it moves no Job. */
const target = 'matrix-target';
const targetSecret = 'matrix-target-no-such-secret';

const callers = ['anonymous', 'bad-token', 'nobody', 'viewer', 'team-a', 'fleet-admin'] as const;
type Caller = (typeof callers)[number];

// The whole policy. {team-job} is a running dispatched Job in team-a (the namespace the team-a
// identity may read); {other} is a namespace nobody but viewer and fleet-admin may read, with
// the running Job {other-job}. A note in parentheses only tells two rows of one URL apart.
const policy = `
  request                                                         anonymous bad-token nobody viewer team-a fleet-admin
  GET    /api/v1/clusters                                          401       401       403    200    403    200
  POST   /api/v1/clusters?dryRun=true                              401       401       403    403    403    422
  GET    /api/v1/clusters/matrix-target                            401       401       403    200    403    200
  PATCH  /api/v1/clusters/matrix-target                            401       401       403    403    403    200
  POST   /api/v1/clusters/matrix-target/cordon                     401       401       403    403    403    200
  POST   /api/v1/clusters/matrix-target/uncordon                   401       401       403    403    403    200
  POST   /api/v1/clusters/matrix-target/drain                      401       401       403    403    403    200
  GET    /api/v1/clusters/matrix-target/drain                      401       401       403    200    403    200
  DELETE /api/v1/clusters/matrix-target                            401       401       403    403    403    200
  GET    /api/v1/kinds                                             401       401       200    200    200    200
  GET    /api/v1/workloads                                         401       401       403    200    403    200
  GET    /api/v1/workloads?namespace=team-a                        401       401       403    200    200    200
  GET    /api/v1/workloads?kind=raycluster                         401       401       403    200    403    200
  GET    /api/v1/workloads/job/team-a/{team-job}                   401       401       403    200    200    200
  GET    /api/v1/workloads/job/{other}/{other-job}                 401       401       403    200    403    200
  GET    /api/v1/workloads/raycluster/team-a/no-such-cluster       401       401       403    404    404    404
  GET    /api/v1/workloads/job/team-a/{team-job}/logs?tailLines=1  401       401       403    200    200    200
  GET    /api/v1/workloads/job/{other}/{other-job}/logs?tailLines=1 401      401       403    200    403    200
  GET    /api/v1/pending                                           401       401       403    200    403    200
  GET    /api/v1/pending?namespace=team-a                          401       401       403    200    200    200
  GET    /api/v1/pending?kind=rayjob                               401       401       403    200    403    200
  POST   /api/v1/placement-preview (a workload by kind and name)   401       401       403    200    403    200
  POST   /api/v1/placement-preview (a manifest)                    401       401       403    200    403    200
  POST   /api/v1/placement-preview (a RayCluster manifest)         401       401       403    200    403    200
  GET    /api/v1/queue                                             401       401       403    200    403    200
  GET    /api/v1/queues                                            401       401       403    200    403    200
  GET    /api/v1/queues/no-such-queue                              401       401       403    404    403    404
  GET    /api/v1/stats/history                                     401       401       403    200    403    200
  GET    /api/v1/me                                                401       401       200    200    200    200
  GET    /api/v1/me?namespace=team-a                               401       401       200    200    200    200
  GET    /api/v1/watch                                             401       401       403    200    403    200
  GET    /api/v1/watch?namespace=team-a&kinds=workloads            401       401       403    200    200    200
  GET    /api/v1/watch?kinds=workloads&kind=raycluster             401       401       403    200    403    200
  GET    /metrics                                                  401       401       403    200    403    200
  GET    /healthz                                                  200       200       200    200    200    200
  GET    /readyz                                                   200       200       200    200    200    200
  GET    /openapi.json                                             200       200       200    200    200    200
  GET    /docs/                                                    200       200       200    200    200    200
  GET    /dashboard/                                               200       200       200    200    200    200
`;

interface Row {
  label: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** With placeholders, as in the table. */
  url: string;
  expected: Record<Caller, number>;
}

function parsePolicy(text: string): Row[] {
  const [header, ...lines] = text
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/));
  if (header!.slice(-callers.length).join(' ') !== callers.join(' '))
    throw new Error(`the policy's columns must be ${callers.join(' ')}`);
  return lines.map((tokens) => {
    const statuses = tokens.slice(-callers.length).map(Number);
    const words = tokens.slice(0, -callers.length);
    return {
      label: words.join(' '),
      method: words[0] as Row['method'],
      url: words[1]!,
      expected: Object.fromEntries(callers.map((c, i) => [c, statuses[i]!])) as Record<Caller, number>,
    };
  });
}

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
  reason?: string;
  missingPermission?: Record<string, string>;
}

/** What one row asks and what each kind of answer must look like. */
interface RequestSpec {
  /** The route as the OpenAPI document names it: the matrix must cover every one. */
  route: string;
  body?: () => unknown;
  /** Writes something when allowed: refusals are checked to have changed nothing. */
  mutating?: boolean;
  /** An SSE stream that never ends by itself: requested over a real socket, then aborted. */
  stream?: boolean;
  /** For 403 cells: describePermission() of what is missing, and the problem's missingPermission. */
  refusal?: { says: string; missing: Record<string, string> };
  /** For allowed cells: the route's real answer. */
  answer?: (response: ApiResponse, caller: Caller) => void | Promise<void>;
}

const clustersPermission = (verb: string, extra: Record<string, string> = {}) => ({
  verb,
  group: 'jobrelay.dev',
  resource: 'workerclusters',
  ...extra,
});
const queuesPermission = (verb: string, extra: Record<string, string> = {}) => ({
  verb,
  group: 'jobrelay.dev',
  resource: 'dispatchqueues',
  ...extra,
});
const jobsPermission = (verb: string, extra: Record<string, string> = {}) => ({
  verb,
  group: 'batch',
  resource: 'jobs',
  ...extra,
});
const rayPermission = (verb: string, resource: string, extra: Record<string, string> = {}) => ({
  verb,
  group: 'ray.io',
  resource,
  ...extra,
});

let api: ApiHarness;
let baseUrl: string;
let otherNamespace: string;
const teamJob = uniqueName('matrix-team');
const otherJob = uniqueName('matrix-other');
const simulatedLastLine = `${simulatedLogLines().at(-1)}\n`;

function fill(text: string): string {
  return text
    .replaceAll('{team-job}', teamJob)
    .replaceAll('{other-job}', otherJob)
    .replaceAll('{other}', otherNamespace);
}

function fillAll(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fill(v)]));
}

async function readTarget(): Promise<{
  metadata: { labels?: Record<string, string> };
  spec: Record<string, unknown>;
}> {
  return (await custom.getClusterCustomObject({ ...workerClusters, name: target })) as never;
}

const clusterView = (response: ApiResponse) => response.json() as Record<string, unknown>;

const requests: Record<string, RequestSpec> = {
  'GET /api/v1/clusters': {
    route: 'GET /api/v1/clusters',
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const names = (response.json() as { items: Array<{ name: string }> }).items.map((c) => c.name);
      // Other e2e files may leave clusters of their own on a shared fleet: containment, not equality.
      expect(names).toEqual(expect.arrayContaining([...workerNames, target]));
    },
  },
  'POST /api/v1/clusters?dryRun=true': {
    route: 'POST /api/v1/clusters',
    mutating: true,
    // Vetting refuses it (422): the call got past authorization, and a dry run saves nothing anyway.
    body: () => ({ name: 'matrix-never-registered', kubeconfig: ':::not yaml' }),
    refusal: { says: 'create workerclusters.jobrelay.dev', missing: clustersPermission('create') },
    answer: (response) => {
      expect(response.json()).toMatchObject({ code: 'kubeconfig-refused', reason: 'KubeconfigMalformed' });
    },
  },
  'GET /api/v1/clusters/matrix-target': {
    route: 'GET /api/v1/clusters/{name}',
    refusal: {
      says: `get workerclusters.jobrelay.dev "${target}"`,
      missing: clustersPermission('get', { name: target }),
    },
    answer: (response) => {
      // Its Secret does not exist, so nothing ever connected to it.
      expect(clusterView(response)).toMatchObject({ name: target, active: false, capacity: null });
    },
  },
  'PATCH /api/v1/clusters/matrix-target': {
    route: 'PATCH /api/v1/clusters/{name}',
    mutating: true,
    body: () => ({ labels: { 'matrix-patched': 'yes' }, weight: 3 }),
    refusal: {
      says: `patch workerclusters.jobrelay.dev "${target}"`,
      missing: clustersPermission('patch', { name: target }),
    },
    answer: async (response) => {
      expect(clusterView(response)).toMatchObject({ weight: 3, labels: { 'matrix-patched': 'yes' } });
      expect(await readTarget()).toMatchObject({
        metadata: { labels: { 'matrix-patched': 'yes' } },
        spec: { weight: 3 },
      });
    },
  },
  'POST /api/v1/clusters/matrix-target/cordon': {
    route: 'POST /api/v1/clusters/{name}/cordon',
    mutating: true,
    refusal: {
      says: `update workerclusters.jobrelay.dev/cordon "${target}"`,
      missing: clustersPermission('update', { subresource: 'cordon', name: target }),
    },
    answer: async (response) => {
      expect(clusterView(response)).toMatchObject({ name: target, cordoned: true });
      expect((await readTarget()).spec.unschedulable).toBe(true);
    },
  },
  'POST /api/v1/clusters/matrix-target/uncordon': {
    route: 'POST /api/v1/clusters/{name}/uncordon',
    mutating: true,
    // Uncordoning is authorized as the same cordon right (it undoes one).
    refusal: {
      says: `update workerclusters.jobrelay.dev/cordon "${target}"`,
      missing: clustersPermission('update', { subresource: 'cordon', name: target }),
    },
    answer: async (response) => {
      expect(clusterView(response)).toMatchObject({ name: target, cordoned: false, draining: false });
      const spec = (await readTarget()).spec;
      expect(spec.unschedulable).toBeUndefined();
      expect(spec.drain).toBeUndefined();
    },
  },
  'POST /api/v1/clusters/matrix-target/drain': {
    route: 'POST /api/v1/clusters/{name}/drain',
    mutating: true,
    refusal: {
      says: `update workerclusters.jobrelay.dev/drain "${target}"`,
      missing: clustersPermission('update', { subresource: 'drain', name: target }),
    },
    answer: async (response) => {
      expect(response.json()).toEqual({
        cluster: target,
        draining: true,
        remaining: 0,
        hidden: 0,
        workloads: [],
      });
      expect((await readTarget()).spec.drain).toBe(true);
    },
  },
  'GET /api/v1/clusters/matrix-target/drain': {
    route: 'GET /api/v1/clusters/{name}/drain',
    refusal: {
      says: `get workerclusters.jobrelay.dev "${target}"`,
      missing: clustersPermission('get', { name: target }),
    },
    answer: (response) => {
      expect(response.json()).toMatchObject({ cluster: target, remaining: 0, hidden: 0, workloads: [] });
    },
  },
  'DELETE /api/v1/clusters/matrix-target': {
    route: 'DELETE /api/v1/clusters/{name}',
    mutating: true,
    refusal: {
      says: `delete workerclusters.jobrelay.dev "${target}"`,
      missing: clustersPermission('delete', { name: target }),
    },
    answer: async (response) => {
      // Its Secret never existed, so there was none to delete.
      expect(response.json()).toEqual({ deleted: target, secretDeleted: false });
      await eventually('the WorkerCluster gone', async () =>
        (await custom.getClusterCustomObject({ ...workerClusters, name: target }).catch(() => null))
          ? undefined
          : true,
      );
    },
  },
  'GET /api/v1/kinds': {
    route: 'GET /api/v1/kinds',
    answer: (response) => {
      const kinds = (response.json() as { items: Array<{ name: string; apiVersion: string; kind: string }> })
        .items;
      expect(kinds.map((k) => `${k.name} ${k.apiVersion} ${k.kind}`)).toEqual([
        'job batch/v1 Job',
        'raycluster ray.io/v1 RayCluster',
        'rayjob ray.io/v1 RayJob',
      ]);
    },
  },
  'GET /api/v1/workloads': {
    route: 'GET /api/v1/workloads',
    // Every kind is listed: Jobs are checked first, so they are what nobody lacks first.
    refusal: { says: 'list jobs.batch', missing: jobsPermission('list') },
    answer: (response) => {
      const items = (response.json() as { items: Array<{ kind: string; namespace: string; name: string }> })
        .items;
      expect(items.map((w) => `${w.kind}/${w.namespace}/${w.name}`)).toEqual(
        expect.arrayContaining([`job/${teamNamespace}/${teamJob}`, `job/${otherNamespace}/${otherJob}`]),
      );
    },
  },
  'GET /api/v1/workloads?namespace=team-a': {
    route: 'GET /api/v1/workloads',
    refusal: {
      says: 'list jobs.batch in namespace team-a',
      missing: jobsPermission('list', { namespace: teamNamespace }),
    },
    answer: (response) => {
      const items = (response.json() as { items: Array<{ namespace: string; name: string }> }).items;
      expect(items.map((w) => w.name)).toContain(teamJob);
      expect(items.every((w) => w.namespace === teamNamespace)).toBe(true);
    },
  },
  'GET /api/v1/workloads?kind=raycluster': {
    route: 'GET /api/v1/workloads',
    // Only RayClusters: their own resource is checked, not Jobs.
    refusal: { says: 'list rayclusters.ray.io', missing: rayPermission('list', 'rayclusters') },
    answer: (response) => {
      const items = (response.json() as { items: Array<{ kind: string }> }).items;
      expect(items.every((w) => w.kind === 'raycluster')).toBe(true);
    },
  },
  'GET /api/v1/workloads/job/team-a/{team-job}': {
    route: 'GET /api/v1/workloads/{kind}/{namespace}/{name}',
    refusal: {
      says: 'get jobs.batch "{team-job}" in namespace team-a',
      missing: jobsPermission('get', { namespace: teamNamespace, name: '{team-job}' }),
    },
    answer: (response) => {
      const workload = response.json() as Record<string, unknown>;
      expect(workload).toMatchObject({
        kind: 'job',
        apiVersion: 'batch/v1',
        objectKind: 'Job',
        name: teamJob,
        namespace: teamNamespace,
        phase: 'running',
      });
      expect(Array.isArray(workload.events)).toBe(true);
    },
  },
  'GET /api/v1/workloads/job/{other}/{other-job}': {
    route: 'GET /api/v1/workloads/{kind}/{namespace}/{name}',
    refusal: {
      says: 'get jobs.batch "{other-job}" in namespace {other}',
      missing: jobsPermission('get', { namespace: '{other}', name: '{other-job}' }),
    },
    answer: (response) => {
      expect(response.json()).toMatchObject({ kind: 'job', name: otherJob, namespace: otherNamespace });
    },
  },
  'GET /api/v1/workloads/raycluster/team-a/no-such-cluster': {
    route: 'GET /api/v1/workloads/{kind}/{namespace}/{name}',
    // A RayCluster's route asks for rayclusters in ray.io, never for batch/jobs.
    refusal: {
      says: 'get rayclusters.ray.io "no-such-cluster" in namespace team-a',
      missing: rayPermission('get', 'rayclusters', { namespace: teamNamespace, name: 'no-such-cluster' }),
    },
    answer: (response) => {
      expect(response.json()).toMatchObject({ status: 404, code: 'not-found' });
      expect((response.json() as { detail: string }).detail).toContain('no dispatched RayCluster');
    },
  },
  'GET /api/v1/workloads/job/team-a/{team-job}/logs?tailLines=1': {
    route: 'GET /api/v1/workloads/{kind}/{namespace}/{name}/logs',
    refusal: {
      says: 'get jobs.batch "{team-job}" in namespace team-a',
      missing: jobsPermission('get', { namespace: teamNamespace, name: '{team-job}' }),
    },
    answer: (response) => {
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.body).toBe(simulatedLastLine);
    },
  },
  'GET /api/v1/workloads/job/{other}/{other-job}/logs?tailLines=1': {
    route: 'GET /api/v1/workloads/{kind}/{namespace}/{name}/logs',
    // The Job is checked first, then pods/log in its namespace: the Job is what is missing.
    refusal: {
      says: 'get jobs.batch "{other-job}" in namespace {other}',
      missing: jobsPermission('get', { namespace: '{other}', name: '{other-job}' }),
    },
    answer: (response) => {
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.body).toBe(simulatedLastLine);
    },
  },
  'GET /api/v1/pending?kind=rayjob': {
    route: 'GET /api/v1/pending',
    refusal: { says: 'list rayjobs.ray.io', missing: rayPermission('list', 'rayjobs') },
    answer: (response) => {
      const page = response.json() as { items: Array<{ kind: string }>; total: number };
      expect(page.total).toBe(page.items.length);
      expect(page.items.every((i) => i.kind === 'rayjob')).toBe(true);
    },
  },
  'POST /api/v1/placement-preview (a workload by kind and name)': {
    route: 'POST /api/v1/placement-preview',
    body: () => ({ kind: 'job', namespace: teamNamespace, name: teamJob }),
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const preview = response.json() as { decision: string; clusters: Array<{ name: string }> };
      expect(['placed', 'unschedulable']).toContain(preview.decision);
      expect(preview.clusters.map((c) => c.name)).toEqual(expect.arrayContaining(workerNames));
    },
  },
  'POST /api/v1/placement-preview (a RayCluster manifest)': {
    route: 'POST /api/v1/placement-preview',
    body: () => ({
      manifest: {
        apiVersion: 'ray.io/v1',
        kind: 'RayCluster',
        metadata: { namespace: teamNamespace },
        spec: {
          headGroupSpec: {
            rayStartParams: {},
            template: {
              spec: { containers: [{ name: 'ray-head', resources: { requests: { cpu: '100m' } } }] },
            },
          },
        },
      },
    }),
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const preview = response.json() as { decision: string; cluster: string };
      expect(preview.decision).toBe('placed');
      expect(workerNames).toContain(preview.cluster);
    },
  },
  'GET /api/v1/watch?kinds=workloads&kind=raycluster': {
    route: 'GET /api/v1/watch',
    stream: true,
    refusal: { says: 'watch rayclusters.ray.io', missing: rayPermission('watch', 'rayclusters') },
  },
  'GET /api/v1/pending': {
    route: 'GET /api/v1/pending',
    refusal: { says: 'list jobs.batch', missing: jobsPermission('list') },
    answer: (response) => {
      const page = response.json() as { items: Array<{ name: string }>; total: number };
      expect(page.total).toBe(page.items.length);
      // Both Jobs run: neither waits.
      expect(page.items.map((i) => i.name)).not.toContain(teamJob);
    },
  },
  'GET /api/v1/pending?namespace=team-a': {
    route: 'GET /api/v1/pending',
    refusal: {
      says: 'list jobs.batch in namespace team-a',
      missing: jobsPermission('list', { namespace: teamNamespace }),
    },
    answer: (response) => {
      const page = response.json() as { items: Array<{ namespace: string; name: string }>; total: number };
      expect(page.total).toBe(page.items.length);
      expect(page.items.every((i) => i.namespace === teamNamespace)).toBe(true);
      expect(page.items.map((i) => i.name)).not.toContain(teamJob);
    },
  },
  'POST /api/v1/placement-preview (a manifest)': {
    route: 'POST /api/v1/placement-preview',
    body: () => ({
      manifest: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { namespace: teamNamespace },
        spec: {
          template: { spec: { containers: [{ name: 'main', resources: { requests: { cpu: '10m' } } }] } },
        },
      },
    }),
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const preview = response.json() as { decision: string; cluster: string };
      expect(preview.decision).toBe('placed');
      expect(workerNames).toContain(preview.cluster);
    },
  },
  'GET /api/v1/queues': {
    route: 'GET /api/v1/queues',
    refusal: { says: 'list dispatchqueues.jobrelay.dev', missing: queuesPermission('list') },
    answer: (response) => {
      // Every DispatchQueue the cache holds (other files' queues come and go): a list, each valid or saying why not.
      const { items } = response.json() as {
        items: Array<{ name: string; valid: boolean; problems: string[] }>;
      };
      for (const queue of items) expect(queue.valid || queue.problems.length > 0).toBe(true);
    },
  },
  'GET /api/v1/queues/no-such-queue': {
    route: 'GET /api/v1/queues/{name}',
    refusal: {
      says: 'get dispatchqueues.jobrelay.dev "no-such-queue"',
      missing: queuesPermission('get', { name: 'no-such-queue' }),
    },
    answer: (response) => {
      expect(response.json()).toMatchObject({
        status: 404,
        code: 'not-found',
        detail: 'no DispatchQueue no-such-queue',
      });
    },
  },
  'GET /api/v1/queue': {
    route: 'GET /api/v1/queue',
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const queue = response.json() as { placementsPerCluster: Array<{ cluster: string }> };
      expect(queue.placementsPerCluster.map((p) => p.cluster)).toEqual(
        expect.arrayContaining([...workerNames, target]),
      );
    },
  },
  'GET /api/v1/stats/history': {
    route: 'GET /api/v1/stats/history',
    refusal: { says: 'list workerclusters.jobrelay.dev', missing: clustersPermission('list') },
    answer: (response) => {
      const history = response.json() as {
        minutes: string[];
        placementsPerCluster: Array<{ cluster: string }>;
      };
      expect(history.minutes).toHaveLength(60);
      expect(history.placementsPerCluster.map((p) => p.cluster)).toEqual(expect.arrayContaining(workerNames));
    },
  },
  'GET /api/v1/me': {
    route: 'GET /api/v1/me',
    // Who the caller is and what they may do: the fleet-admin may cordon, nobody may not.
    answer: (response, caller) => {
      const me = response.json() as {
        username: string;
        actions: Array<{ action: string; allowed: boolean }>;
      };
      expect(me.username).not.toBe('');
      const cordon = me.actions.find((a) => a.action === 'cordonClusters');
      expect(cordon?.allowed).toBe(caller === 'fleet-admin');
      const listWorkloads = me.actions.find((a) => a.action === 'listWorkloads');
      expect(listWorkloads?.allowed).toBe(caller === 'fleet-admin' || caller === 'viewer');
      // Per kind, what the caller may list and watch: a dashboard narrows its lists to these.
      const reader = caller === 'fleet-admin' || caller === 'viewer';
      expect((response.json() as { kinds: unknown[] }).kinds).toEqual([
        { kind: 'job', list: reader, watch: reader },
        { kind: 'raycluster', list: reader, watch: reader },
        { kind: 'rayjob', list: reader, watch: reader },
      ]);
    },
  },
  'GET /api/v1/me?namespace=team-a': {
    route: 'GET /api/v1/me',
    // In team-a, its RoleBinding lets team-a read as a viewer does; the fleet stays cluster-wide.
    answer: (response, caller) => {
      const me = response.json() as {
        namespace: string | null;
        actions: Array<{ action: string; allowed: boolean }>;
      };
      expect(me.namespace).toBe(teamNamespace);
      const allowed = (action: string) => me.actions.find((a) => a.action === action)?.allowed;
      for (const action of ['listWorkloads', 'watchWorkloads', 'readLogs'])
        expect(allowed(action), action).toBe(caller !== 'nobody');
      expect(allowed('listClusters')).toBe(caller === 'fleet-admin' || caller === 'viewer');
    },
  },
  'GET /api/v1/watch': {
    route: 'GET /api/v1/watch',
    stream: true,
    // Every kind (Jobs first) before clusters: the cluster-wide watch on Jobs is what is missing.
    refusal: { says: 'watch jobs.batch', missing: jobsPermission('watch') },
  },
  'GET /api/v1/watch?namespace=team-a&kinds=workloads': {
    route: 'GET /api/v1/watch',
    stream: true,
    // Every kind is checked, Jobs first: the watch on Jobs in team-a is what is missing.
    refusal: {
      says: 'watch jobs.batch in namespace team-a',
      missing: jobsPermission('watch', { namespace: teamNamespace }),
    },
  },
  'GET /metrics': {
    route: 'GET /metrics',
    refusal: { says: 'get /metrics', missing: { verb: 'get', nonResourceURL: '/metrics' } },
    answer: (response) => {
      expect(response.body).toContain('jobrelay_api_requests_total');
    },
  },
  'GET /healthz': {
    route: 'GET /healthz',
    answer: (response) => expect(response.body).toBe('ok\n'),
  },
  'GET /readyz': {
    route: 'GET /readyz',
    answer: (response) =>
      expect(response.json()).toEqual({ ready: true, redis: true, apiserver: true, caches: true }),
  },
  'GET /openapi.json': {
    route: 'GET /openapi.json',
    answer: (response) => expect((response.json() as { openapi: string }).openapi).toBe('3.1.0'),
  },
  'GET /dashboard/': {
    route: 'GET /dashboard/',
    answer: (response) => {
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['content-security-policy']).toMatch(/^default-src 'self'/);
      expect(response.body).toContain('app.js');
    },
  },
  'GET /docs/': {
    route: 'GET /docs/',
    answer: (response) => {
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toContain('swagger');
    },
  },
};

const rows = parsePolicy(policy);

function tokenOf(caller: ApiCaller): string | undefined {
  if (caller === 'anonymous') return undefined;
  if (caller === 'bad-token') return 'not-a-token-the-apiserver-knows';
  return sandbox.token(caller as Identity);
}

/** The stream routes over a real socket: fetch resolves with the headers, then we hang up. */
async function callStream(caller: Caller, url: string): Promise<ApiResponse> {
  const token = tokenOf(caller);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 20_000);
  try {
    const response = await fetch(`${baseUrl}${url}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: abort.signal,
    });
    const headers = Object.fromEntries(response.headers.entries());
    let body: string;
    if (response.status === 200) {
      // The first event proves a live stream; the rest would never end.
      const reader = response.body!.getReader();
      const first = await reader.read();
      body = new TextDecoder().decode(first.value);
      abort.abort();
      await reader.cancel().catch(() => {});
    } else body = await response.text();
    return { status: response.status, headers, body, json: () => JSON.parse(body) as unknown };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** WorkerClusters and the kubeconfig Secrets, as resourceVersions: any write changes one. */
const snapshot = () => fleetWriteVersions(fleet.management);

/** matrix-target exists with a plain spec, and the API's informer sees it. */
async function ensureTarget(): Promise<void> {
  const exists = await custom
    .getClusterCustomObject({ ...workerClusters, name: target })
    .then(() => true)
    .catch(() => false);
  if (!exists) {
    await custom.createClusterCustomObject({
      ...workerClusters,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'WorkerCluster',
        metadata: { name: target, labels: { 'jobrelay.dev/e2e': 'true' } },
        spec: { kubeconfigSecretRef: { name: targetSecret, key: 'kubeconfig' } },
      },
    });
  }
  await eventually(
    'the API sees matrix-target',
    async () => (api.fleet.workerCluster(target) ? true : undefined),
    {
      timeoutMs: 30_000,
      intervalMs: 100,
    },
  );
}

async function createRunning(namespace: string, name: string): Promise<void> {
  await fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 1800 } }),
  });
}

beforeAll(async () => {
  api = await startApiHarness(sandbox);
  // The stream routes over a real socket; everything else through app.inject().
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const address = api.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the API listens on no TCP port');
  baseUrl = `http://127.0.0.1:${address.port}`;

  otherNamespace = await createTestNamespace(fleet.management, 'matrix');
  // The controller places the two Jobs and creates their mirrors, then stops: from then on
  // nothing but the calls under test writes WorkerClusters (the controller would write their
  // status every few seconds), so a changed resourceVersion can only be the API's doing.
  const controller = startController(sandbox);
  try {
    await createRunning(teamNamespace, teamJob);
    await createRunning(otherNamespace, otherJob);
    for (const [namespace, name] of [
      [teamNamespace, teamJob],
      [otherNamespace, otherJob],
    ] as const) {
      await eventually(`${namespace}/${name} placed and running, its logs readable`, async () => {
        const job = await fleet.management.batch.readNamespacedJob({ namespace, name });
        if (!placedCluster(job) || !job.status?.active) return undefined;
        const logs = await api.call(
          'admin',
          'GET',
          `/api/v1/workloads/job/${namespace}/${name}/logs?tailLines=1`,
        );
        return logs.status === 200 ? true : undefined;
      });
    }
  } finally {
    await controller.kill();
  }
  await ensureTarget();
});

afterAll(async () => {
  await api?.close();
  await custom.deleteClusterCustomObject({ ...workerClusters, name: target }).catch(() => {});
  // No controller to remove the mirrors: the test removes both sides itself.
  for (const [namespace, name] of [
    [teamNamespace, teamJob],
    [otherNamespace, otherJob],
  ] as const) {
    if (!namespace) continue;
    for (const clients of [fleet.management, ...fleet.workers.values()])
      await clients.batch
        .deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' })
        .catch(() => {});
  }
  if (otherNamespace) await fleet.management.core.deleteNamespace({ name: otherNamespace }).catch(() => {});
});

describe('the matrix', () => {
  it('has one request for every row, and covers every route of the API', async () => {
    expect(rows.map((r) => r.label).sort()).toEqual(Object.keys(requests).sort());
    const document = (await api.call('anonymous', 'GET', '/openapi.json')).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const covered = new Set(Object.values(requests).map((r) => r.route));
    for (const route of routes) expect(covered, `${route} is in the matrix`).toContain(route);
    // And each row's method is the route's.
    for (const row of rows) expect(requests[row.label]!.route.startsWith(`${row.method} `)).toBe(true);
  });
});

describe.each(rows)('$label', (row) => {
  const spec = requests[row.label]!;
  it.each(callers)(`as %s`, async (caller) => {
    const expected = row.expected[caller];
    const url = fill(row.url);
    // Several answers list matrix-target, and the fleet-admin DELETE cell removes it.
    await ensureTarget();
    const before = spec.mutating ? await snapshot() : undefined;
    const response = spec.stream
      ? await callStream(caller, url)
      : await api.call(caller, row.method, url, spec.body?.());
    expect(response.status, response.body.slice(0, 500)).toBe(expected);

    // No answer ever carries the caller's token back, not even a refusal.
    const token = tokenOf(caller);
    if (token) {
      expect(response.body).not.toContain(token);
      expect(JSON.stringify(response.headers)).not.toContain(token);
    }

    if (expected === 401 || expected === 403) {
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = response.json() as Problem;
      if (expected === 401) {
        expect(problem).toMatchObject({ status: 401, code: 'unauthenticated' });
        expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="jobrelay"/);
        expect(problem.missingPermission).toBeUndefined();
      } else {
        expect(spec.refusal, 'a 403 cell names its refusal').toBeDefined();
        expect(problem).toMatchObject({ status: 403, code: 'forbidden' });
        expect(problem.missingPermission).toEqual(fillAll(spec.refusal!.missing));
        expect(problem.detail).toBe(`${caller} is not allowed to ${fill(spec.refusal!.says)}`);
      }
    } else if (spec.stream) {
      expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(response.body).toMatch(/^: jobrelay watch\n/);
    } else {
      await spec.answer!(response, caller);
    }

    if (before) {
      const changed = expected === 200;
      // A refused (or, like the 422 dry run, rejected) mutation leaves every WorkerCluster and
      // kubeconfig Secret exactly as it was.
      if (!changed) expect(await snapshot()).toEqual(before);
    }
  });
});

// Streams are authorized for as long as they stay open: each is re-checked at the access-review
// cache interval with exactly the permissions it was opened with, and ends with its last words
// when the caller loses one.
describe('access removed mid-stream', () => {
  const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  /** The matrix's API re-authorizes streams every 5 s (its access-review cache time); the slack is
   * the apiserver's RBAC informers and a busy machine. */
  const streamRevocationDeadlineMs = 5_000 + 4_000;
  const watcher = uniqueName('stream-watcher');
  const follower = uniqueName('log-follower');
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const undo of cleanup.reverse()) await undo().catch(() => {});
  });

  async function accountToken(name: string): Promise<string> {
    await fleet.management.core.createNamespacedServiceAccount({
      namespace: teamNamespace,
      body: { metadata: { name } },
    });
    cleanup.push(() =>
      fleet.management.core.deleteNamespacedServiceAccount({ name, namespace: teamNamespace }),
    );
    const request = await fleet.management.core.createNamespacedServiceAccountToken({
      name,
      namespace: teamNamespace,
      body: { spec: { expirationSeconds: 3600 } },
    });
    return request.status!.token!;
  }
  const subjects = (account: string) => [{ kind: 'ServiceAccount', name: account, namespace: teamNamespace }];
  const viewerRole = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'jobrelay-viewer' };
  async function bindInTeamNamespace(account: string): Promise<string> {
    const name = uniqueName(`${account}-in-team-a`).slice(0, 63);
    await rbac.createNamespacedRoleBinding({
      namespace: teamNamespace,
      body: { metadata: { name }, roleRef: viewerRole, subjects: subjects(account) },
    });
    cleanup.push(() => rbac.deleteNamespacedRoleBinding({ name, namespace: teamNamespace }));
    return name;
  }
  async function bindEverywhere(account: string): Promise<string> {
    const name = uniqueName(`${account}-everywhere`).slice(0, 63);
    await rbac.createClusterRoleBinding({
      body: { metadata: { name }, roleRef: viewerRole, subjects: subjects(account) },
    });
    cleanup.push(() => rbac.deleteClusterRoleBinding({ name }));
    return name;
  }

  /** A plain-text log stream over a real socket, read as it comes. */
  async function follow(token: string, path: string) {
    const abort = new AbortController();
    cleanup.push(async () => abort.abort());
    const response = await fetch(`${baseUrl}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    const state = { status: response.status, text: '', endedAt: undefined as number | undefined };
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for await (const chunk of response.body!) state.text += decoder.decode(chunk, { stream: true });
      } catch {
        // aborted at the end
      }
      state.endedAt = Date.now();
    })();
    return state;
  }

  it('an open watch and an open log follow end with their last words within the cache interval; a watch of one namespace re-checks only that namespace', async () => {
    const [watcherToken, followerToken] = await Promise.all([accountToken(watcher), accountToken(follower)]);
    const watcherEverywhere = await bindEverywhere(watcher);
    const watcherInTeam = await bindInTeamNamespace(watcher);
    const followerInTeam = await bindInTeamNamespace(follower);
    for (const token of [watcherToken, followerToken])
      await eventually('the new bindings in effect', async () =>
        (await api.call({ token }, 'GET', `/api/v1/workloads?namespace=${teamNamespace}`)).status === 200
          ? true
          : undefined,
      );

    const watchAbort = new AbortController();
    cleanup.push(async () => watchAbort.abort());
    const watchResponse = await fetch(`${baseUrl}/api/v1/watch?namespace=${teamNamespace}&kinds=workloads`, {
      headers: { authorization: `Bearer ${watcherToken}` },
      signal: watchAbort.signal,
    });
    expect(watchResponse.status).toBe(200);
    const watch = collectServerSentEvents<Record<string, unknown>>(watchResponse);
    const logs = await follow(
      followerToken,
      `/api/v1/workloads/job/${teamNamespace}/${teamJob}/logs?follow=true`,
    );
    expect(logs.status).toBe(200);
    await eventually('the followed log', async () =>
      logs.text.includes(simulatedLastLine) ? true : undefined,
    );

    // The watcher loses the right to watch Jobs everywhere, not in team-a: its stream of team-a
    // was opened with team-a's right and lives on.
    await rbac.deleteClusterRoleBinding({ name: watcherEverywhere });
    await eventually('the cluster-wide right gone', async () =>
      (await api.call({ token: watcherToken }, 'GET', '/api/v1/workloads?kind=job')).status === 403
        ? true
        : undefined,
    );
    // Two re-checks later it is still open.
    await new Promise((resolve) => setTimeout(resolve, 2 * 5_000 + 1_000));
    expect(watch.events.filter((e) => e.event === 'closed')).toEqual([]);
    expect(watch.endedAt()).toBeUndefined();

    // Both lose team-a: both streams end, saying why.
    const revokedAt = Date.now();
    await Promise.all([
      rbac.deleteNamespacedRoleBinding({ name: watcherInTeam, namespace: teamNamespace }),
      rbac.deleteNamespacedRoleBinding({ name: followerInTeam, namespace: teamNamespace }),
    ]);
    await eventually('the watch ended', async () => watch.endedAt(), {
      timeoutMs: streamRevocationDeadlineMs + 10_000,
      intervalMs: 100,
    });
    const closed = watch.events.at(-1)!;
    expect(closed.event).toBe('closed');
    expect(closed.receivedAt - revokedAt).toBeLessThan(streamRevocationDeadlineMs);
    expect(closed.data).toEqual({
      type: 'https://jobrelay.dev/problems/forbidden',
      title: 'Forbidden',
      status: 403,
      code: 'forbidden',
      detail: `system:serviceaccount:${teamNamespace}:${watcher} is not allowed to watch jobs.batch in namespace ${teamNamespace} any more; this stream is closed`,
      instance: '/api/v1/watch',
      missingPermission: jobsPermission('watch', { namespace: teamNamespace }),
    });

    await eventually('the log stream ended', async () => logs.endedAt, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect(logs.endedAt! - revokedAt).toBeLessThan(streamRevocationDeadlineMs);
    // Its last line says why (the Job is the first of its two rights, as the route checks them).
    expect(
      logs.text.endsWith(
        `[jobrelay] stream closed (forbidden): system:serviceaccount:${teamNamespace}:${follower} is not allowed to get jobs.batch "${teamJob}" in namespace ${teamNamespace} any more; this stream is closed\n`,
      ),
    ).toBe(true);
    for (const token of [watcherToken, followerToken]) {
      expect(JSON.stringify(watch.events)).not.toContain(token);
      expect(logs.text).not.toContain(token);
    }
  });
});

// A cluster's drain status names only the workloads the caller may list (its kind, in its
// namespace), as the workload and Job lists do; the others are counted in `hidden`.
describe('the drain status of a cluster', () => {
  const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const role = uniqueName('matrix-drain-reader');
  beforeAll(async () => {
    // team-a may now get WorkerClusters (so read a drain status); its Jobs rights stay in team-a.
    await rbac.createClusterRole({
      body: {
        metadata: { name: role, labels: { 'jobrelay.dev/e2e': 'true' } },
        rules: [{ apiGroups: ['jobrelay.dev'], resources: ['workerclusters'], verbs: ['get'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: role, labels: { 'jobrelay.dev/e2e': 'true' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'team-a' }],
      },
    });
  });
  afterAll(async () => {
    await rbac.deleteClusterRoleBinding({ name: role }).catch(() => {});
    await rbac.deleteClusterRole({ name: role }).catch(() => {});
  });

  interface DrainView {
    cluster: string;
    remaining: number;
    hidden: number;
    workloads: Array<{ namespace: string; name: string; kind: string }>;
  }

  it("hides other namespaces' workloads from team-a, counting them; fleet-admin sees every one", async () => {
    const clusterOf = async (namespace: string, name: string) =>
      placedCluster(await fleet.management.batch.readNamespacedJob({ namespace, name }))!;
    const otherCluster = await clusterOf(otherNamespace, otherJob);
    const teamCluster = await clusterOf(teamNamespace, teamJob);
    const drain = async (caller: ApiCaller, cluster: string) => {
      const response = await api.call(caller, 'GET', `/api/v1/clusters/${cluster}/drain`);
      expect(response.status, response.body).toBe(200);
      return response.json() as DrainView;
    };
    await eventually('team-a may read drain statuses', async () =>
      (await api.call('team-a', 'GET', `/api/v1/clusters/${otherCluster}/drain`)).status === 200
        ? true
        : undefined,
    );

    const asAdmin = await drain('fleet-admin', otherCluster);
    const asTeam = await drain('team-a', otherCluster);
    expect(asAdmin.workloads).toContainEqual({ namespace: otherNamespace, name: otherJob, kind: 'job' });
    expect(asAdmin.hidden).toBe(0);
    expect(asAdmin.workloads).toHaveLength(asAdmin.remaining);
    // Same count (a drain is over only when nothing is left), fewer names.
    expect(asTeam.remaining).toBe(asAdmin.remaining);
    expect(asTeam.workloads.map((j) => j.name)).not.toContain(otherJob);
    expect(asTeam.workloads.every((j) => j.namespace === teamNamespace)).toBe(true);
    expect(asTeam.hidden).toBe(asTeam.remaining - asTeam.workloads.length);
    expect(asTeam.hidden).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(asTeam)).not.toContain(otherNamespace);

    // Its own workloads it does see, named.
    expect((await drain('team-a', teamCluster)).workloads).toContainEqual({
      namespace: teamNamespace,
      name: teamJob,
      kind: 'job',
    });
  });
});
