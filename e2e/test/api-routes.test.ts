// The admin API's routes, built by its factory and driven with app.inject(), against the real
// management apiserver (TokenReview, SubjectAccessReview, informers), the real controller
// placing real Jobs on real workers, and Redis.
import { readFileSync } from 'node:fs';
import { simulatedLogLines, teamNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi, RbacAuthorizationV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../src/api-harness.ts';
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
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const workerNames = sandbox.workers.map((w) => w.name);
let api: ApiHarness;
let controller: ControllerProcess;
let namespace: string;

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: Array<{ path: string; message: string }>;
  reason?: string;
  missingPermission?: Record<string, string>;
}

function expectProblem(
  response: { status: number; headers: Record<string, unknown>; json: () => unknown },
  status: number,
  code: string,
): Problem {
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json() as Problem;
  expect(problem).toMatchObject({ status, code, type: `https://jobrelay.dev/problems/${code}` });
  expect(response.status).toBe(status);
  expect(problem.detail.length).toBeGreaterThan(0);
  return problem;
}

async function createDispatched(
  name: string,
  options: Parameters<typeof sandboxJob>[0] = { name },
): Promise<V1Job> {
  return fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ ...options, name, managedBy: dispatcherManagedBy }),
  });
}

beforeAll(async () => {
  controller = startController(sandbox);
  api = await startApiHarness(sandbox);
  namespace = await createTestNamespace(fleet.management, 'api');
  // Every worker Active in the controller's eyes before anything is asked of the API.
  await eventually('every worker Active', async () => {
    const clusters = (await api.call('fleet-admin', 'GET', '/api/v1/clusters')).json() as {
      items: Array<{ name: string; active: boolean; capacity: unknown }>;
    };
    return workerNames.every(
      (n) =>
        clusters.items.find((c) => c.name === n)?.active &&
        clusters.items.find((c) => c.name === n)?.capacity,
    )
      ? true
      : undefined;
  });
});

afterAll(async () => {
  await api?.close();
  await controller?.kill();
});

describe('operations', () => {
  it('/healthz and /readyz answer without a token; /readyz checks Redis and the management apiserver', async () => {
    expect((await api.call('anonymous', 'GET', '/healthz')).status).toBe(200);
    const ready = await api.call('anonymous', 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ ready: true, redis: true, apiserver: true, caches: true });
  });

  it('serves the OpenAPI 3.1 document of every route, and Swagger UI from bundled files', async () => {
    const document = (await api.call('anonymous', 'GET', '/openapi.json')).json() as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.openapi).toBe('3.1.0');
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const route of [
      'GET /api/v1/clusters',
      'POST /api/v1/clusters',
      'GET /api/v1/clusters/{name}',
      'PATCH /api/v1/clusters/{name}',
      'DELETE /api/v1/clusters/{name}',
      'POST /api/v1/clusters/{name}/cordon',
      'POST /api/v1/clusters/{name}/uncordon',
      'POST /api/v1/clusters/{name}/drain',
      'GET /api/v1/clusters/{name}/drain',
      'GET /api/v1/kinds',
      'GET /api/v1/workloads',
      'GET /api/v1/workloads/{kind}/{namespace}/{name}',
      'GET /api/v1/workloads/{kind}/{namespace}/{name}/logs',
      'GET /api/v1/pending',
      'GET /api/v1/queues',
      'GET /api/v1/queues/{name}',
      'POST /api/v1/placement-preview',
      'GET /api/v1/queue',
      'GET /api/v1/stats/history',
      'GET /api/v1/me',
      'GET /api/v1/watch',
      'GET /metrics',
    ])
      expect(routes).toContain(route);
    // One API: the Job-only routes are gone, a Job is a workload of kind job.
    expect(routes.filter((route) => /\/jobs\b/.test(route))).toEqual([]);
    const page = await api.call('anonymous', 'GET', '/docs/');
    expect(page.status).toBe(200);
    // No CDN: every script is served by the API itself.
    const scripts = [...page.body.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src).not.toMatch(/^https?:/);
      expect((await api.call('anonymous', 'GET', new URL(src, 'http://x/docs/').pathname)).status).toBe(200);
    }
  });

  it('counts requests by route and code in /metrics', async () => {
    await api.call('viewer', 'GET', '/api/v1/clusters');
    const metrics = await api.call('viewer', 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(
      /jobrelay_api_requests_total\{method="GET",route="\/api\/v1\/clusters",code="200"\} \d+/,
    );
    expect(metrics.body).toContain('jobrelay_api_request_duration_seconds_bucket');
  });

  it('answers unknown routes, bad JSON, wrong media types and oversized bodies with problem+json, never 5xx', async () => {
    expectProblem(await api.call('fleet-admin', 'GET', '/api/v1/nothing-here'), 404, 'not-found');
    expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', '{"name": ', {
        'content-type': 'application/json',
      }),
      400,
      'bad-request',
    );
    expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', 'name=x', { 'content-type': 'text/plain' }),
      415,
      'unsupported-media-type',
    );
    const huge = JSON.stringify({ name: 'big', kubeconfig: 'x'.repeat(2 * 1024 * 1024) });
    expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', huge, { 'content-type': 'application/json' }),
      413,
      'payload-too-large',
    );
  });
});

describe('clusters', () => {
  it('lists every worker with health, version, capacity and load, page by page', async () => {
    const all = (await api.call('viewer', 'GET', '/api/v1/clusters')).json() as {
      items: Array<Record<string, unknown>>;
    };
    expect(all.items.map((c) => c.name)).toEqual([...workerNames].sort());
    for (const cluster of all.items) {
      expect(cluster).toMatchObject({
        active: true,
        reason: 'Connected',
        cordoned: false,
        weight: expect.any(Number),
      });
      expect(cluster.kubernetesVersion).toMatch(/^v1\.35\./);
      expect((cluster.capacity as { nodes: number }).nodes).toBeGreaterThan(0);
    }
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = (
        await api.call('viewer', 'GET', `/api/v1/clusters?limit=1${token ? `&continue=${token}` : ''}`)
      ).json() as { items: Array<{ name: string }>; continue?: string };
      expect(page.items).toHaveLength(1);
      seen.push(page.items[0]!.name);
      token = page.continue;
    } while (token);
    expect(seen).toEqual([...workerNames].sort());
  });

  it('filters by label selector and refuses a bad selector or a forged continue token with the field named', async () => {
    const selected = (
      await api.call(
        'viewer',
        'GET',
        `/api/v1/clusters?labelSelector=${encodeURIComponent('jobrelay.dev/sandbox=true')}`,
      )
    ).json() as { items: unknown[] };
    expect(selected.items).toHaveLength(workerNames.length);
    const none = (await api.call('viewer', 'GET', '/api/v1/clusters?labelSelector=region%3Dmars')).json() as {
      items: unknown[];
    };
    expect(none.items).toHaveLength(0);
    const bad = expectProblem(
      await api.call('viewer', 'GET', '/api/v1/clusters?labelSelector=%3D%3D%3D'),
      400,
      'validation-failed',
    );
    expect(bad.errors?.[0]?.path).toBe('querystring.labelSelector');
    const forged = expectProblem(
      await api.call('viewer', 'GET', '/api/v1/clusters?continue=bm90LWEtdG9rZW4'),
      400,
      'validation-failed',
    );
    expect(forged.errors?.[0]?.path).toBe('querystring.continue');
    const limit = expectProblem(
      await api.call('viewer', 'GET', '/api/v1/clusters?limit=0'),
      400,
      'validation-failed',
    );
    expect(limit.errors?.[0]?.path).toBe('querystring.limit');
  });

  it('gets one, and 404s a cluster that does not exist', async () => {
    const one = await api.call('viewer', 'GET', `/api/v1/clusters/${workerNames[0]}`);
    expect(one.status).toBe(200);
    expect(one.json()).toMatchObject({ name: workerNames[0], active: true });
    expectProblem(await api.call('viewer', 'GET', '/api/v1/clusters/no-such-cluster'), 404, 'not-found');
  });

  it('updates labels, weight and limits, cordons and uncordons, as the WorkerCluster shows', async () => {
    const name = workerNames[0]!;
    const read = () => workerClusterAdmin(fleet).get(name);
    try {
      const patched = await api.call('fleet-admin', 'PATCH', `/api/v1/clusters/${name}`, {
        labels: { 'api-test': 'yes' },
        weight: 7,
        maxActiveWorkloads: 50,
      });
      expect(patched.status).toBe(200);
      expect(patched.json()).toMatchObject({
        weight: 7,
        maxActiveWorkloads: 50,
        labels: { 'api-test': 'yes' },
      });
      expect(await read()).toMatchObject({
        metadata: { labels: { 'api-test': 'yes' } },
        spec: { weight: 7, maxActiveWorkloads: 50 },
      });
      const cleared = await api.call('fleet-admin', 'PATCH', `/api/v1/clusters/${name}`, {
        labels: { 'api-test': null },
        weight: 1,
        maxActiveWorkloads: null,
      });
      expect(cleared.status).toBe(200);
      const after = await read();
      expect(after.metadata.labels?.['api-test']).toBeUndefined();
      expect(after.spec.maxActiveWorkloads).toBeUndefined();

      const empty = expectProblem(
        await api.call('fleet-admin', 'PATCH', `/api/v1/clusters/${name}`, {}),
        400,
        'validation-failed',
      );
      expect(empty.detail).toContain('at least one of');
      const unknownField = expectProblem(
        await api.call('fleet-admin', 'PATCH', `/api/v1/clusters/${name}`, { wieght: 2 }),
        400,
        'validation-failed',
      );
      expect(unknownField.detail).toContain('wieght');

      expect((await api.call('fleet-admin', 'POST', `/api/v1/clusters/${name}/cordon`)).json()).toMatchObject(
        { cordoned: true },
      );
      expect((await read()).spec.unschedulable).toBe(true);
      expect(
        (await api.call('fleet-admin', 'POST', `/api/v1/clusters/${name}/uncordon`)).json(),
      ).toMatchObject({ cordoned: false });
      expect((await read()).spec.unschedulable).toBeUndefined();
    } finally {
      await workerClusterAdmin(fleet).reset(name, ['api-test']);
    }
  });

  it('refuses registrations it must refuse, saying exactly why, and saves nothing', async () => {
    const secretsBefore = (
      await fleet.management.core.listNamespacedSecret({ namespace: 'jobrelay-system' })
    ).items
      .map((s) => s.metadata!.name)
      .sort();
    const worker = workerNames[workerNames.length - 1]!;
    const registered = Buffer.from(
      (
        await fleet.management.core.readNamespacedSecret({
          name: `${worker}-kubeconfig`,
          namespace: 'jobrelay-system',
        })
      ).data!.kubeconfig!,
      'base64',
    ).toString('utf8');

    const twin = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters?dryRun=true', {
        name: 'second-name',
        kubeconfig: registered,
      }),
      409,
      'conflict',
    );
    expect(twin.reason).toBe('DuplicateCluster');
    expect(twin.detail).toContain(`WorkerCluster ${worker}`);

    const taken = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', { name: worker, kubeconfig: registered }),
      409,
      'already-exists',
    );
    expect(taken.detail).toContain(worker);

    const nobody = readFileSync(sandbox.kubeconfigPath(worker, 'nobody'), 'utf8');
    const forbidden = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', { name: 'nobodys', kubeconfig: nobody }),
      422,
      'kubeconfig-refused',
    );
    expect(forbidden.reason).toBe('Forbidden');

    const garbage = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', {
        name: 'garbage',
        kubeconfig: ':::not yaml',
      }),
      422,
      'kubeconfig-refused',
    );
    expect(garbage.reason).toBe('KubeconfigMalformed');

    const exec = registered.replace(
      /token: .*/,
      'exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}',
    );
    const unsafe = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', { name: 'exec', kubeconfig: exec }),
      422,
      'kubeconfig-refused',
    );
    expect(unsafe.reason).toBe('KubeconfigUnsafe');

    const badName = expectProblem(
      await api.call('fleet-admin', 'POST', '/api/v1/clusters', {
        name: 'Not_A_Name',
        kubeconfig: registered,
      }),
      400,
      'validation-failed',
    );
    expect(badName.errors?.map((e) => e.path)).toContain('body.name');

    // Nothing in any answer echoes a credential.
    const token = /token: (\S+)/.exec(registered)?.[1];
    expect(token).toBeDefined();
    for (const problem of [twin, taken, forbidden, garbage, unsafe, badName])
      expect(JSON.stringify(problem)).not.toContain(token);
    const secretsAfter = (
      await fleet.management.core.listNamespacedSecret({ namespace: 'jobrelay-system' })
    ).items
      .map((s) => s.metadata!.name)
      .sort();
    expect(secretsAfter).toEqual(secretsBefore);
    const clusters = (await api.call('viewer', 'GET', '/api/v1/clusters')).json() as {
      items: Array<{ name: string }>;
    };
    expect(clusters.items.map((c) => c.name)).toEqual([...workerNames].sort());
  });

  it('refuses to deregister a cluster with Jobs unless forced, and reports a drain', async () => {
    const name = uniqueName('held');
    await createDispatched(name, {
      name,
      pod: { runSeconds: 120 },
      annotations: { 'jobrelay.dev/cluster': workerNames[0]! },
    });
    await eventually(
      'the Job placed',
      async () =>
        placedCluster(await fleet.management.batch.readNamespacedJob({ name, namespace })) ?? undefined,
    );
    const refused = expectProblem(
      await api.call('fleet-admin', 'DELETE', `/api/v1/clusters/${workerNames[0]}`),
      409,
      'cluster-has-workloads',
    );
    expect(refused.detail).toContain(`${namespace}/${name}`);
    const drain = (await api.call('viewer', 'GET', `/api/v1/clusters/${workerNames[0]}/drain`)).json() as {
      remaining: number;
      draining: boolean;
      workloads: Array<{ name: string }>;
    };
    expect(drain.draining).toBe(false);
    expect(drain.workloads.map((w) => w.name)).toContain(name);
    expect((await api.call('viewer', 'GET', `/api/v1/clusters/${workerNames[0]}`)).status).toBe(200);
    await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
  });
});

describe('Jobs as workloads of kind job', () => {
  it('lists dispatched Jobs with filters and pages, and shows one with placement, history, status and Events', async () => {
    const names = ['alpha', 'bravo', 'charlie'].map((n) => uniqueName(n));
    for (const name of names) await createDispatched(name, { name, pod: { runSeconds: 1 } });
    // A Job without our managedBy never shows.
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name: uniqueName('local') }),
    });
    await eventually('all three finished', async () => {
      const list = (
        await api.call('viewer', 'GET', `/api/v1/workloads?kind=job&namespace=${namespace}&phase=finished`)
      ).json() as { items: Array<{ name: string }> };
      return names.every((n) => list.items.some((j) => j.name === n)) ? true : undefined;
    });
    const all = (
      await api.call('viewer', 'GET', `/api/v1/workloads?kind=job&namespace=${namespace}`)
    ).json() as {
      items: Array<Record<string, unknown>>;
    };
    expect(all.items.filter((j) => names.includes(j.name as string))).toHaveLength(3);
    expect(all.items.every((j) => j.namespace === namespace)).toBe(true);
    expect(all.items.some((j) => (j.name as string).startsWith('local-'))).toBe(false);
    for (const job of all.items.filter((j) => names.includes(j.name as string))) {
      expect(job).toMatchObject({ kind: 'job', objectKind: 'Job', phase: 'finished', attempt: 1, pods: 1 });
      expect(workerNames).toContain(job.cluster);
    }
    const onCluster = all.items.find((j) => names.includes(j.name as string))!.cluster as string;
    const filtered = (
      await api.call(
        'viewer',
        'GET',
        `/api/v1/workloads?kind=job&namespace=${namespace}&cluster=${onCluster}`,
      )
    ).json() as { items: Array<{ cluster: string }> };
    expect(filtered.items.length).toBeGreaterThan(0);
    expect(filtered.items.every((j) => j.cluster === onCluster)).toBe(true);
    expect(
      (
        (
          await api.call('viewer', 'GET', `/api/v1/workloads?kind=job&namespace=${namespace}&phase=suspended`)
        ).json() as {
          items: unknown[];
        }
      ).items,
    ).toHaveLength(0);
    const paged: string[] = [];
    let token: string | undefined;
    do {
      const page = (
        await api.call(
          'viewer',
          'GET',
          `/api/v1/workloads?kind=job&namespace=${namespace}&limit=2${token ? `&continue=${token}` : ''}`,
        )
      ).json() as { items: Array<{ name: string }>; continue?: string };
      paged.push(...page.items.map((j) => j.name));
      token = page.continue;
    } while (token);
    expect(paged).toEqual(all.items.map((j) => j.name));
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads?kind=job&namespace=${namespace}&phase=lost`),
      400,
      'validation-failed',
    );

    const detail = (
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${names[0]}`)
    ).json() as {
      placement: { cluster: string; attempt: number; placedAt: string; decision: string };
      history: Array<{
        type: string;
        reason: string;
        message: string;
        at: string | null;
        source: string | null;
      }>;
      events: Array<{ reason: string }>;
      status: { succeeded: number; conditions: Array<{ type: string; reason: string }> };
    };
    expect(detail.placement).toMatchObject({ attempt: 1 });
    expect(detail.placement.decision).toMatch(
      new RegExp(
        `^placed on ${detail.placement.cluster} by spread \\(score \\d+.*\\d+/\\d+ clusters feasible\\.`,
      ),
    );
    // The controller records no Placed or MirrorCreated Event by default (a write each per
    // Job saved): the history tells the placement from the record instead, and says so.
    expect(detail.events.map((e) => e.reason)).not.toContain('Placed');
    expect(detail.history.map((e) => e.reason)).not.toContain('MirrorCreated');
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
    // The origin's status, as its kind writes it: what a Job's summary no longer repeats.
    expect(detail.status.succeeded).toBe(1);
    expect(detail.status.conditions.map((c) => c.reason)).toContain('CompletionsReached');
    // Whether a finished Job's mirror is still on its worker depends on when it is read; what the
    // detail says either way is the FleetView middle tier's (apps/api/test/fleet-view.test.ts).
    // The mirror of a running Job is checked below, where it is sure to exist.
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/never-was`),
      404,
      'not-found',
    );
  });

  it('shows a running Job’s mirror on its worker, and streams its pod logs from there: whole, tail, and follow', async () => {
    const name = uniqueName('logs');
    await createDispatched(name, { name, pod: { runSeconds: 90 } });
    const expected = simulatedLogLines();
    const whole = await eventually('logs of the running pod', async () => {
      const response = await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${name}/logs`);
      return response.status === 200 ? response : undefined;
    });
    expect(whole.headers['content-type']).toMatch(/^text\/plain/);
    // Its pods run, so its mirror exists on its worker: the detail shows that very mirror, once the
    // API's watch of the worker has it (running, not placed).
    const shown = await eventually('the running Job’s mirror in its detail', async () => {
      const detail = (
        await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${name}`)
      ).json() as {
        phase: string;
        cluster: string;
        mirror: { cluster: string; uid: string; status: { active?: number } } | null;
        podSelectors: Array<{ labelSelector: string }>;
      };
      return detail.phase === 'running' ? detail : undefined;
    });
    const onWorker = await fleet.workers.get(shown.cluster)!.batch.readNamespacedJob({ name, namespace });
    expect(shown.mirror).toMatchObject({ cluster: shown.cluster, uid: onWorker.metadata!.uid });
    expect(shown.podSelectors[0]?.labelSelector).toBe(
      `batch.kubernetes.io/controller-uid=${onWorker.metadata!.uid}`,
    );
    expect(whole.body).toBe(`${expected.join('\n')}\n`);
    const tail = await api.call(
      'viewer',
      'GET',
      `/api/v1/workloads/job/${namespace}/${name}/logs?tailLines=1`,
    );
    expect(tail.body).toBe(`${expected[expected.length - 1]}\n`);
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${name}/logs?container=sidecar`),
      404,
      'not-found',
    );
    // Followed, the stream stays open while the pod runs and ends when it has terminated.
    const short = uniqueName('follow');
    await createDispatched(short, { name: short, pod: { runSeconds: 8 } });
    await eventually('the short Job running', async () =>
      (await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${short}/logs?tailLines=1`))
        .status === 200
        ? true
        : undefined,
    );
    const followed = await api.call(
      'viewer',
      'GET',
      `/api/v1/workloads/job/${namespace}/${short}/logs?follow=true`,
    );
    expect(followed.status).toBe(200);
    expect(followed.body).toBe(`${expected.join('\n')}\n`);
    const shortCluster = placedCluster(
      await fleet.management.batch.readNamespacedJob({ name: short, namespace }),
    )!;
    const pods = await fleet.workers
      .get(shortCluster)!
      .core.listNamespacedPod({ namespace, labelSelector: `job-name=${short}` });
    expect(pods.items.length).toBeGreaterThan(0);
    expect(pods.items.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')).toBe(
      true,
    );
    expectProblem(
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${name}/logs?tailLines=-1`),
      400,
      'validation-failed',
    );
    await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
  });
});

describe('the pending queue and placement preview', () => {
  it('lists waiting Jobs in order with positions, waiting time and the reason; the preview explains each cluster', async () => {
    const names = [uniqueName('wait-a'), uniqueName('wait-b')];
    for (const name of names) {
      await createDispatched(name, { name, annotations: { 'jobrelay.dev/cluster': 'nowhere' } });
      await new Promise((r) => setTimeout(r, 1100)); // distinct creation seconds: a defined order
    }
    const pending = await eventually('both waiting with a reason', async () => {
      const page = (await api.call('viewer', 'GET', `/api/v1/pending?namespace=${namespace}`)).json() as {
        items: Array<{
          name: string;
          position: number;
          reason: string;
          waitingSeconds: number;
          queueState: string;
        }>;
        total: number;
      };
      const ours = page.items.filter((i) => names.includes(i.name));
      return ours.length === 2 && ours.every((i) => i.reason.startsWith('0/')) ? page : undefined;
    });
    const ours = pending.items.filter((i) => names.includes(i.name));
    expect(ours.map((i) => i.name)).toEqual(names);
    expect(ours[0]!.position).toBeLessThan(ours[1]!.position);
    expect(ours[0]!.reason).toBe(
      `0/${workerNames.length} clusters available: ${workerNames.length} not the pinned cluster nowhere.`,
    );
    expect(ours[0]!.waitingSeconds).toBeGreaterThanOrEqual(1);
    expect(['waiting', 'delayed', 'active']).toContain(ours[0]!.queueState);

    const preview = (
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        kind: 'job',
        namespace,
        name: names[0],
      })
    ).json() as {
      decision: string;
      clusters: Array<{ name: string; eligible: boolean; reason: string | null }>;
    };
    expect(preview.decision).toBe('unschedulable');
    expect(preview.clusters.map((c) => c.name).sort()).toEqual([...workerNames].sort());
    expect(preview.clusters.every((c) => !c.eligible && c.reason === 'not the pinned cluster nowhere')).toBe(
      true,
    );

    const detail = (
      await api.call('viewer', 'GET', `/api/v1/workloads/job/${namespace}/${names[0]}`)
    ).json() as { phase: string; waiting: { reason: string } };
    expect(detail.phase).toBe('pending');
    expect(detail.waiting.reason).toBe(ours[0]!.reason);

    const queue = (await api.call('viewer', 'GET', '/api/v1/queue')).json() as {
      pending: number;
      delayed: number;
      waiting: number;
      prioritized: number;
      active: number;
      placementsPerCluster: Array<{ cluster: string; perMinute: number[] }>;
    };
    expect(queue.pending).toBeGreaterThanOrEqual(2);
    expect(queue.delayed + queue.waiting + queue.prioritized + queue.active).toBeGreaterThanOrEqual(1);
    expect(queue.placementsPerCluster.map((p) => p.cluster)).toEqual(expect.arrayContaining(workerNames));
    expect(queue.placementsPerCluster.every((p) => p.perMinute.length === 10)).toBe(true);
    expect(
      queue.placementsPerCluster.reduce((sum, p) => sum + p.perMinute.reduce((a, b) => a + b, 0), 0),
    ).toBeGreaterThan(0);
    for (const name of names)
      await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
  });

  it('previews a manifest without creating anything: the chosen cluster and every score, or why nothing fits', async () => {
    const job = (cpu: string) => ({
      manifest: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { namespace },
        spec: {
          parallelism: 1,
          template: { spec: { containers: [{ name: 'main', resources: { requests: { cpu } } }] } },
        },
      },
    });
    const fits = (await api.call('viewer', 'POST', '/api/v1/placement-preview', job('100m'))).json() as {
      decision: string;
      cluster: string;
      clusters: Array<{ name: string; eligible: boolean; score: number | null }>;
    };
    expect(fits.decision).toBe('placed');
    expect(fits.clusters[0]).toMatchObject({ name: fits.cluster, eligible: true });
    expect(fits.clusters.filter((c) => c.eligible).every((c) => typeof c.score === 'number')).toBe(true);
    const tooBig = (await api.call('viewer', 'POST', '/api/v1/placement-preview', job('100000'))).json() as {
      decision: string;
      message: string;
      clusters: Array<{ reason: string }>;
    };
    expect(tooBig.decision).toBe('unschedulable');
    expect(tooBig.message).toMatch(/^0\/\d+ clusters available: \d+ insufficient cpu/);
    expect(tooBig.clusters.every((c) => c.reason.startsWith('insufficient cpu'))).toBe(true);
    const jobs = await fleet.management.batch.listNamespacedJob({ namespace });
    expect(jobs.items.some((j) => !j.metadata?.name)).toBe(false);
    expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        manifest: { apiVersion: 'batch/v1', kind: 'Job', spec: {} },
      }),
      400,
      'validation-failed',
    );
    // By name, the kind is said: a name alone is refused, naming what is missing.
    expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', { namespace, name: 'no-such-job' }),
      400,
      'validation-failed',
    );
    expectProblem(
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        kind: 'job',
        namespace,
        name: 'no-such-job',
      }),
      404,
      'not-found',
    );
  });
});

describe('namespace-only users', () => {
  it('see their namespace, and are told exactly what they lack elsewhere', async () => {
    const own = await api.call('team-a', 'GET', `/api/v1/workloads?namespace=${teamNamespace}`);
    expect(own.status).toBe(200);
    const everywhere = expectProblem(await api.call('team-a', 'GET', '/api/v1/workloads'), 403, 'forbidden');
    expect(everywhere.missingPermission).toEqual({ verb: 'list', group: 'batch', resource: 'jobs' });
    expect(everywhere.detail).toBe('team-a is not allowed to list jobs.batch');
    const other = expectProblem(
      await api.call('team-a', 'GET', `/api/v1/workloads?namespace=${namespace}`),
      403,
      'forbidden',
    );
    expect(other.missingPermission).toEqual({ verb: 'list', group: 'batch', resource: 'jobs', namespace });
  });
});

describe('DispatchQueues', () => {
  const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };
  const custom = () => fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  const rbac = () => fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);

  interface QueuedView {
    kind: string;
    namespace: string;
    name: string;
    uid: string;
    position: number | null;
    reason: string | null;
    cluster: string | null;
  }
  interface QueueDetailView {
    name: string;
    cohort: string | null;
    resources: Array<Record<string, unknown>>;
    status: { pendingWorkloads: number; admittedWorkloads: number; columns: { cpu: string } } | null;
    pending: QueuedView[];
    admitted: QueuedView[];
    hidden: { pending: number; admitted: number };
  }

  it('lists queues with spec and status, shows one with its workloads in order and why, and only those the caller may list', async () => {
    const queueNamespace = await createTestNamespace(fleet.management, 'api-queue');
    const queue = uniqueName('e2e-api-q');
    const reader = uniqueName('e2e-queue-reader');
    await custom().createClusterCustomObject({
      ...queueApi,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'DispatchQueue',
        metadata: { name: queue },
        spec: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': queueNamespace } },
          cohort: 'e2e-api',
          resources: [{ name: 'cpu', nominalQuota: '1', borrowingLimit: '0' }],
        },
      },
    });
    try {
      // Two hold the queue's 1 cpu, two wait behind them.
      const names = [0, 1, 2, 3].map((i) => uniqueName(`queued-${i}`));
      for (const name of names)
        await fleet.management.batch.createNamespacedJob({
          namespace: queueNamespace,
          body: sandboxJob({
            name,
            managedBy: dispatcherManagedBy,
            requests: { cpu: '500m' },
            pod: { runSeconds: 60 },
          }),
        });
      const detail = await eventually(
        'the queue’s two admitted and two pending workloads, with the controller’s reasons',
        async () => {
          const answer = await api.call('fleet-admin', 'GET', `/api/v1/queues/${queue}`);
          if (answer.status !== 200) return undefined;
          const view = answer.json() as QueueDetailView;
          return view.status?.admittedWorkloads === 2 &&
            view.admitted.length === 2 &&
            view.pending.length === 2 &&
            view.pending.every((p) => p.reason?.startsWith(`queue ${queue}:`))
            ? view
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(detail).toMatchObject({ name: queue, cohort: 'e2e-api', hidden: { pending: 0, admitted: 0 } });
      expect(detail.admitted.every((a) => a.cluster !== null && workerNames.includes(a.cluster))).toBe(true);
      expect(detail.pending.map((p) => p.position)).toEqual([1, 2]);
      // The controller's order (equal priorities: age, then UID); the note on the Job carries no
      // position (it would be rewritten on every admission), the API places them.
      const created = new Map(
        await Promise.all(
          detail.pending.map(
            async (p) =>
              [
                p.name,
                (await fleet.management.batch.readNamespacedJob({ namespace: queueNamespace, name: p.name }))
                  .metadata!.creationTimestamp!,
              ] as const,
          ),
        ),
      );
      const orderKey = (p: { name: string; uid: string }) =>
        `${new Date(created.get(p.name)!).toISOString()} ${p.uid}`;
      expect(detail.pending.map(orderKey)).toEqual(detail.pending.map(orderKey).sort());
      for (const p of detail.pending) {
        expect(p.reason).toContain(`queue ${queue}: cpu 1/1 in use`);
        expect(p.reason).not.toContain('position');
      }
      expect(new Set([...detail.admitted, ...detail.pending].map((w) => w.name))).toEqual(new Set(names));

      const list = await api.call('viewer', 'GET', '/api/v1/queues');
      expect(list.status).toBe(200);
      const listed = (list.json() as { items: QueueDetailView[] }).items.find((q) => q.name === queue);
      expect(listed).toMatchObject({
        cohort: 'e2e-api',
        resources: [{ name: 'cpu', nominal: '1', borrowingLimit: '0', used: '1', usedAmount: 1000 }],
        status: { admittedWorkloads: 2, columns: { cpu: '1/1' } },
      });
      expect(listed).not.toHaveProperty('pending');

      // The pending list and a workload's detail name its queue and place.
      const pending = (
        await api.call('fleet-admin', 'GET', `/api/v1/pending?namespace=${queueNamespace}`)
      ).json() as { items: Array<{ name: string; queue: unknown }> };
      const first = detail.pending[0]!;
      expect(pending.items.find((p) => p.name === first.name)?.queue).toEqual({
        name: queue,
        position: 1,
        of: 2,
      });
      const held = detail.admitted[0]!;
      const heldDetail = (
        await api.call('viewer', 'GET', `/api/v1/workloads/job/${queueNamespace}/${held.name}`)
      ).json() as { queue: unknown };
      expect(heldDetail.queue).toEqual({ name: queue, position: null, of: null });

      // A caller who may read queues but no Jobs sees the counts, not the workloads.
      await rbac().createClusterRole({
        body: {
          metadata: { name: reader },
          rules: [{ apiGroups: ['jobrelay.dev'], resources: ['dispatchqueues'], verbs: ['get', 'list'] }],
        },
      });
      await fleet.management.core.createNamespacedServiceAccount({
        namespace: queueNamespace,
        body: { metadata: { name: 'queue-reader' } },
      });
      await rbac().createClusterRoleBinding({
        body: {
          metadata: { name: reader },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader },
          subjects: [{ kind: 'ServiceAccount', name: 'queue-reader', namespace: queueNamespace }],
        },
      });
      const token = (
        await fleet.management.core.createNamespacedServiceAccountToken({
          name: 'queue-reader',
          namespace: queueNamespace,
          body: { spec: { expirationSeconds: 3600 } },
        })
      ).status!.token!;
      const hidden = await eventually('the reader’s binding in effect', async () => {
        const answer = await api.call({ token }, 'GET', `/api/v1/queues/${queue}`);
        return answer.status === 200 ? (answer.json() as QueueDetailView) : undefined;
      });
      expect(hidden.pending).toEqual([]);
      expect(hidden.admitted).toEqual([]);
      expect(hidden.hidden.pending + hidden.hidden.admitted).toBe(4);
      expectProblem(
        await api.call({ token }, 'GET', `/api/v1/pending?namespace=${queueNamespace}`),
        403,
        'forbidden',
      );

      // Without the right on queues: refused, naming it; an unknown queue is a 404.
      const refused = expectProblem(await api.call('team-a', 'GET', '/api/v1/queues'), 403, 'forbidden');
      expect(refused.missingPermission).toEqual({
        verb: 'list',
        group: 'jobrelay.dev',
        resource: 'dispatchqueues',
      });
      expectProblem(
        await api.call('fleet-admin', 'GET', `/api/v1/queues/${uniqueName('no-such')}`),
        404,
        'not-found',
      );
      const me = (await api.call('viewer', 'GET', '/api/v1/me')).json() as {
        actions: Array<{ action: string; allowed: boolean }>;
      };
      expect(me.actions.find((a) => a.action === 'listQueues')?.allowed).toBe(true);
    } finally {
      // Its Jobs first (with their namespace): once the queue is gone the waiting ones would be
      // placed, and other test files expect the workers without this file's workloads.
      await fleet.management.core.deleteNamespace({ name: queueNamespace }).catch(() => {});
      await custom()
        .deleteClusterCustomObject({ ...queueApi, name: queue })
        .catch(() => {});
      await rbac()
        .deleteClusterRoleBinding({ name: reader })
        .catch(() => {});
      await rbac()
        .deleteClusterRole({ name: reader })
        .catch(() => {});
    }
  }, 180_000);
});
