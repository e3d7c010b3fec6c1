// A registered kubeconfig never makes a jobrelay process read its own files or send its
// credentials (issue 28, part 2), tried as an attacker would: kubeconfigs whose users name
// files (`token-file: /etc/hostname`, a file holding a marker, a FIFO, /dev/zero), on the
// user the current context uses and on one it does not, aimed at a server the attacker runs.
// Through the API (a dry run and a real registration) and through a WorkerCluster's Secret
// (the controller): refused naming the field, nothing saved, the attacker's server never
// contacted, the marker nowhere. Then the optional server address deny-list, through the API.

import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { kubeconfigPolicyOf } from '@jobrelay/clusters';
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type ApiHarness, type ApiResponse, startApiHarness } from '../src/api-harness.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { testSandbox, uniqueName } from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const workerClusters = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

let fleet: Fleet;
let custom: CustomObjectsApi;
let api: ApiHarness;
let controller: ControllerProcess;
const apiLog: string[] = [];
const created: string[] = [];

// The attacker's server: HTTPS with a CA the kubeconfig trusts, recording every connection and
// every credential it is sent.
let attacker: Server;
let attackerUrl: string;
let attackerCa: string;
let attackerConnections = 0;
const attackerCredentials: string[] = [];

const dir = mkdtempSync(join(tmpdir(), 'jobrelay-vetting-'));
const MARKER = `jobrelay-marker-${process.pid}-${Date.now()}`;
const markerFile = join(dir, 'marker');
writeFileSync(markerFile, MARKER);
const fifo = join(dir, 'fifo');
execFileSync('mkfifo', [fifo]);

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const cert = readFileSync(join(dir, 'cert.pem'));
  attackerCa = cert.toString('base64');
  attacker = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (request, response) => {
    attackerCredentials.push(String(request.headers.authorization));
    response.writeHead(401).end();
  });
  attacker.on('connection', () => {
    attackerConnections += 1;
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `https://127.0.0.1:${(attacker.address() as { port: number }).port}`;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      apiLog.push(String(chunk));
      done();
    },
  });
  api = await startApiHarness(fleet.sandbox, { log: pino({ level: 'debug' }, sink) });
  controller = startController(fleet.sandbox);
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  await api?.close();
  for (const name of created) {
    await custom.deleteClusterCustomObject({ ...workerClusters, name }).catch(() => {});
    await fleet.management.core.deleteNamespacedSecret({ name, namespace: systemNamespace }).catch(() => {});
  }
  await new Promise((resolve) => attacker?.close(resolve));
  // Last: the controller and the API, whose kubeconfigs name the marker and the FIFO, are stopped.
  rmSync(dir, { recursive: true, force: true });
});

type Doc = {
  clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
  users: Array<{ name: string; user: Record<string, unknown> }>;
  [key: string]: unknown;
};

/** A kubeconfig aimed at the attacker's server, its current user and an unused one both inline. */
function aimedAtAttacker(edit: (doc: Doc) => void): string {
  const doc: Doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'attacker', cluster: { server: attackerUrl, 'certificate-authority-data': attackerCa } },
      { name: 'spare', cluster: { server: attackerUrl, 'certificate-authority-data': attackerCa } },
    ],
    users: [
      { name: 'current', user: { token: 'attacker-visible-token' } },
      { name: 'unused', user: { token: 'attacker-visible-token' } },
    ],
    contexts: [
      { name: 'current', context: { cluster: 'attacker', user: 'current' } },
      { name: 'unused', context: { cluster: 'spare', user: 'unused' } },
    ],
    'current-context': 'current',
  };
  edit(doc);
  return stringify(doc);
}

function expectProblem(
  response: ApiResponse,
  status: number,
  code: string,
): { detail: string; reason?: string } {
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json() as { detail: string; reason?: string; code: string; status: number };
  expect(problem, response.body).toMatchObject({ status, code });
  expect(response.status).toBe(status);
  return problem;
}

/** A file a registered kubeconfig names, on the current or the unused user (or cluster). */
const fileCases: Array<{ what: string; path: string; edit: (doc: Doc) => void }> = [
  {
    what: 'token-file: /etc/hostname on the current user',
    path: 'users[0].user.token-file',
    edit: (doc) => {
      doc.users[0]!.user = { 'token-file': '/etc/hostname' };
    },
  },
  {
    what: 'token-file: /etc/hostname on a user the current context does not use',
    path: 'users[1].user.token-file',
    edit: (doc) => {
      doc.users[1]!.user['token-file'] = '/etc/hostname';
    },
  },
  {
    what: "token-file: the process's own ServiceAccount token",
    path: 'users[0].user.token-file',
    edit: (doc) => {
      doc.users[0]!.user = { 'token-file': '/var/run/secrets/kubernetes.io/serviceaccount/token' };
    },
  },
  {
    what: 'token-file: a marker file',
    path: 'users[0].user.token-file',
    edit: (doc) => {
      doc.users[0]!.user = { 'token-file': markerFile };
    },
  },
  {
    what: 'tokenFile: a marker file, on the unused user',
    path: 'users[1].user.tokenFile',
    edit: (doc) => {
      doc.users[1]!.user = { tokenFile: markerFile };
    },
  },
  {
    what: 'token-file: a FIFO (reading it would block)',
    path: 'users[0].user.token-file',
    edit: (doc) => {
      doc.users[0]!.user = { 'token-file': fifo };
    },
  },
  {
    what: 'token-file: /dev/zero (reading it never ends)',
    path: 'users[1].user.token-file',
    edit: (doc) => {
      doc.users[1]!.user = { 'token-file': '/dev/zero' };
    },
  },
  {
    what: 'client-key: a marker file',
    path: 'users[0].user.client-key',
    edit: (doc) => {
      doc.users[0]!.user = { 'client-certificate-data': attackerCa, 'client-key': markerFile };
    },
  },
  {
    what: 'certificate-authority: a marker file, on the unused cluster',
    path: 'clusters[1].cluster.certificate-authority',
    edit: (doc) => {
      doc.clusters[1]!.cluster = { server: attackerUrl, 'certificate-authority': markerFile };
    },
  },
];

describe('the API refuses a kubeconfig that names a file', () => {
  it('on a dry run and on a real registration: 422 naming the field, nothing read, sent or saved', async () => {
    const secretsBefore = (
      await fleet.management.core.listNamespacedSecret({ namespace: systemNamespace })
    ).items
      .map((s) => s.metadata!.name)
      .sort();
    for (const testCase of fileCases) {
      const kubeconfig = aimedAtAttacker(testCase.edit);
      for (const query of ['?dryRun=true', '']) {
        const name = uniqueName('vetted');
        const response = await api.call('fleet-admin', 'POST', `/api/v1/clusters${query}`, {
          name,
          kubeconfig,
        });
        const problem = expectProblem(response, 422, 'kubeconfig-refused');
        expect(problem.reason, testCase.what).toBe('KubeconfigUnsafe');
        expect(problem.detail, testCase.what).toContain(`${testCase.path} is not allowed: `);
        expect(response.body, testCase.what).not.toContain(MARKER);
        expect(
          await custom.getClusterCustomObject({ ...workerClusters, name }).then(
            () => 'exists',
            () => 'absent',
          ),
        ).toBe('absent');
      }
    }
    const secretsAfter = (
      await fleet.management.core.listNamespacedSecret({ namespace: systemNamespace })
    ).items
      .map((s) => s.metadata!.name)
      .sort();
    expect(secretsAfter).toEqual(secretsBefore);
    expect(attackerConnections).toBe(0);
    expect(attackerCredentials).toEqual([]);
    expect(apiLog.join('')).toContain('"statusCode":422');
    expect(apiLog.join('')).not.toContain(MARKER);
  });

  it('still accepts a valid kubeconfig with what kubectl and minikube add: vetted and probed, then judged a duplicate', async () => {
    const worker = fleet.sandbox.workers[0]!.name;
    const registered = Buffer.from(
      (
        await fleet.management.core.readNamespacedSecret({
          name: `${worker}-kubeconfig`,
          namespace: systemNamespace,
        })
      ).data!.kubeconfig!,
      'base64',
    ).toString('utf8');
    const doc = parse(registered) as Doc & { contexts: Array<{ context: Record<string, unknown> }> };
    const extension = [{ name: 'cluster_info', extension: { provider: 'minikube.sigs.k8s.io' } }];
    doc.clusters[0]!.cluster.extensions = extension;
    doc.clusters[0]!.cluster['insecure-skip-tls-verify'] = false;
    doc.contexts[0]!.context.extensions = extension;
    doc.preferences = {};
    const response = await api.call('fleet-admin', 'POST', '/api/v1/clusters?dryRun=true', {
      name: uniqueName('valid'),
      kubeconfig: stringify(doc),
    });
    // DuplicateCluster is decided from the kube-system UID the probe read with this kubeconfig.
    const problem = expectProblem(response, 409, 'conflict');
    expect(problem.reason).toBe('DuplicateCluster');
    expect(problem.detail).toContain(`WorkerCluster ${worker}`);
  });
});

describe('the controller refuses a WorkerCluster whose Secret names a file', () => {
  it('keeps it not Active with reason KubeconfigUnsafe naming the field, reading and sending nothing', async () => {
    const cases = [fileCases[0]!, fileCases[1]!, fileCases[3]!, fileCases[5]!];
    const names = cases.map(() => uniqueName('vetted'));
    for (const [index, testCase] of cases.entries()) {
      const name = names[index]!;
      created.push(name);
      await fleet.management.core.createNamespacedSecret({
        namespace: systemNamespace,
        body: { metadata: { name }, stringData: { kubeconfig: aimedAtAttacker(testCase.edit) } },
      });
      await custom.createClusterCustomObject({
        ...workerClusters,
        body: {
          apiVersion: 'jobrelay.dev/v1alpha1',
          kind: 'WorkerCluster',
          metadata: { name },
          spec: { kubeconfigSecretRef: { name } },
        },
      });
    }
    for (const [index, testCase] of cases.entries()) {
      const condition = await workerClusterAdmin(fleet).activeCondition(
        names[index]!,
        (c) => c.reason === 'KubeconfigUnsafe',
      );
      expect(condition.status, testCase.what).toBe('False');
      expect(condition.message, testCase.what).toContain(
        `Secret ${systemNamespace}/${names[index]}: ${testCase.path} is not allowed: `,
      );
    }
    expect(attackerConnections).toBe(0);
    expect(controller.logs()).not.toContain(MARKER);
    // The controller is not blocked on the FIFO: the workers it serves are still Active.
    for (const worker of fleet.sandbox.workers) {
      expect((await workerClusterAdmin(fleet).activeCondition(worker.name, () => true)).status).toBe('True');
    }
  });
});

describe('the server address deny-list (--restrict-server-addresses), through the API', () => {
  it('refuses a loopback server when vetting and a name resolving to a denied address when connecting', async () => {
    const worker = fleet.sandbox.workers[0]!.name;
    const registered = Buffer.from(
      (
        await fleet.management.core.readNamespacedSecret({
          name: `${worker}-kubeconfig`,
          namespace: systemNamespace,
        })
      ).data!.kubeconfig!,
      'base64',
    ).toString('utf8');
    const server = (parse(registered) as Doc).clusters[0]!.cluster.server as string;
    const port = new URL(server).port;
    // This machine's own name stands in for a name an attacker points at an internal address.
    const byName = (() => {
      const doc = parse(registered) as Doc;
      doc.clusters[0]!.cluster.server = `https://${hostname()}:${port}`;
      doc.clusters[0]!.cluster['tls-server-name'] = 'localhost';
      return stringify(doc);
    })();
    // Without the deny-list the name is not refused for its address: where it resolves to the
    // worker's (loopback here), it reaches the worker and is judged a duplicate of it.
    const { address } = await lookup(hostname());
    const unrestricted = await api.call('fleet-admin', 'POST', '/api/v1/clusters?dryRun=true', {
      name: uniqueName('byname'),
      kubeconfig: byName,
    });
    expect((unrestricted.json() as { reason?: string }).reason).not.toBe('KubeconfigUnsafe');
    if (address === '127.0.0.1')
      expect((unrestricted.json() as { reason?: string }).reason).toBe('DuplicateCluster');

    const restricted = await startApiHarness(fleet.sandbox, {
      kubeconfigPolicy: kubeconfigPolicyOf({
        allowExecPlugins: false,
        allowProxyUrl: false,
        restrictServerAddresses: true,
        // The name's address, wherever it is: loopback is denied anyway.
        deniedServerCidrs: ['10.96.0.0/12', `${address}/${address.includes(':') ? 128 : 32}`],
      }),
    });
    try {
      const literal = expectProblem(
        await restricted.call('fleet-admin', 'POST', '/api/v1/clusters?dryRun=true', {
          name: uniqueName('literal'),
          kubeconfig: registered,
        }),
        422,
        'kubeconfig-refused',
      );
      expect(literal.reason).toBe('KubeconfigUnsafe');
      expect(literal.detail).toContain(
        `clusters[0].cluster.server ${new URL(server).origin} is in 127.0.0.0/8 (loopback)`,
      );
      const named = expectProblem(
        await restricted.call('fleet-admin', 'POST', '/api/v1/clusters?dryRun=true', {
          name: uniqueName('byname'),
          kubeconfig: byName,
        }),
        422,
        'kubeconfig-refused',
      );
      expect(named.reason).toBe('KubeconfigUnsafe');
      expect(named.detail).toContain(`was not contacted: ${hostname()} resolves to `);
    } finally {
      await restricted.close();
    }
  });
});
