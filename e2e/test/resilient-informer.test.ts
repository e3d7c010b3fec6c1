// The controller's cache against a real apiserver: its list in pages (one consistent snapshot),
// its watch over undici's stream (every event, typed as a read is), and a relist that reports
// what the watch did not see.

import type { Job } from '@jobrelay/kinds';
import { type InformerEvent, informerRelists, mergePatch, ResilientInformer } from '@jobrelay/kube';
import type { V1Job } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { createTestNamespace, eventually, testSandbox } from '../src/kube-test-helpers.ts';

const log = pino({ level: 'warn' });
let fleet: Fleet;
let namespace: string;
const informers: Array<ResilientInformer<Job>> = [];

/** An idle Job (parallelism 0): valid, and nothing ever runs. */
function idleJob(name: string, labels: Record<string, string> = {}): V1Job {
  return {
    metadata: { name, labels },
    spec: {
      parallelism: 0,
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] },
      },
    },
  };
}

function informer(
  pageSize: number,
  events: Array<InformerEvent<Job>>,
  labelSelector?: string,
  view?: (job: Job) => Job,
  more: { name?: string; watchTimeoutSeconds?: number } = {},
) {
  const made = new ResilientInformer<Job>({
    name: more.name ?? 'e2e Jobs',
    ...(more.watchTimeoutSeconds ? { watchTimeoutSeconds: more.watchTimeoutSeconds } : {}),
    kubeConfig: fleet.management.kubeConfig,
    apiVersion: 'batch/v1',
    kind: 'Job',
    path: `/apis/batch/v1/namespaces/${namespace}/jobs`,
    labelSelector,
    listPageSize: pageSize,
    ...(view ? { view } : {}),
    onEvent: (event) => events.push(event),
    log,
  });
  informers.push(made);
  return made;
}

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  namespace = await createTestNamespace(fleet.management, 'informer');
  await Promise.all(
    Array.from({ length: 23 }, (_, i) =>
      fleet.management.batch.createNamespacedJob({
        namespace,
        body: idleJob(`job-${i}`, { parity: i % 2 === 0 ? 'even' : 'odd' }),
      }),
    ),
  );
});

afterAll(async () => {
  await Promise.all(informers.map((i) => i.stop()));
  await fleet?.management.core.deleteNamespace({ name: namespace }).catch(() => {});
});

describe('ResilientInformer on a real apiserver', () => {
  it('lists in pages and holds every object, typed as a read returns it', async () => {
    const events: Array<InformerEvent<Job>> = [];
    const paged = informer(5, events); // 23 Jobs: five pages
    paged.start();
    await paged.waitForSync();
    expect(
      paged
        .list()
        .map((j) => j.metadata!.name)
        .sort(),
    ).toEqual(Array.from({ length: 23 }, (_, i) => `job-${i}`).sort());
    expect(events.filter((e) => e.type === 'upsert')).toHaveLength(23);
    const read = await fleet.management.jobs.read(namespace, 'job-7');
    const cached = paged.get(`${namespace}/job-7`)!;
    // A read and the cache agree, times as the apiserver's RFC 3339 strings (managedFields are
    // dropped from the cache); a listed object names its kind as a watched one does.
    expect(cached.metadata!.creationTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(cached.metadata!.creationTimestamp).toEqual(read.metadata!.creationTimestamp);
    expect([cached.apiVersion, cached.kind]).toEqual(['batch/v1', 'Job']);
    expect(cached.spec).toEqual(read.spec);
    expect(cached.metadata!.managedFields).toBeUndefined();
  });

  it('pages through a label selector too, and then follows changes by watch', async () => {
    const events: Array<InformerEvent<Job>> = [];
    const even = informer(4, events, 'parity=even');
    even.start();
    await even.waitForSync();
    expect(even.list()).toHaveLength(12);
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: idleJob('late', { parity: 'even' }),
    });
    await fleet.management.batch.patchNamespacedJob(
      { namespace, name: 'job-0', body: { metadata: { annotations: { touched: 'yes' } } } },
      mergePatch,
    );
    await fleet.management.batch.deleteNamespacedJob({ namespace, name: 'job-2' });
    await eventually('the watch brings the create, the change and the delete', async () => {
      const names = even.list().map((j) => j.metadata!.name);
      const touched = even.get(`${namespace}/job-0`)?.metadata?.annotations?.touched;
      return names.includes('late') && !names.includes('job-2') && touched === 'yes' ? true : undefined;
    });
    const watched = even.get(`${namespace}/late`)!;
    expect(watched.metadata!.creationTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(events.some((e) => e.type === 'delete' && e.object.metadata!.name === 'job-2')).toBe(true);
  });

  it('watch after watch resumes from the last version seen: one list in all, every change seen once', async () => {
    const events: Array<InformerEvent<Job>> = [];
    // Watches the apiserver ends every second: a dozen resumes within the test.
    const resuming = informer(500, events, 'parity=odd', undefined, {
      name: 'e2e resuming Jobs',
      watchTimeoutSeconds: 1,
    });
    resuming.start();
    await resuming.waitForSync();
    const listed = resuming.list().length;
    for (let round = 0; round < 4; round += 1) {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await fleet.management.batch.patchNamespacedJob(
        { namespace, name: 'job-1', body: { metadata: { annotations: { round: String(round) } } } },
        mergePatch,
      );
    }
    await eventually('the last change arrives', async () =>
      resuming.get(`${namespace}/job-1`)?.metadata?.annotations?.round === '3' ? true : undefined,
    );
    const relists = informerRelists().filter((t) => t.informer === 'e2e resuming Jobs');
    expect(relists).toEqual([{ informer: 'e2e resuming Jobs', reason: 'initial', count: 1 }]);
    // Each change once, nothing replayed by a resume.
    const changes = events.slice(listed).map((e) => `${e.type} ${e.object.metadata!.name}`);
    expect(changes).toEqual(Array.from({ length: 4 }, () => 'upsert job-1'));
  });

  it('keeps only its view of each object, listed or watched, and hands that view to onEvent', async () => {
    const events: Array<InformerEvent<Job>> = [];
    const slim = informer(10, events, 'parity=odd', (job) => {
      if (job.spec) job.spec.template = {};
      return job;
    });
    slim.start();
    await slim.waitForSync();
    expect(slim.list()).toHaveLength(11);
    expect(slim.list().every((j) => JSON.stringify(j.spec!.template) === '{}')).toBe(true);
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: idleJob('late-odd', { parity: 'odd' }),
    });
    await eventually('the watch brings the new Job', async () => slim.get(`${namespace}/late-odd`));
    const watched = slim.get(`${namespace}/late-odd`)!;
    expect(watched.spec!.template).toEqual({});
    expect(watched.spec!.parallelism).toBe(0);
    expect(events.every((e) => e.type === 'delete' || JSON.stringify(e.object.spec!.template) === '{}')).toBe(
      true,
    );
  });
});
