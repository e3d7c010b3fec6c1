// The chaos run (`npm run chaos`, and a short variant in e2e/test/chaos.test.ts): a seeded mix of
// Jobs of every mode dispatched over the sandbox's workers by two controller replicas while a
// seeded schedule of faults hits the controllers, Redis, the workers' apiservers and etcd, many
// at once. Then it counts what the design's invariants forbid: Jobs that never finished, two live
// mirrors of one Job, status writes the apiserver refused, mirrors left behind, and final
// statuses that differ from the same Jobs run directly on one worker without faults. The Jobs go
// through two DispatchQueues of one cohort (chaos-queues.ts), with PriorityClasses, so that Jobs
// wait on their quota and some are preempted; a sampler checks that no quota is ever exceeded.
import { readFileSync } from 'node:fs';
import { mergePatch } from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import {
  kuberayManagedBy,
  type Sandbox,
  sandboxStatus,
  startSandboxProcess,
  stopSandboxProcess,
} from '@jobrelay/sandbox';
import { Redis } from 'ioredis';
import { chaosControlKey, chaosRayMix, runChaosControl, savedChaosControl } from './chaos-control.ts';
import { JobDriver, persistently, RayDriver, sleep } from './chaos-drivers.ts';
import {
  assignQueueing,
  type ChaosJob,
  type ChaosLane,
  chaosJobBody,
  chaosLanes,
  chaosQueues,
  createPriorityClasses,
  createQueues,
  deletePriorityClasses,
  deleteQueues,
  type QuotaReport,
  quotaScale,
  startQuotaSampler,
} from './chaos-queues.ts';
import { type FaultKind, type PlannedFault, planFaults } from './chaos-schedule.ts';
import { type ControllerProcess, startController } from './controller-process.ts';
import { fleetOf } from './dispatch-fixtures.ts';
import { type SampledOverlap, startFleetSampler } from './fleet-sampler.ts';
import { generateJobMix } from './job-mix.ts';
import {
  clientsFor,
  createTestNamespace,
  dispatcherManagedBy,
  sandboxJob,
  uniqueName,
} from './kube-test-helpers.ts';
import { comparableRayStatus, listRay, placementOf } from './ray-fixtures.ts';
import {
  diffJson,
  finishedCondition,
  type Json,
  type JsonObject,
  maskedStatus,
} from './status-differential.ts';

export interface ChaosOptions {
  sandbox: Sandbox;
  seed: number;
  /** Jobs dispatched through jobrelay (and run once more directly, as the control). */
  jobs: number;
  /** KubeRay workloads (RayClusters and RayJobs) among them, also run once directly (default: none). */
  rayWorkloads?: number;
  /** Jobs are created, and faults start, within this window. */
  windowMs: number;
  /** The controllers' --worker-lost-timeout-seconds. */
  lostTimeoutSeconds: number;
  counts: Partial<Record<FaultKind, number>>;
  /** After the window: how long every Job may take to finish before it counts as lost. */
  finishTimeoutMs: number;
  log?: (line: string) => void;
}

export interface InjectedFault extends PlannedFault {
  /** When healing began: the SIGCONT, or the command that starts the process again (ms since the epoch). */
  healingAt?: number;
  /** When it was healed: the process answers again (ms since the epoch). */
  healedAt?: number;
  /** From the fault healed to a fresh Job's origin showing its mirror started; undefined if never. */
  recoverySeconds?: number;
  error?: string;
}

export interface ChaosReport {
  seed: number;
  jobs: number;
  /** KubeRay workloads dispatched beside the Jobs; every count below covers them too. */
  rayWorkloads: number;
  windowSeconds: number;
  lostTimeoutSeconds: number;
  faultsInjected: number;
  faults: InjectedFault[];
  /** Origins (and recovery canaries) that never reached Complete or Failed. */
  lost: number;
  lostJobs: string[];
  /**
   * Samples in which one origin had two mirrors alive (not being deleted) at once, except those
   * counted in `staleMirrorsAfterReturn`.
   */
  duplicateMirrors: number;
  duplicates: Array<{
    job: string;
    mirrors: Array<{ cluster: string; attempt: number; seenAt: number }>;
    atSeconds: number;
  }>;
  /**
   * Samples in which the second mirror was one of an older attempt on a worker that had been lost
   * (frozen or stopped past the lost timeout) and had just come back, before the controller's
   * clean-up of returning workers deleted it. Nothing can delete a mirror on a worker that does
   * not answer, so a Job whose worker is lost runs again elsewhere while the old mirror waits
   * there (docs/architecture.md, at-least-once); this counts how often, and for how long after
   * the return, such a mirror was still seen.
   */
  staleMirrorsAfterReturn: number;
  /** The longest a stale mirror was seen after its worker returned, in seconds. */
  maxStaleSecondsAfterReturn: number;
  /** Origin status writes the apiserver refused (422/400), from every controller process's log. */
  rejectedStatusWrites: number;
  /** Writes the controller's own validator refused before sending (each is a bug to look at). */
  refusedStatusWrites: number;
  /** Mirrors left on the workers one retention plus one GC interval after every origin finished. */
  orphanMirrors: number;
  orphans: string[];
  /** Origins whose final status differs from the control run's (moved ones: by the at-least-once rules). */
  wrongFinalStatus: number;
  wrong: Array<{ job: string; summary: string; moved: boolean; differences: string[] }>;
  /** Origins placed more than once (their worker was lost, or their mirror vanished). */
  moved: number;
  /**
   * Origins the controller finished itself when their worker was lost after their outcome was
   * decided (FailureTarget or SuccessCriteriaMet); compared by the at-least-once rules, as moved ones.
   */
  finishedWithoutMirror: number;
  maxRecoverySeconds: number;
  controllerStarts: number;
  seconds: number;
  /** The queues the Jobs went through (name, cohort, cpu quotas and preemption), for the reader. */
  queues: Array<{
    name: string;
    cohort: string;
    nominalCpu: number;
    borrowingLimitCpu?: number;
    lendingLimitCpu?: number;
    withinQueue: string;
    reclaimWithinCohort: string;
    jobs: number;
  }>;
  /** Samples of quota usage (every 1 s) taken while the Jobs ran. */
  quotaSamples: QuotaReport['quotaSamples'];
  incompleteQuotaSamples: QuotaReport['incompleteQuotaSamples'];
  /**
   * Instants at which a queue (nominal + borrowing limit, capped by what its cohort lends) or a
   * cohort (its nominal quotas together) held more cpu than allowed: by the placement records of
   * the admitted, unfinished Jobs, or by the pods of their current placements running on the
   * workers. Must be empty.
   */
  quotaExceeded: QuotaReport['quotaExceeded'];
  /**
   * Instants at which the pods running for a queue exceeded its quota only by counting pods
   * terminating or of an attempt no longer placed (evicted, or moved off a lost worker): the
   * known limit "an evicted workload stops holding quota a moment before its pods are gone".
   */
  runningOverQuota: QuotaReport['runningOverQuota'];
  /** The most cpu (cores) each queue and cohort held at once, by the records. */
  maxQuotaUsed: QuotaReport['maxUsed'];
  /** The most cpu (cores) of pods running at once per queue and cohort (current placements; all). */
  maxRunningCpu: QuotaReport['maxRunning'];
  /** Jobs seen waiting on their queue's quota (unplaced, noted `queue NAME: ...`). */
  queueWaits: QuotaReport['queueWaits'];
  maxQueuePending: QuotaReport['maxPending'];
  /** Preempted attempts (records marked or re-placed as preempted, or Preempted Events). */
  preemptions: QuotaReport['preemptions'];
  /** Jobs of a queued namespace placed without their queue (the quota bypassed). Must be empty. */
  placedWithoutQueue: QuotaReport['placedWithoutQueue'];
}

const retentionSeconds = 5;
const gcIntervalSeconds = 5;

/** What is compared of a moved Ray workload: where it ended, not how it got there. */
function rayOutcomeView(status: Record<string, unknown> | undefined): Json {
  const s = status ?? {};
  return {
    state: (s.state as Json) ?? null,
    readyWorkerReplicas: (s.readyWorkerReplicas as Json) ?? null,
    jobDeploymentStatus: (s.jobDeploymentStatus as Json) ?? null,
    jobStatus: (s.jobStatus as Json) ?? null,
  };
}

/**
 * The Jobs of a chaos run: the mix's, without the families that need a user's step midway, each
 * with its lane (queue), cpu request and PriorityClass (assignQueueing).
 */
export function chaosMix(seed: number, jobs: number): ChaosJob[] {
  const mix: ReturnType<typeof generateJobMix> = [];
  for (let size = jobs; mix.length < jobs; size *= 2) {
    mix.splice(
      0,
      mix.length,
      ...generateJobMix(seed, size)
        .filter((job) => !job.step)
        .slice(0, jobs),
    );
  }
  return assignQueueing(seed, mix);
}

/** What is compared of a moved Job: its outcome and the completions it recorded (docs/architecture.md). */
function atLeastOnceView(status: Json): Json {
  const s = (status ?? {}) as JsonObject;
  const conditions = ((s.conditions ?? []) as JsonObject[])
    .filter((c) => ['Complete', 'Failed', 'SuccessCriteriaMet', 'FailureTarget'].includes(String(c.type)))
    .map((c) => ({ type: c.type ?? null, status: c.status ?? null, reason: c.reason ?? null }));
  return {
    conditions,
    succeeded: s.succeeded ?? null,
    completedIndexes: s.completedIndexes ?? null,
    failedIndexes: s.failedIndexes ?? null,
  };
}

/** Two controller replicas under leader election, each with a fixed identity across restarts. */
class Replicas {
  private readonly processes: Array<ControllerProcess | undefined> = [undefined, undefined];
  /** Every process started, so that none outlives the run whatever the faults did. */
  private readonly everyProcess: ControllerProcess[] = [];
  starts = 0;
  readonly logFiles: string[] = [];

  private readonly sandbox: Sandbox;
  private readonly args: string[];

  constructor(sandbox: Sandbox, args: string[]) {
    this.sandbox = sandbox;
    this.args = args;
  }

  start(replica: number): void {
    // Two kill faults on one replica that overlap (a leader found late under load) both restart
    // it: the second finds it running. Starting another would leave one running past the run,
    // acting on the fleet as a leader of its own (seen: it failed every later file on the fleet).
    if (this.processes[replica] && this.processes[replica].state() === 'running') return;
    const process = startController(this.sandbox, [
      ...this.args,
      `--leader-election-identity=chaos-${replica}`,
    ]);
    this.processes[replica] = process;
    this.everyProcess.push(process);
    this.logFiles.push(process.logFile);
    this.starts++;
  }

  async kill(replica: number): Promise<void> {
    const process = this.processes[replica];
    await process?.kill('SIGKILL');
    // Unless another fault started it again meanwhile: that one runs on.
    if (this.processes[replica] === process) this.processes[replica] = undefined;
  }

  /** The replica that reports holding the Lease (undefined while none does). */
  async leader(): Promise<number | undefined> {
    for (const [replica, process] of this.processes.entries()) {
      const leading = await process?.metric('jobrelay_leader').catch(() => 0);
      if (leading === 1) return replica;
    }
    return undefined;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.everyProcess.map((process) => process.kill('SIGTERM')));
  }

  /** Every line every replica logged, across its restarts (a killed process's metrics die with it). */
  logLines(): string[] {
    return this.logFiles.flatMap((file) => readFileSync(file, 'utf8').split('\n'));
  }
}

/** Injects one fault and heals it; a fault is never left in place (finally). */
async function inject(
  fault: InjectedFault,
  context: { sandbox: Sandbox; replicas: Replicas },
): Promise<void> {
  const { sandbox, replicas } = context;
  const apiserver = fault.worker ? `${fault.worker}/kube-apiserver` : '';
  switch (fault.kind) {
    case 'kill-controller':
    case 'kill-leader': {
      const replica = fault.kind === 'kill-leader' ? ((await replicas.leader()) ?? 0) : (fault.replica ?? 0);
      await replicas.kill(replica);
      await sleep(fault.durationMs);
      replicas.start(replica);
      return;
    }
    case 'redis-flushall': {
      const redis = new Redis(sandbox.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        await redis.flushall();
      } finally {
        redis.disconnect();
      }
      return;
    }
    case 'redis-restart':
    case 'etcd-restart':
    case 'apiserver-down': {
      const name =
        fault.kind === 'redis-restart' ? 'redis' : fault.kind === 'etcd-restart' ? 'etcd' : apiserver;
      await stopSandboxProcess(name, sandbox.dir);
      try {
        await sleep(fault.durationMs);
      } finally {
        fault.healingAt = Date.now();
        await startSandboxProcess(name, sandbox.dir);
      }
      return;
    }
    case 'apiserver-hang-short':
    case 'apiserver-hang-long': {
      const pid = (await sandboxStatus(sandbox.dir))?.find((p) => p.name === apiserver)?.pid;
      if (!pid) throw new Error(`no running ${apiserver}`);
      process.kill(pid, 'SIGSTOP');
      try {
        await sleep(fault.durationMs);
      } finally {
        fault.healingAt = Date.now();
        process.kill(pid, 'SIGCONT');
      }
      return;
    }
  }
}

/** Runs the chaos run of `options.seed` on a sandbox with registered workers. Leaves no fault behind. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const began = Date.now();
  const { sandbox, seed } = options;
  const management = clientsFor(sandbox, sandbox.management.name);
  const mix = chaosMix(seed, options.jobs);
  const summaries = new Map(mix.map((job) => [job.name, job.summary]));
  const schedule = planFaults({
    seed,
    windowMs: options.windowMs,
    workers: sandbox.workers.map((w) => w.name),
    lostTimeoutMs: options.lostTimeoutSeconds * 1000,
    counts: options.counts,
  });

  // The PriorityClasses the mix names, on every cluster: the management cluster's resolve the
  // queues' priorities; the workers' schedulers refuse a pod naming a class they do not have.
  const everyCluster = [management, ...sandbox.workers.map((w) => clientsFor(sandbox, w.name))];
  await createPriorityClasses(everyCluster);

  // 1. The control (chaos-control.ts): the one this test run's shared lane saved for this very
  // mix, or run here.
  const rayMix = chaosRayMix(seed, options.rayWorkloads ?? 0);
  const saved = savedChaosControl(chaosControlKey(seed, mix, options.rayWorkloads ?? 0));
  if (saved)
    log(`the control run of this mix that ran earlier in this test run (${saved.seconds.toFixed(0)} s)`);
  const control =
    saved ??
    (await runChaosControl({
      sandbox,
      seed,
      mix,
      rayWorkloads: options.rayWorkloads ?? 0,
      finishTimeoutMs: options.finishTimeoutMs,
      log,
    }));

  // 2. The chaos phase. The Jobs go to one namespace per lane, each selected by its lane's
  // queue; the Ray workloads and the canaries to one no queue selects (a RayCluster never
  // finishes, so it would hold its quota all run; a canary measures the controllers' recovery,
  // not a quota's wait).
  const origins = new JobDriver(management, await createTestNamespace(management, 'chaos'));
  const queueSetup = chaosQueues(uniqueName('q').slice(2), quotaScale(mix.length, options.windowMs));
  const lanes = new Map<ChaosLane, JobDriver>();
  for (const lane of chaosLanes) {
    const namespace = await createTestNamespace(management, `chaos-${lane}`);
    await management.core.patchNamespace(
      {
        name: namespace,
        body: { metadata: { labels: { [queueSetup.laneLabel]: queueSetup.queues[lane].name } } },
      },
      mergePatch,
    );
    lanes.set(lane, new JobDriver(management, namespace));
  }
  const driverOf = new Map(mix.map((job) => [job.name, lanes.get(job.lane)!]));
  const laneOfNamespace = new Map([...lanes].map(([lane, driver]) => [driver.namespace, lane]));
  const allNamespaces = [origins.namespace, ...laneOfNamespace.keys()];
  await createQueues(management, queueSetup);
  log(
    `queues ${Object.values(queueSetup.queues)
      .map(
        (q) =>
          `${q.name} (${[...lanes].find(([l]) => queueSetup.queues[l] === q)![1].namespace}, ${mix.filter((j) => queueSetup.queues[j.lane] === q).length} Jobs)`,
      )
      .join(', ')} in cohort ${queueSetup.cohort}`,
  );
  const rayOrigins = new RayDriver(management, origins.namespace, rayMix);
  const fleet = fleetOf(sandbox);
  const sampler = await startFleetSampler(fleet, {
    namespaces: allNamespaces,
    intervalMs: 500,
    rayMirrors: rayMix.length > 0,
  });
  const quotaSampler = startQuotaSampler({
    management,
    setup: queueSetup,
    namespaces: laneOfNamespace,
    livePods: () => sampler.livePods(),
    liveMirrors: () => sampler.liveMirrors(),
    startedAt: Date.now(),
  });
  const replicas = new Replicas(sandbox, [
    `--worker-lost-timeout-seconds=${options.lostTimeoutSeconds}`,
    `--mirror-retention-seconds=${retentionSeconds}`,
    `--gc-interval-seconds=${gcIntervalSeconds}`,
    '--log-level=info',
  ]);
  replicas.start(0);
  replicas.start(1);
  try {
    return await chaosPhase();
  } finally {
    // Whatever happened, no controller of this run outlives it, and the sampler stops.
    await replicas.stopAll();
    await sampler.stop().catch(() => undefined);
    await quotaSampler.stop().catch(() => undefined);
    // The mirrors' namespaces on the workers go with the origins' (the controllers deleted the mirrors).
    await Promise.all(
      allNamespaces.map((name) => management.core.deleteNamespace({ name }).catch(() => undefined)),
    );
    await deleteQueues(management, queueSetup);
    await deletePriorityClasses(everyCluster);
  }

  async function chaosPhase(): Promise<ChaosReport> {
    const phaseStart = Date.now();
    log(
      `chaos phase in ${allNamespaces.join(', ')}: ${schedule.length} faults over ${options.windowMs / 1000} s: ${schedule
        .map((f) => `${(f.atMs / 1000).toFixed(0)}s ${f.kind}${f.worker ? ` ${f.worker}` : ''}`)
        .join(', ')}`,
    );
    const canaries: string[] = [];
    const injected: InjectedFault[] = [];
    const measureRecovery = async (fault: InjectedFault, healedAt: number) => {
      const name = `canary-${canaries.length}`;
      canaries.push(name);
      await origins.create(sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 1 } }));
      for (;;) {
        const job = (await origins.poll()).find((j) => j.metadata.name === name);
        if (job?.status?.startTime) {
          fault.recoverySeconds = (Date.now() - healedAt) / 1000;
          return;
        }
        if (Date.now() - healedAt > options.finishTimeoutMs) return;
        await sleep(500);
      }
    };
    const faultsDone = Promise.all(
      schedule.map(async (planned) => {
        await sleep(Math.max(0, phaseStart + planned.atMs - Date.now()));
        const fault: InjectedFault = { ...planned };
        injected.push(fault);
        log(
          `${((Date.now() - phaseStart) / 1000).toFixed(1)}s: ${fault.kind}${fault.worker ? ` ${fault.worker}` : ''} for ${(fault.durationMs / 1000).toFixed(1)} s`,
        );
        try {
          await inject(fault, { sandbox, replicas });
          fault.healedAt = Date.now();
          await measureRecovery(fault, fault.healedAt);
        } catch (err) {
          fault.error = err instanceof Error ? err.message : String(err);
          log(`  ${fault.kind} failed: ${fault.error}`);
        }
      }),
    );
    // Jobs arrive over the first 70 % of the window, in the mix's order; the Ray workloads
    // among them, evenly spaced.
    const spacing = (options.windowMs * 0.7) / mix.length;
    const rayEvery = rayMix.length > 0 ? Math.max(1, Math.floor(mix.length / rayMix.length)) : 0;
    let rayCreated = 0;
    for (const [i, job] of mix.entries()) {
      await sleep(Math.max(0, phaseStart + i * spacing - Date.now()));
      void driverOf
        .get(job.name)!
        .create(chaosJobBody(job, dispatcherManagedBy))
        .catch((err: unknown) => log(`creating ${job.name} failed: ${String(err)}`));
      if (rayEvery > 0 && i % rayEvery === 0 && rayCreated < rayMix.length) {
        const item = rayMix[rayCreated++]!;
        void rayOrigins
          .create(item, kuberayManagedBy.multiKueue)
          .catch((err: unknown) => log(`creating ${item.name} failed: ${String(err)}`));
      }
    }
    for (const item of rayMix.slice(rayCreated))
      await rayOrigins.create(item, kuberayManagedBy.multiKueue).catch(() => undefined);
    await faultsDone;
    log(`faults done at ${((Date.now() - phaseStart) / 1000).toFixed(0)} s; waiting for every Job to finish`);
    const finishBy = Date.now() + options.finishTimeoutMs;
    const open = [
      ...(await origins.untilFinished(canaries, options.finishTimeoutMs)),
      ...(
        await Promise.all(
          [...lanes.values()].map((driver) =>
            driver.untilFinished(
              mix.filter((j) => driverOf.get(j.name) === driver).map((j) => j.name),
              Math.max(0, finishBy - Date.now()),
            ),
          ),
        )
      ).flat(),
      ...(await rayOrigins.untilSettled(Math.max(0, finishBy - Date.now()))),
    ];
    // Final Ray statuses are read now: the RayClusters never finish, and are deleted next.
    const rayFinal = new Map(rayOrigins.latest);

    // 3. After one retention and one GC interval, nothing of ours may be left on the workers.
    // Running RayClusters are deleted first: their mirrors must go with them.
    await rayOrigins.deleteAll();
    await sleep((retentionSeconds + gcIntervalSeconds + 5) * 1000);
    await sampler.settle();
    const report = await sampler.stop();
    const quota = await quotaSampler.stop();
    const leftovers: string[] = [];
    for (const [cluster, clients] of fleet.workers) {
      for (const namespace of allNamespaces) {
        const mirrors = await persistently(`list mirrors on ${cluster}`, () =>
          clients.batch.listNamespacedJob({ namespace, labelSelector: originUidLabel }),
        );
        const rayMirrors = [];
        for (const plural of rayMix.length > 0 && namespace === origins.namespace
          ? (['rayclusters', 'rayjobs'] as const)
          : [])
          rayMirrors.push(
            ...(await persistently(`list ${plural} on ${cluster}`, () =>
              listRay(clients, plural, namespace, originUidLabel),
            )),
          );
        for (const mirror of [...mirrors.items, ...rayMirrors]) {
          // A RayJob's submitter Job and RayCluster are its operator's, not mirrors.
          if (mirror.metadata?.ownerReferences?.some((o) => o.controller)) continue;
          leftovers.push(`${cluster}/${mirror.kind ?? 'Job'}/${namespace}/${mirror.metadata!.name}`);
        }
      }
    }
    const originsNow = [
      ...(await origins.poll()),
      ...(await Promise.all([...lanes.values()].map((driver) => driver.poll()))).flat(),
    ];
    const controlNow = new Map(Object.entries(control.jobs));
    const nameByUid = new Map([
      ...originsNow.map((j) => [j.metadata.uid ?? '', j.metadata.name] as const),
      ...[...rayFinal.values()].map((o) => [o.metadata?.uid ?? '', o.metadata?.name ?? ''] as const),
    ]);

    // 4. Final statuses against the control's.
    const wrong: ChaosReport['wrong'] = [];
    let moved = 0;
    const logLines = replicas.logLines();
    const count = (message: string) => logLines.filter((line) => line.includes(message)).length;
    // `namespace/name` of every origin a controller finished as decided, without its mirror.
    const decidedWithoutMirror = new Set(
      logLines
        .filter((line) => line.includes('"origin finished"') && line.includes('"purpose":"decided"'))
        // Read by pattern, not JSON.parse: a SIGKILL may cut a process's last line short.
        .map((line) => /"job":"([^"]+)"/.exec(line)?.[1] ?? ''),
    );
    for (const origin of originsNow) {
      const name = origin.metadata.name;
      const direct = controlNow.get(name);
      if (!direct || !finishedCondition(origin)) continue;
      const wasMoved = (placementOf(origin)?.attempt ?? 1) > 1;
      if (wasMoved) moved++;
      // Finished by the controller from an outcome already decided when its worker was lost (a
      // deadline passed, a failure policy hit): the pods still running there were not counted.
      const withoutMirror = decidedWithoutMirror.has(`${origin.metadata.namespace}/${name}`);
      const lossRules = wasMoved || withoutMirror;
      const originStatus = maskedStatus(origin.status, origin.metadata.namespace ?? '', name);
      const directStatus = maskedStatus(direct.status, control.namespace, name);
      const differences = lossRules
        ? diffJson(atLeastOnceView(originStatus), atLeastOnceView(directStatus))
        : diffJson(originStatus, directStatus);
      if (differences.length > 0) {
        wrong.push({
          job: name,
          summary: summaries.get(name) ?? '',
          moved: lossRules,
          differences: differences.map(
            (d) =>
              `${d.path}: jobrelay ${JSON.stringify(d.a) ?? '(absent)'}, direct ${JSON.stringify(d.b) ?? '(absent)'}`,
          ),
        });
      }
    }
    const rayDirect = new Map(Object.entries(control.ray));
    for (const item of rayMix) {
      const origin = rayFinal.get(item.name);
      const direct = rayDirect.get(item.name);
      if (!origin || !direct || !item.settled(origin)) continue;
      const wasMoved = (placementOf(origin)?.attempt ?? 1) > 1;
      if (wasMoved) moved++;
      const originStatus = comparableRayStatus(origin.status, origins.namespace, item.name);
      const directStatus = comparableRayStatus(direct.status, control.namespace, item.name);
      const differences = wasMoved
        ? diffJson(rayOutcomeView(origin.status), rayOutcomeView(direct.status))
        : diffJson(originStatus as Json, directStatus as Json);
      if (differences.length > 0) {
        wrong.push({
          job: item.name,
          summary: item.describe,
          moved: wasMoved,
          differences: differences.map(
            (d) =>
              `${d.path}: jobrelay ${JSON.stringify(d.a) ?? '(absent)'}, direct ${JSON.stringify(d.b) ?? '(absent)'}`,
          ),
        });
      }
    }
    // An overlap is the lost-worker case when every mirror but the newest attempt's is on a
    // worker whose loss was ending (SIGCONT, or its apiserver started again) before that
    // worker's list answered, within the minute before.
    const returns = injected
      .filter((f) => (f.kind === 'apiserver-hang-long' || f.kind === 'apiserver-down') && f.healingAt)
      .map((f) => ({ worker: f.worker!, healedAt: f.healingAt! }));
    const duplicates: SampledOverlap[] = [];
    const staleAfterReturn: Array<SampledOverlap & { secondsAfterReturn: number }> = [];
    for (const overlap of report.overlaps) {
      const newest = Math.max(...overlap.mirrors.map((m) => m.attempt));
      const ages = overlap.mirrors
        .filter((m) => m.attempt < newest)
        .map((m) => {
          // Judged by when that worker's list answered: a thawing apiserver answers late.
          const back = returns
            .filter((r) => r.worker === m.cluster && r.healedAt <= m.seenAt && m.seenAt - r.healedAt < 60_000)
            .map((r) => m.seenAt - r.healedAt);
          return back.length > 0 ? Math.min(...back) / 1000 : undefined;
        });
      const explained =
        overlap.mirrors.filter((m) => m.attempt === newest).length === 1 &&
        ages.every((a) => a !== undefined);
      if (explained)
        staleAfterReturn.push({ ...overlap, secondsAfterReturn: Math.max(...(ages as number[])) });
      else duplicates.push(overlap);
    }
    const recoveries = injected.map((f) => f.recoverySeconds ?? Number.POSITIVE_INFINITY);
    return {
      seed,
      jobs: mix.length,
      rayWorkloads: rayMix.length,
      windowSeconds: options.windowMs / 1000,
      lostTimeoutSeconds: options.lostTimeoutSeconds,
      faultsInjected: injected.filter((f) => !f.error).length,
      faults: injected.sort((a, b) => a.atMs - b.atMs),
      lost: open.length,
      lostJobs: open,
      duplicateMirrors: duplicates.length,
      duplicates: duplicates.map((o) => ({
        job: nameByUid.get(o.originUid) ?? o.originUid,
        mirrors: o.mirrors,
        atSeconds: (o.at - phaseStart) / 1000,
      })),
      staleMirrorsAfterReturn: staleAfterReturn.length,
      maxStaleSecondsAfterReturn: Math.max(0, ...staleAfterReturn.map((o) => o.secondsAfterReturn)),
      rejectedStatusWrites: count('the apiserver rejected an origin status write'),
      refusedStatusWrites: count('refused to write an invalid origin status'),
      orphanMirrors: leftovers.length,
      orphans: leftovers,
      wrongFinalStatus: wrong.length,
      wrong,
      moved,
      finishedWithoutMirror: decidedWithoutMirror.size,
      maxRecoverySeconds: recoveries.length > 0 ? Math.max(...recoveries) : 0,
      controllerStarts: replicas.starts,
      seconds: (Date.now() - began) / 1000,
      queues: chaosLanes.map((lane) => {
        const q = queueSetup.queues[lane];
        return {
          name: q.name,
          cohort: q.cohort,
          nominalCpu: q.nominal / 1000,
          ...(q.borrowingLimit !== undefined ? { borrowingLimitCpu: q.borrowingLimit / 1000 } : {}),
          ...(q.lendingLimit !== undefined ? { lendingLimitCpu: q.lendingLimit / 1000 } : {}),
          withinQueue: q.withinQueue,
          reclaimWithinCohort: q.reclaimWithinCohort,
          jobs: mix.filter((j) => j.lane === lane).length,
        };
      }),
      quotaSamples: quota.quotaSamples,
      incompleteQuotaSamples: quota.incompleteQuotaSamples,
      quotaExceeded: quota.quotaExceeded,
      runningOverQuota: quota.runningOverQuota,
      maxQuotaUsed: quota.maxUsed,
      maxRunningCpu: quota.maxRunning,
      queueWaits: quota.queueWaits,
      maxQueuePending: quota.maxPending,
      preemptions: quota.preemptions,
      placedWithoutQueue: quota.placedWithoutQueue,
    };
  }
}
