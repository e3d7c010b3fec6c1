// The admin API's access over time and volume: rights revoked on the management cluster stop
// working within the API's cache time (for open streams too), a partly-privileged caller is told
// the exact right it lacks, each identity has its own request budget and stream cap, a slow
// reader is dropped, bad tokens are limited per address before any TokenReview, and every
// refusal, down to the HTTP parser's, is a problem.
import { connect, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { readRequestCounts, sumRequests } from '@jobrelay/bench';
import { systemNamespace } from '@jobrelay/sandbox';
import {
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import { type ApiProcess, runKubectlPlugin, startApiProcess } from '../src/api-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { fleetWriteVersions } from '../src/fleet-writes.ts';
import { createTestNamespace, eventually, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';
import { collectServerSentEvents, type ServerSentEvent } from '../src/server-sent-events.ts';

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

// ---------------------------------------------------------------------------------------------
// Streams, abuse and transport (issue 28): the watch and log streams under the caller's rights
// for as long as they stay open, bounded per identity and in time, never buffered without bound
// for a slow reader; failed authentications limited per address before any TokenReview;
// readiness cached; tokens for the API's own audience; every refusal a problem.

/** The API on a real loopback port (streams and raw sockets need one); its base URL. */
async function listen(api: ApiHarness): Promise<{ url: string; port: number }> {
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  const address = api.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the API listens on no TCP port');
  return { url: `http://127.0.0.1:${address.port}`, port: address.port };
}

/** The value of one series of the API's own metrics (0 when it has none yet). */
async function metricValue(
  api: ApiHarness,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = api.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`the API has no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

interface ClosedProblem extends Problem {
  type: string;
  title: string;
  instance?: string;
}

type ClosedEventData = ClosedProblem & Record<string, unknown>;

interface OpenedWatch {
  response: Response;
  /** The refusal's body when the status is not 200. */
  body: string;
  /**
   * When the request was sent: the server opens the stream (and starts its clock) after this.
   * Not when the answer came: on a loaded machine the headers reach the client well after the
   * server opened the stream, and a bound from then measured the stream short.
   */
  requestedAt: number;
  events: ServerSentEvent<ClosedEventData>[];
  /** Settles when the stream ended (or was aborted). */
  done: Promise<void>;
  /** The `closed` event, once it came. */
  closed: () => ServerSentEvent<ClosedEventData> | undefined;
  abort: () => void;
}

/** An SSE watch over a real socket, collected as it arrives; `abort` hangs up. */
async function openWatch(url: string, token: string, query = 'kinds=clusters'): Promise<OpenedWatch> {
  const abort = new AbortController();
  const requestedAt = Date.now();
  const response = await fetch(`${url}/api/v1/watch?${query}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: abort.signal,
  });
  if (response.status !== 200) {
    const body = await response.text();
    return {
      response,
      body,
      requestedAt,
      events: [],
      done: Promise.resolve(),
      closed: () => undefined,
      abort: () => abort.abort(),
    };
  }
  const stream = collectServerSentEvents<ClosedEventData>(response);
  return {
    response,
    body: '',
    requestedAt,
    events: stream.events,
    done: stream.done,
    closed: () => stream.events.find((e) => e.event === 'closed'),
    abort: () => abort.abort(),
  };
}

/** A raw HTTP/1.1 exchange: what a client sends byte for byte, and the answer as it comes back. */
function rawHttp(
  port: number,
  request: string | Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole answer within 15s; got: ${received.toString().slice(0, 300)}`));
    }, 15_000);
    const tryParse = (final: boolean) => {
      const text = received.toString('latin1');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd < 0) {
        if (final) reject(new Error(`the connection closed without an answer: ${JSON.stringify(text)}`));
        return;
      }
      const [statusLine, ...headerLines] = text.slice(0, headerEnd).split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      const length = Number(headers['content-length'] ?? Number.NaN);
      const body = received.subarray(Buffer.byteLength(text.slice(0, headerEnd + 4), 'latin1'));
      if (!final && !(body.length >= length)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: body.subarray(0, Number.isNaN(length) ? body.length : length).toString('utf8'),
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (received.length > 0) tryParse(true);
      else reject(err);
    });
    socket.write(request);
  });
}

/** A ServiceAccount in the test namespace with a token for `audiences` (the apiserver's by default). */
async function serviceAccountToken(name: string, audiences?: string[]): Promise<string> {
  const request = await fleet.management.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { expirationSeconds: 3600, ...(audiences ? { audiences } : {}) } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return token;
}

describe('an open stream whose token stops being valid', () => {
  let api: ApiHarness;
  let url: string;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { authCacheSeconds: cacheSeconds });
    ({ url } = await listen(api));
  });
  afterAll(async () => {
    await api?.close();
  });

  it('ends with event: closed (401 unauthenticated) once its ServiceAccount is deleted', async () => {
    const watcher = await serviceAccount('deleted-watcher');
    await bindClusterRole('deleted-watcher', 'jobrelay-viewer');
    await until(() => callWithToken(api, watcher.token, 'GET', '/api/v1/clusters'), 200, Date.now());
    const watch = await openWatch(url, watcher.token);
    expect(watch.response.status).toBe(200);

    const deletedAt = Date.now();
    await fleet.management.core.deleteNamespacedServiceAccount({ name: 'deleted-watcher', namespace });
    await eventually('the closed event', async () => watch.closed(), {
      timeoutMs: deletedAccountDeadlineMs + 5_000,
      intervalMs: 100,
    });
    const closed = watch.closed!()!;
    expect(closed.receivedAt - deletedAt).toBeLessThan(deletedAccountDeadlineMs);
    expect(closed.data).toMatchObject({
      type: 'https://jobrelay.dev/problems/unauthenticated',
      status: 401,
      code: 'unauthenticated',
      instance: '/api/v1/watch',
    });
    expect(closed.data.detail).toContain('no longer accepts this token');
    // The closed event is the last: the API closed the stream after it.
    await watch.done;
    expect(watch.events.at(-1)?.event).toBe('closed');
    expect(JSON.stringify(watch.events)).not.toContain(watcher.token);
    expect(await metricValue(api, 'jobrelay_api_streams_closed_total', { reason: 'unauthenticated' })).toBe(
      1,
    );
  });
});

describe('streams per identity', () => {
  let api: ApiHarness;
  let url: string;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { maxStreamsPerIdentity: 2 });
    ({ url } = await listen(api));
  });
  afterAll(async () => {
    await api?.close();
  });

  it('past the cap a caller gets 429 too-many-streams naming it; others are not affected; a closed stream frees a place', async () => {
    const first = await openWatch(url, sandbox.token('viewer'));
    const second = await openWatch(url, sandbox.token('viewer'), 'kinds=workloads');
    expect([first.response.status, second.response.status]).toEqual([200, 200]);

    const third = await openWatch(url, sandbox.token('viewer'));
    expect(third.response.status).toBe(429);
    expect(third.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(third.body)).toMatchObject({
      type: 'https://jobrelay.dev/problems/too-many-streams',
      status: 429,
      code: 'too-many-streams',
      detail:
        'viewer already has 2 open streams (watches and log reads), the most one identity may hold (--max-streams-per-identity 2): close one and retry',
    });
    expect(third.body).not.toContain(sandbox.token('viewer'));
    // Another identity has places of its own.
    const admins = await openWatch(url, sandbox.token('fleet-admin'));
    expect(admins.response.status).toBe(200);
    // Plain requests are not streams.
    expect((await api.call('viewer', 'GET', '/api/v1/clusters')).status).toBe(200);

    first.abort();
    const again = await eventually('a place freed by the closed stream', async () => {
      const watch = await openWatch(url, sandbox.token('viewer'));
      if (watch.response.status === 200) return watch;
      return undefined;
    });
    expect(await metricValue(api, 'jobrelay_api_streams_closed_total', { reason: 'client-left' })).toBe(1);
    for (const watch of [second, admins, again]) watch.abort();
  });
});

describe('stream lifetime', () => {
  const maxStreamSeconds = 3;
  let api: ApiHarness;
  let url: string;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { maxStreamSeconds });
    ({ url } = await listen(api));
  });
  afterAll(async () => {
    await api?.close();
  });

  it('a stream ends after --max-stream-seconds with event: closed telling the client to reconnect', async () => {
    const watch = await openWatch(url, sandbox.token('viewer'));
    expect(watch.response.status).toBe(200);
    await watch.done;
    const closed = watch.closed!();
    expect(closed, JSON.stringify(watch.events.map((e) => e.event))).toBeDefined();
    expect(closed!.data).toMatchObject({
      type: 'https://jobrelay.dev/problems/stream-expired',
      status: 408,
      code: 'stream-expired',
      detail: `this stream reached the longest a stream stays open (--max-stream-seconds ${maxStreamSeconds}); reconnect to go on`,
    });
    expect(watch.events.at(-1)?.event).toBe('closed');
    // Not before its time.
    expect(closed!.receivedAt - watch.requestedAt).toBeGreaterThanOrEqual(maxStreamSeconds * 1000 - 50);
    expect(await metricValue(api, 'jobrelay_api_streams_closed_total', { reason: 'expired' })).toBe(1);
  });
});

describe('a slow reader of a chatty stream', () => {
  const streamBufferBytes = 64 * 1024;
  const chatty = uniqueName('chatty-cluster');
  let api: ApiHarness;
  let port: number;
  let url: string;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { streamBufferBytes });
    ({ url, port } = await listen(api));
    // A registration whose Secret does not exist (it never connects) with 1,000 labels: each
    // change is a cluster event of about 90 KB on the watch.
    const labels = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`e2e-label-${i}`, 'v'.repeat(60)]),
    );
    await custom.createClusterCustomObject({
      ...workerClusters,
      body: {
        apiVersion: 'jobrelay.dev/v1alpha1',
        kind: 'WorkerCluster',
        metadata: { name: chatty, labels: { 'jobrelay.dev/e2e': 'true', ...labels } },
        spec: { kubeconfigSecretRef: { name: `${chatty}-missing` } },
      },
    });
    await eventually('the API sees the chatty cluster', async () => api.fleet.workerCluster(chatty));
  });
  afterAll(async () => {
    await api?.close();
    await custom.deleteClusterCustomObject({ ...workerClusters, name: chatty }).catch(() => {});
  });

  it('is dropped past --stream-buffer-bytes (with a last event it can still read), the API never holding more, while a reader who keeps up is not', async () => {
    const fast = await openWatch(url, sandbox.token('viewer'));
    expect(fast.response.status).toBe(200);
    // The slow reader: a socket that asks for the watch and then reads nothing.
    const slow = connect(port, '127.0.0.1');
    slow.pause();
    slow.write(
      `GET /api/v1/watch?kinds=clusters HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${sandbox.token('viewer')}\r\n\r\n`,
    );
    await eventually('both streams open', async () =>
      (await metricValue(api, 'jobrelay_api_open_streams', { stream: 'watch' })) === 2 ? true : undefined,
    );

    const patch = (version: number) =>
      custom.patchClusterCustomObject(
        { ...workerClusters, name: chatty, body: { metadata: { labels: { 'e2e-label-0': `v${version}` } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const chattyVersion = (event: ServerSentEvent<ClosedEventData>) => {
      const object = event.data.object as { name?: string; labels?: Record<string, string> } | undefined;
      return object?.name === chatty ? object.labels?.['e2e-label-0'] : undefined;
    };
    let eventBytes = 0;
    let maxBuffered = 0;
    let version = 0;
    const dropped = async () =>
      (await metricValue(api, 'jobrelay_api_streams_closed_total', { reason: 'slow-reader' })) > 0;
    // Events of ~90 KB until the slow reader is dropped: the kernel's socket buffers fill first,
    // then the API's own, up to the bound.
    while (!(await dropped())) {
      expect(version, 'the slow reader was never dropped').toBeLessThan(400);
      version += 1;
      await patch(version);
      const delivered = await eventually(
        `event ${version} delivered to the fast reader`,
        async () => fast.events.find((e) => chattyVersion(e) === `v${version}`),
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      eventBytes = Math.max(eventBytes, JSON.stringify(delivered.data).length);
      maxBuffered = Math.max(maxBuffered, await metricValue(api, 'jobrelay_api_stream_buffered_bytes'));
    }
    // The slow reader, reading at last (within the grace the API gives a dropped reader before
    // it cuts the connection), finds the last event saying why, then the end.
    const slowText = new Promise<string>((resolve) => {
      let received = '';
      slow.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
      });
      slow.on('close', () => resolve(received));
      slow.resume();
    });
    // More than the bound went out (so the slow reader really fell that far behind)...
    expect(eventBytes).toBeGreaterThan(50_000);
    expect(version * eventBytes).toBeGreaterThan(streamBufferBytes * 2);
    // ...but the API never held more than the bound and one event for it.
    expect(maxBuffered).toBeLessThanOrEqual(streamBufferBytes + 2 * eventBytes);

    // It goes on chattering; nothing piles up for the dropped reader.
    for (let i = 0; i < 5; i++) {
      version += 1;
      await patch(version);
    }
    await eventually('the fast reader keeps up', async () =>
      fast.events.find((e) => chattyVersion(e) === `v${version}`),
    );
    expect(await metricValue(api, 'jobrelay_api_stream_buffered_bytes')).toBeLessThanOrEqual(2 * eventBytes);
    expect(fast.closed()).toBeUndefined();
    expect(await metricValue(api, 'jobrelay_api_open_streams', { stream: 'watch' })).toBe(1);

    const text = await slowText;
    // Chunked transfer encoding frames the events: the closed one is the last event in it.
    const closedAt = text.lastIndexOf('event: closed\n');
    expect(closedAt, text.slice(-300)).toBeGreaterThan(0);
    expect(text.lastIndexOf('event: cluster\n')).toBeLessThan(closedAt);
    const closedData = /^data: (.*)$/m.exec(text.slice(closedAt))![1]!;
    expect(JSON.parse(closedData)).toMatchObject({
      status: 408,
      code: 'slow-reader',
      type: 'https://jobrelay.dev/problems/slow-reader',
    });
    expect(JSON.parse(closedData).detail).toContain(`--stream-buffer-bytes ${streamBufferBytes}`);
    fast.abort();
  });
});

describe('failed authentications per client address', () => {
  const limit = 5;
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness(sandbox, { failedAuthenticationsPerMinute: limit });
  });
  afterAll(async () => {
    await api?.close();
  });

  const tokenReviewsOnApiserver = async () =>
    sumRequests(
      await readRequestCounts({
        name: sandbox.management.name,
        server: sandbox.management.server,
        caPem: sandbox.caPem,
        token: sandbox.token('admin'),
      }),
      (series) => series.resource === 'tokenreviews',
    );
  const from = (remoteAddress: string, token?: string, path = '/api/v1/clusters') =>
    api.app.inject({
      method: 'GET',
      url: path,
      remoteAddress,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  it('counts missing, malformed and refused tokens; past the limit: 429 with retry-after and no TokenReview', async () => {
    const address = '192.0.2.50';
    const apiserverBefore = await tokenReviewsOnApiserver();
    const apiBefore = api.access.tokenReviewsSent;
    // Three unknown tokens (three TokenReviews), no token, and a header that is not a bearer token.
    for (let i = 0; i < 3; i++)
      expect((await from(address, `${uniqueName('garbage')}-${i}`)).statusCode).toBe(401);
    expect((await from(address)).statusCode).toBe(401);
    const basic = await api.app.inject({
      method: 'GET',
      url: '/api/v1/clusters',
      remoteAddress: address,
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    expect(basic.statusCode).toBe(401);

    // The limit is reached: whatever the token, no review is made for this address any more.
    for (const token of [uniqueName('garbage'), sandbox.token('viewer'), undefined]) {
      const limited = await from(address, token);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(limited.json()).toMatchObject({
        type: 'https://jobrelay.dev/problems/rate-limited',
        status: 429,
        code: 'rate-limited',
      });
      expect(limited.json().detail).toContain(
        `more than ${limit} requests without a valid token from ${address}`,
      );
      expect(limited.body).not.toContain(sandbox.token('viewer'));
    }
    expect(api.access.tokenReviewsSent - apiBefore).toBe(3);
    expect((await tokenReviewsOnApiserver()) - apiserverBefore).toBe(3);
    expect(await metricValue(api, 'jobrelay_api_failed_authentications_total', { outcome: 'limited' })).toBe(
      3,
    );

    // Another address is not affected, nor are the public routes for this one.
    expect((await from('192.0.2.51', sandbox.token('viewer'))).statusCode).toBe(200);
    expect((await from(address, undefined, '/healthz')).statusCode).toBe(200);
    // An IPv6 client's /64 is one address: its neighbour is limited with it.
    const ipv6 = '2001:db8:28:4::1';
    for (let i = 0; i < limit; i++) expect((await from(ipv6)).statusCode).toBe(401);
    expect((await from('2001:db8:28:4::2', sandbox.token('viewer'))).statusCode).toBe(429);
    expect((await from('2001:db8:28:5::1', sandbox.token('viewer'))).statusCode).toBe(200);
  });
});

describe('/readyz', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness(sandbox);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('50 concurrent requests share one probe of Redis and the apiserver; the next second probes once more', async () => {
    const burst = () =>
      Promise.all(Array.from({ length: 50 }, () => api.call('anonymous', 'GET', '/readyz')));
    const before = await metricValue(api, 'jobrelay_api_readiness_probes_total');
    const first = await burst();
    for (const response of first) {
      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ ready: true, redis: true, apiserver: true, caches: true });
    }
    expect((await metricValue(api, 'jobrelay_api_readiness_probes_total')) - before).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await burst();
    expect((await metricValue(api, 'jobrelay_api_readiness_probes_total')) - before).toBe(2);
  });
});

describe('refusals below the routes are problems too', () => {
  let api: ApiHarness;
  let port: number;
  beforeAll(async () => {
    api = await startApiHarness(sandbox);
    ({ port } = await listen(api));
  });
  afterAll(async () => {
    await api?.close();
  });

  const viewer = () => `Authorization: Bearer ${sandbox.token('viewer')}\r\n`;
  const admin = () => `Authorization: Bearer ${sandbox.token('fleet-admin')}\r\n`;
  it.each([
    {
      what: 'headers larger than Node accepts (431, answered before fastify sees the request)',
      request: () => `GET /api/v1/clusters HTTP/1.1\r\nHost: a\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'headers-too-large',
    },
    {
      what: 'a request line that is not HTTP',
      request: () => 'BREW /pot HTCPCP/1.0\r\n\r\n',
      status: 400,
      code: 'bad-request',
    },
    {
      what: 'an HTTP/1.1 request without Host',
      request: () => `GET /api/v1/clusters HTTP/1.1\r\n${viewer()}\r\n`,
      status: 400,
      code: 'bad-request',
    },
    {
      what: 'a method the path is not served for (405 with Allow)',
      request: () => `PUT /api/v1/clusters HTTP/1.1\r\nHost: a\r\n${viewer()}Content-Length: 0\r\n\r\n`,
      status: 405,
      code: 'method-not-allowed',
    },
    {
      what: 'no such route',
      request: () => `GET /api/v1/no-such-route HTTP/1.1\r\nHost: a\r\n${viewer()}\r\n`,
      status: 404,
      code: 'not-found',
    },
    {
      what: 'a body that is not JSON',
      request: () =>
        `POST /api/v1/placement-preview HTTP/1.1\r\nHost: a\r\n${admin()}Content-Type: application/json\r\nContent-Length: 9\r\n\r\n{not json`,
      status: 400,
      code: 'bad-request',
    },
    {
      what: 'a body over --body-limit-bytes',
      request: () => {
        const body = `{"name":"x","kubeconfig":"${'a'.repeat(1024 * 1024 + 10)}"}`;
        return `POST /api/v1/clusters?dryRun=true HTTP/1.1\r\nHost: a\r\n${admin()}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      },
      status: 413,
      code: 'payload-too-large',
    },
  ])('$what: $status $code', async ({ request, status, code }) => {
    const answer = await rawHttp(port, request());
    expect(answer.status, answer.body).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(answer.body) as Record<string, unknown>;
    expect(problem).toMatchObject({ type: `https://jobrelay.dev/problems/${code}`, status, code });
    expect(typeof problem.detail).toBe('string');
    expect(answer.body).not.toContain(sandbox.token('viewer'));
    if (status === 405)
      expect(answer.headers.allow?.split(', ')).toEqual(expect.arrayContaining(['GET', 'POST']));
  });
});

describe('--token-audiences', () => {
  const audience = 'jobrelay-api';
  // The API as its own process, configured by its flag as an operator would.
  let scoped: ApiProcess;
  let scopedUrl: string;
  let plain: ApiHarness;
  beforeAll(async () => {
    scoped = startApiProcess(sandbox, [`--token-audiences=${audience}`]);
    plain = await startApiHarness(sandbox);
    scopedUrl = await scoped.url();
  });
  afterAll(async () => {
    await scoped?.kill();
    await plain?.close();
  });

  const scopedCall = async (token: string) => {
    const response = await fetch(`${scopedUrl}/api/v1/clusters`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: await response.text() };
  };

  it("accepts a token minted for the API's audience and refuses the apiserver's own; without it, the reverse", async () => {
    await serviceAccount('audience-reader');
    await bindClusterRole('audience-reader', 'jobrelay-viewer');
    const forTheApi = await serviceAccountToken('audience-reader', [audience]);
    const forTheApiserver = await serviceAccountToken('audience-reader');
    await eventually('the binding in effect', async () =>
      (await scopedCall(forTheApi)).status === 200 ? true : undefined,
    );

    const refused = await scopedCall(forTheApiserver);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'unauthenticated' });
    expect((JSON.parse(refused.body) as Problem).detail).toContain('meant for another audience');
    // A static token is not audience-bound: the apiserver accepts it only for its own audience.
    expect((await scopedCall(sandbox.token('viewer'))).status).toBe(401);
    expect(scoped.logs()).not.toContain(forTheApi);

    // The API without --token-audiences asks for the apiserver's audience: the API's token is refused.
    expect((await callWithToken(plain, forTheApi, 'GET', '/api/v1/clusters')).status).toBe(401);
    expect((await callWithToken(plain, forTheApiserver, 'GET', '/api/v1/clusters')).status).toBe(200);
  });
});

describe('the kubectl plugin and plain http', () => {
  let api: ApiHarness;
  let url: string;
  beforeAll(async () => {
    api = await startApiHarness(sandbox);
    ({ url } = await listen(api));
  });
  afterAll(async () => {
    await api?.close();
  });

  const plugin = (apiUrl: string, args: string[]) =>
    runKubectlPlugin(apiUrl, sandbox.kubeconfigPath(sandbox.management.name, 'viewer'), args);

  it('refuses to send a token over http:// to a non-loopback address, and sends it to loopback', async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
    expect(address, 'this machine needs a non-loopback IPv4 address for this test').toBeDefined();
    // A listener there that would see the token if the plugin sent it.
    const connections: string[] = [];
    const listener = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => connections.push(chunk.toString()));
      socket.end();
    });
    await new Promise<void>((resolve) => listener.listen(0, address, resolve));
    const listenerPort = (listener.address() as { port: number }).port;
    try {
      const target = `http://${address}:${listenerPort}`;
      const refused = await plugin(target, ['clusters']);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(
        `refusing to send your bearer token in clear over plain http to ${target}/`,
      );
      expect(refused.stderr).toContain("use the API's https:// URL");
      expect(refused.stderr).not.toContain(sandbox.token('viewer'));
      expect(connections).toEqual([]);
    } finally {
      listener.close();
    }
    const allowed = await plugin(url, ['clusters']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain(sandbox.workers[0]!.name);
  });
});
