// The generic adapter as a new user would configure it for JobSet (jobSetKind, the ready-made
// configuration, loaded as exported), against JobSet v0.9.1's real controller with its
// webhooks, which the sandbox runs on every cluster. Each JobSet is also run directly on the
// same worker: the dispatched origin must end with its mirror's last status, and as the direct
// run ends on every field JobSet itself decides the same way each time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobSetKind } from '@jobrelay/kinds';
import { clusterPinAnnotation, originUidLabel } from '@jobrelay/mirror';
import { applyObjects } from '@jobrelay/sandbox';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  type ClusterClients,
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

interface JobSetCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

interface ReplicatedJobStatus {
  name: string;
  ready: number;
  succeeded: number;
  failed: number;
  active: number;
  suspended: number;
}

interface JobSet extends KubernetesObject {
  spec?: Record<string, unknown>;
  status?: {
    conditions?: JobSetCondition[];
    restarts?: number;
    restartsCountTowardsMax?: number;
    terminalState?: string;
    replicatedJobsStatus?: ReplicatedJobStatus[];
  };
}

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const directCluster = sandbox.workers[sandbox.workers.length - 1]!.name;
const where = (namespace: string) => ({
  group: jobSetKind.group,
  version: jobSetKind.version,
  plural: jobSetKind.plural,
  namespace,
});
const custom = (clients: ClusterClients) => clients.kubeConfig.makeApiClient(CustomObjectsApi);

/**
 * What a user adds for a generic kind (deploy/controller/rbac.yaml and deploy/worker/rbac.yaml
 * say so): the controller reads and patches JobSets and writes their status on the management
 * cluster; the dispatcher runs their mirrors on a worker.
 */
function jobSetRbac(role: string, serviceAccount: string, verbs: string[], statusVerbs: string[]) {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: role },
      rules: [
        { apiGroups: [jobSetKind.group], resources: [jobSetKind.plural], verbs },
        { apiGroups: [jobSetKind.group], resources: [`${jobSetKind.plural}/status`], verbs: statusVerbs },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: 'jobrelay-system' }],
    },
  ];
}

/**
 * Two replicated Jobs (a leader, two workers of two pods) on KWOK pods that run 3 s; the
 * leader exits with `leaderExitCode`. One restart of the whole JobSet is allowed.
 */
function jobSet(name: string, leaderExitCode: number, dispatched: boolean): JobSet {
  const job = (parallelism: number, exitCode: number) => ({
    spec: {
      parallelism,
      completions: parallelism,
      backoffLimit: 0,
      template: {
        metadata: {
          annotations: {
            'sandbox.jobrelay.dev/run-seconds': '3',
            'sandbox.jobrelay.dev/exit-code': String(exitCode),
          },
        },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'registry.invalid/sandbox:fake',
              resources: { requests: { cpu: '100m' } },
            },
          ],
        },
      },
    },
  });
  return {
    apiVersion: `${jobSetKind.group}/${jobSetKind.version}`,
    kind: jobSetKind.kind,
    metadata: {
      name,
      ...(dispatched ? { annotations: { [clusterPinAnnotation]: directCluster } } : {}),
    },
    spec: {
      ...(dispatched ? { managedBy: dispatcherManagedBy } : {}),
      failurePolicy: { maxRestarts: 1 },
      replicatedJobs: [
        { name: 'leader', replicas: 1, template: job(1, leaderExitCode) },
        { name: 'workers', replicas: 2, template: job(2, 0) },
      ],
    },
  };
}

async function readJobSet(clients: ClusterClients, namespace: string, name: string): Promise<JobSet> {
  return (await custom(clients).getNamespacedCustomObject({ ...where(namespace), name })) as JobSet;
}

async function findMirror(namespace: string, origin: JobSet): Promise<JobSet | undefined> {
  const list = (await custom(fleet.direct).listNamespacedCustomObject({
    ...where(namespace),
    labelSelector: `${originUidLabel}=${origin.metadata!.uid}`,
  })) as { items: JobSet[] };
  return list.items[0];
}

const finished = (object: JobSet) =>
  object.status?.conditions?.some((c) => ['Completed', 'Failed'].includes(c.type) && c.status === 'True') ??
  false;

/** No Job of it runs any pod any more: JobSet's controller has counted everything down. */
const settled = (object: JobSet) =>
  finished(object) &&
  (object.status?.replicatedJobsStatus ?? []).every((r) => r.active === 0 && r.ready === 0);

/** A status without the times (and the top-level observedGeneration, which counts each object's own generations). */
function timeless(status: JobSet['status']): unknown {
  const { conditions, ...rest } = structuredClone(status ?? {}) as JobSet['status'] & {
    observedGeneration?: number;
  };
  delete (rest as { observedGeneration?: number }).observedGeneration;
  return { ...rest, conditions: conditions?.map(({ lastTransitionTime: _at, ...c }) => c) };
}

/**
 * What JobSet decides the same way on every run of one spec. Its Jobs' `succeeded` counts are
 * not, once it failed: whether a worker Job completed before the failed leader's restart (or
 * the final failure) deleted it depends on timing (0 or 2 seen for the same spec). Completed,
 * every Job succeeded, so then they are.
 */
function deterministic(status: JobSet['status']) {
  const completed = status?.terminalState === 'Completed';
  return {
    conditions: (status?.conditions ?? []).map(({ type, status: value, reason, message }) => ({
      type,
      status: value,
      reason,
      message,
    })),
    terminalState: status?.terminalState,
    restarts: status?.restarts,
    restartsCountTowardsMax: status?.restartsCountTowardsMax,
    replicatedJobs: (status?.replicatedJobsStatus ?? [])
      .map(({ name, active, ready, failed, succeeded, suspended }) => ({
        name,
        active,
        ready,
        failed,
        suspended,
        ...(completed ? { succeeded } : {}),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

let controller: ControllerProcess;
let kindsDir: string | undefined;
let namespace: string;
let directNamespace: string;

beforeAll(async () => {
  await applyObjects(
    fleet.management.kubeConfig,
    jobSetRbac(
      'jobrelay-controller-jobsets',
      'jobrelay-controller',
      ['get', 'list', 'watch', 'patch'],
      ['update', 'patch'],
    ),
  );
  for (const worker of fleet.workers.values()) {
    await applyObjects(
      worker.kubeConfig,
      jobSetRbac(
        'jobrelay-dispatcher-jobsets',
        'jobrelay-dispatcher',
        ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
        ['get', 'patch', 'update'],
      ),
    );
  }
  kindsDir = mkdtempSync(join(tmpdir(), 'jobrelay-jobset-'));
  const kindsFile = join(kindsDir, 'kinds.yaml');
  writeFileSync(kindsFile, stringify(jobSetKind));
  controller = startController(sandbox, [
    '--kinds=job,jobset',
    `--generic-kinds-file=${kindsFile}`,
    // JobSet keeps writing a finished JobSet's status (its Jobs' pods counted down): the
    // mirror must outlive the comparison below.
    '--mirror-retention-seconds=120',
  ]);
  [namespace, directNamespace] = await Promise.all([
    createTestNamespace(fleet.management, 'jobset'),
    createTestNamespace(fleet.direct, 'jobset-direct'),
  ]);
});

afterAll(async () => {
  await controller?.kill();
  // Once the controller, started with --generic-kinds-file there, has exited.
  if (kindsDir) rmSync(kindsDir, { recursive: true, force: true });
});

/** Runs the JobSet dispatched and directly; returns the settled origin, its mirror and the direct run. */
async function runBothWays(leaderExitCode: number) {
  const name = uniqueName(leaderExitCode === 0 ? 'js-ok' : 'js-fail');
  const origin = (await custom(fleet.management).createNamespacedCustomObject({
    ...where(namespace),
    body: jobSet(name, leaderExitCode, true),
  })) as JobSet;
  await custom(fleet.direct).createNamespacedCustomObject({
    ...where(directNamespace),
    body: jobSet(name, leaderExitCode, false),
  });
  const direct = await eventually(
    `direct JobSet ${name} to finish and settle`,
    async () => {
      const object = await readJobSet(fleet.direct, directNamespace, name);
      return settled(object) ? object : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
  // The origin ends with its mirror's last status: read both until they agree on a settled mirror.
  const both = await eventually(
    `origin JobSet ${name} to hold its settled mirror's status`,
    async () => {
      const [o, m] = await Promise.all([
        readJobSet(fleet.management, namespace, name),
        findMirror(namespace, origin),
      ]);
      if (!m || !settled(m)) return undefined;
      return JSON.stringify(timeless(o.status)) === JSON.stringify(timeless(m.status))
        ? { origin: o, mirror: m }
        : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
  // The management cluster never ran a pod of it.
  const pods = await fleet.management.core.listNamespacedPod({ namespace });
  expect(pods.items).toHaveLength(0);
  return { ...both, direct };
}

describe(`a JobSet dispatched through the generic adapter (jobSetKind) to ${directCluster}`, () => {
  it('succeeds as it does when run directly, its origin ending with its mirror’s status', async () => {
    const { origin, mirror, direct } = await runBothWays(0);
    expect(mirror.spec?.managedBy).toBeUndefined();
    // Defaulted by JobSet's mutating webhook (the CRD has no default for it) on the management
    // cluster, and so on the mirror: the webhooks run there as a user's installation would.
    for (const object of [origin, mirror]) {
      expect(object.spec).toMatchObject({
        network: { publishNotReadyAddresses: true },
        successPolicy: { operator: 'All' },
      });
    }
    expect(timeless(origin.status)).toEqual(timeless(mirror.status));
    expect(origin.status?.terminalState).toBe('Completed');
    expect(deterministic(origin.status)).toEqual(deterministic(direct.status));
  });

  it('fails after one restart as it does directly, taking the status JobSet writes after Failed', async () => {
    const { origin, mirror, direct } = await runBothWays(1);
    expect(timeless(origin.status)).toEqual(timeless(mirror.status));
    expect(origin.status).toMatchObject({ terminalState: 'Failed', restarts: 1 });
    expect(origin.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      status: 'True',
      reason: 'ReachedMaxRestarts',
    });
    // Taken after Failed: the workers' pods were still counted active when it failed.
    expect(origin.status?.replicatedJobsStatus?.every((r) => r.active === 0 && r.ready === 0)).toBe(true);
    expect(deterministic(origin.status)).toEqual(deterministic(direct.status));
  });
});
