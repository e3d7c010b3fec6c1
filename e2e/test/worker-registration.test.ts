// WorkerCluster registration: the Active condition tells an admin what is wrong and what
// to do, and one broken registration never disturbs the others.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse, stringify } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { eventually, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

let fleet: Fleet;
let custom: CustomObjectsApi;
let controller: ControllerProcess;
const created: string[] = [];

beforeAll(() => {
  fleet = fleetOf(testSandbox());
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  controller = startController(fleet.sandbox);
});

afterAll(async () => {
  await controller.kill('SIGTERM');
  for (const name of created) {
    await custom
      .deleteClusterCustomObject({
        group: 'jobrelay.dev',
        version: 'v1alpha1',
        plural: 'workerclusters',
        name,
      })
      .catch(() => {});
    await fleet.management.core.deleteNamespacedSecret({ name, namespace: systemNamespace }).catch(() => {});
  }
});

async function register(name: string, secretName: string): Promise<void> {
  created.push(name);
  await custom.createClusterCustomObject({
    group: 'jobrelay.dev',
    version: 'v1alpha1',
    plural: 'workerclusters',
    body: {
      apiVersion: 'jobrelay.dev/v1alpha1',
      kind: 'WorkerCluster',
      metadata: { name },
      spec: { kubeconfigSecretRef: { name: secretName } },
    },
  });
}

async function putSecret(name: string, kubeconfig: string | undefined): Promise<void> {
  const stringData: Record<string, string> = kubeconfig === undefined ? { other: 'x' } : { kubeconfig };
  const body = { metadata: { name, namespace: systemNamespace }, stringData };
  await fleet.management.core.deleteNamespacedSecret({ name, namespace: systemNamespace }).catch(() => {});
  await fleet.management.core.createNamespacedSecret({ namespace: systemNamespace, body });
}

const activeCondition: ReturnType<typeof workerClusterAdmin>['activeCondition'] = (name, predicate) =>
  workerClusterAdmin(fleet).activeCondition(name, predicate);

describe('the Active condition of a WorkerCluster', () => {
  it('says which Secret is missing, then checks the kubeconfig once it arrives', async () => {
    const name = uniqueName('late');
    await register(name, name);
    const missing = await activeCondition(name, (c) => c.reason === 'SecretNotFound');
    expect(missing.status).toBe('False');
    expect(missing.message).toContain(`${systemNamespace}/${name}`);

    // A good kubeconfig, of a cluster that is already registered: refused as a duplicate,
    // since two registrations of one cluster would delete each other's mirrors.
    await putSecret(name, readFileSync(fleet.sandbox.kubeconfigPath(fleet.sandbox.workers[0]!.name), 'utf8'));
    const duplicate = await activeCondition(name, (c) => c.reason === 'DuplicateCluster');
    expect(duplicate.status).toBe('False');
    expect(duplicate.message).toContain(`WorkerCluster ${fleet.sandbox.workers[0]!.name}`);
  });

  it('gives each of 17 bad kubeconfigs its own reason and an actionable message, leaking no credential', async () => {
    const token = fleet.sandbox.token('admin');
    const good = readFileSync(fleet.sandbox.kubeconfigPath(fleet.sandbox.workers[0]!.name), 'utf8');
    const doc = parse(good) as {
      clusters: Array<{ cluster: Record<string, unknown> }>;
      users: Array<{ user: Record<string, unknown> }>;
    };
    const variant = (edit: (d: typeof doc) => void) => {
      const copy = structuredClone(doc);
      edit(copy);
      return stringify(copy);
    };
    const pki = mkdtempSync(join(tmpdir(), 'jobrelay-bad-pki-'));
    // Only this test reads it (into kubeconfig data); the controller never opens these files.
    onTestFinished(() => rmSync(pki, { recursive: true, force: true }));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'pipe' });
    // A CA the apiservers do not use, and a client certificate from the right CA that has expired.
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'other-ca.key',
      '-subj',
      '/CN=other-ca',
      '-days',
      '1',
      '-out',
      'other-ca.crt',
    );
    openssl('genrsa', '-out', 'client.key', '2048');
    openssl(
      'req',
      '-new',
      '-key',
      'client.key',
      '-subj',
      '/CN=expired/O=system:masters',
      '-out',
      'client.csr',
    );
    openssl(
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      join(fleet.sandbox.dir, 'pki', 'ca.crt'),
      '-CAkey',
      join(fleet.sandbox.dir, 'pki', 'ca.key'),
      '-days',
      '-1',
      '-out',
      'client.crt',
    );
    const b64 = (file: string) => readFileSync(join(pki, file)).toString('base64');
    const cases: Array<{ what: string; kubeconfig: string | undefined; reason: string; fragment: string }> = [
      {
        what: 'no kubeconfig key',
        kubeconfig: undefined,
        reason: 'KubeconfigKeyMissing',
        fragment: 'has no key "kubeconfig"',
      },
      {
        what: 'malformed YAML',
        kubeconfig: 'clusters: [unclosed',
        reason: 'KubeconfigMalformed',
        fragment: 'not valid YAML',
      },
      {
        what: 'no current context',
        kubeconfig: good.replace(/current-context: .*/, 'current-context: nowhere'),
        reason: 'KubeconfigMalformed',
        fragment: 'current-context',
      },
      {
        what: 'bad base64',
        kubeconfig: variant((d) => {
          d.clusters[0]!.cluster['certificate-authority-data'] = '!!not base64!!';
        }),
        reason: 'KubeconfigMalformed',
        fragment: 'not valid base64',
      },
      {
        what: 'plain http',
        kubeconfig: good.replace('https://', 'http://'),
        reason: 'KubeconfigUnsafe',
        fragment: 'not https',
      },
      {
        what: 'insecure-skip-tls-verify',
        kubeconfig: variant((d) => {
          d.clusters[0]!.cluster['insecure-skip-tls-verify'] = true;
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'insecure-skip-tls-verify',
      },
      {
        what: 'CA file path',
        kubeconfig: variant((d) => {
          delete d.clusters[0]!.cluster['certificate-authority-data'];
          d.clusters[0]!.cluster['certificate-authority'] = '/etc/ca.crt';
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'certificate-authority is not allowed: it is a file path',
      },
      {
        what: 'exec plugin',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } };
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'exec',
      },
      {
        what: 'auth-provider',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { 'auth-provider': { name: 'oidc' } };
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'auth-provider',
      },
      {
        what: 'tokenFile',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { tokenFile: '/var/run/token' };
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'tokenFile',
      },
      {
        what: 'client certificate file',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { 'client-certificate': '/c.crt', 'client-key': '/c.key' };
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'client-certificate',
      },
      {
        what: 'basic auth',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { username: 'admin', password: 'hunter2' };
        }),
        reason: 'KubeconfigUnsafe',
        fragment: 'basic authentication',
      },
      {
        what: 'wrong CA',
        kubeconfig: variant((d) => {
          d.clusters[0]!.cluster['certificate-authority-data'] = b64('other-ca.crt');
        }),
        reason: 'TLSError',
        fragment: 'does not verify',
      },
      {
        what: 'expired client certificate',
        kubeconfig: variant((d) => {
          d.users[0]!.user = {
            'client-certificate-data': b64('client.crt'),
            'client-key-data': b64('client.key'),
          };
        }),
        reason: 'CertificateExpired',
        fragment: 'expired on',
      },
      {
        what: 'wrong token',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { token: 'not-a-real-token' };
        }),
        reason: 'Unauthorized',
        fragment: 'HTTP 401',
      },
      {
        what: 'identity without permissions',
        kubeconfig: variant((d) => {
          d.users[0]!.user = { token: fleet.sandbox.token('nobody') };
        }),
        reason: 'Forbidden',
        fragment: 'HTTP 403',
      },
      {
        what: 'unreachable server',
        kubeconfig: good.replace(/https:\/\/127\.0\.0\.1:\d+/, 'https://127.0.0.1:9'),
        reason: 'Unreachable',
        fragment: '127.0.0.1:9',
      },
    ];
    expect(cases.length).toBeGreaterThanOrEqual(15);
    const names = cases.map(() => uniqueName('bad'));
    await Promise.all(
      cases.map(async (testCase, i) => {
        await putSecret(names[i]!, testCase.kubeconfig);
        await register(names[i]!, names[i]!);
      }),
    );
    for (const [i, testCase] of cases.entries()) {
      const condition = await activeCondition(names[i]!, (c) => c.reason === testCase.reason);
      expect(condition.status, testCase.what).toBe('False');
      expect(condition.message, testCase.what).toContain(testCase.fragment);
      expect(condition.message, testCase.what).not.toContain(token);
      expect(condition.message, testCase.what).not.toContain('hunter2');
    }
    expect(controller.logs()).not.toContain(token);
    expect(controller.logs()).not.toContain(b64('client.key').slice(0, 40));
    // The controller stayed healthy: the registered workers are still Active.
    for (const worker of fleet.sandbox.workers) {
      expect((await activeCondition(worker.name, () => true)).status).toBe('True');
    }
  });

  it('marks an unreachable server, while the healthy workers stay Active', async () => {
    const name = uniqueName('gone');
    const kubeconfig = readFileSync(
      fleet.sandbox.kubeconfigPath(fleet.sandbox.workers[0]!.name),
      'utf8',
    ).replace(/https:\/\/127\.0\.0\.1:\d+/, 'https://127.0.0.1:9');
    await putSecret(name, kubeconfig);
    await register(name, name);
    const condition = await activeCondition(name, (c) => c.reason === 'Unreachable');
    expect(condition.message).toContain('127.0.0.1:9');
    // It is retried with backoff, and the status says when the next attempt runs.
    const status = await eventually('a second failed attempt', async () => {
      const wc = await workerClusterAdmin(fleet).get(name);
      return (wc.status?.connectionAttempts ?? 0) >= 2 ? wc.status : undefined;
    });
    expect(Date.parse(status!.nextAttemptTime!)).not.toBeNaN();
    for (const worker of fleet.sandbox.workers) {
      expect((await activeCondition(worker.name, () => true)).status).toBe('True');
    }
  });
});

describe('kubectl get workerclusters', () => {
  it('shows ACTIVE, WORKLOADS, FREE-CPU, FREE-MEMORY and AGE, with capacity from the workers', async () => {
    const worker = fleet.sandbox.workers[0]!.name;
    const table = await eventually('capacity in the status', async () => {
      const out = execFileSync(
        join(fleet.sandbox.binariesDir, 'kubectl'),
        [
          '--kubeconfig',
          fleet.sandbox.kubeconfigPath(fleet.sandbox.management.name),
          'get',
          'workerclusters',
          worker,
        ],
        { encoding: 'utf8' },
      );
      return (out.split('\n')[1] ?? '').includes('<none>') ? undefined : out;
    });
    const [header, row] = table.trim().split('\n');
    expect(header!.split(/\s+/)).toEqual(['NAME', 'ACTIVE', 'WORKLOADS', 'FREE-CPU', 'FREE-MEMORY', 'AGE']);
    expect(row).toMatch(new RegExp(`^${worker}\\s+True\\s+\\d+\\s+\\d+(m)?\\s+\\d+(Gi|Mi|Ki)?\\s+`));
  });
});
