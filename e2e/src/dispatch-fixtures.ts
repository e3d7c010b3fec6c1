import { originUidLabel, placementAnnotation } from '@jobrelay/mirror';
import {
  formatPlacementRecord,
  loadRecordKeyring,
  type PlacementRecord,
  parsePlacementRecord,
  sealSubjectOf,
} from '@jobrelay/placement';
import { type Sandbox, sandboxStatus } from '@jobrelay/sandbox';
import type { KubernetesObject, V1Job } from '@kubernetes/client-node';
import { expect } from 'vitest';
import {
  type ClusterClients,
  clientsFor,
  dispatcherManagedBy,
  eventually,
  type SandboxJobOptions,
  sandboxJob,
  waitForFinishedJob,
} from './kube-test-helpers.ts';

/** What must agree between a dispatched Job's origin and the same Job run on one cluster. */
export function comparableStatus(job: V1Job) {
  const status = job.status ?? {};
  return {
    succeeded: status.succeeded ?? 0,
    failed: status.failed ?? 0,
    active: status.active ?? 0,
    completedIndexes: status.completedIndexes ?? '',
    failedIndexes: status.failedIndexes ?? null,
    conditions: (status.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`),
    hasStartTime: status.startTime !== undefined,
    hasCompletionTime: status.completionTime !== undefined,
  };
}

export interface Fleet {
  sandbox: Sandbox;
  management: ClusterClients;
  workers: Map<string, ClusterClients>;
  /** The worker that runs the direct (un-dispatched) twin of each Job. */
  direct: ClusterClients;
}

export function fleetOf(sandbox: Sandbox): Fleet {
  const workers = new Map(sandbox.workers.map((w) => [w.name, clientsFor(sandbox, w.name)]));
  return {
    sandbox,
    management: clientsFor(sandbox, sandbox.management.name),
    workers,
    direct: workers.get(sandbox.workers[sandbox.workers.length - 1]!.name)!,
  };
}

export function placedCluster(origin: V1Job): string | undefined {
  const raw = origin.metadata?.annotations?.[placementAnnotation];
  return raw ? (JSON.parse(raw) as { cluster?: string }).cluster : undefined;
}

/** The origin's placement record, parsed and checked as the controller reads it; throws when it has none. */
export function placementRecordOf(origin: KubernetesObject): PlacementRecord {
  const parsed = parsePlacementRecord(origin.metadata?.annotations?.[placementAnnotation]);
  if (parsed.kind !== 'ok')
    throw new Error(`${origin.metadata?.name} has no readable placement record (${parsed.kind})`);
  return parsed.record;
}

/**
 * `record` as the annotation's text, sealed for `origin` with the installation's record key (as
 * a controller writes it): for tests that arrange what a controller would have left behind.
 * Reading the key Secret takes an admin; a Job author cannot.
 */
export async function sealedPlacement(
  fleet: Fleet,
  origin: { metadata?: { namespace?: string; name?: string; uid?: string } },
  record: PlacementRecord,
): Promise<string> {
  const { keyring } = await loadRecordKeyring(fleet.management.core, 'jobrelay-system', {
    createIfMissing: true,
  });
  return formatPlacementRecord(record, sealSubjectOf(origin), keyring);
}

/** The mirror of `origin` on whichever worker holds it, found by the origin-uid label. */
export async function findMirror(
  fleet: Fleet,
  origin: V1Job,
): Promise<{ cluster: string; mirror: V1Job } | undefined> {
  for (const [cluster, clients] of fleet.workers) {
    const list = await clients.batch.listNamespacedJob({
      namespace: origin.metadata!.namespace!,
      labelSelector: `${originUidLabel}=${origin.metadata!.uid}`,
    });
    if (list.items[0]) return { cluster, mirror: list.items[0] };
  }
  return undefined;
}

export async function waitForMirror(fleet: Fleet, origin: V1Job, timeoutMs = 60_000) {
  return eventually(`a mirror of ${origin.metadata?.name}`, () => findMirror(fleet, origin), { timeoutMs });
}

/**
 * Runs the same Job twice: through jobrelay (origin on the management cluster) and directly
 * on a worker without managedBy. Returns both final states.
 */
export async function runBothWays(
  fleet: Fleet,
  namespaces: { origin: string; direct: string },
  job: SandboxJobOptions,
  during?: (created: { origin: V1Job; direct: V1Job }) => Promise<void>,
): Promise<{ origin: V1Job; direct: V1Job }> {
  const [origin, direct] = await Promise.all([
    fleet.management.batch.createNamespacedJob({
      namespace: namespaces.origin,
      body: sandboxJob({ ...job, managedBy: dispatcherManagedBy }),
    }),
    fleet.direct.batch.createNamespacedJob({ namespace: namespaces.direct, body: sandboxJob(job) }),
  ]);
  await during?.({ origin, direct });
  const [originDone, directDone] = await Promise.all([
    waitForFinishedJob(fleet.management, namespaces.origin, job.name),
    waitForFinishedJob(fleet.direct, namespaces.direct, job.name),
  ]);
  // The management cluster never ran a pod of it.
  const pods = await fleet.management.core.listNamespacedPod({
    namespace: namespaces.origin,
    labelSelector: `job-name=${job.name}`,
  });
  expect(pods.items).toHaveLength(0);
  return { origin: originDone, direct: directDone };
}

/** The pid of a running process of the sandbox (`worker-2/kube-apiserver`), e.g. to freeze it. */
export async function sandboxProcessPid(sandbox: Sandbox, processName: string): Promise<number> {
  const process = (await sandboxStatus(sandbox.dir))?.find((p) => p.name === processName);
  if (!process?.running || !process.pid) throw new Error(`the sandbox has no running ${processName}`);
  return process.pid;
}
