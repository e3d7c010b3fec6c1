// The chaos run's control: the same seeded mix of Jobs and KubeRay workloads run directly on one
// worker, no jobrelay and no faults, each to its final status. The chaos run compares every origin
// with it. It needs no quiet machine (it is the workers' own controllers alone), so `npm test`
// runs it in a shared lane (e2e/test/chaos-control.test.ts) and saves it in the run's handoff
// directory (.test-results/handoff/); the chaos run, alone on the machine afterwards, reads it
// instead of running it again. A chaos run finding none (run by itself, or by `npm run chaos`) runs its own first.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Sandbox } from '@jobrelay/sandbox';
import { JobDriver, RayDriver, sleep } from './chaos-drivers.ts';
import { type ChaosJob, chaosJobBody, createPriorityClasses, jobCpuDemandMillis } from './chaos-queues.ts';
import { clientsFor, createTestNamespace } from './kube-test-helpers.ts';
import { generateRayMix, type MixedRay, type RayObject } from './ray-fixtures.ts';
import type { RawJob } from './status-differential.ts';

export interface ChaosControlOptions {
  sandbox: Sandbox;
  seed: number;
  mix: readonly ChaosJob[];
  rayWorkloads: number;
  /** How long every Job may take to finish. */
  finishTimeoutMs: number;
  log?: (line: string) => void;
}

export interface ChaosControl {
  /** Names the mix exactly (seed, sizes, every Job's and Ray workload's manifest): a control is used only for its own mix. */
  key: string;
  worker: string;
  /** The namespace it ran in (pod names in messages are masked by it). */
  namespace: string;
  seconds: number;
  /** Each Job's final object, read once two lists in a row agreed. */
  jobs: Record<string, RawJob>;
  /** Each Ray workload's object when every one had settled. */
  ray: Record<string, RayObject>;
}

/** The Ray workloads of a seed's chaos mix (named `ray-...`). */
export function chaosRayMix(seed: number, rayWorkloads: number): MixedRay[] {
  return generateRayMix(seed, rayWorkloads, 'ray');
}

/** The key of a mix: a control run of another mix, or of a changed generator, is never used. */
export function chaosControlKey(seed: number, mix: readonly ChaosJob[], rayWorkloads: number): string {
  const manifests = {
    seed,
    jobs: mix.map((job) => chaosJobBody(job)),
    ray: chaosRayMix(seed, rayWorkloads).map((item) => item.manifest()),
  };
  return createHash('sha256').update(JSON.stringify(manifests)).digest('hex').slice(0, 16);
}

/**
 * Every Job run directly on the sandbox's first worker, at most 150 at once and at most 6 of its
 * 8 cpu requested at once, so that no pod of the control ever waits for room; then the Ray
 * workloads. Creates the chaos PriorityClasses on that worker (if missing) and leaves them: the
 * caller deletes them. Deletes its namespace.
 */
export async function runChaosControl(options: ChaosControlOptions): Promise<ChaosControl> {
  const log = options.log ?? (() => {});
  const began = Date.now();
  const { sandbox, seed, mix } = options;
  const worker = sandbox.workers[0]!.name;
  const clients = clientsFor(sandbox, worker);
  await createPriorityClasses([clients]);
  const control = new JobDriver(clients, await createTestNamespace(clients, 'chaos-control'));
  log(
    `seed ${seed}: ${mix.length} Jobs and ${options.rayWorkloads} Ray workloads; control run directly on ${worker} (${control.namespace})`,
  );
  try {
    const controlCpuMillis = 6_000;
    const demandOf = new Map(mix.map((job) => [job.name, jobCpuDemandMillis(chaosJobBody(job))]));
    const created: string[] = [];
    const demand = () =>
      created.filter((name) => !control.finished.has(name)).reduce((sum, n) => sum + demandOf.get(n)!, 0);
    for (const job of mix) {
      while (control.unfinished >= 150 || demand() + demandOf.get(job.name)! > controlCpuMillis) {
        await control.poll();
        await sleep(1_000);
      }
      created.push(job.name);
      await control.create(chaosJobBody(job));
    }
    // Ray workloads in the same namespace, once the Jobs are in.
    const rayMix = chaosRayMix(seed, options.rayWorkloads);
    const rayControl = new RayDriver(clients, control.namespace, rayMix);
    for (const item of rayMix) await rayControl.create(item);
    const open = [
      ...(await control.untilFinished(
        mix.map((j) => j.name),
        options.finishTimeoutMs,
      )),
      ...(await rayControl.untilSettled(options.finishTimeoutMs)),
    ];
    if (open.length > 0) throw new Error(`the control run did not finish: ${open.join(', ')}`);
    // Settled is final for the direct twins: nothing moves them. The RayClusters would run on.
    await rayControl.deleteAll();
    // A finished Job's status is final; read until two lists agree all the same, so a last
    // update in flight (pods' terminating counts) is never cut off.
    const names = mix.map((job) => job.name);
    let jobs = await finalJobs(control, names);
    for (let previous = ''; JSON.stringify(jobs) !== previous; ) {
      previous = JSON.stringify(jobs);
      await sleep(2_000);
      jobs = await finalJobs(control, names);
    }
    const seconds = (Date.now() - began) / 1000;
    log(`control run finished in ${seconds.toFixed(0)} s`);
    return {
      key: chaosControlKey(seed, mix, options.rayWorkloads),
      worker,
      namespace: control.namespace,
      seconds,
      jobs,
      // The mix's own (a RayJob's operator makes a RayCluster beside it, no workload of the mix).
      ray: Object.fromEntries(rayMix.map((item) => [item.name, rayControl.latest.get(item.name)!])),
    };
  } finally {
    await clients.core.deleteNamespace({ name: control.namespace }).catch(() => undefined);
  }
}

/** Every Job of the mix, listed at once (a list that failed, or missed one, is listed again). */
async function finalJobs(control: JobDriver, names: readonly string[]): Promise<Record<string, RawJob>> {
  for (;;) {
    const listed = new Map((await control.poll()).map((job) => [job.metadata.name, job]));
    if (names.every((name) => listed.has(name)))
      return Object.fromEntries(names.map((n) => [n, listed.get(n)!]));
    await sleep(2_000);
  }
}

/** Where `npm test` keeps the control between lanes; undefined outside `npm test` (nothing is kept). */
function controlPath(key: string): string | undefined {
  const dir = process.env.JOBRELAY_TEST_HANDOFF_DIR;
  return dir ? join(dir, `chaos-control-${key}.json`) : undefined;
}

/** Keeps a control for this test run's chaos run; returns where, or undefined outside `npm test`. */
export function saveChaosControl(control: ChaosControl): string | undefined {
  const path = controlPath(control.key);
  if (!path) return undefined;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(control));
  return path;
}

/** The control this test run saved for exactly this mix, if any. */
export function savedChaosControl(key: string): ChaosControl | undefined {
  const path = controlPath(key);
  if (!path || !existsSync(path)) return undefined;
  const control = JSON.parse(readFileSync(path, 'utf8')) as ChaosControl;
  return control.key === key ? control : undefined;
}
