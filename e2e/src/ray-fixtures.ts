// Reading and writing KubeRay objects in e2e tests, and the parts of their status that must
// agree between a dispatched object and the same object run directly on one cluster.
import { originUidLabel, placementAnnotation } from '@jobrelay/mirror';
import { sandboxRayCluster, sandboxRayJob } from '@jobrelay/sandbox';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import type { Fleet } from './dispatch-fixtures.ts';
import { seededRandom } from './job-mix.ts';
import { type ClusterClients, eventually } from './kube-test-helpers.ts';

export type RayPlural = 'rayclusters' | 'rayjobs';

export interface RayCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface RayObject extends KubernetesObject {
  spec?: Record<string, unknown> & { managedBy?: string; suspend?: boolean };
  status?: Record<string, unknown> & { conditions?: RayCondition[] };
}

export const pluralOf = (object: KubernetesObject): RayPlural =>
  object.kind === 'RayCluster' ? 'rayclusters' : 'rayjobs';

/** The CustomObjectsApi of a cluster's clients. */
export function customOf(clients: ClusterClients): CustomObjectsApi {
  return clients.kubeConfig.makeApiClient(CustomObjectsApi);
}

const target = (plural: RayPlural, namespace: string) => ({
  group: 'ray.io',
  version: 'v1',
  namespace,
  plural,
});

export async function createRay(
  clients: ClusterClients,
  namespace: string,
  object: KubernetesObject,
): Promise<RayObject> {
  return (await customOf(clients).createNamespacedCustomObject({
    ...target(pluralOf(object), namespace),
    body: object,
  })) as RayObject;
}

export async function readRay(
  clients: ClusterClients,
  plural: RayPlural,
  namespace: string,
  name: string,
): Promise<RayObject> {
  return (await customOf(clients).getNamespacedCustomObject({
    ...target(plural, namespace),
    name,
  })) as RayObject;
}

export async function listRay(
  clients: ClusterClients,
  plural: RayPlural,
  namespace: string,
  labelSelector?: string,
) {
  const list = (await customOf(clients).listNamespacedCustomObject({
    ...target(plural, namespace),
    ...(labelSelector ? { labelSelector } : {}),
  })) as { items: RayObject[] };
  return list.items;
}

export async function deleteRay(
  clients: ClusterClients,
  plural: RayPlural,
  namespace: string,
  name: string,
): Promise<void> {
  await customOf(clients).deleteNamespacedCustomObject({ ...target(plural, namespace), name });
}

/** Waits until `predicate` holds for the object, returning it. */
export function waitForRay(
  clients: ClusterClients,
  plural: RayPlural,
  namespace: string,
  name: string,
  description: string,
  predicate: (object: RayObject) => boolean,
  timeoutMs = 150_000,
): Promise<RayObject> {
  return eventually(
    `${plural} ${namespace}/${name}: ${description}`,
    async () => {
      const object = await readRay(clients, plural, namespace, name);
      return predicate(object) ? object : undefined;
    },
    { timeoutMs, intervalMs: 1000 },
  );
}

export function placementOf(object: KubernetesObject): { cluster?: string; attempt: number } | undefined {
  const raw = object.metadata?.annotations?.[placementAnnotation];
  return raw ? (JSON.parse(raw) as { cluster?: string; attempt: number }) : undefined;
}

/** The mirror of `origin` on any worker (by the origin-uid label), with its cluster. */
export async function findRayMirror(
  fleet: Fleet,
  origin: RayObject,
): Promise<{ cluster: string; mirror: RayObject } | undefined> {
  for (const [cluster, clients] of fleet.workers) {
    const [mirror] = await listRay(
      clients,
      pluralOf(origin),
      origin.metadata!.namespace!,
      `${originUidLabel}=${origin.metadata!.uid}`,
    );
    if (mirror) return { cluster, mirror };
  }
  return undefined;
}

/**
 * A Ray status with what legitimately differs between two runs masked: times, the head's
 * pod and Service names and IPs (generated per object), and URLs naming the namespace.
 */
export function comparableRayStatus(
  status: Record<string, unknown> | undefined,
  namespace: string,
  name: string,
): unknown {
  const masked = JSON.parse(
    JSON.stringify(status ?? {})
      .replaceAll(namespace, '<namespace>')
      .replaceAll(name, '<name>'),
  ) as Record<string, unknown>;
  // A RayJob's cluster name and dashboard URL carry a random suffix; its job id is Ray's.
  for (const key of ['lastUpdateTime', 'startTime', 'endTime', 'jobId', 'rayClusterName', 'dashboardURL'])
    if (key in masked) masked[key] = '<set>';
  if (masked.stateTransitionTimes && typeof masked.stateTransitionTimes === 'object') {
    masked.stateTransitionTimes = Object.keys(masked.stateTransitionTimes).sort();
  }
  if (masked.head && typeof masked.head === 'object') {
    masked.head = Object.fromEntries(
      Object.keys(masked.head)
        .sort()
        .map((key) => [key, '<set>']),
    );
  }
  if (masked.rayJobInfo && typeof masked.rayJobInfo === 'object') {
    masked.rayJobInfo = Object.fromEntries(
      Object.keys(masked.rayJobInfo)
        .sort()
        .map((key) => [key, '<set>']),
    );
  }
  if (Array.isArray(masked.conditions)) {
    masked.conditions = (masked.conditions as RayCondition[])
      .map((c) => ({ ...c, ...(c.lastTransitionTime ? { lastTransitionTime: '<set>' } : {}) }))
      .sort((a, b) => a.type.localeCompare(b.type));
  }
  if (masked.rayClusterStatus && typeof masked.rayClusterStatus === 'object') {
    masked.rayClusterStatus = comparableRayStatus(
      masked.rayClusterStatus as Record<string, unknown>,
      '<namespace>',
      '<name>',
    );
  }
  return masked;
}

/** One Ray workload of a seeded mix: how to make it (with or without a managedBy) and when it has settled. */
export interface MixedRay {
  name: string;
  plural: RayPlural;
  manifest: (managedBy?: string) => KubernetesObject;
  /** Final: a RayCluster ready with every worker, a RayJob Complete or Failed. */
  settled: (object: RayObject) => boolean;
  describe: string;
}

/**
 * `count` Ray workloads drawn from `seed`: RayClusters of 0 to 3 workers, RayJobs in either
 * submission mode that succeed or fail, of 1 to 3 seconds. Only outcomes the spec decides.
 */
export function generateRayMix(seed: number, count: number, prefix = 'mix'): MixedRay[] {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const requests = { cpu: pick(['100m', '200m', '300m']), memory: pick(['128Mi', '256Mi']) };
    if (random() < 0.5) {
      const workers = pick([0, 1, 2, 3]);
      const name = `${prefix}-rc-${i}`;
      return {
        name,
        plural: 'rayclusters' as const,
        manifest: (managedBy?: string) =>
          sandboxRayCluster({ name, workerReplicas: workers, requests, ...(managedBy ? { managedBy } : {}) }),
        settled: (o: RayObject) =>
          o.status?.state === 'ready' && (o.status.readyWorkerReplicas ?? 0) === workers,
        describe: `RayCluster, ${workers} workers of ${requests.cpu}`,
      };
    }
    const exitCode = pick([0, 0, 1]);
    const submissionMode = pick(['K8sJobMode', 'HTTPMode'] as const);
    const runSeconds = pick([1, 2, 3]);
    // Drawn once: the dispatched object and its direct twin must be the same workload.
    const clusterWorkers = pick([0, 1]);
    const name = `${prefix}-rj-${i}`;
    return {
      name,
      plural: 'rayjobs' as const,
      manifest: (managedBy?: string) =>
        sandboxRayJob({
          name,
          submissionMode,
          runSeconds,
          exitCode,
          cluster: { workerReplicas: clusterWorkers, requests },
          ...(managedBy ? { managedBy } : {}),
        }),
      settled: (o: RayObject) =>
        o.status?.jobDeploymentStatus === 'Complete' || o.status?.jobDeploymentStatus === 'Failed',
      describe: `RayJob ${submissionMode}, ${runSeconds}s, exit ${exitCode}`,
    };
  });
}
