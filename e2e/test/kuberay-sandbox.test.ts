// KubeRay's real ray-operator in the sandbox: one per cluster, RayClusters run on KWOK pods,
// RayJobs run to the end against the simulated Ray dashboard (packages/sandbox/src/
// ray-dashboard.ts), and on the management cluster a RayCluster or RayJob whose managedBy
// is MultiKueue's is left alone, as jobrelay needs it to be.
import {
  kuberayManagedBy,
  rayJobSimulation,
  type SandboxKuberay,
  sandboxRayCluster,
  sandboxRayJob,
} from '@jobrelay/sandbox';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  eventually,
  statusCodeOf,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { createRay, type RayPlural, readRay } from '../src/ray-fixtures.ts';

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

interface RayClusterStatus {
  state?: string;
  readyWorkerReplicas?: number;
  availableWorkerReplicas?: number;
  desiredWorkerReplicas?: number;
  conditions?: Condition[];
  head?: { serviceName?: string; podName?: string };
}

interface RayCluster extends KubernetesObject {
  status?: RayClusterStatus;
}

interface RayJob extends KubernetesObject {
  status?: {
    jobId?: string;
    jobStatus?: string;
    jobDeploymentStatus?: string;
    reason?: string;
    message?: string;
    rayClusterName?: string;
    dashboardURL?: string;
    succeeded?: number;
    failed?: number;
    rayJobInfo?: { startTime?: string; endTime?: string };
  };
}

const sandbox = testSandbox();
let kuberay: SandboxKuberay;
let worker: ClusterClients & { custom: CustomObjectsApi };
let management: ClusterClients & { custom: CustomObjectsApi };
let workerNs: string;
let managementNs: string;

function withCustom(clients: ClusterClients): ClusterClients & { custom: CustomObjectsApi } {
  return { ...clients, custom: clients.kubeConfig.makeApiClient(CustomObjectsApi) };
}

const ray = (plural: RayPlural, namespace: string) => ({ group: 'ray.io', version: 'v1', namespace, plural });
const create = (clients: ClusterClients, namespace: string, object: KubernetesObject) =>
  createRay(clients, namespace, object);
/** readRay, typed as this file's Ray shapes. */
const read = <T>(clients: ClusterClients, plural: RayPlural, namespace: string, name: string) =>
  readRay(clients, plural, namespace, name) as Promise<T>;

function conditionsOf(status: RayClusterStatus | undefined): Record<string, string> {
  return Object.fromEntries((status?.conditions ?? []).map((c) => [c.type, c.status]));
}

async function waitForFinishedRayJob(
  clients: typeof worker,
  namespace: string,
  name: string,
): Promise<RayJob> {
  return eventually(
    `RayJob ${namespace}/${name} to finish`,
    async () => {
      const job = await read<RayJob>(clients, 'rayjobs', namespace, name);
      const status = job.status?.jobDeploymentStatus;
      return status === 'Complete' || status === 'Failed' ? job : undefined;
    },
    { timeoutMs: 150_000, intervalMs: 1000 },
  );
}

beforeAll(async () => {
  if (!sandbox.kuberay)
    throw new Error(`the sandbox at ${sandbox.dir} predates KubeRay: run sandbox up again`);
  kuberay = sandbox.kuberay;
  worker = withCustom(clientsFor(sandbox, sandbox.workers[0]!.name));
  management = withCustom(clientsFor(sandbox, sandbox.management.name));
  [workerNs, managementNs] = await Promise.all([
    createTestNamespace(worker, 'kuberay'),
    createTestNamespace(management, 'kuberay'),
  ]);
});

/** Deletes a test namespace and waits until its pods are gone. */
async function deleteNamespace(clients: ClusterClients, namespace: string): Promise<void> {
  await clients.core.deleteNamespace({ name: namespace });
  await eventually(
    `the pods of ${namespace} gone`,
    async () => ((await clients.core.listNamespacedPod({ namespace })).items.length === 0 ? true : undefined),
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
}

// Ray pods run until deleted (restartPolicy Always): give the capacity back before the next
// file, whose placement may count on it.
afterAll(async () => {
  await Promise.all([
    workerNs ? deleteNamespace(worker, workerNs) : undefined,
    managementNs ? deleteNamespace(management, managementNs) : undefined,
  ]);
});

describe('KubeRay in the sandbox', () => {
  it('runs a ready ray-operator on every cluster, management included', async () => {
    const ready = await Promise.all(sandbox.clusters.map((c) => kuberay.operatorReady(c.name)));
    expect(Object.fromEntries(sandbox.clusters.map((c, i) => [c.name, ready[i]]))).toEqual(
      Object.fromEntries(sandbox.clusters.map((c) => [c.name, true])),
    );
  });
});

describe.concurrent('on a worker, the operator', () => {
  it('brings a RayCluster (head + 2 workers) to ready on KWOK pods, with its head Service', async () => {
    const name = uniqueName('rc');
    await create(worker, workerNs, sandboxRayCluster({ name, workerReplicas: 2 }));
    const cluster = await eventually(
      `RayCluster ${name} ready`,
      async () => {
        const rc = await read<RayCluster>(worker, 'rayclusters', workerNs, name);
        return rc.status?.state === 'ready' && rc.status.readyWorkerReplicas === 2 ? rc : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(cluster.status?.availableWorkerReplicas).toBe(2);
    expect(cluster.status?.desiredWorkerReplicas).toBe(2);
    expect(conditionsOf(cluster.status)).toMatchObject({
      HeadPodReady: 'True',
      RayClusterProvisioned: 'True',
      RayClusterSuspended: 'False',
      RayClusterSuspending: 'False',
    });
    const pods = await worker.core.listNamespacedPod({
      namespace: workerNs,
      labelSelector: `ray.io/cluster=${name}`,
    });
    expect(pods.items.map((p) => [p.metadata?.labels?.['ray.io/node-type'], p.status?.phase]).sort()).toEqual(
      [
        ['head', 'Running'],
        ['worker', 'Running'],
        ['worker', 'Running'],
      ],
    );
    const service = await worker.core.readNamespacedService({
      name: cluster.status!.head!.serviceName!,
      namespace: workerNs,
    });
    expect(service.spec?.ports?.find((p) => p.name === 'dashboard')?.port).toBe(8265);
  });

  for (const mode of ['K8sJobMode', 'HTTPMode'] as const) {
    it(`runs a RayJob (${mode}) to Complete, SUCCEEDED, for the simulated run time`, async () => {
      const name = uniqueName(mode === 'HTTPMode' ? 'rj-http' : 'rj-k8s');
      const runSeconds = 4;
      await create(
        worker,
        workerNs,
        sandboxRayJob({
          name,
          ...(mode === 'HTTPMode' ? { submissionMode: mode } : {}),
          runSeconds,
          cluster: { workerReplicas: 1 },
        }),
      );
      const job = await waitForFinishedRayJob(worker, workerNs, name);
      expect(job.status).toMatchObject({
        jobDeploymentStatus: 'Complete',
        jobStatus: 'SUCCEEDED',
        message: 'Job finished successfully.',
        succeeded: 1,
        failed: 0,
      });
      expect(job.status?.dashboardURL).toBe(
        `${job.status?.rayClusterName}-head-svc.${workerNs}.svc.cluster.local:8265`,
      );
      const { startTime, endTime } = job.status?.rayJobInfo ?? {};
      // Timestamps are whole seconds.
      expect(Date.parse(endTime!) - Date.parse(startTime!)).toBeGreaterThanOrEqual((runSeconds - 1) * 1000);
      const submitter = await worker.batch
        .readNamespacedJob({ name, namespace: workerNs })
        .then((j) => j.status?.conditions?.find((c) => c.type === 'Complete')?.status)
        .catch((err: { code?: number }) => (err.code === 404 ? 'none' : Promise.reject(err)));
      // K8sJobMode: the submitter Job ran (a KWOK pod) and completed; HTTPMode has none.
      expect(submitter).toBe(mode === 'K8sJobMode' ? 'True' : 'none');
    });

    it(`fails a RayJob (${mode}) whose simulated entrypoint exits 1: FAILED, AppFailed`, async () => {
      const name = uniqueName(mode === 'HTTPMode' ? 'rj-http-fail' : 'rj-k8s-fail');
      await create(
        worker,
        workerNs,
        sandboxRayJob({
          name,
          ...(mode === 'HTTPMode' ? { submissionMode: mode } : {}),
          runSeconds: 1,
          exitCode: 1,
        }),
      );
      const job = await waitForFinishedRayJob(worker, workerNs, name);
      expect(job.status).toMatchObject({
        jobDeploymentStatus: 'Failed',
        jobStatus: 'FAILED',
        reason: 'AppFailed',
        failed: 1,
      });
      expect(job.status?.message).toMatch(/^Job entrypoint command failed with exit code 1/);
    });
  }
});

describe.concurrent('on the management cluster, the operator', () => {
  it('runs a RayCluster without managedBy (hybrid: it stays there)', async () => {
    const name = uniqueName('local-rc');
    await create(management, managementNs, sandboxRayCluster({ name, workerReplicas: 1 }));
    await eventually(
      `RayCluster ${name} ready on the management cluster`,
      async () => {
        const rc = await read<RayCluster>(management, 'rayclusters', managementNs, name);
        return rc.status?.state === 'ready' ? rc : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
  });

  it(`leaves a RayCluster and a RayJob managed by ${kuberayManagedBy.multiKueue} alone: no pods, no status`, async () => {
    const clusterName = uniqueName('mk-rc');
    const jobName = uniqueName('mk-rj');
    const managedBy = kuberayManagedBy.multiKueue;
    await create(management, managementNs, sandboxRayCluster({ name: clusterName, managedBy }));
    await create(management, managementNs, sandboxRayJob({ name: jobName, managedBy }));
    // A RayCluster the operator owns is ready within a few seconds here (the test above).
    await new Promise((r) => setTimeout(r, 12_000));
    const rc = await read<RayCluster>(management, 'rayclusters', managementNs, clusterName);
    expect(rc.status ?? {}).toEqual({});
    const rj = await read<RayJob>(management, 'rayjobs', managementNs, jobName);
    expect(rj.status ?? {}).toEqual({});
    expect(rj.metadata?.finalizers ?? []).toEqual([]);
    const pods = await management.core.listNamespacedPod({
      namespace: managementNs,
      labelSelector: `ray.io/cluster=${clusterName}`,
    });
    expect(pods.items).toHaveLength(0);
    const clusters = (await management.custom.listNamespacedCustomObject({
      ...ray('rayclusters', managementNs),
      labelSelector: `ray.io/originated-from-cr-name=${jobName}`,
    })) as { items: unknown[] };
    expect(clusters.items).toHaveLength(0);
    const services = await management.core.listNamespacedService({ namespace: managementNs });
    expect(services.items.filter((s) => s.metadata?.name?.startsWith(clusterName))).toHaveLength(0);
  });

  it("refuses a managedBy that is neither KubeRay's nor MultiKueue's (the CRD's CEL rule)", async () => {
    const refused = await create(
      management,
      managementNs,
      sandboxRayCluster({ name: uniqueName('other-rc'), managedBy: 'jobrelay.dev/dispatcher' }),
    ).then(
      () => undefined,
      (err: { code?: number; body?: unknown }) => ({ code: err.code, body: String(err.body) }),
    );
    expect(refused?.code).toBe(422);
    expect(refused?.body).toContain(
      "the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'",
    );
  });
});

/** GET through the simulated dashboards' proxy, as the cluster's operator does. */
async function dashboardGet(cluster: string, url: string): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http');
  const proxy = new URL(kuberay.dashboardProxy(cluster));
  const user = Buffer.from(`${decodeURIComponent(proxy.username)}:`).toString('base64');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: proxy.hostname,
        port: Number(proxy.port),
        path: url,
        headers: { 'proxy-authorization': `Basic ${user}` },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe.concurrent('the simulated Ray dashboard', () => {
  it('answers the Jobs API through the proxy an operator uses, for a K8sJobMode job it looked up', async () => {
    const name = uniqueName('rj-api');
    await create(worker, workerNs, sandboxRayJob({ name, runSeconds: 1 }));
    const job = await waitForFinishedRayJob(worker, workerNs, name);
    const answer = await dashboardGet(
      sandbox.workers[0]!.name,
      `http://${job.status!.dashboardURL}/api/jobs/${job.status!.jobId}`,
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      submission_id: job.status!.jobId,
      status: 'SUCCEEDED',
      entrypoint: expect.any(String),
      metadata: { [rayJobSimulation.runSecondsKey]: '1' },
      driver_exit_code: 0,
    });
  });

  it("is told to stop a running Ray job when its RayJob is deleted (the operator's finalizer): STOPPED", async () => {
    const name = uniqueName('rj-stop');
    await create(worker, workerNs, sandboxRayJob({ name, submissionMode: 'HTTPMode', runSeconds: 600 }));
    const running = await eventually(
      `RayJob ${name} RUNNING`,
      async () => {
        const job = await read<RayJob>(worker, 'rayjobs', workerNs, name);
        return job.status?.jobStatus === 'RUNNING' ? job : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(running.metadata?.finalizers).toContain('ray.io/rayjob-finalizer');
    await worker.custom.deleteNamespacedCustomObject({ ...ray('rayjobs', workerNs), name });
    await eventually(`RayJob ${name} gone`, async () =>
      (await statusCodeOf(read<RayJob>(worker, 'rayjobs', workerNs, name))) === 404 ? true : undefined,
    );
    const answer = await dashboardGet(
      sandbox.workers[0]!.name,
      `http://${running.status!.dashboardURL}/api/jobs/${running.status!.jobId}`,
    );
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'STOPPED', end_time: expect.any(Number) });
  });
});
