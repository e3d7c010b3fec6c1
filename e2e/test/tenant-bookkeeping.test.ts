// A Job author tries to steer jobrelay with its own bookkeeping, as a hostile tenant would
// (issue 28, part 1): a placement record naming a cluster the fleet's fences keep it out of,
// a record carrying progress that never happened, a valid record copied from another Job, a
// continuation annotation on the origin, and, on a worker, a mirror's continuation edited. The
// author is a ServiceAccount with the built-in `edit` role in its own namespace only. First
// without the admission policy: the controller's own checks must hold alone; then with the
// policy as deploy/controller ships it, which refuses the writes themselves. Each case ends as
// the same Job would on one cluster: nothing created where a fence forbids it, and every pod
// counted really ran. (bookkeeping-policy.test.ts tries every kubectl door against the policy.)

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mergePatch } from '@jobrelay/kube';
import { placementAnnotation } from '@jobrelay/mirror';
import { repositoryRoot } from '@jobrelay/sandbox';
import { EventsV1Api, type V1Job } from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import {
  type Fleet,
  findMirror,
  fleetOf,
  placementRecordOf,
  sealedPlacement,
  waitForMirror,
} from '../src/dispatch-fixtures.ts';
import { type FleetSampler, startFleetSampler } from '../src/fleet-sampler.ts';
import {
  type ClusterClients,
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  namespaceEditor,
  type SandboxJobOptions,
  sandboxJob,
  statusCodeOf,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

let fleet: Fleet;
let controller: ControllerProcess;
let sampler: FleetSampler;
let namespace: string;
let author: ClusterClients;
let admin: ReturnType<typeof workerClusterAdmin>;
/** The worker the fences keep this namespace out of: cordoned, and its allowedNamespaces exclude it. */
let fenced: string;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  admin = workerClusterAdmin(fleet);
  namespace = await createTestNamespace(fleet.management, 'tenant');
  author = await namespaceEditor(fleet.sandbox, fleet.management, namespace);
  fenced = [...fleet.workers.keys()][0]!;
  await admin.patch(fenced, { spec: { unschedulable: true, allowedNamespaces: ['somebody-else'] } });
  sampler = await startFleetSampler(fleet, { namespaces: [namespace] });
  controller = startController(fleet.sandbox);
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
  await sampler?.stop();
  if (fenced) await admin.reset(fenced, []);
});

/** The author's Job (jobrelay's managedBy, a fresh name from `prefix`), created as the author. */
function submit(prefix: string, options: Omit<SandboxJobOptions, 'name' | 'managedBy'> = {}): Promise<V1Job> {
  return author.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({ name: uniqueName(prefix), managedBy: dispatcherManagedBy, ...options }),
  });
}

/** What a hostile author writes as jobrelay's placement record: unsealed JSON of its choosing. */
function forgedRecord(fields: Record<string, unknown>): string {
  return JSON.stringify({
    attempt: 1,
    carried: { succeeded: 0, failed: 0 },
    excludedClusters: [],
    ...fields,
  });
}

async function eventsAbout(job: V1Job, reason: string): Promise<string[]> {
  const events = await fleet.management.kubeConfig
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace, fieldSelector: `regarding.uid=${job.metadata!.uid}` });
  return events.items.filter((e) => e.reason === reason).map((e) => e.note ?? '');
}

/** The pods of `origin`'s mirrors that ran to success, on any worker, as the sampler saw them. */
function succeededPods(origin: V1Job): number {
  return sampler
    .report()
    .podsOfOrigin(origin.metadata!.uid!)
    .filter((p) => p.phase === 'Succeeded').length;
}

async function finished(job: V1Job): Promise<V1Job> {
  return waitForFinishedJob(fleet.management, namespace, job.metadata!.name!, 120_000);
}

describe('a Job author writing jobrelay’s placement record (no admission policy)', () => {
  it('cannot choose a cluster the fences keep it out of: the record is reported and the Job placed from scratch', async () => {
    const job = await submit('steer', {
      annotations: { [placementAnnotation]: forgedRecord({ cluster: fenced }) },
    });
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(1);
    await sampler.settle();
    const mirrors = sampler.report().mirrorsOf(job.metadata!.uid!);
    expect(mirrors.length).toBeGreaterThan(0);
    expect(mirrors.map((m) => m.cluster)).not.toContain(fenced);
    const record = placementRecordOf(done);
    expect(record.cluster).not.toBe(fenced);
    // The record on the Job now is jobrelay's own, sealed for it.
    expect(JSON.parse(done.metadata!.annotations![placementAnnotation]!).seal).toMatch(/^v1\./);
    expect(await eventsAbout(job, 'PlacementUntrusted')).toEqual([
      expect.stringContaining('it carries no seal'),
    ]);
  });

  it('cannot claim progress: a Job of 4 completions whose record carries 3 runs 4 pods', async () => {
    const job = await submit('carried', {
      spec: { completions: 4, parallelism: 1 },
      annotations: {
        [placementAnnotation]: forgedRecord({
          attempt: 2,
          cluster: [...fleet.workers.keys()][1],
          carried: { succeeded: 3, failed: 0 },
        }),
      },
    });
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(4);
    await sampler.settle();
    expect(succeededPods(done)).toBe(4);
    expect(placementRecordOf(done).carried).toEqual({ succeeded: 0, failed: 0 });
    expect(await eventsAbout(job, 'PlacementUntrusted')).toHaveLength(1);
  });

  it('cannot reuse another Job’s valid record: it is sealed for that Job alone', async () => {
    const first = await submit('donor');
    const donor = await finished(first);
    const copied = donor.metadata!.annotations![placementAnnotation]!;
    const job = await submit('copy', {
      spec: { completions: 2, parallelism: 1 },
      annotations: { [placementAnnotation]: copied },
    });
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(2);
    await sampler.settle();
    expect(succeededPods(done)).toBe(2);
    expect(await eventsAbout(job, 'PlacementUntrusted')).toEqual([
      expect.stringContaining('does not match this workload'),
    ]);
  });

  it('cannot hand its mirror a continuation: jobrelay’s annotations never cross to a worker', async () => {
    const job = await submit('continues', {
      spec: { completions: 3, parallelism: 1 },
      pod: { runSeconds: 2 },
      annotations: {
        'jobrelay.dev/continues-from': '{"succeeded":2,"failed":0}',
        'jobrelay.dev/placement-attempt': '7',
        'jobrelay.dev/deadline-used-seconds': '0',
      },
    });
    const { mirror } = await waitForMirror(fleet, job);
    const annotations = mirror.metadata?.annotations ?? {};
    expect(annotations['jobrelay.dev/continues-from']).toBeUndefined();
    expect(annotations['jobrelay.dev/deadline-used-seconds']).toBeUndefined();
    expect(annotations['jobrelay.dev/placement-attempt']).toBe('1');
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(3);
    await sampler.settle();
    expect(succeededPods(done)).toBe(3);
  });
});

// A seeded random mix, not chosen examples: what a forger might write, drawn from a seed
// (JOBRELAY_FORGERY_SEED for another), each on a Job of its own. Whatever is drawn, the Job must
// end as on one cluster: every completion run by a real pod, none on the fenced cluster.
const forgerySeed = Number(process.env.JOBRELAY_FORGERY_SEED ?? 20261203);

describe(`a seeded mix of forged records (seed ${forgerySeed})`, () => {
  it('never steers a Job past the fences nor counts a completion no pod ran', async () => {
    const donor = await finished(await submit('mix-donor'));
    const genuine = donor.metadata!.annotations![placementAnnotation]!;
    const workers = [...fleet.workers.keys()];
    const forgery = fc.record({
      completions: fc.integer({ min: 1, max: 3 }),
      record: fc.oneof(
        // A record of the forger's choosing, unsealed or with a made-up seal.
        fc
          .record({
            cluster: fc.constantFrom(...workers),
            attempt: fc.integer({ min: 1, max: 4 }),
            succeeded: fc.nat(3),
            failed: fc.nat(2),
            seal: fc.option(fc.string({ minLength: 1, maxLength: 60 }), { nil: undefined }),
            gaveUp: fc.option(fc.constant('forged'), { nil: undefined }),
          })
          .map(({ succeeded, failed, ...fields }) =>
            JSON.stringify({ excludedClusters: [], ...fields, carried: { succeeded, failed } }),
          ),
        // Another Job's genuine record, as it is or with its progress raised under its seal.
        fc.constant(genuine),
        fc.nat(3).map((succeeded) => {
          const json = JSON.parse(genuine) as Record<string, unknown>;
          return JSON.stringify({ ...json, cluster: fenced, carried: { succeeded, failed: 0 } });
        }),
        // Not a record at all.
        fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value) ?? 'null'),
      ),
    });
    const drawn = fc.sample(forgery, { seed: forgerySeed, numRuns: 6 });
    const jobs = await Promise.all(
      drawn.map(({ completions, record }) =>
        submit('mix', {
          spec: { completions, parallelism: 1 },
          annotations: { [placementAnnotation]: record },
        }),
      ),
    );
    const done = await Promise.all(jobs.map((job) => finished(job)));
    await sampler.settle();
    for (const [i, job] of done.entries()) {
      const what = `forgery ${i} (seed ${forgerySeed}): ${drawn[i]!.record}`;
      expect(job.status?.succeeded, what).toBe(drawn[i]!.completions);
      expect(succeededPods(job), what).toBe(drawn[i]!.completions);
      const clusters = sampler
        .report()
        .mirrorsOf(job.metadata!.uid!)
        .map((m) => m.cluster);
      expect(clusters.length, what).toBeGreaterThan(0);
      expect(clusters, what).not.toContain(fenced);
      expect(await eventsAbout(job, 'PlacementUntrusted'), what).toHaveLength(1);
    }
  });
});

describe('a sealed record naming a cluster whose fences changed since', () => {
  it('creates nothing there: the fences are checked again just before the mirror is made', async () => {
    // What a controller would have written before the cluster was cordoned: a genuine record.
    // The Job waits suspended meanwhile, so nothing is made before the record is in place.
    const job = await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({
        name: uniqueName('refenced'),
        managedBy: dispatcherManagedBy,
        spec: { suspend: true },
      }),
    });
    const sealed = await sealedPlacement(fleet, job, {
      cluster: fenced,
      attempt: 1,
      carried: { succeeded: 0, failed: 0 },
      excludedClusters: [],
    });
    await fleet.management.batch.patchNamespacedJob(
      {
        namespace,
        name: job.metadata!.name!,
        body: { metadata: { annotations: { [placementAnnotation]: sealed } }, spec: { suspend: false } },
      },
      mergePatch,
    );
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(1);
    await sampler.settle();
    const clusters = sampler
      .report()
      .mirrorsOf(job.metadata!.uid!)
      .map((m) => m.cluster);
    expect(clusters.length).toBeGreaterThan(0);
    expect(clusters).not.toContain(fenced);
    expect(placementRecordOf(done).attempt).toBe(2);
    expect(await eventsAbout(job, 'Replacing')).toEqual([
      expect.stringContaining(`cluster ${fenced} no longer takes it: cordoned`),
    ]);
  });
});

describe('a mirror’s continuation edited on its worker', () => {
  it('is not believed: the mirror is deleted and made again, and every pod counted ran', async () => {
    const job = await submit('tamper', { spec: { completions: 2, parallelism: 1 }, pod: { runSeconds: 5 } });
    const { cluster, mirror } = await waitForMirror(fleet, job);
    // The worker's side of the same tenant (or anyone who may edit Jobs there) claims progress.
    await fleet.workers.get(cluster)!.batch.patchNamespacedJob(
      {
        namespace,
        name: mirror.metadata!.name!,
        body: { metadata: { annotations: { 'jobrelay.dev/continues-from': '{"succeeded":2,"failed":0}' } } },
      },
      mergePatch,
    );
    await eventually(
      'the edited mirror replaced',
      async () => {
        const now = await findMirror(fleet, job);
        return now && now.mirror.metadata!.uid !== mirror.metadata!.uid ? now : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(2);
    await sampler.settle();
    expect(succeededPods(done)).toBeGreaterThanOrEqual(2);
    expect(await eventsAbout(job, 'MirrorTampered')).toEqual([
      expect.stringContaining('a first attempt carries no progress'),
    ]);
  });
});

describe('a Job author removing jobrelay’s placement record while its Job runs', () => {
  it('has it placed again from the progress its status shows: nothing counted twice, nothing lost', async () => {
    const job = await submit('unrecord', {
      spec: { completions: 3, parallelism: 1 },
      pod: { runSeconds: 3 },
    });
    await eventually(
      'a first success counted on the origin',
      async () => {
        const now = await fleet.management.batch.readNamespacedJob({ namespace, name: job.metadata!.name! });
        return (now.status?.succeeded ?? 0) >= 1 ? now : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    // Removing is allowed to anyone who may edit the Job (the policy refuses only setting and changing).
    await author.batch.patchNamespacedJob(
      {
        namespace,
        name: job.metadata!.name!,
        body: { metadata: { annotations: { [placementAnnotation]: null } } },
      },
      mergePatch,
    );
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(3);
    expect(await eventsAbout(job, 'PlacementRemoved')).toHaveLength(1);
    expect(await eventsAbout(job, 'StatusRefused')).toEqual([]);
    await sampler.settle();
    // At least once for a pod that was running when its mirror went; never fewer than counted.
    expect(succeededPods(done)).toBeGreaterThanOrEqual(3);
    expect(succeededPods(done)).toBeLessThanOrEqual(4);
    expect(placementRecordOf(done).attempt).toBeGreaterThanOrEqual(2);
  });
});

describe('with the admission policy installed (deploy/controller/bookkeeping-policy.yaml, as shipped)', () => {
  const policyFile = join(repositoryRoot, 'deploy/controller/bookkeeping-policy.yaml');
  const kubectl = (args: string[]) =>
    spawnSync(
      join(fleet.sandbox.binariesDir, 'kubectl'),
      ['--kubeconfig', fleet.sandbox.kubeconfigPath(fleet.sandbox.management.name), ...args],
      {
        encoding: 'utf8',
      },
    );

  beforeAll(async () => {
    const applied = kubectl(['apply', '-f', policyFile]);
    expect(applied.status, applied.stderr).toBe(0);
    // Enforced once the apiserver's informer has it: a dry-run create by the author says when.
    await eventually(
      'the bookkeeping policy to be enforced',
      async () => {
        const code = await statusCodeOf(
          author.batch.createNamespacedJob({
            namespace,
            dryRun: 'All',
            body: sandboxJob({
              name: 'probe',
              managedBy: dispatcherManagedBy,
              annotations: { [placementAnnotation]: forgedRecord({}) },
            }),
          }),
        );
        return code === 403 ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
  }, 60_000);

  afterAll(() => {
    kubectl(['delete', '--ignore-not-found', '-f', policyFile]);
  });

  it('refuses the author’s Job carrying a forged record, naming the key: nothing exists anywhere', async () => {
    const name = uniqueName('refused');
    const refusal = await author.batch
      .createNamespacedJob({
        namespace,
        body: sandboxJob({
          name,
          managedBy: dispatcherManagedBy,
          spec: { completions: 4, parallelism: 1 },
          annotations: {
            [placementAnnotation]: forgedRecord({ cluster: fenced, carried: { succeeded: 3, failed: 0 } }),
          },
        }),
      })
      .then(
        () => undefined,
        (err: unknown) => err as { code?: number; body?: string },
      );
    expect(refusal?.code).toBe(403);
    expect(String(refusal?.body)).toContain(`annotation ${placementAnnotation} is jobrelay's bookkeeping`);
    expect(await statusCodeOf(fleet.management.batch.readNamespacedJob({ namespace, name }))).toBe(404);
    await new Promise((r) => setTimeout(r, 2_000));
    await sampler.settle();
    for (const worker of fleet.workers.values()) {
      expect(await statusCodeOf(worker.batch.readNamespacedJob({ namespace, name }))).toBe(404);
    }
  });

  it('refuses changing a placed Job’s record or adding a continuation; the controller still places and syncs, and every counted pod ran', async () => {
    const job = await submit('guarded', { spec: { completions: 3, parallelism: 1 }, pod: { runSeconds: 2 } });
    const placed = await eventually(
      'its sealed record',
      async () => {
        const now = await fleet.management.batch.readNamespacedJob({ namespace, name: job.metadata!.name! });
        return now.metadata?.annotations?.[placementAnnotation] ? now : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const record = JSON.parse(placed.metadata!.annotations![placementAnnotation]!) as Record<string, unknown>;
    for (const annotations of [
      { [placementAnnotation]: JSON.stringify({ ...record, carried: { succeeded: 2, failed: 0 } }) },
      { 'jobrelay.dev/continues-from': '{"succeeded":2,"failed":0}' },
      { 'jobrelay.dev/unschedulable': 'nothing fits, honest' },
    ]) {
      const code = await statusCodeOf(
        author.batch.patchNamespacedJob(
          { namespace, name: job.metadata!.name!, body: { metadata: { annotations } } },
          mergePatch,
        ),
      );
      expect(code, JSON.stringify(annotations)).toBe(403);
    }
    // Its other edits pass: a label of its own.
    await author.batch.patchNamespacedJob(
      { namespace, name: job.metadata!.name!, body: { metadata: { labels: { team: 'a' } } } },
      mergePatch,
    );
    const done = await finished(job);
    expect(done.status?.succeeded).toBe(3);
    await sampler.settle();
    expect(succeededPods(done)).toBe(3);
  });
});
