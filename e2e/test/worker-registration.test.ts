// WorkerCluster registration: the Active condition tells an admin what is wrong and what
// to do, and one broken registration never disturbs the others.

import { readFileSync } from 'node:fs';
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { eventually, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

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

async function activeCondition(name: string, predicate: (c: Condition) => boolean): Promise<Condition> {
  return eventually(
    `WorkerCluster ${name} Active condition`,
    async () => {
      const wc = (await custom.getClusterCustomObject({
        group: 'jobrelay.dev',
        version: 'v1alpha1',
        plural: 'workerclusters',
        name,
      })) as { status?: { conditions?: Condition[] } };
      const condition = wc.status?.conditions?.find((c) => c.type === 'Active');
      return condition && predicate(condition) ? condition : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

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

  it('names a missing key, a malformed kubeconfig and an unsafe one, without leaking credentials', async () => {
    const token = fleet.sandbox.token('admin');
    const cases: Array<{ kubeconfig: string | undefined; reason: string; fragment: string }> = [
      { kubeconfig: undefined, reason: 'KubeconfigKeyMissing', fragment: 'kubeconfig' },
      { kubeconfig: 'clusters: [unclosed', reason: 'KubeconfigMalformed', fragment: 'YAML' },
      {
        kubeconfig: readFileSync(
          fleet.sandbox.kubeconfigPath(fleet.sandbox.workers[0]!.name),
          'utf8',
        ).replace('https://', 'http://'),
        reason: 'KubeconfigUnsafe',
        fragment: 'not https',
      },
    ];
    for (const testCase of cases) {
      const name = uniqueName('bad');
      await putSecret(name, testCase.kubeconfig);
      await register(name, name);
      const condition = await activeCondition(name, (c) => c.reason === testCase.reason);
      expect(condition.status).toBe('False');
      expect(condition.message).toContain(testCase.fragment);
      expect(condition.message).not.toContain(token);
    }
    expect(controller.logs()).not.toContain(token);
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
    for (const worker of fleet.sandbox.workers) {
      expect((await activeCondition(worker.name, () => true)).status).toBe('True');
    }
  });
});
