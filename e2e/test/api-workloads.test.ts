// The admin API across workload kinds, against the real sandbox: a RayCluster origin (spec.managedBy
// kueue.x-k8s.io/multikueue, run on a worker by KubeRay's real ray-operator) beside a batch/v1 Job,
// both placed by the real controller, read through the real API (TokenReview, SubjectAccessReview,
// informers): the kinds shown, the list across kinds with its filters, one workload's detail, its
// pods' logs from the worker, the pending queue and placement previews across kinds, the live
// stream, and authorization on each kind's own resource (a caller who may read Jobs but not
// RayClusters is refused the RayCluster, with the missing permission named).
import { mergePatch } from '@jobrelay/kube';
import {
  kuberayManagedBy,
  sandboxRayCluster,
  sandboxRayClusterSpec,
  sandboxRayJob,
  simulatedLogLines,
} from '@jobrelay/sandbox';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import { runKubectlPlugin } from '../src/api-process.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import {
  createRay,
  customOf,
  deleteRay,
  findRayMirror,
  listRay,
  placementOf,
  readRay,
} from '../src/ray-fixtures.ts';
import { collectServerSentEvents } from '../src/server-sent-events.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const workerNames = sandbox.workers.map((w) => w.name);
let api: ApiHarness;
let controller: ControllerProcess;
let namespace: string;
let baseUrl: string;
/** A ServiceAccount token whose RBAC reads Jobs, pod logs and Events in `namespace`, not RayClusters. */
let jobsOnly: { token: string };
const rayCluster = uniqueName('rc');
const waitingRayCluster = uniqueName('rc-pinned');
const job = uniqueName('job');
const rayJob = uniqueName('rj');
const lastLogLine = simulatedLogLines().at(-1)!;

interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
  missingPermission?: Record<string, string>;
}

interface Summary {
  kind: string;
  apiVersion: string;
  objectKind: string;
  namespace: string;
  name: string;
  phase: string;
  cluster: string | null;
  pods: number;
  reason: string | null;
  labels: Record<string, string>;
}

function expectProblem(response: ApiResponse, status: number, code: string): Problem {
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json() as Problem;
  expect(problem).toMatchObject({ status, code, type: `https://jobrelay.dev/problems/${code}` });
  expect(response.status).toBe(status);
  return problem;
}

async function list(query: string, caller: Parameters<ApiHarness['call']>[0] = 'viewer'): Promise<Summary[]> {
  const response = await api.call(caller, 'GET', `/api/v1/workloads?${query}`);
  expect(response.status, response.body.slice(0, 500)).toBe(200);
  return (response.json() as { items: Summary[] }).items;
}

/** A ServiceAccount in `namespace` with a Role for Jobs (and their logs and Events) only, and a token for it. */
async function jobsOnlyCaller(): Promise<{ token: string }> {
  const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const name = 'jobs-only';
  await fleet.management.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name },
      rules: [
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const request = await fleet.management.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error('the TokenRequest returned no token');
  return { token };
}

beforeAll(async () => {
  if (!sandbox.kuberay)
    throw new Error(`the sandbox at ${sandbox.dir} predates KubeRay: run sandbox up again`);
  controller = startController(sandbox);
  api = await startApiHarness(sandbox);
  // The stream over a real socket; everything else through app.inject().
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const address = api.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the API listens on no TCP port');
  baseUrl = `http://127.0.0.1:${address.port}`;
  namespace = await createTestNamespace(fleet.management, 'api-wl');
  jobsOnly = await jobsOnlyCaller();
  const labelled = (object: ReturnType<typeof sandboxRayCluster>) => ({
    ...object,
    metadata: { ...object.metadata, labels: { app: 'api-workloads' } },
  });
  await createRay(
    fleet.management,
    namespace,
    labelled(
      sandboxRayCluster({ name: rayCluster, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    ),
  );
  const pinned = sandboxRayCluster({
    name: waitingRayCluster,
    workerReplicas: 1,
    managedBy: kuberayManagedBy.multiKueue,
  });
  await createRay(fleet.management, namespace, {
    ...pinned,
    metadata: { ...pinned.metadata, annotations: { 'jobrelay.dev/cluster': 'nowhere' } },
  });
  await fleet.management.batch.createNamespacedJob({
    namespace,
    body: {
      ...sandboxJob({ name: job, managedBy: dispatcherManagedBy, pod: { runSeconds: 900 } }),
      metadata: { name: job, labels: { app: 'api-workloads' } },
    },
  });
  // Both placed and running as the API sees them: the RayCluster ready, the Job's pod logging.
  await eventually(
    'the RayCluster running and ready, the Job running',
    async () => {
      const items = await list(`namespace=${namespace}`);
      const rc = items.find((w) => w.kind === 'raycluster' && w.name === rayCluster);
      const j = items.find((w) => w.kind === 'job' && w.name === job);
      if (rc?.phase !== 'running' || j?.phase !== 'running') return undefined;
      const origin = await readRay(fleet.management, 'rayclusters', namespace, rayCluster);
      return origin.status?.state === 'ready' ? true : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
});

afterAll(async () => {
  for (const name of [rayCluster, waitingRayCluster])
    await deleteRay(fleet.management, 'rayclusters', namespace, name).catch(() => {});
  await deleteRay(fleet.management, 'rayjobs', namespace, rayJob).catch(() => {});
  await fleet.management.batch
    .deleteNamespacedJob({ name: job, namespace, propagationPolicy: 'Background' })
    .catch(() => {});
  // Ray pods run until their RayCluster goes: leave no capacity taken from later test files.
  await eventually(
    'no Ray pods of this file left on the workers',
    async () => {
      for (const worker of fleet.workers.values()) {
        const pods = await worker.core.listNamespacedPod({ namespace, labelSelector: 'ray.io/cluster' });
        if (pods.items.length > 0) return undefined;
      }
      return true;
    },
    { timeoutMs: 120_000 },
  ).catch(() => {});
  await api?.close();
  await controller?.kill();
});

describe('the kinds', () => {
  it('are the controller’s, as the same flags pick them: Jobs, RayClusters and RayJobs', async () => {
    const kinds = (await api.call('nobody', 'GET', '/api/v1/kinds')).json() as {
      items: Array<Record<string, string>>;
    };
    expect(kinds.items).toEqual([
      {
        name: 'job',
        apiVersion: 'batch/v1',
        kind: 'Job',
        group: 'batch',
        plural: 'jobs',
        managedBy: 'jobrelay.dev/dispatcher',
        verification: 'real-controller',
      },
      {
        name: 'raycluster',
        apiVersion: 'ray.io/v1',
        kind: 'RayCluster',
        group: 'ray.io',
        plural: 'rayclusters',
        managedBy: 'kueue.x-k8s.io/multikueue',
        verification: 'real-controller',
      },
      {
        name: 'rayjob',
        apiVersion: 'ray.io/v1',
        kind: 'RayJob',
        group: 'ray.io',
        plural: 'rayjobs',
        managedBy: 'kueue.x-k8s.io/multikueue',
        verification: 'real-controller',
      },
    ]);
  });
});

describe('the list across kinds', () => {
  it('shows each workload with its kind and its object’s apiVersion and kind, filtered and paged', async () => {
    const all = await list(`namespace=${namespace}`);
    expect(all.map((w) => `${w.kind}/${w.name}`).sort()).toEqual(
      [`job/${job}`, `raycluster/${rayCluster}`, `raycluster/${waitingRayCluster}`].sort(),
    );
    const rc = all.find((w) => w.name === rayCluster)!;
    expect(rc).toMatchObject({
      kind: 'raycluster',
      apiVersion: 'ray.io/v1',
      objectKind: 'RayCluster',
      namespace,
      phase: 'running',
      // The head and one worker, as placement counts them.
      pods: 2,
      labels: { app: 'api-workloads' },
    });
    expect(workerNames).toContain(rc.cluster);
    expect(all.find((w) => w.name === job)).toMatchObject({
      kind: 'job',
      apiVersion: 'batch/v1',
      objectKind: 'Job',
      phase: 'running',
      pods: 1,
    });
    expect(all.find((w) => w.name === waitingRayCluster)).toMatchObject({
      phase: 'pending',
      cluster: null,
      reason: `0/${workerNames.length} clusters available: ${workerNames.length} not the pinned cluster nowhere.`,
    });

    // Filters: kind, phase, cluster, label selector, and several kinds at once.
    expect((await list(`namespace=${namespace}&kind=raycluster`)).map((w) => w.name).sort()).toEqual(
      [rayCluster, waitingRayCluster].sort(),
    );
    expect((await list(`namespace=${namespace}&kind=job`)).map((w) => w.name)).toEqual([job]);
    expect((await list(`namespace=${namespace}&kind=job,raycluster`)).length).toBe(3);
    expect((await list(`namespace=${namespace}&kind=rayjob`)).length).toBe(0);
    expect((await list(`namespace=${namespace}&phase=pending`)).map((w) => w.name)).toEqual([
      waitingRayCluster,
    ]);
    expect(
      (await list(`namespace=${namespace}&cluster=${rc.cluster}&kind=raycluster`)).map((w) => w.name),
    ).toEqual([rayCluster]);
    expect(
      (await list(`namespace=${namespace}&labelSelector=${encodeURIComponent('app=api-workloads')}`))
        .map((w) => `${w.kind}/${w.name}`)
        .sort(),
    ).toEqual([`job/${job}`, `raycluster/${rayCluster}`].sort());

    // Pages: one item each, the same items in the same order.
    const paged: string[] = [];
    let token: string | undefined;
    do {
      const page = (
        await api.call(
          'viewer',
          'GET',
          `/api/v1/workloads?namespace=${namespace}&limit=1${token ? `&continue=${token}` : ''}`,
        )
      ).json() as { items: Summary[]; continue?: string };
      expect(page.items.length).toBeLessThanOrEqual(1);
      paged.push(...page.items.map((w) => `${w.kind}/${w.name}`));
      token = page.continue;
    } while (token);
    expect(paged).toEqual(all.map((w) => `${w.kind}/${w.name}`));

    // An unknown kind or phase is a validation error naming the field.
    const unknownKind = expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads?namespace=${namespace}&kind=rayservice`),
      400,
      'validation-failed',
    );
    expect(unknownKind.errors?.[0]?.path).toBe('querystring.kind');
    expect(unknownKind.detail).toContain('unknown kind "rayservice"; this API shows job (batch/v1 Job)');
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads?namespace=${namespace}&phase=succeeded`),
      400,
      'validation-failed',
    );
    // The Job-only routes are gone: a Job is a workload of kind job.
    expectProblem(await api.call('viewer', 'GET', `/api/v1/jobs?namespace=${namespace}`), 404, 'not-found');
    expect((await list(`namespace=${namespace}&kind=job`, 'viewer')).map((w) => w.name)).toEqual([job]);
  });
});

describe('one workload', () => {
  it('shows a RayCluster’s placement, history, mirror status on its worker, Events and how its pods are found', async () => {
    const response = await api.call(
      'viewer',
      'GET',
      `/api/v1/workloads/raycluster/${namespace}/${rayCluster}`,
    );
    expect(response.status, response.body.slice(0, 500)).toBe(200);
    const detail = response.json() as Summary & {
      placement: { cluster: string; attempt: number; placedAt: string; decision: string };
      history: Array<{ reason: string; message: string; at: string | null; source: string | null }>;
      events: Array<{ reason: string }> | null;
      mirror: { cluster: string; uid: string; status: { state?: string } } | null;
      mirrorUnavailable: string | null;
      status: { state?: string; readyWorkerReplicas?: number };
      waiting: unknown;
      podSelectors: Array<{ labelSelector: string; description: string }>;
    };
    expect(detail).toMatchObject({
      kind: 'raycluster',
      objectKind: 'RayCluster',
      phase: 'running',
      waiting: null,
    });
    expect(detail.placement).toMatchObject({ cluster: detail.cluster, attempt: 1 });
    expect(detail.placement.decision).toMatch(new RegExp(`^placed on ${detail.cluster} by spread \\(score `));
    // No Placed Event by default: the placement is told from the record, marked as such.
    expect(detail.history.filter((e) => e.reason === 'Placed')).toEqual([
      {
        type: 'Normal',
        reason: 'Placed',
        message: detail.placement.decision,
        at: detail.placement.placedAt,
        count: 1,
        source: 'placement-record',
      },
    ]);
    expect(detail.history.map((e) => e.reason)).not.toContain('MirrorCreated');
    expect(detail.status.state).toBe('ready');
    const found = await findRayMirror(
      fleet,
      await readRay(fleet.management, 'rayclusters', namespace, rayCluster),
    );
    expect(detail.mirror).toMatchObject({
      cluster: found!.cluster,
      uid: found!.mirror.metadata!.uid,
      status: { state: 'ready' },
    });
    expect(detail.mirrorUnavailable).toBeNull();
    expect(detail.podSelectors).toEqual([
      { labelSelector: `ray.io/cluster=${rayCluster}`, description: `RayCluster ${rayCluster}` },
    ]);

    // The waiting one says why it waits, as the pending queue does.
    const waiting = (
      await api.call('viewer', 'GET', `/api/v1/workloads/raycluster/${namespace}/${waitingRayCluster}`)
    ).json() as { phase: string; waiting: { reason: string }; mirror: unknown; mirrorUnavailable: string };
    expect(waiting).toMatchObject({ phase: 'pending', mirror: null });
    expect(waiting.waiting.reason).toMatch(
      /^0\/\d+ clusters available: \d+ not the pinned cluster nowhere\.$/,
    );
    expect(waiting.mirrorUnavailable).toContain('not placed');

    // A Job through the same route: its placement as its record says, its pods found as its kind says.
    const viaWorkloads = (
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${job}`)
    ).json() as {
      cluster: string;
      podSelectors: Array<{ labelSelector: string }>;
    };
    const origin = await fleet.management.batch.readNamespacedJob({ name: job, namespace });
    expect(viaWorkloads.cluster).toBe(placedCluster(origin));
    expect(viaWorkloads.podSelectors[0]?.labelSelector).toMatch(/^batch\.kubernetes\.io\/controller-uid=/);

    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/raycluster/${namespace}/never-was`),
      404,
      'not-found',
    );
    // A kind this API does not dispatch is a 404 naming the kinds there are, as the apiserver's for a resource type.
    const unknown = expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/rayservice/${namespace}/${rayCluster}`),
      404,
      'not-found',
    );
    expect(unknown.detail).toContain('no dispatched kind "rayservice"');
    // The kind names a RayCluster, not a Job of that name.
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${rayCluster}`),
      404,
      'not-found',
    );
  });

  it('streams the RayCluster’s pods’ logs from its worker: head and worker, each line prefixed', async () => {
    const response = await eventually('the Ray pods’ logs', async () => {
      const r = await api.call(
        'viewer',
        'GET',
        `/api/v1/workloads/raycluster/${namespace}/${rayCluster}/logs?tailLines=1`,
      );
      return r.status === 200 && r.body.split('\n').filter(Boolean).length === 2 ? r : undefined;
    });
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const cluster = (await list(`namespace=${namespace}&kind=raycluster`)).find((w) => w.name === rayCluster)!
      .cluster!;
    const pods = await fleet.workers
      .get(cluster)!
      .core.listNamespacedPod({ namespace, labelSelector: `ray.io/cluster=${rayCluster}` });
    const expected = pods.items
      .map((pod) => `[${pod.metadata!.name}/${pod.spec!.containers[0]!.name}] ${lastLogLine}`)
      .sort();
    expect(response.body.split('\n').filter(Boolean).sort()).toEqual(expected);

    // One pod, one container: no prefix, as kubectl logs prints it.
    const head = pods.items.find((pod) => pod.metadata?.labels?.['ray.io/node-type'] === 'head')!;
    const onlyHead = await api.call(
      'viewer',
      'GET',
      `/api/v1/workloads/raycluster/${namespace}/${rayCluster}/logs?tailLines=1&pod=${head.metadata!.name}`,
    );
    expect(onlyHead.body).toBe(`${lastLogLine}\n`);
    expectProblem(
      await api.call(
        'viewer',
        'GET',
        `/api/v1/workloads/raycluster/${namespace}/${rayCluster}/logs?container=no-such-container`,
      ),
      404,
      'not-found',
    );
    // The Job's pods through the kind-generic route, as through the Job route.
    const viaWorkloads = await api.call(
      'viewer',
      'GET',
      `/api/v1/workloads/job/${namespace}/${job}/logs?tailLines=1`,
    );
    expect(viaWorkloads.status).toBe(200);
    expect(viaWorkloads.body).toBe(`${lastLogLine}\n`);
    // A workload not placed yet has no pods.
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/raycluster/${namespace}/${waitingRayCluster}/logs`),
      409,
      'conflict',
    );
  });
});

describe('a RayJob', () => {
  it('finds its pods as its kind says: its RayCluster’s and its submitter Job’s, and streams both', async () => {
    await createRay(
      fleet.management,
      namespace,
      sandboxRayJob({
        name: rayJob,
        runSeconds: 600,
        managedBy: kuberayManagedBy.multiKueue,
        cluster: { workerReplicas: 0 },
      }),
    );
    const detail = await eventually(
      'the RayJob running with its cluster named',
      async () => {
        const d = (
          await api.call('viewer', 'GET', `/api/v1/workloads/rayjob/${namespace}/${rayJob}`)
        ).json() as {
          phase: string;
          mirror: { status: { rayClusterName?: string; jobDeploymentStatus?: string } } | null;
          podSelectors: Array<{ labelSelector: string; description: string }>;
        };
        return d.phase === 'running' && d.podSelectors.length === 2 ? d : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 1000 },
    );
    const clusterName = detail.mirror!.status.rayClusterName!;
    expect(detail.podSelectors).toEqual([
      { labelSelector: `ray.io/cluster=${clusterName}`, description: `RayCluster ${clusterName}` },
      { labelSelector: `batch.kubernetes.io/job-name=${rayJob}`, description: `submitter Job ${rayJob}` },
    ]);
    // The head's log and the submitter's, each prefixed with its pod.
    const logs = await eventually(
      'the head’s and the submitter’s logs',
      async () => {
        const r = await api.call(
          'viewer',
          'GET',
          `/api/v1/workloads/rayjob/${namespace}/${rayJob}/logs?tailLines=1`,
        );
        if (r.status !== 200) return undefined;
        const pods = new Set(
          r.body
            .split('\n')
            .filter(Boolean)
            .map((line) => /^\[([^/]+)\//.exec(line)?.[1] ?? ''),
        );
        const head = [...pods].some((pod) => pod.startsWith(`${clusterName}-head`));
        const submitter = [...pods].some((pod) => pod.startsWith(`${rayJob}-`));
        return head && submitter ? r.body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(logs).toContain(lastLogLine);
    // Listed beside the others, with its kind.
    expect(
      (await list(`namespace=${namespace}&kind=rayjob`)).map((w) => [w.kind, w.name, w.objectKind]),
    ).toEqual([['rayjob', rayJob, 'RayJob']]);
  });
});

describe('the queue and previews across kinds', () => {
  it('lists the waiting RayCluster in the pending queue with its kind, and filters by kind', async () => {
    const pending = (await api.call('viewer', 'GET', `/api/v1/pending?namespace=${namespace}`)).json() as {
      items: Array<{ kind: string; apiVersion: string; objectKind: string; name: string; reason: string }>;
      total: number;
    };
    expect(pending.items).toEqual([
      expect.objectContaining({
        kind: 'raycluster',
        apiVersion: 'ray.io/v1',
        objectKind: 'RayCluster',
        name: waitingRayCluster,
        reason: `0/${workerNames.length} clusters available: ${workerNames.length} not the pinned cluster nowhere.`,
      }),
    ]);
    const jobsOnlyQueue = (
      await api.call('viewer', 'GET', `/api/v1/pending?namespace=${namespace}&kind=job`)
    ).json() as { items: unknown[]; total: number };
    expect(jobsOnlyQueue).toEqual({ items: [], total: 0 });
    const queue = (await api.call('viewer', 'GET', '/api/v1/queue')).json() as { pending: number };
    expect(queue.pending).toBeGreaterThanOrEqual(1);
  });

  it('previews a dispatched RayCluster by kind and name, and any kind’s manifest by its apiVersion and kind', async () => {
    const byName = (
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        kind: 'raycluster',
        namespace,
        name: waitingRayCluster,
      })
    ).json() as { decision: string; clusters: Array<{ name: string; reason: string | null }> };
    expect(byName.decision).toBe('unschedulable');
    expect(byName.clusters.map((c) => c.name).sort()).toEqual([...workerNames].sort());
    expect(byName.clusters.every((c) => c.reason === 'not the pinned cluster nowhere')).toBe(true);

    const manifest = (cpu: string) => ({
      manifest: {
        apiVersion: 'ray.io/v1',
        kind: 'RayCluster',
        metadata: { namespace },
        spec: sandboxRayClusterSpec({ workerReplicas: 2, requests: { cpu, memory: '128Mi' } }),
      },
    });
    const fits = (await api.call('viewer', 'POST', '/api/v1/placement-preview', manifest('100m'))).json() as {
      decision: string;
      cluster: string;
    };
    expect(fits.decision).toBe('placed');
    expect(workerNames).toContain(fits.cluster);
    const tooBig = (
      await api.call('viewer', 'POST', '/api/v1/placement-preview', manifest('100000'))
    ).json() as {
      decision: string;
      message: string;
    };
    expect(tooBig.decision).toBe('unschedulable');
    expect(tooBig.message).toMatch(/^0\/\d+ clusters available: \d+ insufficient cpu/);
    // Nothing was created by a preview.
    expect((await listRay(fleet.management, 'rayclusters', namespace)).length).toBe(2);

    const unsupported = expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        manifest: { apiVersion: 'ray.io/v1', kind: 'RayService', spec: {} },
      }),
      422,
      'unsupported-kind',
    );
    expect(unsupported.detail).toBe(
      'ray.io/v1 RayService is not a kind jobrelay dispatches here; the dispatched kinds are job (batch/v1 Job), raycluster (ray.io/v1 RayCluster), rayjob (ray.io/v1 RayJob)',
    );
    const unreadable = expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        manifest: { apiVersion: 'ray.io/v1', kind: 'RayCluster', spec: { workerGroupSpecs: 5 } },
      }),
      400,
      'validation-failed',
    );
    expect(unreadable.errors?.[0]?.path).toBe('body.manifest.spec');
    expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        kind: 'raycluster',
        namespace,
        name: 'never-was',
      }),
      404,
      'not-found',
    );
  });
});

describe('the fleet view across kinds', () => {
  it('counts the RayCluster on its cluster and in its drain view, by kind', async () => {
    const cluster = (await list(`namespace=${namespace}&kind=raycluster`)).find((w) => w.name === rayCluster)!
      .cluster!;
    const view = (await api.call('viewer', 'GET', `/api/v1/clusters/${cluster}`)).json() as {
      workloadsPlaced: number;
      placedByKind: Record<string, number>;
      servedKinds: string[] | null;
    };
    expect(view.placedByKind.raycluster).toBeGreaterThanOrEqual(1);
    expect(view.workloadsPlaced).toBe(Object.values(view.placedByKind).reduce((a, b) => a + b, 0));
    expect(view.servedKinds).toEqual(expect.arrayContaining(['job', 'raycluster', 'rayjob']));
    const drain = (await api.call('viewer', 'GET', `/api/v1/clusters/${cluster}/drain`)).json() as {
      workloads: Array<{ kind: string; namespace: string; name: string }>;
    };
    expect(drain.workloads).toContainEqual({ kind: 'raycluster', namespace, name: rayCluster });
  });
});

describe('the live stream', () => {
  it('emits workload changes of every kind, each with its kind', async () => {
    const abort = new AbortController();
    const response = await fetch(`${baseUrl}/api/v1/watch?namespace=${namespace}&kinds=workloads`, {
      headers: { authorization: `Bearer ${sandbox.token('viewer')}` },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const { events, done: reading } = collectServerSentEvents<{
      type: string;
      kind: string;
      object: Summary;
    }>(response);
    // A label on each origin is a change the management cluster's watch delivers.
    const patch = { metadata: { labels: { touched: 'yes' } } };
    await customOf(fleet.management).patchNamespacedCustomObject(
      { group: 'ray.io', version: 'v1', plural: 'rayclusters', namespace, name: rayCluster, body: patch },
      mergePatch,
    );
    await fleet.management.batch.patchNamespacedJob({ name: job, namespace, body: patch }, mergePatch);
    await eventually('workload events of both kinds', async () => {
      const seen = new Set(
        events
          .filter((e) => e.event === 'workload' && e.data.object.labels.touched === 'yes')
          .map((e) => `${e.data.kind}/${e.data.object.name}`),
      );
      return seen.has(`raycluster/${rayCluster}`) && seen.has(`job/${job}`) ? true : undefined;
    });
    const rcEvent = events.find((e) => e.data.kind === 'raycluster' && e.data.object.name === rayCluster)!;
    expect(rcEvent.data).toMatchObject({
      type: 'modified',
      kind: 'raycluster',
      object: { kind: 'raycluster', apiVersion: 'ray.io/v1', objectKind: 'RayCluster', phase: 'running' },
    });
    // One workload event per change, whatever the kind: no Job-shaped duplicates.
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['workload']));
    abort.abort();
    await reading;
  });
});

describe('authorization on each kind’s own resource', () => {
  it('refuses a caller who may read Jobs but not RayClusters the RayCluster, naming rayclusters in ray.io', async () => {
    // The Job: allowed.
    expect((await api.call(jobsOnly, 'GET', `/api/v1/workloads/job/${namespace}/${job}`)).status).toBe(200);
    expect((await list(`namespace=${namespace}&kind=job`, jobsOnly)).map((w) => w.name)).toEqual([job]);

    const username = `system:serviceaccount:${namespace}:jobs-only`;
    const detail = expectProblem(
      await api.call(jobsOnly, 'GET', `/api/v1/workloads/raycluster/${namespace}/${rayCluster}`),
      403,
      'forbidden',
    );
    expect(detail.missingPermission).toEqual({
      verb: 'get',
      group: 'ray.io',
      resource: 'rayclusters',
      namespace,
      name: rayCluster,
    });
    expect(detail.detail).toBe(
      `${username} is not allowed to get rayclusters.ray.io "${rayCluster}" in namespace ${namespace}`,
    );
    const logs = expectProblem(
      await api.call(jobsOnly, 'GET', `/api/v1/workloads/raycluster/${namespace}/${rayCluster}/logs`),
      403,
      'forbidden',
    );
    expect(logs.missingPermission).toMatchObject({ verb: 'get', group: 'ray.io', resource: 'rayclusters' });
    // Every kind listed: the Jobs pass, the RayClusters are what is missing.
    const everyKind = expectProblem(
      await api.call(jobsOnly, 'GET', `/api/v1/workloads?namespace=${namespace}`),
      403,
      'forbidden',
    );
    expect(everyKind.missingPermission).toEqual({
      verb: 'list',
      group: 'ray.io',
      resource: 'rayclusters',
      namespace,
    });
    const preview = expectProblem(
      await api.call(jobsOnly, 'POST', '/api/v1/placement-preview', {
        kind: 'raycluster',
        namespace,
        name: rayCluster,
      }),
      403,
      'forbidden',
    );
    // The fleet comes first (a namespace-only caller lacks it), never batch/jobs for a RayCluster.
    expect(preview.missingPermission).toEqual({
      verb: 'list',
      group: 'jobrelay.dev',
      resource: 'workerclusters',
    });
    // And with RayCluster rights nothing else changes: the viewer reads it.
    expect(
      (await api.call('viewer', 'GET', `/api/v1/workloads/raycluster/${namespace}/${rayCluster}`)).status,
    ).toBe(200);
    // The RayCluster's placement did not depend on any of this.
    const origin = await readRay(fleet.management, 'rayclusters', namespace, rayCluster);
    expect(placementOf(origin)?.cluster).toBeTruthy();
  });
});

describe('the kubectl plugin across kinds', () => {
  /** The plugin's own launcher, as kubectl runs it, with the viewer's kubeconfig. */
  function plugin(...args: string[]) {
    return runKubectlPlugin(baseUrl, sandbox.kubeconfigPath(sandbox.management.name, 'viewer'), args);
  }

  it('lists, explains and reads the logs of a RayCluster; Jobs as before', async () => {
    const table = await plugin('workloads', '-n', namespace);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^KIND\s+NAME\s+PHASE\s+CLUSTER\s+ATTEMPT\s+PODS\s+AGE\s+REASON$/);
    expect(lines.find((l) => l.includes(rayCluster))).toMatch(
      new RegExp(`^raycluster\\s+${rayCluster}\\s+running\\s+`),
    );
    expect(lines.find((l) => l.includes(job))).toMatch(new RegExp(`^job\\s+${job}\\s+running\\s+`));
    const onlyRay = await plugin('get', 'workloads', '-n', namespace, '--kind', 'raycluster', '-o', 'json');
    expect(
      (JSON.parse(onlyRay.stdout) as { items: Summary[] }).items.every((w) => w.kind === 'raycluster'),
    ).toBe(true);

    const explained = await plugin('explain', `raycluster/${namespace}/${rayCluster}`);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toContain(
      `Workload:    raycluster ${namespace}/${rayCluster} (ray.io/v1 RayCluster)\n`,
    );
    expect(explained.stdout).toContain('state ready');
    expect(explained.stdout).toMatch(/\nDecision: {4}placed on \S+ by spread \(score /);
    expect(explained.stdout).toContain('(from the placement record)');
    expect(explained.stdout).toContain(`ray.io/cluster=${rayCluster} (RayCluster ${rayCluster})`);
    const waiting = await plugin('explain', waitingRayCluster, '--kind', 'raycluster', '-n', namespace);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.stdout).toContain('Placement preview: unschedulable');

    const logs = await plugin('logs', `raycluster/${namespace}/${rayCluster}`, '--tail', '1');
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout.trim().split('\n')).toHaveLength(2);
    expect(logs.stdout).toContain(lastLogLine);
    // Named alone: found among the kinds, as only the Job has that name.
    const jobLogs = await plugin('logs', job, '-n', namespace, '--tail', '1');
    expect(jobLogs).toMatchObject({ code: 0, stdout: `${lastLogLine}\n` });

    const pending = await plugin('pending', '-n', namespace);
    expect(pending.stdout).toMatch(
      new RegExp(`^1\\s+raycluster\\s+${namespace}\\s+${waitingRayCluster}\\s`, 'm'),
    );
    // An unknown kind: the API's refusal, exit 1.
    const unknown = await plugin('explain', `rayservice/${namespace}/x`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no dispatched kind "rayservice"');
  });
});
