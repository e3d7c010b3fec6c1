// The admin API's access over time and volume: rights revoked on the management cluster stop
// working within the API's cache time, a partly-privileged caller is told the exact right it
// lacks, and each identity has its own request budget.
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { fleetWriteVersions } from '../src/fleet-writes.ts';
import { createTestNamespace, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
const workerClusters = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;
/** The harness caches TokenReview and SubjectAccessReview answers this long. */
const cacheSeconds = 5;
/** A revoked binding: the API's SubjectAccessReview cache (capped at 10 s), plus a margin for
 * the apiserver's RBAC informers. */
const revocationDeadlineMs = 10_000 + 3_000;
/** A deleted ServiceAccount: kube-apiserver itself caches a successful token authentication
 * for 10 s (TokenSuccessCacheTTL in its authentication options), and the API's TokenReview cache
 * can be refreshed from that stale answer near its end, so the bound is 10 s + the API's cache
 * time, plus a margin. Measured: about 10.2 s. */
const deletedAccountDeadlineMs = 10_000 + cacheSeconds * 1000 + 3_000;

interface Problem {
  status: number;
  code: string;
  detail: string;
  missingPermission?: Record<string, string>;
}

let namespace: string;
const bindings: string[] = [];

/** A ServiceAccount in the test namespace and a bound token for it (TokenRequest). */
async function serviceAccount(name: string): Promise<{ username: string; token: string }> {
  await fleet.management.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await fleet.management.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return { username: `system:serviceaccount:${namespace}:${name}`, token };
}

async function bindClusterRole(serviceAccountName: string, clusterRole: string): Promise<string> {
  const name = uniqueName(`limits-${clusterRole}`);
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name, labels: { 'jobrelay.dev/e2e': 'true' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccountName, namespace }],
    },
  });
  bindings.push(name);
  return name;
}

/** One request with a token the sandbox's fixed identities do not have. */
async function callWithToken(
  api: ApiHarness,
  token: string,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: object,
): Promise<ApiResponse> {
  const response = await api.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body ? { payload: body } : {}),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: response.body,
    json: () => JSON.parse(response.body) as unknown,
  };
}

/** Polls until `status` comes back; returns how long it took after `since`. */
async function until(
  probe: () => Promise<ApiResponse>,
  status: number,
  since: number,
  deadlineMs = revocationDeadlineMs,
): Promise<{ response: ApiResponse; elapsedMs: number }> {
  for (;;) {
    const response = await probe();
    const elapsedMs = Date.now() - since;
    if (response.status === status) return { response, elapsedMs };
    // Past the deadline the test fails with what was seen instead of waiting on.
    if (elapsedMs > deadlineMs + 5_000) return { response, elapsedMs };
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** WorkerClusters and the kubeconfig Secrets, as resourceVersions: any write changes one. */
const snapshot = () => fleetWriteVersions(fleet.management);

beforeAll(async () => {
  namespace = await createTestNamespace(fleet.management, 'limits');
});

afterAll(async () => {
  for (const name of bindings) await rbac.deleteClusterRoleBinding({ name }).catch(() => {});
  if (namespace) await fleet.management.core.deleteNamespace({ name: namespace }).catch(() => {});
});

describe('revocation within the cache time', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { authCacheSeconds: cacheSeconds });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('a deleted ClusterRoleBinding is refused (403) within the cache time', async () => {
    const reader = await serviceAccount('revoked-reader');
    const binding = await bindClusterRole('revoked-reader', 'jobrelay-viewer');
    const granted = await until(
      () => callWithToken(api, reader.token, 'GET', '/api/v1/clusters'),
      200,
      Date.now(),
    );
    expect(granted.response.status).toBe(200);
    // Once more, so the allowed answer is the cached one when the binding goes.
    expect((await callWithToken(api, reader.token, 'GET', '/api/v1/clusters')).status).toBe(200);

    await rbac.deleteClusterRoleBinding({ name: binding });
    const { response, elapsedMs } = await until(
      () => callWithToken(api, reader.token, 'GET', '/api/v1/clusters'),
      403,
      Date.now(),
    );
    expect(response.status).toBe(403);
    expect(elapsedMs).toBeLessThan(revocationDeadlineMs);
    const problem = response.json() as Problem;
    expect(problem.missingPermission).toEqual({
      verb: 'list',
      group: 'jobrelay.dev',
      resource: 'workerclusters',
    });
    expect(problem.detail).toBe(`${reader.username} is not allowed to list workerclusters.jobrelay.dev`);
    expect(response.body).not.toContain(reader.token);
  });

  it("a deleted ServiceAccount's token is refused (401) within the apiserver's and the API's cache times", async () => {
    const reader = await serviceAccount('deleted-reader');
    await bindClusterRole('deleted-reader', 'jobrelay-viewer');
    const granted = await until(
      () => callWithToken(api, reader.token, 'GET', '/api/v1/clusters'),
      200,
      Date.now(),
    );
    expect(granted.response.status).toBe(200);

    await fleet.management.core.deleteNamespacedServiceAccount({ name: 'deleted-reader', namespace });
    const { response, elapsedMs } = await until(
      () => callWithToken(api, reader.token, 'GET', '/api/v1/clusters'),
      401,
      Date.now(),
      deletedAccountDeadlineMs,
    );
    expect(response.status).toBe(401);
    expect(elapsedMs).toBeLessThan(deletedAccountDeadlineMs);
    expect(response.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(response.body).not.toContain(reader.token);
  });
});

describe('a caller with only part of what a route needs', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness(sandbox);
  });
  afterAll(async () => {
    await api?.close();
  });

  // jobrelay-admin without jobrelay-admin-credentials: it may create and delete WorkerClusters
  // but not the kubeconfig Secrets, so registering and deregistering are refused, naming the
  // Secret right — the second of the two reviews each of those routes asks.
  it('is refused registering or deregistering for want of the Secret right alone, and nothing changes', async () => {
    const operator = await serviceAccount('fleet-operator');
    await bindClusterRole('fleet-operator', 'jobrelay-admin');
    await until(() => callWithToken(api, operator.token, 'GET', '/api/v1/clusters'), 200, Date.now());

    const before = await snapshot();
    const register = await callWithToken(api, operator.token, 'POST', '/api/v1/clusters?dryRun=true', {
      name: 'never-registered',
      kubeconfig: ':::not yaml',
    });
    expect(register.status).toBe(403);
    expect((register.json() as Problem).missingPermission).toEqual({
      verb: 'create',
      group: '',
      resource: 'secrets',
      namespace: systemNamespace,
    });

    const worker = sandbox.workers[0]!.name;
    const wc = (await custom.getClusterCustomObject({ ...workerClusters, name: worker })) as {
      spec: { kubeconfigSecretRef: { name: string } };
    };
    const deregister = await callWithToken(api, operator.token, 'DELETE', `/api/v1/clusters/${worker}`);
    expect(deregister.status).toBe(403);
    const problem = deregister.json() as Problem;
    // The Secret the WorkerCluster really uses, by name.
    expect(problem.missingPermission).toEqual({
      verb: 'delete',
      group: '',
      resource: 'secrets',
      namespace: systemNamespace,
      name: wc.spec.kubeconfigSecretRef.name,
    });
    expect(problem.detail).toBe(
      `${operator.username} is not allowed to delete secrets "${wc.spec.kubeconfigSecretRef.name}" in namespace ${systemNamespace}`,
    );
    expect(await snapshot()).toEqual(before);
    for (const response of [register, deregister]) expect(response.body).not.toContain(operator.token);
  });
});

describe('uncordon ends a drain', () => {
  let api: ApiHarness;
  const role = uniqueName('limits-cordoner');
  const draining = uniqueName('draining-target');
  const cordoned = uniqueName('cordoned-target');
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { authCacheSeconds: cacheSeconds });
    // May cordon and uncordon, not drain.
    await rbac.createClusterRole({
      body: {
        metadata: { name: role, labels: { 'jobrelay.dev/e2e': 'true' } },
        rules: [
          { apiGroups: ['jobrelay.dev'], resources: ['workerclusters'], verbs: ['get', 'list'] },
          { apiGroups: ['jobrelay.dev'], resources: ['workerclusters/cordon'], verbs: ['update'] },
        ],
      },
    });
    // Registrations whose Secret does not exist: they stay inactive and harm nothing.
    for (const [name, spec] of [
      [draining, { unschedulable: true, drain: true }],
      [cordoned, { unschedulable: true }],
    ] as const) {
      await custom.createClusterCustomObject({
        ...workerClusters,
        body: {
          apiVersion: 'jobrelay.dev/v1alpha1',
          kind: 'WorkerCluster',
          metadata: { name },
          spec: { kubeconfigSecretRef: { name: `${name}-missing` }, ...spec },
        },
      });
    }
  });
  afterAll(async () => {
    await api?.close();
    for (const name of [draining, cordoned])
      await custom.deleteClusterCustomObject({ ...workerClusters, name }).catch(() => {});
    await rbac.deleteClusterRole({ name: role }).catch(() => {});
  });

  it('so uncordoning a draining cluster also takes the right to drain; a cordoned one does not', async () => {
    const cordoner = await serviceAccount('cordoner');
    await bindClusterRole('cordoner', role);
    // Allowed once the binding and the API's cache of both registrations are there.
    const allowed = await until(
      () => callWithToken(api, cordoner.token, 'POST', `/api/v1/clusters/${cordoned}/uncordon`),
      200,
      Date.now(),
    );
    expect(allowed.response.status).toBe(200);
    expect(allowed.response.json()).toMatchObject({ name: cordoned, cordoned: false });

    const before = await snapshot();
    const refused = await callWithToken(api, cordoner.token, 'POST', `/api/v1/clusters/${draining}/uncordon`);
    expect(refused.status).toBe(403);
    expect((refused.json() as Problem).missingPermission).toEqual({
      verb: 'update',
      group: 'jobrelay.dev',
      resource: 'workerclusters',
      subresource: 'drain',
      name: draining,
    });
    expect(await snapshot()).toEqual(before);
  });
});

describe('rate limit per identity', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { rateLimitPerMinute: 5 });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("the 6th request in a minute is 429 with retry-after; another identity's budget and /healthz are untouched", async () => {
    for (let i = 1; i <= 5; i++)
      expect((await api.call('viewer', 'GET', '/api/v1/clusters')).status, `request ${i}`).toBe(200);
    const limited = await api.call('viewer', 'GET', '/api/v1/clusters');
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.json()).toMatchObject({
      status: 429,
      code: 'rate-limited',
      type: 'https://jobrelay.dev/problems/rate-limited',
    });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).not.toContain(sandbox.token('viewer'));
    // Still limited: the budget is per minute, not per burst.
    expect((await api.call('viewer', 'GET', '/api/v1/queue')).status).toBe(429);

    // fleet-admin has a budget of its own.
    expect((await api.call('fleet-admin', 'GET', '/api/v1/clusters')).status).toBe(200);
    // /healthz is never limited: not for anyone, not for the identity that is out of budget.
    for (let i = 0; i < 10; i++) {
      expect((await api.call('anonymous', 'GET', '/healthz')).status).toBe(200);
      expect((await api.call('viewer', 'GET', '/healthz')).status).toBe(200);
    }
  });
});
