// Shipped permissions are the tested permissions: every registered worker kubeconfig
// authenticates as the jobrelay-dispatcher ServiceAccount that deploy/worker creates, with
// exactly its ClusterRole, and a role that lacks a rule the controller needs keeps the
// worker from going Active with a reason that names the missing permission.

import {
  applyObjects,
  dispatcherServiceAccount,
  serviceAccountKubeconfig,
  systemNamespace,
  workerManifests,
} from '@jobrelay/sandbox';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  type V1ClusterRole,
  type V1ClusterRoleBinding,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  statusCodeOf,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const group = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

let fleet: Fleet;
let custom: CustomObjectsApi;
let controller: ControllerProcess;
/** Objects this file created on worker-1 (ServiceAccounts, ClusterRoles, bindings). */
const workerObjects: KubernetesObject[] = [];
/** WorkerClusters and their Secrets this file registered. */
const registrations: string[] = [];
/** Tokens this file saw: none may reach the controller's log. */
const tokens: string[] = [];

function firstWorker(): string {
  return fleet.sandbox.workers[0]!.name;
}

function workerKubeConfig(): KubeConfig {
  return fleet.workers.get(firstWorker())!.kubeConfig;
}

function tokenOf(kubeconfig: string): string {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return kc.getCurrentUser()?.token ?? '';
}

beforeAll(() => {
  fleet = fleetOf(testSandbox());
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  controller = startController(fleet.sandbox, [
    '--cluster-reconnect-max-seconds=2',
    '--cluster-health-interval-seconds=1',
  ]);
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  for (const name of registrations) {
    await custom.deleteClusterCustomObject({ ...group, name }).catch(() => {});
    await fleet.management.core.deleteNamespacedSecret({ name, namespace: systemNamespace }).catch(() => {});
  }
  const objects = KubernetesObjectApi.makeApiClient(workerKubeConfig());
  for (const object of workerObjects.reverse()) await objects.delete(object).catch(() => {});
});

const activeCondition: ReturnType<typeof workerClusterAdmin>['activeCondition'] = (name, predicate) =>
  workerClusterAdmin(fleet).activeCondition(name, predicate);

/**
 * deploy/worker's objects for another ServiceAccount on worker-1, with `resource` taken
 * out of its ClusterRole: the shipped role with one rule missing.
 */
function shippedRoleWithout(name: string, resource: string): KubernetesObject[] {
  const objects = workerManifests().filter((o) => o.kind !== 'Namespace');
  const renamed = objects.map((object) => {
    const copy = structuredClone(object) as KubernetesObject & Partial<V1ClusterRole & V1ClusterRoleBinding>;
    copy.metadata = { ...copy.metadata, name };
    if (copy.kind === 'ClusterRole') {
      copy.rules = (copy.rules ?? []).filter((rule) => !rule.resources?.includes(resource));
    }
    if (copy.kind === 'ClusterRoleBinding') {
      copy.roleRef = { ...copy.roleRef!, name };
      copy.subjects = [{ kind: 'ServiceAccount', name, namespace: systemNamespace }];
    }
    return copy;
  });
  const role = renamed.find((o) => o.kind === 'ClusterRole') as V1ClusterRole;
  // The copy really lacks it, and keeps everything else.
  expect(role.rules?.some((r) => r.resources?.includes(resource))).toBe(false);
  expect(role.rules?.some((r) => r.resources?.includes('jobs'))).toBe(true);
  return renamed;
}

async function registerWorker1As(name: string, kubeconfig: string): Promise<void> {
  tokens.push(tokenOf(kubeconfig));
  registrations.push(name);
  await fleet.management.core.createNamespacedSecret({
    namespace: systemNamespace,
    body: { metadata: { name, namespace: systemNamespace }, stringData: { kubeconfig } },
  });
  await custom.createClusterCustomObject({
    ...group,
    body: {
      apiVersion: 'jobrelay.dev/v1alpha1',
      kind: 'WorkerCluster',
      metadata: { name },
      spec: { kubeconfigSecretRef: { name } },
    },
  });
}

describe('the registered worker identity', () => {
  it('is the jobrelay-dispatcher ServiceAccount of deploy/worker, not an admin', async () => {
    for (const worker of fleet.sandbox.workers) {
      const secret = await fleet.management.core.readNamespacedSecret({
        name: `${worker.name}-kubeconfig`,
        namespace: systemNamespace,
      });
      const kubeconfig = Buffer.from(secret.data?.kubeconfig ?? '', 'base64').toString('utf8');
      const token = tokenOf(kubeconfig);
      tokens.push(token);
      expect(token, worker.name).not.toBe('');
      expect(token, worker.name).not.toBe(fleet.sandbox.token('admin'));
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      });
      expect(review.status?.userInfo?.username, worker.name).toBe(
        `system:serviceaccount:${systemNamespace}:${dispatcherServiceAccount}`,
      );
      expect(review.status?.userInfo?.groups ?? [], worker.name).not.toContain('system:masters');
      // Only what the role grants: no Secrets, no pod writes, no node writes.
      const core = kc.makeApiClient(CoreV1Api);
      expect(await statusCodeOf(core.listSecretForAllNamespaces())).toBe(403);
      expect(await statusCodeOf(core.deleteCollectionNamespacedPod({ namespace: 'default' }))).toBe(403);
      expect(await statusCodeOf(core.readNode({ name: `${worker.name}-node-0` }))).toBe(403);
      expect(await statusCodeOf(core.readNamespace({ name: 'default' }))).toBe(403);
      // And what it grants works: the node list capacity needs.
      expect((await core.listNode()).items.length).toBeGreaterThan(0);
      // The optional rule for a worker's own Kueue: its Workloads read, never written.
      const may = async (verb: string) =>
        (
          await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
            body: {
              apiVersion: 'authorization.k8s.io/v1',
              kind: 'SelfSubjectAccessReview',
              spec: { resourceAttributes: { group: 'kueue.x-k8s.io', resource: 'workloads', verb } },
            },
          })
        ).status?.allowed === true;
      expect(
        Object.fromEntries(
          await Promise.all(
            ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'].map(
              async (verb) => [verb, await may(verb)] as const,
            ),
          ),
        ),
        worker.name,
      ).toEqual({
        get: true,
        list: true,
        watch: false,
        create: false,
        update: false,
        patch: false,
        delete: false,
      });
    }
  });

  it('gets every worker Active with capacity, and places a Job by its requests where it fits', async () => {
    for (const worker of fleet.sandbox.workers) {
      const status = await eventually(
        `${worker.name} Active with capacity`,
        async () => {
          const wc = await workerClusterAdmin(fleet).get(worker.name);
          const active = wc.status?.conditions?.find((c) => c.type === 'Active');
          return active?.status === 'True' && wc.status?.capacity?.allocatable?.cpu ? wc.status : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(Number.parseFloat(status.capacity!.allocatable!.cpu!)).toBeGreaterThan(0);
    }
    // 12 CPUs fit on one node of the last worker only (16-CPU nodes; the others have 4 and 8):
    // placed by the capacity the shipped identity watches, into a namespace it creates there.
    const namespace = await createTestNamespace(fleet.management, 'rbac');
    const name = uniqueName('needs-12-cpu');
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name,
        managedBy: dispatcherManagedBy,
        requests: { cpu: '12', memory: '1Gi' },
        pod: { runSeconds: 1 },
      }),
    });
    const done = await waitForFinishedJob(fleet.management, namespace, name, 120_000);
    expect(isTrue(done, 'Complete')).toBe(true);
    expect(done.status?.succeeded).toBe(1);
    const bigWorker = fleet.sandbox.workers[fleet.sandbox.workers.length - 1]!.name;
    expect(placedCluster(done)).toBe(bigWorker);
    const mirror = await fleet.workers.get(bigWorker)!.batch.readNamespacedJob({ name, namespace });
    expect(mirror.status?.succeeded).toBe(1);
  });
});

describe('a worker identity that lacks a rule of deploy/worker', () => {
  it.each(['nodes', 'pods'])(
    'without %s: not Active, Forbidden naming the missing permission, no capacity; Active checks pass once granted',
    async (resource) => {
      const name = uniqueName(`without-${resource}`);
      const objects = shippedRoleWithout(name, resource);
      workerObjects.push(...objects);
      await applyObjects(workerKubeConfig(), objects);
      await registerWorker1As(name, await serviceAccountKubeconfig(fleet.sandbox, firstWorker(), name));

      const forbidden = await activeCondition(name, (c) => c.reason === 'Forbidden');
      expect(forbidden.status).toBe('False');
      expect(forbidden.message).toContain(`list, watch ${resource}`);
      expect(forbidden.message).toContain('jobrelay-worker ClusterRole');
      const wc = await workerClusterAdmin(fleet).get(name);
      expect(wc.status?.capacity ?? undefined).toBeUndefined();
      // It stays that way (retried with backoff), rather than turning Active without capacity.
      await new Promise((r) => setTimeout(r, 3_000));
      const still = await activeCondition(name, () => true);
      expect([still.status, still.reason]).toEqual(['False', 'Forbidden']);

      // Binding the shipped role as well lets the identity through the check: the next
      // thing it learns is that worker-1 is already registered.
      const binding: KubernetesObject & V1ClusterRoleBinding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${name}-shipped` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'jobrelay-worker' },
        subjects: [{ kind: 'ServiceAccount', name, namespace: systemNamespace }],
      };
      workerObjects.push(binding);
      await applyObjects(workerKubeConfig(), [binding]);
      await workerClusterAdmin(fleet).patch(name, { spec: { weight: 2 } }); // retry now
      const duplicate = await activeCondition(name, (c) => c.reason === 'DuplicateCluster');
      expect(duplicate.message).toContain(`WorkerCluster ${firstWorker()}`);
    },
  );

  it('never logs a token', () => {
    expect(tokens.length).toBeGreaterThanOrEqual(fleet.sandbox.workers.length);
    const logs = controller.logs();
    for (const token of tokens) expect(logs.includes(token)).toBe(false);
  });
});
