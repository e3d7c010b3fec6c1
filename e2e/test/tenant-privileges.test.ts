// A mirror never gains privileges (issue 28): what a workload's namespace enforces on the
// management cluster is what its mirror's namespace enforces on the worker (a dispatched Job makes
// no pods on the management cluster, so Pod Security admission there never judges them); a worker
// namespace of the same name that enforces less takes nothing; a WorkerCluster refuses the pod
// templates its podRestrictions name; nothing is dispatched from a system namespace; and the
// worker's own admission policies hold the registered identity to all of it. Tried as a tenant
// would, against the real apiservers, with nothing created on any worker when it is refused.

import { mergePatch, ResilientInformer } from '@jobrelay/kube';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import { parsePlacementRecord } from '@jobrelay/placement';
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Job,
  type V1Namespace,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../src/api-harness.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  statusCodeOf,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

const enforce = 'pod-security.kubernetes.io/enforce';
const origin = 'jobrelay.dev/origin';
const workerClusters = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

let fleet: Fleet;
let controller: ControllerProcess;
let api: ApiHarness;
let custom: CustomObjectsApi;
let workers: string[];
/** Namespaces made on the management cluster and on workers, removed at the end. */
const managementNamespaces: string[] = [];
const workerNamespaces: Array<{ worker: string; name: string }> = [];
/** Jobs made in namespaces that are not removed (the system ones). */
const systemJobs: Array<{ namespace: string; name: string }> = [];

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  workers = fleet.sandbox.workers.map((w) => w.name);
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  controller = startController(fleet.sandbox, ['--cluster-health-interval-seconds=1']);
  api = await startApiHarness(fleet.sandbox);
});

afterAll(async () => {
  // The controller first: with it running, a waiting Job would be placed once restrictions lift.
  await controller?.kill('SIGTERM');
  await api?.close();
  for (const { namespace, name } of systemJobs)
    await fleet.management.batch
      .deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' })
      .catch(() => {});
  for (const name of managementNamespaces)
    await fleet.management.core.deleteNamespace({ name }).catch(() => {});
  for (const worker of workers ?? []) await restrict(worker, null).catch(() => {});
  // Whoever made them (a worker's admin, or jobrelay for a mirror), with the mirrors in them.
  const names = new Set([...managementNamespaces, ...workerNamespaces.map((n) => n.name)]);
  for (const worker of workers ?? [])
    for (const name of names)
      await workerCore(worker)
        .deleteNamespace({ name })
        .catch(() => {});
});

function workerCore(worker: string): CoreV1Api {
  return fleet.workers.get(worker)!.core;
}

function workerBatch(worker: string): BatchV1Api {
  return fleet.workers.get(worker)!.batch;
}

/** A management namespace with these labels, ready for pods (its default ServiceAccount exists). */
async function managementNamespace(prefix: string, labels: Record<string, string>): Promise<string> {
  const name = uniqueName(prefix);
  managementNamespaces.push(name);
  await fleet.management.core.createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

/** What a worker's admin does: a namespace of that name on the worker, with these labels. */
async function adminNamespaceOnWorker(
  worker: string,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  workerNamespaces.push({ worker, name });
  await workerCore(worker).createNamespace({ body: { metadata: { name, labels } } });
}

async function namespaceLabelsOn(worker: string, name: string): Promise<Record<string, string> | undefined> {
  try {
    return (await workerCore(worker).readNamespace({ name })).metadata?.labels ?? {};
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/**
 * Watches every worker for a namespace of this name from now on, keeping the first version of it
 * each one shows: for a namespace that does not exist yet, the labels it was created with.
 * Through the controller's own informer, whose watch resumes when it ends (client-node ends one
 * after 30 s without a byte, as a namespace not created yet gives none).
 */
async function watchCreation(
  name: string,
): Promise<{ first(worker: string): V1Namespace | undefined; stop(): Promise<unknown> }> {
  const first = new Map<string, V1Namespace>();
  const informers = workers.map(
    (worker) =>
      new ResilientInformer<V1Namespace>({
        name: `tenant-privileges ${worker} namespace ${name}`,
        kubeConfig: fleet.workers.get(worker)!.kubeConfig,
        apiVersion: 'v1',
        kind: 'Namespace',
        path: '/api/v1/namespaces',
        fieldSelector: `metadata.name=${name}`,
        onEvent: (event) => {
          if (event.type === 'upsert' && !first.has(worker)) first.set(worker, event.object);
        },
        log: pino({ level: 'silent' }),
      }),
  );
  for (const informer of informers) informer.start();
  await Promise.all(informers.map((informer) => informer.waitForSync()));
  return {
    first: (worker) => first.get(worker),
    stop: () => Promise.all(informers.map((informer) => informer.stop())),
  };
}

/** Sets (or with null, removes) a WorkerCluster's spec.podRestrictions, as its admin would with kubectl. */
async function restrict(worker: string, podRestrictions: Record<string, unknown> | null): Promise<void> {
  await custom.patchClusterCustomObject(
    { ...workerClusters, name: worker, body: { spec: { podRestrictions } } },
    mergePatch,
  );
}

async function dispatch(
  namespace: string,
  name: string,
  pod: (spec: V1PodSpec) => void = () => {},
): Promise<V1Job> {
  const body = sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 1 } });
  pod(body.spec!.template.spec!);
  return fleet.management.batch.createNamespacedJob({ namespace, body });
}

async function placedOn(namespace: string, name: string): Promise<string> {
  return eventually(`${namespace}/${name} placed`, async () => {
    const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
    const parsed = parsePlacementRecord(job.metadata?.annotations?.['jobrelay.dev/placement']);
    return parsed.kind === 'ok' ? parsed.record.cluster : undefined;
  });
}

/** The reason the Job waits, once it is `expected` (other reasons may come first, while caches fill). */
async function waitsBecause(namespace: string, name: string, expected: string): Promise<void> {
  const said = await eventually(
    `${namespace}/${name} to wait saying ${JSON.stringify(expected)}`,
    async () => {
      const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
      const why = job.metadata?.annotations?.[unschedulableAnnotation];
      return why === expected ? why : undefined;
    },
    { timeoutMs: 60_000 },
  );
  expect(said).toBe(expected);
  const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
  expect(job.metadata?.annotations?.['jobrelay.dev/placement'] ?? '').not.toContain('"cluster"');
}

/** Nothing of `name` on any worker: no Job in `namespace`, and (when asked) no namespace of that name. */
async function expectNothingOnAnyWorker(namespace: string, name: string, noNamespace = true): Promise<void> {
  for (const worker of workers) {
    expect(
      await statusCodeOf(workerBatch(worker).readNamespacedJob({ namespace, name })),
      `${worker} Job`,
    ).toBe(404);
    if (noNamespace)
      expect(await namespaceLabelsOn(worker, namespace), `${worker} namespace`).toBeUndefined();
  }
}

const compliantWithRestricted = (spec: V1PodSpec) => {
  spec.securityContext = { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } };
  spec.containers[0]!.securityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
};
const privileged = (spec: V1PodSpec) => {
  spec.containers[0]!.securityContext = { privileged: true };
};

describe('Pod Security labels follow the namespace', () => {
  it.each([
    { level: 'baseline', pod: (_spec: V1PodSpec) => {} },
    { level: 'restricted', pod: compliantWithRestricted },
  ])(
    'a namespace that enforces $level here enforces it there; a change here follows, a change there is put back',
    async ({ level, pod }) => {
      const labels = {
        [enforce]: level,
        [`${enforce}-version`]: 'latest',
        'pod-security.kubernetes.io/warn': 'restricted',
      };
      const namespace = await managementNamespace(`tp-${level}`, { ...labels, team: 'a' });
      const creation = await watchCreation(namespace);
      const name = uniqueName('follow');
      await dispatch(namespace, name, pod);
      const worker = await placedOn(namespace, name);
      workerNamespaces.push({ worker, name: namespace });
      // As created, not only as kept since: its pods are judged from the first one on.
      const created = await eventually(
        'the mirror namespace created on the worker',
        async () => creation.first(worker)?.metadata?.labels,
      );
      await creation.stop();
      expect(created).toMatchObject({
        ...labels,
        [origin]: api.originId,
        'app.kubernetes.io/created-by': 'jobrelay',
      });
      // Only the Pod Security labels travel: the tenant's own label stays on the management cluster.
      expect(created).not.toHaveProperty('team');
      const done = await waitForFinishedJob(fleet.management, namespace, name);
      expect(isTrue(done, 'Complete')).toBe(true);

      // Raised (or changed) on the management cluster: the worker's namespace follows.
      const raised = level === 'baseline' ? 'restricted' : 'baseline';
      await fleet.management.core.patchNamespace(
        {
          name: namespace,
          body: { metadata: { labels: { [enforce]: raised, 'pod-security.kubernetes.io/warn': null } } },
        },
        mergePatch,
      );
      await eventually('the worker namespace to follow the change', async () => {
        const now = await namespaceLabelsOn(worker, namespace);
        return now?.[enforce] === raised && !('pod-security.kubernetes.io/warn' in now) ? now : undefined;
      });

      // Stripped on the worker by someone who may: jobrelay puts it back.
      await workerCore(worker).patchNamespace(
        {
          name: namespace,
          body: { metadata: { labels: { [enforce]: null, [`${enforce}-version`]: 'v1.25' } } },
        },
        mergePatch,
      );
      const restored = await eventually('the stripped labels put back', async () => {
        const now = await namespaceLabelsOn(worker, namespace);
        return now?.[enforce] === raised && now[`${enforce}-version`] === 'latest' ? now : undefined;
      });
      expect(restored[origin]).toBe(api.originId);
    },
  );

  it("a worker admin's namespace that enforces less is never modified and takes nothing; one at least as strict takes it", async () => {
    const namespace = await managementNamespace('tp-weaker', { [enforce]: 'baseline' });
    const [first, second, third] = workers as [string, string, string];
    await adminNamespaceOnWorker(first, namespace, { [enforce]: 'privileged', owner: 'worker-admin' });
    await adminNamespaceOnWorker(second, namespace, { owner: 'worker-admin' });
    await adminNamespaceOnWorker(third, namespace, { [enforce]: 'privileged', owner: 'worker-admin' });
    const before = await Promise.all(workers.map((w) => namespaceLabelsOn(w, namespace)));

    const name = uniqueName('weaker');
    await dispatch(namespace, name);
    await waitsBecause(
      namespace,
      name,
      `0/3 clusters available: 3 namespace ${namespace} enforces privileged there, baseline here.`,
    );
    // The placement preview says the same, cluster by cluster.
    const preview = (
      await api.call('fleet-admin', 'POST', '/api/v1/placement-preview', { kind: 'job', namespace, name })
    ).json() as {
      decision: string;
      clusters: Array<{ name: string; reason: string | null }>;
    };
    expect(preview.decision).toBe('unschedulable');
    expect(new Set(preview.clusters.map((c) => c.reason))).toEqual(
      new Set([`namespace ${namespace} enforces privileged there, baseline here`]),
    );
    await expectNothingOnAnyWorker(namespace, name, false);

    // The third worker's admin raises the level to the management one: the Job goes there.
    await workerCore(third).patchNamespace(
      { name: namespace, body: { metadata: { labels: { [enforce]: 'baseline' } } } },
      mergePatch,
    );
    expect(await placedOn(namespace, name)).toBe(third);
    expect(isTrue(await waitForFinishedJob(fleet.management, namespace, name), 'Complete')).toBe(true);
    // jobrelay wrote none of the admins' namespaces: no origin label, no Pod Security label added.
    expect(await namespaceLabelsOn(first, namespace)).toEqual(before[0]);
    expect(await namespaceLabelsOn(second, namespace)).toEqual(before[1]);
    expect(await namespaceLabelsOn(third, namespace)).toEqual({ ...before[2], [enforce]: 'baseline' });
  });

  it("a worker namespace that enforces restricted refuses a privileged pod of the mirror: the worker's own Pod Security admission, with the copied label", async () => {
    const namespace = await managementNamespace('tp-psa', { [enforce]: 'restricted' });
    const name = uniqueName('root');
    await dispatch(namespace, name, privileged);
    const worker = await placedOn(namespace, name);
    workerNamespaces.push({ worker, name: namespace });
    const refused = await eventually('the worker to refuse the mirror’s pod', async () => {
      const events = await workerCore(worker).listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.name=${name}`,
      });
      return events.items.find(
        (e) => e.reason === 'FailedCreate' && e.message?.includes('violates PodSecurity'),
      );
    });
    expect(refused.message).toContain('"restricted:latest"');
    expect(refused.message).toContain('privileged');
    const pods = await workerCore(worker).listNamespacedPod({
      namespace,
      labelSelector: `batch.kubernetes.io/job-name=${name}`,
    });
    expect(pods.items).toEqual([]);
    const origin = await fleet.management.batch.readNamespacedJob({ namespace, name });
    expect(origin.status?.succeeded ?? 0).toBe(0);
  });
});

describe('a WorkerCluster states what it accepts', () => {
  it('refuses privileged, hostPath, host-network and unlisted-ServiceAccount templates with the reason, creating nothing anywhere; the API says why per cluster', async () => {
    const namespace = await managementNamespace('tp-restrict', {});
    const restrictions = {
      refusePrivileged: true,
      refuseHostPath: true,
      refuseHostNamespaces: true,
      allowedServiceAccounts: ['default'],
    };
    // One through the admin API (its PATCH), the others as with kubectl.
    const patched = await api.call('fleet-admin', 'PATCH', `/api/v1/clusters/${workers[0]}`, {
      podRestrictions: restrictions,
    });
    expect(patched.status).toBe(200);
    expect((patched.json() as { podRestrictions: unknown }).podRestrictions).toEqual(restrictions);
    for (const worker of workers.slice(1)) await restrict(worker, restrictions);

    const cases: Array<{ name: string; pod: (spec: V1PodSpec) => void; reason: string }> = [
      { name: uniqueName('priv'), pod: privileged, reason: 'refuses privileged pods (container main)' },
      {
        name: uniqueName('hostpath'),
        pod: (spec) => {
          spec.volumes = [{ name: 'root', hostPath: { path: '/' } }];
        },
        reason: 'refuses hostPath volumes (volume root)',
      },
      {
        name: uniqueName('hostnet'),
        pod: (spec) => {
          spec.hostNetwork = true;
        },
        reason: 'refuses host namespaces (hostNetwork)',
      },
      {
        name: uniqueName('account'),
        pod: (spec) => {
          spec.serviceAccountName = 'builder';
        },
        reason: 'does not allow service account builder',
      },
    ];
    for (const { name, pod } of cases) await dispatch(namespace, name, pod);
    for (const { name, reason } of cases)
      await waitsBecause(namespace, name, `0/3 clusters available: 3 ${reason}.`);
    for (const { name } of cases) await expectNothingOnAnyWorker(namespace, name);

    const preview = (
      await api.call('viewer', 'POST', '/api/v1/placement-preview', {
        kind: 'job',
        namespace,
        name: cases[0]!.name,
      })
    ).json() as {
      message: string;
      clusters: Array<{ name: string; eligible: boolean; reason: string | null }>;
    };
    expect(preview.message).toBe('0/3 clusters available: 3 refuses privileged pods (container main).');
    expect(preview.clusters.map((c) => c.reason)).toEqual(
      workers.map(() => 'refuses privileged pods (container main)'),
    );

    // A template that asks none of it is placed as ever (into a namespace new to the worker).
    const plain = uniqueName('plain');
    await dispatch(namespace, plain);
    const worker = await placedOn(namespace, plain);
    workerNamespaces.push({ worker, name: namespace });
    expect(isTrue(await waitForFinishedJob(fleet.management, namespace, plain), 'Complete')).toBe(true);
    // And lifting one cluster's refusal of privileged pods lets that Job go there, and only there.
    await restrict(workers[1]!, { ...restrictions, refusePrivileged: false });
    expect(await placedOn(namespace, cases[0]!.name)).toBe(workers[1]);
    for (const { name } of cases.slice(1)) {
      const job = await fleet.management.batch.readNamespacedJob({ namespace, name });
      expect(job.metadata?.annotations?.['jobrelay.dev/placement'] ?? '').not.toContain('"cluster"');
    }
  });
});

describe('system namespaces', () => {
  it.each(['kube-system', 'default', 'jobrelay-system'])(
    'a Job with jobrelay’s managedBy in %s waits, saying why, and nothing is created on any worker',
    async (namespace) => {
      const name = uniqueName('sys');
      systemJobs.push({ namespace, name });
      await dispatch(namespace, name);
      await waitsBecause(
        namespace,
        name,
        `namespace ${namespace} is a system namespace: jobrelay never dispatches from it`,
      );
      for (const worker of workers)
        expect(await statusCodeOf(workerBatch(worker).readNamespacedJob({ namespace, name })), worker).toBe(
          404,
        );
      // The management cluster's Job controller leaves it alone too (its managedBy is foreign there).
      const pods = await fleet.management.core.listNamespacedPod({
        namespace,
        labelSelector: `batch.kubernetes.io/job-name=${name}`,
      });
      expect(pods.items).toEqual([]);
    },
  );
});

describe("the worker's admission holds the registered identity to what jobrelay does", () => {
  /** The jobrelay-dispatcher kubeconfig registered for the first worker, as the controller uses it. */
  async function dispatcherClients(): Promise<{ core: CoreV1Api; batch: BatchV1Api }> {
    const secret = await fleet.management.core.readNamespacedSecret({
      name: `${workers[0]}-kubeconfig`,
      namespace: 'jobrelay-system',
    });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(Buffer.from(secret.data!.kubeconfig!, 'base64').toString('utf8'));
    return { core: kubeConfig.makeApiClient(CoreV1Api), batch: kubeConfig.makeApiClient(BatchV1Api) };
  }

  it("refuses it a worker admin's namespace, a namespace without its label, and a Job in a system namespace", async () => {
    const dispatcher = await dispatcherClients();
    const foreign = uniqueName('tp-admins');
    await adminNamespaceOnWorker(workers[0]!, foreign, { [enforce]: 'restricted' });
    const lower = dispatcher.core.patchNamespace(
      { name: foreign, body: { metadata: { labels: { [enforce]: 'privileged' } } } },
      mergePatch,
    );
    await expect(lower).rejects.toThrow(/changes only namespaces jobrelay created/);
    expect((await namespaceLabelsOn(workers[0]!, foreign))?.[enforce]).toBe('restricted');

    const unmarked = uniqueName('tp-unmarked');
    await expect(dispatcher.core.createNamespace({ body: { metadata: { name: unmarked } } })).rejects.toThrow(
      /creates a namespace only with its jobrelay.dev\/origin label/,
    );
    expect(await namespaceLabelsOn(workers[0]!, unmarked)).toBeUndefined();

    const name = uniqueName('sys');
    await expect(
      dispatcher.batch.createNamespacedJob({ namespace: 'kube-system', body: sandboxJob({ name }) }),
    ).rejects.toThrow(/namespace kube-system is a system namespace: jobrelay never dispatches to it/);
    expect(
      await statusCodeOf(workerBatch(workers[0]!).readNamespacedJob({ namespace: 'kube-system', name })),
    ).toBe(404);
  });
});
