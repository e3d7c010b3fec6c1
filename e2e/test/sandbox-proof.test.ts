// Proof that the local fleet is real: the built-in Job controller, the scheduler and the
// pod runner do their work; the apiserver enforces the Job API rules jobrelay relies on;
// the static identities are authorised as documented.
import type { V1Job } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ClusterClients,
  clientsFor,
  condition,
  createTestNamespace,
  dispatcherManagedBy,
  isTrue,
  sandboxJob,
  statusCodeOf,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();
let management: ClusterClients;
let worker: ClusterClients;
let managementNs: string;
let workerNs: string;

beforeAll(async () => {
  management = clientsFor(sandbox, sandbox.management.name);
  worker = clientsFor(sandbox, sandbox.workers[0]!.name);
  [managementNs, workerNs] = await Promise.all([
    createTestNamespace(management, 'proof'),
    createTestNamespace(worker, 'proof'),
  ]);
});

function expectCompletedLikeTheJobController(job: V1Job): void {
  expect(job.status?.succeeded).toBe(1);
  expect(job.status?.failed ?? 0).toBe(0);
  expect(job.status?.active ?? 0).toBe(0);
  expect(condition(job, 'SuccessCriteriaMet')).toMatchObject({
    status: 'True',
    reason: 'CompletionsReached',
  });
  expect(condition(job, 'Complete')).toMatchObject({ status: 'True', reason: 'CompletionsReached' });
  expect(job.status?.startTime).toBeInstanceOf(Date);
  expect(job.status?.completionTime).toBeInstanceOf(Date);
  expect(job.status!.completionTime!.getTime()).toBeGreaterThanOrEqual(job.status!.startTime!.getTime());
}

describe.concurrent('the built-in Job controller and the pod runner', () => {
  it('skip a Job managed by jobrelay: no pods, empty status after 10 s', async () => {
    const name = uniqueName('foreign');
    await management.batch.createNamespacedJob({
      namespace: managementNs,
      body: sandboxJob({ name, managedBy: dispatcherManagedBy }),
    });
    await new Promise((r) => setTimeout(r, 10_000));
    const pods = await management.core.listNamespacedPod({
      namespace: managementNs,
      labelSelector: `job-name=${name}`,
    });
    expect(pods.items).toHaveLength(0);
    const job = await management.batch.readNamespacedJob({ name, namespace: managementNs });
    expect(job.spec?.managedBy).toBe(dispatcherManagedBy);
    expect(job.status ?? {}).toEqual({});
  });

  it('run a Job without managedBy to Complete on the management cluster', async () => {
    const name = uniqueName('local');
    await management.batch.createNamespacedJob({ namespace: managementNs, body: sandboxJob({ name }) });
    const job = await waitForFinishedJob(management, managementNs, name);
    expectCompletedLikeTheJobController(job);
    const pods = await management.core.listNamespacedPod({
      namespace: managementNs,
      labelSelector: `job-name=${name}`,
    });
    expect(pods.items.map((p) => p.status?.phase)).toEqual(['Succeeded']);
  });

  it('run a Job to Complete on a worker, its pod running for the annotated time', async () => {
    const name = uniqueName('worker');
    await worker.batch.createNamespacedJob({
      namespace: workerNs,
      body: sandboxJob({ name, pod: { runSeconds: 3 } }),
    });
    const job = await waitForFinishedJob(worker, workerNs, name);
    expectCompletedLikeTheJobController(job);
    const [pod] = (
      await worker.core.listNamespacedPod({ namespace: workerNs, labelSelector: `job-name=${name}` })
    ).items;
    const terminated = pod?.status?.containerStatuses?.[0]?.state?.terminated;
    expect(terminated?.exitCode).toBe(0);
    expect(pod?.spec?.nodeName).toMatch(new RegExp(`^${sandbox.workers[0]!.name}-node-`));
    const ranForMs = terminated!.finishedAt!.getTime() - terminated!.startedAt!.getTime();
    expect(ranForMs).toBeGreaterThanOrEqual(2_000);
  });

  it('fail a Job whose pods exit 1 with BackoffLimitExceeded (FailureTarget, then Failed)', async () => {
    const name = uniqueName('backoff');
    await worker.batch.createNamespacedJob({
      namespace: workerNs,
      body: sandboxJob({ name, spec: { backoffLimit: 1 }, pod: { exitCode: 1 } }),
    });
    const job = await waitForFinishedJob(worker, workerNs, name);
    expect(job.status?.failed).toBe(2);
    expect(job.status?.succeeded ?? 0).toBe(0);
    expect(condition(job, 'FailureTarget')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(condition(job, 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(isTrue(job, 'Complete')).toBe(false);
    const pods = await worker.core.listNamespacedPod({
      namespace: workerNs,
      labelSelector: `job-name=${name}`,
    });
    for (const pod of pods.items) {
      expect(pod.status?.phase).toBe('Failed');
      expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    }
  });
});

describe('the apiserver enforces the Job API rules', () => {
  async function createForeignJob(): Promise<V1Job> {
    return management.batch.createNamespacedJob({
      namespace: managementNs,
      body: sandboxJob({ name: uniqueName('rules'), managedBy: dispatcherManagedBy }),
    });
  }

  it('rejects Complete=True without completionTime on /status (422), and accepts it with one', async () => {
    const job = await createForeignJob();
    const name = job.metadata!.name!;
    const now = new Date();
    const conditions = [
      { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', lastTransitionTime: now },
      { type: 'Complete', status: 'True', reason: 'CompletionsReached', lastTransitionTime: now },
    ];
    const withoutCompletionTime: V1Job = { ...job, status: { startTime: now, succeeded: 1, conditions } };
    const rejected = await statusCodeOf(
      management.batch.replaceNamespacedJobStatus({
        name,
        namespace: managementNs,
        body: withoutCompletionTime,
      }),
    );
    expect(rejected).toBe(422);

    // The same write with completionTime passes: the rejection was that rule, not the shape.
    const fresh = await management.batch.readNamespacedJob({ name, namespace: managementNs });
    const written = await management.batch.replaceNamespacedJobStatus({
      name,
      namespace: managementNs,
      body: { ...fresh, status: { startTime: now, completionTime: now, succeeded: 1, conditions } },
    });
    expect(isTrue(written, 'Complete')).toBe(true);
  });

  it('keeps spec.managedBy immutable', async () => {
    const job = await createForeignJob();
    const changed: V1Job = { ...job, spec: { ...job.spec!, managedBy: 'example.com/other' } };
    const code = await statusCodeOf(
      management.batch.replaceNamespacedJob({
        name: job.metadata!.name!,
        namespace: managementNs,
        body: changed,
      }),
    );
    expect(code).toBe(422);
    const after = await management.batch.readNamespacedJob({
      name: job.metadata!.name!,
      namespace: managementNs,
    });
    expect(after.spec?.managedBy).toBe(dispatcherManagedBy);
  });
});

describe('the static identities', () => {
  it('viewer can list Jobs but cannot create one', async () => {
    const viewer = clientsFor(sandbox, sandbox.management.name, 'viewer');
    const list = await viewer.batch.listNamespacedJob({ namespace: managementNs });
    expect(Array.isArray(list.items)).toBe(true);
    const code = await statusCodeOf(
      viewer.batch.createNamespacedJob({
        namespace: managementNs,
        body: sandboxJob({ name: uniqueName('viewer') }),
      }),
    );
    expect(code).toBe(403);
  });

  it('nobody can neither list nor create Jobs', async () => {
    const nobody = clientsFor(sandbox, sandbox.workers[0]!.name, 'nobody');
    expect(await statusCodeOf(nobody.batch.listNamespacedJob({ namespace: workerNs }))).toBe(403);
    expect(
      await statusCodeOf(
        nobody.batch.createNamespacedJob({
          namespace: workerNs,
          body: sandboxJob({ name: uniqueName('nobody') }),
        }),
      ),
    ).toBe(403);
  });
});
