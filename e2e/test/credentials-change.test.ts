// A worker's kubeconfig Secret changing under a running Job: an admin pastes a revoked token.
// The WorkerCluster turns not Active at once, with the reason and no credential in the message;
// the Job stays where it is until the lost timeout (the worker still runs it); fixed in time,
// the Job finishes where it was. Left broken past the timeout, the Job moves, once.
// The two run at once, each breaking a worker of its own: the second's Job is kept off the first's
// worker by a cluster selector over the other two, so it still has a worker to move to.

import { systemNamespace } from '@jobrelay/sandbox';
import { EventsV1Api, type V1Job, type V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placementRecordOf, waitForMirror } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const lostTimeoutSeconds = 25;
const revokedToken = 'revoked-token-7c1e55d0a9';
/** Each worker's own name, as a WorkerCluster label a cluster selector can name. */
const nameLabel = 'e2e-credentials-worker';
let fleet: Fleet;
let admin: ReturnType<typeof workerClusterAdmin>;
let controller: ControllerProcess;
let namespace: string;
const originals = new Map<string, V1Secret>();

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  admin = workerClusterAdmin(fleet);
  controller = startController(fleet.sandbox, [
    `--worker-lost-timeout-seconds=${lostTimeoutSeconds}`,
    '--cluster-health-interval-seconds=1',
    '--cluster-reconnect-max-seconds=2',
  ]);
  namespace = await createTestNamespace(fleet.management, 'credentials');
  for (const worker of fleet.workers.keys()) await admin.patch(worker, { labels: { [nameLabel]: worker } });
});

afterAll(async () => {
  for (const worker of originals.keys()) await restore(worker);
  for (const worker of fleet.workers.keys())
    await admin.patch(worker, { labels: { [nameLabel]: null } }).catch(() => {});
  await controller?.kill('SIGTERM');
});

const secretName = (worker: string) => `${worker}-kubeconfig`;

/** Replaces the token in the worker's kubeconfig Secret, as an admin applying a stale one would. */
async function revoke(worker: string): Promise<void> {
  const secret = await fleet.management.core.readNamespacedSecret({
    name: secretName(worker),
    namespace: systemNamespace,
  });
  if (!originals.has(worker)) originals.set(worker, secret);
  const kubeconfig = parse(Buffer.from(secret.data!.kubeconfig!, 'base64').toString('utf8'));
  for (const user of kubeconfig.users) user.user.token = revokedToken;
  await fleet.management.core.replaceNamespacedSecret({
    name: secretName(worker),
    namespace: systemNamespace,
    body: { ...secret, data: { kubeconfig: Buffer.from(stringify(kubeconfig)).toString('base64') } },
  });
}

async function restore(worker: string): Promise<void> {
  const original = originals.get(worker);
  if (!original) return;
  const current = await fleet.management.core.readNamespacedSecret({
    name: secretName(worker),
    namespace: systemNamespace,
  });
  await fleet.management.core.replaceNamespacedSecret({
    name: secretName(worker),
    namespace: systemNamespace,
    body: { ...current, data: original.data },
  });
  originals.delete(worker);
  await admin.activeCondition(worker, (c) => c.status === 'True');
}

async function read(name: string): Promise<V1Job> {
  return fleet.management.batch.readNamespacedJob({ name, namespace });
}

async function dispatchLong(name: string, runSeconds: number, annotations?: Record<string, string>) {
  const created = await fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({
      name,
      managedBy: dispatcherManagedBy,
      pod: { runSeconds },
      ...(annotations ? { annotations } : {}),
    }),
  });
  return { created, ...(await waitForMirror(fleet, created)) };
}

/** Mirrors of `origin` on every worker, read with the test's own (good) credentials. */
async function mirrorClusters(origin: V1Job): Promise<string[]> {
  const found: string[] = [];
  for (const [cluster, clients] of fleet.workers) {
    const list = await clients.batch.listNamespacedJob({
      namespace,
      labelSelector: `jobrelay.dev/origin-uid=${origin.metadata!.uid}`,
    });
    if (list.items.length > 0) found.push(cluster);
  }
  return found;
}

/** The worker the first test breaks, once its Job is placed: the second keeps its Job off it. */
const firstBroken = Promise.withResolvers<string>();

describe.concurrent('a kubeconfig Secret that changes to a bad one', () => {
  it('makes the worker not Active with the reason at once, and moves nothing before the lost timeout', async () => {
    const name = uniqueName('stays');
    const dispatched = dispatchLong(name, 30);
    // Settles as the dispatch does, failure included, so the second test never waits in vain.
    firstBroken.resolve(dispatched.then((d) => d.cluster));
    const { created, cluster } = await dispatched;
    await revoke(cluster);
    const brokenAt = Date.now();
    const condition = await admin.activeCondition(cluster, (c) => c.status === 'False');
    expect(condition.reason).toBe('Unauthorized');
    expect(condition.message).toContain("rejected the kubeconfig's credentials");
    expect(condition.message).not.toContain(revokedToken);

    // Watched for most of the lost timeout: the Job stays on its worker, where it still runs.
    while (Date.now() - brokenAt < (lostTimeoutSeconds - 8) * 1000) {
      const record = placementRecordOf(await read(name));
      expect(record).toMatchObject({ cluster, attempt: 1 });
      expect(await mirrorClusters(created)).toEqual([cluster]);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await restore(cluster);
    const finished = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(finished, 'Complete')).toBe(true);
    expect(placementRecordOf(finished)).toMatchObject({ cluster, attempt: 1 });
    expect(finished.status?.succeeded).toBe(1);
  });

  it('moves the Job once, after the lost timeout, naming the reason, when it stays broken', async () => {
    const name = uniqueName('moves');
    const avoid = await firstBroken.promise;
    const eligible = [...fleet.workers.keys()].filter((worker) => worker !== avoid);
    const { created, cluster } = await dispatchLong(name, 40, {
      'jobrelay.dev/cluster-selector': `${nameLabel} in (${eligible.join(',')})`,
    });
    await revoke(cluster);
    const brokenAt = Date.now();
    const moved = await eventually(
      'the Job to move',
      async () => {
        const job = await read(name);
        return placementRecordOf(job).attempt === 2 && placementRecordOf(job).cluster ? job : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(Date.now() - brokenAt).toBeGreaterThanOrEqual(lostTimeoutSeconds * 1000);
    expect(placementRecordOf(moved).cluster).not.toBe(cluster);
    const events = await fleet.management.kubeConfig
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace, fieldSelector: `regarding.uid=${created.metadata!.uid}` });
    const replacing = events.items.filter((e) => e.reason === 'Replacing').map((e) => e.note);
    expect(replacing).toHaveLength(1);
    expect(replacing[0]).toMatch(
      new RegExp(`cluster ${cluster} has not been Active for \\d+s \\(Unauthorized\\)`),
    );

    // Back with good credentials, the stale mirror on the old worker goes; the Job finishes on its new one.
    await restore(cluster);
    await eventually('the stale mirror to be removed', async () => {
      const clusters = await mirrorClusters(created);
      return clusters.length === 1 && clusters[0] === placementRecordOf(moved).cluster ? true : undefined;
    });
    const finished = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(finished, 'Complete')).toBe(true);
    expect(placementRecordOf(finished)).toMatchObject({
      cluster: placementRecordOf(moved).cluster,
      attempt: 2,
    });
  });
});
