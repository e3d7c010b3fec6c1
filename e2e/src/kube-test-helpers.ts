import { randomBytes } from 'node:crypto';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type WorkloadClient } from '@jobrelay/kinds';
import { makeClusterApiClients, type PlainJson } from '@jobrelay/kube';
import { type Identity, openSandbox, type Sandbox } from '@jobrelay/sandbox';
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1Job,
  type V1JobCondition,
  type V1JobSpec,
} from '@kubernetes/client-node';
import { inject } from 'vitest';

export const dispatcherManagedBy = 'jobrelay.dev/dispatcher';

export function testSandbox(): Sandbox {
  return openSandbox(inject('sandboxDir'));
}

export interface ClusterClients {
  /** client-node's typed Job API: times as Date. */
  batch: BatchV1Api;
  /** Jobs as the controller reads and writes them: plain JSON, times as RFC 3339 strings. */
  jobs: WorkloadClient<Job>;
  core: CoreV1Api;
  kubeConfig: KubeConfig;
}

/** A typed client-node object as the apiserver's JSON (its Dates become RFC 3339 strings). */
export function plainJson<T>(typed: T): PlainJson<T> {
  return JSON.parse(JSON.stringify(typed)) as PlainJson<T>;
}

/** The controller's own Job client for a kubeconfig (plain JSON); its rate limit never binds a test. */
export function plainJobClient(kubeConfig: KubeConfig): WorkloadClient<Job> {
  return batchJobAdapter.client(makeClusterApiClients(kubeConfig, { qps: 1000, burst: 2000 }));
}

export function clientsFor(sandbox: Sandbox, cluster: string, identity: Identity = 'admin'): ClusterClients {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(cluster, identity));
  return {
    batch: kubeConfig.makeApiClient(BatchV1Api),
    jobs: plainJobClient(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    kubeConfig,
  };
}

/**
 * A Job author as a real cluster would have one: a ServiceAccount in `namespace` bound to the
 * built-in `edit` ClusterRole there (create, update and delete Jobs and most else in its own
 * namespace; nothing in jobrelay-system), with a TokenRequest token. `admin` makes it.
 */
export async function namespaceEditor(
  sandbox: Sandbox,
  admin: ClusterClients,
  namespace: string,
  name = 'author',
): Promise<ClusterClients & { username: string }> {
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await admin.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `${name}-edit` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const request = await admin.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'management',
        server: sandbox.management.server,
        caData: Buffer.from(sandbox.caPem).toString('base64'),
      },
    ],
    users: [{ name, token }],
    contexts: [{ name, cluster: 'management', user: name }],
    currentContext: name,
  });
  return {
    batch: kubeConfig.makeApiClient(BatchV1Api),
    jobs: plainJobClient(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    kubeConfig,
    username: `system:serviceaccount:${namespace}:${name}`,
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/** The HTTP status of a failed API call, or undefined if it did not fail with one. */
export async function statusCodeOf(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw err;
  }
}

/** The apiserver's refusal of a call that must fail: its HTTP code and the Status message. */
export async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === 'string' ? (JSON.parse(err.body) as { message?: string }) : err.body;
      return { code: err.code, message: String((body as { message?: string })?.message ?? '') };
    }
    throw err;
  }
  throw new Error('the apiserver accepted it');
}

export async function eventually<T>(
  description: string,
  probe: () => Promise<T | undefined>,
  {
    timeoutMs = 120_000,
    intervalMs = 500,
    explain,
  }: {
    timeoutMs?: number;
    intervalMs?: number;
    /** What the timeout's message adds (where things stood, e.g. whether the controller exited). */
    explain?: () => string | undefined;
  } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const context = explain?.();
  throw new Error(
    `timed out after ${timeoutMs / 1000}s waiting for ${description}${last ? `: ${String(last)}` : ''}${context ? ` (${context})` : ''}`,
  );
}

/**
 * A namespace ready for pods: the ServiceAccount admission plugin rejects pods until
 * kube-controller-manager has created the `default` ServiceAccount.
 */
export async function createTestNamespace(clients: ClusterClients, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await clients.core.createNamespace({
    body: { metadata: { name, labels: { 'jobrelay.dev/e2e': 'true' } } },
  });
  await eventually(`ServiceAccount default in ${name}`, async () =>
    (await clients.core.readNamespacedServiceAccount({ name: 'default', namespace: name }))
      ? true
      : undefined,
  );
  return name;
}

export interface SandboxJobOptions {
  name: string;
  managedBy?: string;
  spec?: Partial<V1JobSpec>;
  /** Pod annotations the sandbox's pod runner obeys: run-seconds, exit-code, fail-indexes. */
  pod?: { runSeconds?: number; exitCode?: number; failIndexes?: string };
  /** Container resource requests, e.g. { cpu: '2', memory: '1Gi' }. */
  requests?: Record<string, string>;
  /** Container limits; extended resources such as GPUs must be given as limits. */
  limits?: Record<string, string>;
  /** Extra annotations on the Job itself (jobrelay.dev/cluster-selector, ...). */
  annotations?: Record<string, string>;
}

/** A Job whose pods the sandbox's KWOK stages drive: they run `runSeconds` and exit with `exitCode`. */
export function sandboxJob(options: SandboxJobOptions): V1Job {
  const annotations: Record<string, string> = {};
  if (options.pod?.runSeconds !== undefined)
    annotations['sandbox.jobrelay.dev/run-seconds'] = String(options.pod.runSeconds);
  if (options.pod?.exitCode !== undefined)
    annotations['sandbox.jobrelay.dev/exit-code'] = String(options.pod.exitCode);
  if (options.pod?.failIndexes !== undefined)
    annotations['sandbox.jobrelay.dev/fail-indexes'] = options.pod.failIndexes;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: options.name, ...(options.annotations ? { annotations: options.annotations } : {}) },
    spec: {
      ...(options.managedBy ? { managedBy: options.managedBy } : {}),
      ...options.spec,
      template: {
        metadata: { annotations },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'registry.invalid/sandbox:fake',
              command: ['true'],
              ...(options.requests || options.limits
                ? { resources: { requests: options.requests, limits: options.limits } }
                : {}),
            },
          ],
        },
      },
    },
  };
}

export function condition(job: V1Job, type: string): V1JobCondition | undefined {
  return job.status?.conditions?.find((c) => c.type === type);
}

export function isTrue(job: V1Job, type: string): boolean {
  return condition(job, type)?.status === 'True';
}

export function isFinished(job: V1Job): boolean {
  return isTrue(job, 'Complete') || isTrue(job, 'Failed');
}

export async function waitForFinishedJob(
  clients: ClusterClients,
  namespace: string,
  name: string,
  timeoutMs = 180_000,
): Promise<V1Job> {
  return eventually(
    `Job ${namespace}/${name} to finish`,
    async () => {
      const job = await clients.batch.readNamespacedJob({ name, namespace });
      return isFinished(job) ? job : undefined;
    },
    { timeoutMs },
  );
}
