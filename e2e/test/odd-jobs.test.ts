// Huge and odd Jobs, on real apiservers: each is dispatched and kept in sync, or refused with a
// clear message; none is lost, none loops. 100,000 completions, a pod template of 1 MiB, a name
// at the 63-character limit, unicode in annotations, and 100,000 pods at once (fits nowhere).

import { placementAnnotation } from '@jobrelay/mirror';
import { EventsV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, findMirror, fleetOf, waitForMirror } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  isTrue,
  type SandboxJobOptions,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

let fleet: Fleet;
let controller: ControllerProcess;
let namespace: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  controller = startController(fleet.sandbox, ['--cluster-health-interval-seconds=1']);
  namespace = await createTestNamespace(fleet.management, 'odd');
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
});

async function dispatch(options: Omit<SandboxJobOptions, 'managedBy'>, annotations?: Record<string, string>) {
  const body = sandboxJob({ ...options, managedBy: dispatcherManagedBy });
  if (annotations) body.metadata!.annotations = { ...body.metadata!.annotations, ...annotations };
  return fleet.management.batch.createNamespacedJob({ namespace, body });
}

async function read(name: string): Promise<V1Job> {
  return fleet.management.batch.readNamespacedJob({ name, namespace });
}

async function removeOrigin(name: string): Promise<void> {
  await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
}

describe('odd Jobs', () => {
  it('dispatches a Job whose name is 63 characters long, and its pods run', async () => {
    const name = `${uniqueName('long')}-${'x'.repeat(63)}`.slice(0, 63);
    expect(name).toHaveLength(63);
    await dispatch({ name, spec: { completions: 2, parallelism: 2 }, pod: { runSeconds: 1 } });
    const finished = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(finished, 'Complete')).toBe(true);
    expect(finished.status?.succeeded).toBe(2);
    expect((await findMirror(fleet, finished))?.mirror.metadata?.name).toBe(name);
  });

  it('carries unicode annotations to the mirror byte for byte', async () => {
    const name = uniqueName('unicode');
    const annotations = {
      'example.com/description': '训练任务 — ünïcødé 🚀 "quoted", \\backslash\\, ‮rtl',
      'example.com/emoji-only': '🧪🧬🔬',
      'example.com/empty': '',
    };
    await dispatch({ name, pod: { runSeconds: 1 } }, annotations);
    const finished = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(finished, 'Complete')).toBe(true);
    const mirror = (await findMirror(fleet, finished))!.mirror;
    for (const [key, value] of Object.entries(annotations)) {
      expect(mirror.metadata?.annotations?.[key]).toBe(value);
      expect(finished.metadata?.annotations?.[key]).toBe(value);
    }
  });

  it('dispatches a Job with a pod template of 1 MiB and syncs its status', async () => {
    const name = uniqueName('huge');
    const big = 'a'.repeat(1024 * 1024);
    const body = sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 1 } });
    body.spec!.template.spec!.containers[0]!.env = [{ name: 'BIG', value: big }];
    await fleet.management.batch.createNamespacedJob({ namespace, body });
    const finished = await waitForFinishedJob(fleet.management, namespace, name);
    expect(isTrue(finished, 'Complete')).toBe(true);
    const mirror = (await findMirror(fleet, finished))!.mirror;
    expect(mirror.spec?.template.spec?.containers[0]?.env?.[0]?.value).toHaveLength(big.length);
  });

  it.each([
    { mode: 'Indexed' as const, expectIndexes: true },
    { mode: 'NonIndexed' as const, expectIndexes: false },
  ])(
    'dispatches $mode with 100,000 completions, syncs its progress, and removes the mirror with the origin',
    async ({ mode, expectIndexes }) => {
      const name = uniqueName(`many-${mode.toLowerCase()}`);
      const created = await dispatch({
        name,
        spec: { completions: 100_000, parallelism: 2, completionMode: mode },
        pod: { runSeconds: 1 },
        requests: { cpu: '10m' },
      });
      const { mirror } = await waitForMirror(fleet, created);
      expect(mirror.spec?.completions).toBe(100_000);
      const progressed = await eventually(
        'the origin to show 4 completions',
        async () => {
          const job = await read(name);
          return (job.status?.succeeded ?? 0) >= 4 ? job : undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(progressed.status?.active).toBeLessThanOrEqual(2);
      if (expectIndexes) expect(progressed.status?.completedIndexes).toMatch(/^0-\d+|^0,/);
      else expect(progressed.status?.completedIndexes).toBeUndefined();
      await removeOrigin(name);
      await eventually('the mirror to go with its origin', async () =>
        (await findMirror(fleet, created)) === undefined ? true : undefined,
      );
    },
  );

  it('refuses cleanly, without creating anything, a Job of 100,000 pods at once that fits no cluster', async () => {
    const name = uniqueName('wide');
    const created = await dispatch({
      name,
      spec: { completions: 100_000, parallelism: 100_000 },
      requests: { cpu: '100m' },
    });
    const why = await eventually('the Job to say why it waits', async () => {
      const job = await read(name);
      return job.metadata?.annotations?.['jobrelay.dev/unschedulable'];
    });
    expect(why).toMatch(/^0\/3 clusters available: 3 insufficient cpu in total \(100000 pods need /);
    const events = await fleet.management.kubeConfig
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace, fieldSelector: `regarding.uid=${created.metadata!.uid}` });
    expect(events.items.some((e) => e.reason === 'FailedPlacement' && e.note === why)).toBe(true);
    expect(await findMirror(fleet, created)).toBeUndefined();
    const job = await read(name);
    expect(JSON.parse(job.metadata?.annotations?.[placementAnnotation] ?? '{}').cluster).toBeUndefined();
    await removeOrigin(name);
  });
});
