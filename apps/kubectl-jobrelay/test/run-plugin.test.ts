// runPlugin against a real local HTTP server that answers as the contract says. This checks our
// own client (requests, paging, streaming, errors, exit codes); it makes no claim about Kubernetes.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runPlugin } from '../src/index.ts';

const token = 'test-token-0123456789';

interface Recorded {
  method: string;
  url: URL;
  authorization: string | undefined;
  body: string;
}

type Handler = (req: Recorded, res: ServerResponse) => void | Promise<void>;

let dir: string;
let server: Server | undefined;
let requests: Recorded[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubectl-jobrelay-run-'));
  requests = [];
});
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function startApi(handler: Handler): Promise<string> {
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded: Recorded = {
      method: req.method ?? '',
      url: new URL(req.url ?? '/', 'http://api'),
      authorization: req.headers.authorization,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(recorded);
    await handler(recorded, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ type: `https://jobrelay.dev/problems/${body.code}`, status, ...body }));
}

/** A kubeconfig whose current context authenticates with `user`. */
function kubeconfig(user: Record<string, unknown>, extra: { namespace?: string } = {}): string {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'management', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'me', user }],
      contexts: [{ name: 'management', context: { cluster: 'management', user: 'me', ...extra } }],
      'current-context': 'management',
    }),
  );
  return path;
}

class Collect extends Writable {
  text = '';
  onWrite: ((text: string) => void) | undefined;
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString();
    this.onWrite?.(this.text);
    done();
  }
}

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const stdout = new Collect();
  const stderr = new Collect();
  const code = await runPlugin(argv, {
    env: { HOME: dir, ...env },
    stdout,
    stderr,
    now: () => new Date('2026-01-01T12:00:00Z'),
    drainPollIntervalMs: 10,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const cluster = {
  name: 'worker-1',
  labels: {},
  active: true,
  reason: 'Connected',
  message: '',
  kubernetesVersion: 'v1.35.4',
  cordoned: false,
  draining: false,
  weight: 1,
  maxActiveWorkloads: null,
  allowedNamespaces: [],
  capacity: { nodes: 1, allocatable: { cpu: '4', memory: '8Gi' }, free: { cpu: '3', memory: '6Gi' } },
  workloadsPlaced: 2,
  placementsPerMinute: 0.4,
  lastHeartbeatTime: null,
  createdAt: '2026-01-01T11:55:00Z',
};

describe('credentials and address', () => {
  it('sends the context’s static token as a bearer token and prints the cluster table', async () => {
    const url = await startApi((_req, res) => json(res, 200, { items: [cluster] }));
    const result = await run(['clusters', '--kubeconfig', kubeconfig({ token })], { JOBRELAY_API_URL: url });
    expect(result).toEqual({
      code: 0,
      stdout:
        'NAME      ACTIVE  REASON     VERSION  CORDONED  WORKLOADS  FREE-CPU  FREE-MEMORY  PLACEMENTS/MIN  AGE\n' +
        'worker-1  True    Connected  v1.35.4  False     2          3         6Gi          0.4             5m\n',
      stderr: '',
    });
    expect(requests[0]?.authorization).toBe(`Bearer ${token}`);
  });

  it('reads a tokenFile relative to the kubeconfig, and takes the kubeconfig from KUBECONFIG', async () => {
    writeFileSync(join(dir, 'sa-token'), `${token}\n`);
    const url = await startApi((_req, res) => json(res, 200, cluster));
    const result = await run(['--api-url', url, 'get', 'cluster', 'worker-1'], {
      KUBECONFIG: kubeconfig({ tokenFile: 'sa-token' }),
    });
    expect(result.code).toBe(0);
    expect(requests[0]?.url.pathname).toBe('/api/v1/clusters/worker-1');
    expect(requests[0]?.authorization).toBe(`Bearer ${token}`);
  });

  it('runs an exec credential plugin for the token, as kubectl would', async () => {
    const script = join(dir, 'login.mjs');
    writeFileSync(
      script,
      `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } }));`,
    );
    const url = await startApi((_req, res) => json(res, 200, { items: [] }));
    const result = await run(['clusters', '--api-url', url], {
      KUBECONFIG: kubeconfig({
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script] },
      }),
    });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: 'No clusters registered.\n' });
    expect(requests[0]?.authorization).toBe(`Bearer ${token}`);
  });

  it('refuses a client-certificate-only context with exit 3 and says how to get a token', async () => {
    const url = await startApi((_req, res) => json(res, 200, { items: [] }));
    const certOnly = kubeconfig({
      'client-certificate-data': Buffer.from('CERT').toString('base64'),
      'client-key-data': Buffer.from('KEY').toString('base64'),
    });
    const result = await run(['clusters', '--api-url', url, '--kubeconfig', certOnly]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /^error: context "management" authenticates with a client certificate only; the jobrelay API needs a bearer token/,
    );
    expect(result.stderr).toContain('kubectl create token');
    expect(requests).toHaveLength(0);
  });

  it('names both ways to give the API address when there is none (exit 3)', async () => {
    const result = await run(['clusters', '--kubeconfig', kubeconfig({ token })]);
    expect(result).toEqual({
      code: 3,
      stdout: '',
      stderr: 'error: no API address: pass --api-url or set JOBRELAY_API_URL (e.g. http://127.0.0.1:8090)\n',
    });
  });

  it('exits 3 when nothing listens at the address, without printing the token', async () => {
    const url = await startApi((_req, res) => json(res, 200, {}));
    server?.close();
    server = undefined;
    const result = await run(['clusters', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `error: cannot reach the API at ${url}: connection refused (is it running, and is the URL right?)\n`,
    );
    expect(result.stderr + result.stdout).not.toContain(token);
  });

  it('exits 3 on 401: the token was not accepted', async () => {
    const url = await startApi((_req, res) =>
      problem(res, 401, { code: 'unauthenticated', title: 'Unauthorized', detail: 'the token is not valid' }),
    );
    const result = await run(['clusters', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result).toEqual({ code: 3, stdout: '', stderr: 'error: the token is not valid\n' });
  });
});

describe('API errors', () => {
  it('prints the missing permission of a 403 and exits 1', async () => {
    const url = await startApi((_req, res) =>
      problem(res, 403, {
        code: 'forbidden',
        title: 'Forbidden',
        detail: 'alice is not allowed to update workerclusters/drain "w1" (group jobrelay.dev)',
        missingPermission: {
          verb: 'update',
          group: 'jobrelay.dev',
          resource: 'workerclusters',
          subresource: 'drain',
          name: 'w1',
        },
      }),
    );
    const result = await run(['drain', 'w1', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: forbidden: you may not update workerclusters/drain "w1"\n' +
        '  (RBAC: apiGroups ["jobrelay.dev"], resources ["workerclusters/drain"], verbs ["update"])\n' +
        '  alice is not allowed to update workerclusters/drain "w1" (group jobrelay.dev)\n',
    });
    expect(requests[0]).toMatchObject({ method: 'POST' });
    expect(requests[0]?.url.pathname).toBe('/api/v1/clusters/w1/drain');
  });

  it('names a missing non-resource permission (e.g. /metrics)', async () => {
    const url = await startApi((_req, res) =>
      problem(res, 403, {
        code: 'forbidden',
        detail: 'bob is not allowed to get /metrics',
        missingPermission: { verb: 'get', nonResourceURL: '/metrics' },
      }),
    );
    const result = await run(['clusters', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: forbidden: you may not get /metrics\n' +
        '  (RBAC: nonResourceURLs ["/metrics"], verbs ["get"])\n  bob is not allowed to get /metrics\n',
    });
  });

  it('lists validation errors under the detail', async () => {
    const url = await startApi((_req, res) =>
      problem(res, 400, {
        code: 'validation-failed',
        detail: 'the request body is invalid',
        errors: [{ path: 'body.weight', message: 'must be at most 100' }],
      }),
    );
    const result = await run(['cordon', 'w1', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result).toMatchObject({
      code: 1,
      stderr: 'error: the request body is invalid\n  body.weight: must be at most 100\n',
    });
  });

  it('suggests drain or --force when deregister meets a cluster with Jobs', async () => {
    const url = await startApi((_req, res) =>
      problem(res, 409, { code: 'cluster-has-workloads', detail: '3 unfinished Jobs are placed on w1' }),
    );
    const result = await run(['deregister', 'w1', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "error: 3 unfinished Jobs are placed on w1\n  drain it first ('kubectl jobrelay drain w1 --wait') or pass --force\n",
    );
  });

  it('reports an error answer that is not problem+json by its status line', async () => {
    const url = await startApi((_req, res) => {
      res.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' });
      res.end('<html>proxy</html>');
    });
    const result = await run(['clusters', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: the API answered 502 Bad Gateway\n' });
  });

  it('prints usage errors with the command’s usage line and exits 2 before any request', async () => {
    const url = await startApi((_req, res) => json(res, 200, {}));
    const result = await run([
      'register',
      'w3',
      '--from-context',
      'c',
      '--weight',
      'heavy',
      '--api-url',
      url,
    ]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: --weight must be an integer from 0 to 100, not "heavy"\n' +
        'Usage: kubectl jobrelay register NAME --from-context CTX [--kubeconfig-file F] [--label k=v]... [--weight N] [--max-active-workloads N] [--allowed-namespace NS]... [--dry-run]\n' +
        "See 'kubectl jobrelay register --help'.\n",
    });
    expect(requests).toHaveLength(0);
  });
});

describe('commands', () => {
  it('follows continue tokens until the last page and merges the pages for -o json', async () => {
    const url = await startApi((req, res) => {
      const next = req.url.searchParams.get('continue');
      if (!next) json(res, 200, { items: [{ ...cluster, name: 'a' }], continue: 'page-2' });
      else if (next === 'page-2') json(res, 200, { items: [{ ...cluster, name: 'b' }], continue: 'page-3' });
      else json(res, 200, { items: [{ ...cluster, name: 'c' }] });
    });
    const result = await run([
      'clusters',
      '--limit',
      '1',
      '-o',
      'json',
      '--api-url',
      url,
      '--kubeconfig',
      kubeconfig({ token }),
    ]);
    expect(result.code).toBe(0);
    expect(
      (JSON.parse(result.stdout) as { items: Array<{ name: string }> }).items.map((c) => c.name),
    ).toEqual(['a', 'b', 'c']);
    expect(
      requests.map((r) => [r.url.searchParams.get('limit'), r.url.searchParams.get('continue')]),
    ).toEqual([
      ['1', null],
      ['1', 'page-2'],
      ['1', 'page-3'],
    ]);
  });

  it('lists Jobs of the context’s namespace with filters, and every namespace with -A: workloads --kind job', async () => {
    const job = {
      kind: 'job',
      apiVersion: 'batch/v1',
      objectKind: 'Job',
      namespace: 'team-a',
      name: 'train',
      uid: 'u1',
      phase: 'running',
      cluster: 'worker-1',
      attempt: 1,
      placedAt: '2026-01-01T11:58:00Z',
      waitingSince: null,
      createdAt: '2026-01-01T11:58:00Z',
      finishedAt: null,
      pods: 2,
      reason: null,
      labels: {},
    };
    const url = await startApi((_req, res) => json(res, 200, { items: [job] }));
    const config = kubeconfig({ token }, { namespace: 'team-a' });
    const inNamespace = await run([
      'jobs',
      '--phase',
      'running',
      '-l',
      'app=x',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(inNamespace.stdout).toBe(
      'KIND  NAME   PHASE    CLUSTER   ATTEMPT  PODS  AGE  REASON\n' +
        'job   train  running  worker-1  1        2     2m   <none>\n',
    );
    expect(requests[0]!.url.pathname).toBe('/api/v1/workloads');
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      namespace: 'team-a',
      kind: 'job',
      phase: 'running',
      labelSelector: 'app=x',
      limit: '500',
    });
    const all = await run(['jobs', '-A', '-o', 'yaml', '--api-url', url, '--kubeconfig', config]);
    expect(parse(all.stdout)).toEqual({ items: [job] });
    expect(requests[1]!.url.searchParams.has('namespace')).toBe(false);
    expect((await run(['jobs', '--phase', 'done', '--api-url', url])).code).toBe(2);
  });

  it('shows the pending queue in order', async () => {
    const url = await startApi((_req, res) =>
      json(res, 200, {
        items: [
          {
            position: 1,
            kind: 'job',
            apiVersion: 'batch/v1',
            objectKind: 'Job',
            namespace: 'a',
            name: 'big',
            uid: 'u',
            waitingSince: null,
            waitingSeconds: 420,
            reason: '0/2 clusters available: 2 insufficient cpu',
            queueState: 'waiting',
            queue: null,
          },
          {
            position: 2,
            kind: 'job',
            apiVersion: 'batch/v1',
            objectKind: 'Job',
            namespace: 'a',
            name: 'quota',
            uid: 'v',
            waitingSince: null,
            waitingSeconds: 60,
            reason: 'queue research: cpu 40/40 in use',
            queueState: 'delayed',
            queue: { name: 'research', position: 3, of: 17 },
          },
        ],
        total: 2,
      }),
    );
    const result = await run(['pending', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result.stdout).toBe(
      'POSITION  KIND  NAMESPACE  NAME   QUEUE          WAITING  REASON\n' +
        '1         job   a          big    <none>         7m       0/2 clusters available: 2 insufficient cpu\n' +
        '2         job   a          quota  research 3/17  60s      queue research: cpu 40/40 in use\n',
    );
    expect(requests[0]!.url.searchParams.has('namespace')).toBe(false);
    expect(requests[0]!.url.searchParams.has('kind')).toBe(false);
    await run(['pending', '--kind', 'raycluster', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(requests[1]!.url.searchParams.get('kind')).toBe('raycluster');
  });

  it('lists DispatchQueues, shows one, and says which permission a caller lacks', async () => {
    const queue = {
      name: 'research',
      valid: true,
      problems: [],
      cohort: 'lab',
      weight: 1,
      queueingStrategy: 'StrictFIFO',
      preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Any' },
      namespaceSelector: null,
      resources: [],
      status: {
        pendingWorkloads: 2,
        admittedWorkloads: 1,
        usage: {},
        borrowed: {},
        share: '0.5',
        columns: { cpu: '4/8', memory: '1Gi/4Gi', gpu: '-' },
        conditions: [],
        observedGeneration: 1,
      },
      createdAt: null,
    };
    const url = await startApi((req, res) => {
      if (req.url.pathname === '/api/v1/queues') return json(res, 200, { items: [queue] });
      if (req.url.pathname === '/api/v1/queues/research')
        return json(res, 200, { ...queue, pending: [], admitted: [], hidden: { pending: 2, admitted: 1 } });
      return problem(res, 403, {
        code: 'forbidden',
        title: 'Forbidden',
        detail: 'alice may not get dispatchqueues.jobrelay.dev "secret"',
        missingPermission: { verb: 'get', group: 'jobrelay.dev', resource: 'dispatchqueues', name: 'secret' },
      });
    });
    const config = kubeconfig({ token });
    const list = await run(['queues', '--api-url', url, '--kubeconfig', config]);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      'NAME      COHORT  PENDING  ADMITTED  CPU  MEMORY   GPU  BORROWED  SHARE\n' +
        'research  lab     2        1         4/8  1Gi/4Gi  -    <none>    0.5\n',
    );
    const one = await run(['get', 'queue', 'research', '--api-url', url, '--kubeconfig', config]);
    expect(one.stdout).toContain('Pending (0 in queue order; 2 more you may not list):\n');
    expect(requests[1]!.url.pathname).toBe('/api/v1/queues/research');
    const yaml = await run(['queues', 'research', '-o', 'yaml', '--api-url', url, '--kubeconfig', config]);
    expect(parse(yaml.stdout)).toMatchObject({ name: 'research', hidden: { pending: 2 } });
    const refused = await run(['queues', 'secret', '--api-url', url, '--kubeconfig', config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('dispatchqueues');
  });

  it('lists workloads of every kind, filtered by kind, with their phase, cluster and pods', async () => {
    const workload = {
      kind: 'raycluster',
      apiVersion: 'ray.io/v1',
      objectKind: 'RayCluster',
      namespace: 'team-a',
      name: 'demo',
      uid: 'u1',
      phase: 'running',
      cluster: 'worker-2',
      attempt: 1,
      placedAt: '2026-01-01T11:58:00Z',
      waitingSince: null,
      createdAt: '2026-01-01T11:50:00Z',
      finishedAt: null,
      pods: 3,
      reason: null,
      labels: {},
    };
    const url = await startApi((_req, res) => json(res, 200, { items: [workload] }));
    const config = kubeconfig({ token }, { namespace: 'team-a' });
    const result = await run([
      'workloads',
      '--kind',
      'raycluster,rayjob',
      '--phase',
      'running',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'KIND        NAME  PHASE    CLUSTER   ATTEMPT  PODS  AGE  REASON\n' +
        'raycluster  demo  running  worker-2  1        3     10m  <none>\n',
    );
    expect(requests[0]!.url.pathname).toBe('/api/v1/workloads');
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      namespace: 'team-a',
      kind: 'raycluster,rayjob',
      phase: 'running',
      limit: '500',
    });
    const all = await run(['get', 'workloads', '-A', '-o', 'json', '--api-url', url, '--kubeconfig', config]);
    expect(JSON.parse(all.stdout)).toEqual({ items: [workload] });
    expect(requests[1]!.url.searchParams.has('namespace')).toBe(false);
    // The phases of every kind, not the Job's.
    expect((await run(['workloads', '--phase', 'succeeded', '--api-url', url])).code).toBe(2);
  });

  it('explains a RayCluster through the kind-generic routes, by --kind or KIND/NS/NAME', async () => {
    const url = await startApi((req, res) => {
      if (req.method === 'GET')
        json(res, 200, {
          kind: 'raycluster',
          apiVersion: 'ray.io/v1',
          objectKind: 'RayCluster',
          namespace: 'team-a',
          name: 'demo',
          phase: 'running',
          cluster: 'worker-2',
          attempt: 1,
          placedAt: '2026-01-01T11:55:00Z',
          waitingSince: null,
          createdAt: '2026-01-01T11:50:00Z',
          finishedAt: null,
          pods: 3,
          reason: null,
          labels: {},
          placement: { cluster: 'worker-2', attempt: 1 },
          history: [],
          mirror: {
            cluster: 'worker-2',
            uid: 'm-1',
            status: { state: 'ready', readyWorkerReplicas: 2, head: {} },
          },
          mirrorUnavailable: null,
          status: { state: 'ready' },
          events: [],
          waiting: null,
          podSelectors: [{ labelSelector: 'ray.io/cluster=demo', description: 'RayCluster demo' }],
        });
      else json(res, 500, {});
    });
    const config = kubeconfig({ token });
    const result = await run(['explain', 'raycluster/team-a/demo', '--api-url', url, '--kubeconfig', config]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        'Workload:    raycluster team-a/demo (ray.io/v1 RayCluster)',
        'Phase:       running',
        'Cluster:     worker-2 (attempt 1, placed 5m ago)',
        'Pods:        3 at once',
        'Age:         10m',
        'Placement:',
        '  cluster: worker-2',
        '  attempt: 1',
        'Mirror:      on worker-2, uid m-1; state ready, readyWorkerReplicas 2',
        'Pods on its cluster:',
        '  ray.io/cluster=demo (RayCluster demo)',
        'Events:      <none>',
        '',
      ].join('\n'),
    );
    // Running: no preview is asked for.
    expect(requests.map((r) => [r.method, r.url.pathname])).toEqual([
      ['GET', '/api/v1/workloads/raycluster/team-a/demo'],
    ]);
    const byFlag = await run([
      'explain',
      'demo',
      '--kind',
      'raycluster',
      '-n',
      'team-a',
      '-o',
      'json',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(Object.keys(JSON.parse(byFlag.stdout))).toEqual(['workload', 'placementPreview']);
    expect(requests[1]!.url.pathname).toBe('/api/v1/workloads/raycluster/team-a/demo');
    const clash = await run([
      'explain',
      'rayjob/demo',
      '--kind',
      'raycluster',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('the kind is given twice');
  });

  it('previews a waiting workload of another kind by its kind and name', async () => {
    const url = await startApi((req, res) => {
      if (req.method === 'GET')
        json(res, 200, {
          kind: 'rayjob',
          namespace: 'default',
          name: 'big',
          phase: 'pending',
          cluster: null,
          attempt: null,
          placedAt: null,
          waitingSince: '2026-01-01T11:57:00Z',
          createdAt: '2026-01-01T11:57:00Z',
          reason: '0/2 clusters available: 2 insufficient cpu',
          placement: null,
          mirror: null,
          mirrorUnavailable: 'the RayJob is not placed on a cluster yet',
          waiting: { reason: '0/2 clusters available: 2 insufficient cpu', since: '2026-01-01T11:57:00Z' },
          events: [],
        });
      else
        json(res, 200, {
          decision: 'unschedulable',
          cluster: null,
          message: '0/2 clusters available',
          clusters: [],
        });
    });
    const result = await run([
      'explain',
      'rayjob/big',
      '--api-url',
      url,
      '--kubeconfig',
      kubeconfig({ token }),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Waiting:     0/2 clusters available: 2 insufficient cpu (for 3m)\n');
    expect(result.stdout).toContain('Mirror:      <none> (the RayJob is not placed on a cluster yet)\n');
    expect(result.stdout).toContain('Placement preview: unschedulable\n');
    expect(JSON.parse(requests[1]!.body)).toEqual({ kind: 'rayjob', namespace: 'default', name: 'big' });
  });

  it('explains a waiting Job found by its name alone, with the placement preview of every cluster', async () => {
    const waiting = {
      kind: 'job',
      apiVersion: 'batch/v1',
      objectKind: 'Job',
      namespace: 'default',
      name: 'big',
      uid: 'u1',
      phase: 'pending',
      cluster: null,
      attempt: null,
      placedAt: null,
      waitingSince: '2026-01-01T11:57:00Z',
      createdAt: '2026-01-01T11:57:00Z',
      finishedAt: null,
      pods: 1,
      reason: '0/2 clusters available: 1 cordoned, 1 insufficient cpu',
      labels: {},
      placement: null,
      history: [],
      mirror: null,
      mirrorUnavailable: 'the Job is not placed on a cluster yet',
      status: {},
      events: [],
      waiting: {
        reason: '0/2 clusters available: 1 cordoned, 1 insufficient cpu',
        since: '2026-01-01T11:57:00Z',
      },
      podSelectors: [],
    };
    const url = await startApi((req, res) => {
      if (req.url.pathname === '/api/v1/kinds')
        json(res, 200, { items: [{ name: 'job' }, { name: 'raycluster' }] });
      else if (req.url.pathname === '/api/v1/workloads/job/default/big') json(res, 200, waiting);
      else if (req.method === 'GET')
        problem(res, 404, { code: 'not-found', detail: `no dispatched workload at ${req.url.pathname}` });
      else {
        json(res, 200, {
          decision: 'unschedulable',
          cluster: null,
          message: '0/2 clusters available: 1 cordoned, 1 insufficient cpu',
          clusters: [
            { name: 'w1', eligible: false, score: null, reason: 'cordoned' },
            { name: 'w2', eligible: false, score: null, reason: 'insufficient cpu (wants 8, free 2)' },
          ],
        });
      }
    });
    const result = await run(['explain', 'big', '--api-url', url, '--kubeconfig', kubeconfig({ token })]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Workload:    job default/big (batch/v1 Job)\n');
    expect(result.stdout).toContain(
      'Waiting:     0/2 clusters available: 1 cordoned, 1 insufficient cpu (for 3m)\n',
    );
    // The waiting reason is said once, not again as the workload's reason.
    expect(result.stdout).not.toContain('Reason:');
    expect(result.stdout).toContain(
      'Placement preview: unschedulable\n' +
        '  0/2 clusters available: 1 cordoned, 1 insufficient cpu\n' +
        '  CLUSTER  ELIGIBLE  SCORE   REASON\n' +
        '  w1       False     <none>  cordoned\n' +
        '  w2       False     <none>  insufficient cpu (wants 8, free 2)\n',
    );
    expect(requests.map((r) => [r.method, r.url.pathname]).sort()).toEqual([
      ['GET', '/api/v1/kinds'],
      ['GET', '/api/v1/workloads/job/default/big'],
      ['GET', '/api/v1/workloads/raycluster/default/big'],
      ['POST', '/api/v1/placement-preview'],
    ]);
    expect(JSON.parse(requests.find((r) => r.method === 'POST')!.body)).toEqual({
      kind: 'job',
      namespace: 'default',
      name: 'big',
    });
  });

  it('asks which kind when several have a workload of that name, and says none has one otherwise', async () => {
    const detail = (kind: string) => ({
      kind,
      namespace: 'team-a',
      name: 'demo',
      phase: 'running',
      cluster: 'w1',
      waiting: null,
    });
    const url = await startApi((req, res) => {
      const path = req.url.pathname;
      if (path === '/api/v1/kinds')
        json(res, 200, { items: [{ name: 'job' }, { name: 'raycluster' }, { name: 'rayjob' }] });
      else if (path === '/api/v1/workloads/job/team-a/demo') json(res, 200, detail('job'));
      else if (path === '/api/v1/workloads/raycluster/team-a/demo') json(res, 200, detail('raycluster'));
      else if (path.endsWith('/logs')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('[head/ray-head] ready\n');
      } else if (path.startsWith('/api/v1/workloads/rayjob/'))
        problem(res, 403, { code: 'forbidden', detail: 'you may not get rayjobs.ray.io' });
      else problem(res, 404, { code: 'not-found', detail: 'no such workload' });
    });
    const config = kubeconfig({ token });
    const twice = await run(['explain', 'demo', '-n', 'team-a', '--api-url', url, '--kubeconfig', config]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(
      'team-a/demo is the name of a dispatched job and a raycluster: say which with --kind job|raycluster (or job/demo)',
    );
    // Named with its kind, only that kind's route is read.
    requests = [];
    const logs = await run(['logs', 'raycluster/team-a/demo', '--api-url', url, '--kubeconfig', config]);
    expect(requests.map((r) => r.url.pathname)).toEqual(['/api/v1/workloads/raycluster/team-a/demo/logs']);
    expect(logs).toMatchObject({ code: 0, stdout: '[head/ray-head] ready\n' });
    const none = await run(['explain', 'gone', '-n', 'team-a', '--api-url', url, '--kubeconfig', config]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'no dispatched workload team-a/gone of any kind (job, raycluster, rayjob); you may not read rayjob, so those were not looked at',
    );
  });

  it('drain --wait polls until no workload remains', async () => {
    let remaining = 2;
    const url = await startApi((req, res) => {
      if (req.method === 'GET') remaining -= 1;
      json(res, 200, { cluster: 'w1', draining: true, remaining, hidden: 0, workloads: [] });
    });
    const result = await run([
      'drain',
      'w1',
      '--wait',
      '--api-url',
      url,
      '--kubeconfig',
      kubeconfig({ token }),
    ]);
    expect(result).toEqual({
      code: 0,
      stdout:
        'workercluster/w1 draining: 2 workloads remain\nworkercluster/w1: 1 workload remains\nworkercluster/w1: 0 workloads remain\nworkercluster/w1 drained\n',
      stderr: '',
    });
    expect(requests.map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
  });

  it('drain --wait gives up after --timeout with exit 1', async () => {
    const url = await startApi((_req, res) =>
      json(res, 200, { cluster: 'w1', draining: true, remaining: 1, hidden: 0, workloads: [] }),
    );
    const stdout = new Collect();
    const stderr = new Collect();
    let clock = Date.parse('2026-01-01T12:00:00Z');
    const code = await runPlugin(
      ['drain', 'w1', '--wait', '--timeout', '30s', '--api-url', url, '--kubeconfig', kubeconfig({ token })],
      {
        env: { HOME: dir },
        stdout,
        stderr,
        // Each reading of the clock is 10 s later, so the 30 s timeout passes after a few polls.
        now: () => {
          clock += 10_000;
          return new Date(clock);
        },
        drainPollIntervalMs: 1,
      },
    );
    expect(code).toBe(1);
    expect(stderr.text).toBe(
      'error: timed out after 30s waiting for workercluster/w1 to drain: 1 workload remains\n',
    );
  });

  it('registers a worker from a context, with every file inlined in the kubeconfig it sends', async () => {
    writeFileSync(join(dir, 'worker-ca.crt'), 'WORKER CA');
    writeFileSync(join(dir, 'worker-token'), 'worker-token-value\n');
    const source = join(dir, 'workers.kubeconfig');
    writeFileSync(
      source,
      stringify({
        clusters: [
          { name: 'w3', cluster: { server: 'https://w3:6443', 'certificate-authority': 'worker-ca.crt' } },
        ],
        users: [{ name: 'w3-dispatcher', user: { tokenFile: 'worker-token' } }],
        contexts: [{ name: 'w3', context: { cluster: 'w3', user: 'w3-dispatcher' } }],
      }),
    );
    const url = await startApi((req, res) => {
      if (req.url.searchParams.get('dryRun') === 'true') {
        json(res, 200, { dryRun: true, probe: { server: 'https://w3:6443', kubernetesVersion: 'v1.35.4' } });
      } else {
        json(res, 201, { ...cluster, name: 'w3' });
      }
    });
    const common = [
      '--from-context',
      'w3',
      '--kubeconfig-file',
      source,
      '--api-url',
      url,
      '--kubeconfig',
      kubeconfig({ token }),
    ];
    const dry = await run(['register', 'w3', ...common, '--dry-run']);
    expect(dry).toEqual({
      code: 0,
      stdout: 'workercluster/w3 would be registered (dry run): reached https://w3:6443, Kubernetes v1.35.4\n',
      stderr: '',
    });
    const result = await run([
      'register',
      'w3',
      ...common,
      '--label',
      'region=eu',
      '--weight',
      '50',
      '--max-active-workloads',
      '10',
      '--allowed-namespace',
      'team-a',
    ]);
    expect(result).toEqual({ code: 0, stdout: 'workercluster/w3 registered\n', stderr: '' });
    const body = JSON.parse(requests[1]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'w3',
      labels: { region: 'eu' },
      weight: 50,
      maxActiveWorkloads: 10,
      allowedNamespaces: ['team-a'],
    });
    expect(parse(body.kubeconfig as string)).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'w3',
          cluster: {
            server: 'https://w3:6443',
            'certificate-authority-data': Buffer.from('WORKER CA').toString('base64'),
          },
        },
      ],
      users: [{ name: 'w3-dispatcher', user: { token: 'worker-token-value' } }],
      contexts: [{ name: 'w3', context: { cluster: 'w3', user: 'w3-dispatcher' } }],
      'current-context': 'w3',
    });
    // The caller's own token authenticates the request; it is not what gets registered.
    expect(requests[1]?.authorization).toBe(`Bearer ${token}`);
  });

  it('prints the reason and detail when the API refuses the kubeconfig', async () => {
    const source = join(dir, 'w.kubeconfig');
    writeFileSync(
      source,
      stringify({
        clusters: [{ name: 'w', cluster: { server: 'http://w:8080' } }],
        users: [{ name: 'u', user: { token: 'x' } }],
        contexts: [{ name: 'w', context: { cluster: 'w', user: 'u' } }],
      }),
    );
    const url = await startApi((_req, res) =>
      problem(res, 422, {
        code: 'kubeconfig-refused',
        reason: 'KubeconfigUnsafe',
        detail: 'the server http://w:8080 is not https; credentials would travel in clear',
      }),
    );
    const result = await run([
      'register',
      'w',
      '--from-context',
      'w',
      '--kubeconfig-file',
      source,
      '--api-url',
      url,
      '--kubeconfig',
      kubeconfig({ token }),
    ]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: KubeconfigUnsafe: the kubeconfig of context "w" was refused: the server http://w:8080 is not https; credentials would travel in clear\n',
    });
  });

  it('streams logs to stdout as they arrive', async () => {
    const stdout = new Collect();
    const firstArrived = new Promise<void>((resolve) => {
      stdout.onWrite = (text) => {
        if (text.includes('line 1')) resolve();
      };
    });
    const url = await startApi(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('[pod-a/main] line 1\n');
      // The second line is only sent once the first reached stdout: a client that buffered the
      // whole body would never see the end, and the test would time out.
      await firstArrived;
      res.end('[pod-a/main] line 2\n');
    });
    const code = await runPlugin(
      [
        'logs',
        'job/train',
        '-n',
        'team-a',
        '-f',
        '-c',
        'main',
        '--tail',
        '10',
        '--api-url',
        url,
        '--kubeconfig',
        kubeconfig({ token }),
      ],
      { env: { HOME: dir }, stdout, stderr: new Collect() },
    );
    expect(code).toBe(0);
    expect(stdout.text).toBe('[pod-a/main] line 1\n[pod-a/main] line 2\n');
    expect(requests[0]?.url.pathname).toBe('/api/v1/workloads/job/team-a/train/logs');
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      follow: 'true',
      container: 'main',
      tailLines: '10',
    });
  });
});

describe('logs of another kind', () => {
  it('reads a RayCluster’s pods through the kind-generic route, by KIND/NS/NAME or --kind', async () => {
    const url = await startApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('[demo-head/ray-head] hello\n');
    });
    const config = kubeconfig({ token });
    const byRef = await run([
      'logs',
      'raycluster/team-a/demo',
      '--tail',
      '1',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(byRef).toMatchObject({ code: 0, stdout: '[demo-head/ray-head] hello\n' });
    const byFlag = await run([
      'logs',
      'demo',
      '--kind',
      'raycluster',
      '-n',
      'team-a',
      '--api-url',
      url,
      '--kubeconfig',
      config,
    ]);
    expect(byFlag.code).toBe(0);
    expect(requests.map((r) => r.url.pathname)).toEqual([
      '/api/v1/workloads/raycluster/team-a/demo/logs',
      '/api/v1/workloads/raycluster/team-a/demo/logs',
    ]);
    expect(requests[0]!.url.searchParams.get('tailLines')).toBe('1');
  });
});
