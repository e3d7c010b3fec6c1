// Jobs a worker refuses: real apiservers refusing the mirror (a ResourceQuota, a
// ValidatingAdmissionPolicy), and what the origin's author then sees: a Warning Event quoting
// the worker, placement on a cluster that accepts it, or, after a bounded number of refusals, a
// terminal Failed condition with reason MirrorRefused. Never a loop.

import { AdmissionregistrationV1Api, EventsV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, findMirror, fleetOf, placementRecordOf } from '../src/dispatch-fixtures.ts';
import {
  type ClusterClients,
  condition,
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

let fleet: Fleet;
let controller: ControllerProcess;
let workers: string[];
let admin: ReturnType<typeof workerClusterAdmin>;
const policies: Array<{ clients: ClusterClients; name: string }> = [];

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  workers = [...fleet.workers.keys()];
  admin = workerClusterAdmin(fleet);
  expect(workers).toHaveLength(3);
  controller = startController(fleet.sandbox, ['--cluster-health-interval-seconds=1']);
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  for (const worker of workers ?? []) await admin?.reset(worker, []);
  for (const { clients, name } of policies) {
    const admission = clients.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    await admission.deleteValidatingAdmissionPolicyBinding({ name }).catch(() => {});
    await admission.deleteValidatingAdmissionPolicy({ name }).catch(() => {});
  }
});

async function refusalNotes(namespace: string, job: V1Job): Promise<string[]> {
  const events = await fleet.management.kubeConfig
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `regarding.uid=${job.metadata!.uid}` });
  return events.items.filter((e) => e.reason === 'MirrorRefused').map((e) => e.note ?? '');
}

/** The namespace on a worker, as jobrelay would create it, so that a rule can be put in it first. */
async function namespaceOnWorker(worker: ClusterClients, namespace: string): Promise<void> {
  await worker.core.createNamespace({ body: { metadata: { name: namespace } } });
}

/** Waits until the worker's apiserver refuses a Job in `namespace` with a message containing `expected`. */
async function untilRefused(worker: ClusterClients, namespace: string, expected: string): Promise<void> {
  const probe = sandboxJob({ name: uniqueName('probe') });
  await eventually(
    `the worker to refuse Jobs in ${namespace}`,
    async () => {
      try {
        await worker.batch.createNamespacedJob({ namespace, body: probe, dryRun: 'All' });
        return undefined;
      } catch (err) {
        return String((err as { body?: unknown }).body).includes(expected) ? true : undefined;
      }
    },
    { timeoutMs: 60_000 },
  );
}

async function dispatch(namespace: string, name: string): Promise<V1Job> {
  return fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({
      name,
      managedBy: dispatcherManagedBy,
      spec: { completions: 1, parallelism: 1 },
      pod: { runSeconds: 1 },
    }),
  });
}

describe('a mirror refused by every worker', () => {
  it('fails the Job with reason MirrorRefused after 3 refusals, each cluster tried once, with the quota quoted', async () => {
    const namespace = await createTestNamespace(fleet.management, 'refused');
    for (const worker of fleet.workers.values()) {
      await namespaceOnWorker(worker, namespace);
      await worker.core.createNamespacedResourceQuota({
        namespace,
        body: { metadata: { name: 'no-jobs' }, spec: { hard: { 'count/jobs.batch': '0' } } },
      });
      await untilRefused(worker, namespace, 'exceeded quota');
    }
    const name = uniqueName('quota');
    const created = await dispatch(namespace, name);
    const failed = await waitForFinishedJob(fleet.management, namespace, name, 120_000);

    expect(isTrue(failed, 'Failed')).toBe(true);
    expect(condition(failed, 'Failed')?.reason).toBe('MirrorRefused');
    expect(condition(failed, 'FailureTarget')?.reason).toBe('MirrorRefused');
    expect(condition(failed, 'Failed')?.message).toContain('exceeded quota');
    expect(failed.status?.active ?? 0).toBe(0);

    const record = placementRecordOf(failed);
    expect(record.refusals).toBe(3);
    // Each refusal sent the next try to a cluster that had not refused it yet.
    expect([...(record.refusedBy ?? [])].sort()).toEqual([...workers].sort());
    expect(record.gaveUp).toContain('refused 3 times');
    expect(record.cluster).toBeUndefined();

    const notes = await eventually('three MirrorRefused Events', async () => {
      const found = await refusalNotes(namespace, created);
      return found.length === 3 ? found : undefined;
    });
    for (const note of notes) expect(note).toMatch(/refused the mirror Job \(HTTP 403\): .*exceeded quota/);
    expect(notes.some((n) => n.includes('Giving up after 3 refusals'))).toBe(true);
    expect(await findMirror(fleet, created)).toBeUndefined();

    // Given up is final: nothing is retried behind the author's back.
    await new Promise((r) => setTimeout(r, 6_000));
    expect(await refusalNotes(namespace, created)).toHaveLength(3);
    const later = await fleet.management.batch.readNamespacedJob({ name, namespace });
    expect(placementRecordOf(later)).toEqual(record);
  });
});

describe('a mirror refused by some workers', () => {
  it('runs on the worker that accepts it, with a Warning quoting each refusal', async () => {
    const namespace = await createTestNamespace(fleet.management, 'refused-some');
    const [accepting, ...refusing] = workers as [string, ...string[]];
    for (const workerName of refusing) {
      const worker = fleet.workers.get(workerName)!;
      await namespaceOnWorker(worker, namespace);
      const name = `jobrelay-e2e-${namespace}`;
      const admission = worker.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
      await admission.createValidatingAdmissionPolicy({
        body: {
          metadata: { name },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              resourceRules: [
                { apiGroups: ['batch'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['jobs'] },
              ],
            },
            validations: [
              { expression: 'false', message: `Jobs are not run on ${workerName} in this namespace` },
            ],
          },
        },
      });
      await admission.createValidatingAdmissionPolicyBinding({
        body: {
          metadata: { name },
          spec: {
            policyName: name,
            validationActions: ['Deny'],
            matchResources: {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
            },
          },
        },
      });
      policies.push({ clients: worker, name });
      await untilRefused(worker, namespace, `Jobs are not run on ${workerName}`);
    }

    // The accepting worker is cordoned until both others have refused the mirror, so the
    // Job meets both refusals first; then it is uncordoned before the second retry delay ends.
    await admin.patch(accepting, { spec: { unschedulable: true } });
    const name = uniqueName('policy');
    const created = await dispatch(namespace, name);
    const refusedTwice = await eventually(
      'two refusals',
      async () => {
        const job = await fleet.management.batch.readNamespacedJob({ name, namespace });
        return placementRecordOf(job).refusals === 2 ? placementRecordOf(job) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    await admin.patch(accepting, { spec: { unschedulable: null } });
    expect([...(refusedTwice.refusedBy ?? [])].sort()).toEqual([...refusing].sort());
    expect(refusedTwice.cluster).toBeUndefined();

    const finished = await waitForFinishedJob(fleet.management, namespace, name, 120_000);
    expect(isTrue(finished, 'Complete')).toBe(true);
    expect(finished.status?.succeeded).toBe(1);
    const record = placementRecordOf(finished);
    expect(record.cluster).toBe(accepting);
    expect(record.refusals).toBe(2);
    expect(record.gaveUp).toBeUndefined();
    const notes = await refusalNotes(namespace, created);
    expect(notes).toHaveLength(2);
    for (const note of notes)
      expect(note).toMatch(/refused the mirror Job \(HTTP \d+\): .*Jobs are not run on/);
    expect(notes.map((n) => n.match(/refusal (\d) of 3/)?.[1]).sort()).toEqual(['1', '2']);
    expect((await findMirror(fleet, created))?.cluster).toBe(accepting);
  });
});
