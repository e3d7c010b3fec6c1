import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { batchJobAdapter } from '@jobrelay/kinds';
import {
  defaultOriginId,
  getPlainJson,
  makeClusterApiClients,
  mapWithConcurrency,
  sharedPoolConfiguration,
} from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import { loadRecordKeyring, nothingCarried, patchPlacement } from '@jobrelay/placement';
import { type Configuration, CoreV1Api } from '@kubernetes/client-node';
import { type RequestCounts, type RequestSeries, sumRequests, writeVerbs } from './apiserver-requests.ts';
import {
  type BenchCluster,
  BenchFleet,
  type ControllerRuntime,
  type ControllerUnderTest,
  startBenchController,
} from './bench-fleet.ts';
import { type BenchJob, benchJob, benchJobNames } from './bench-jobs.ts';
import { benchProcessCpuMs, type FleetCpu, fleetCpuPerJob, readFleetCpu } from './fleet-cpu.ts';
import { JobWatch, type SeenJob } from './job-watch.ts';
import { mainThreadSchedule, type ScheduleShares, scheduleShares } from './process-usage.ts';
import { percentile } from './statistics.ts';

export interface BenchSettings {
  /** Jobs in flight at once, in the controller (placement and reconcile) and in the replays. */
  concurrency: number;
  /** The controller's client limits per worker; the raw and replay runs use the same. */
  workerQps: number;
  workerBurst: number;
  /** The controller entry point to run (default this checkout's), e.g. another revision's worktree. */
  controllerMain?: string;
  /** This checkout's controller's V8 flags and malloc settings (@jobrelay/controller/node-flags). */
  controllerRuntime: ControllerRuntime;
  /** Extra controller flags and node flags (e.g. --cpu-prof). */
  controllerArgs: string[];
  nodeArgs: string[];
  /** Write a heap snapshot of the controller at the end of each drain into this directory. */
  heapSnapshotDir?: string;
  logDir: string;
  log: (line: string) => void;
}

const jobsPath = (namespace: string) => `/apis/batch/v1/namespaces/${namespace}/jobs`;

/** The controller under test, started as every scenario starts it: these settings' flags and entry point. */
export function startController(fleet: BenchFleet, settings: BenchSettings): ControllerUnderTest {
  return startBenchController(fleet.sandbox, {
    runtime: settings.controllerRuntime,
    args: [
      `--worker-qps=${settings.workerQps}`,
      `--worker-burst=${settings.workerBurst}`,
      ...settings.controllerArgs,
    ],
    nodeArgs: settings.nodeArgs,
    logDir: settings.logDir,
    ...(settings.controllerMain ? { main: settings.controllerMain } : {}),
  });
}

/** Creates Jobs with `concurrency` parallel clients; returns when every create has answered. */
export async function createJobs(
  cluster: Pick<BenchCluster, 'jobs'>,
  namespace: string,
  bodies: BenchJob[],
  concurrency: number,
  onCreated?: (job: BenchJob, at: number) => void,
): Promise<void> {
  await mapWithConcurrency(bodies, concurrency, async (body) => {
    const created = await cluster.jobs.create(namespace, body);
    onCreated?.(created, performance.now());
  });
}

function statusKey(job: BenchJob): string {
  const s = job.status ?? {};
  return JSON.stringify([
    s.active ?? 0,
    s.ready ?? 0,
    s.succeeded ?? 0,
    s.failed ?? 0,
    s.terminating ?? 0,
    s.startTime !== undefined,
    (s.conditions ?? []).map((c) => `${c.type}=${c.status}`),
  ]);
}

/** Writes the dispatcher made, from the apiservers' counts (the workers' own controllers excluded). */
export interface DispatchWrites {
  /** Placement and mirror writes: origin metadata, Events, mirror and namespace creates. */
  dispatch: number;
  /** Origin status writes. */
  originStatus: number;
  /** Every write on every apiserver, per cluster and verb/resource (for the report). */
  byCluster: Record<string, Record<string, number>>;
  /** Every request (reads and watches too), per cluster and verb/resource. */
  requestsByCluster: Record<string, Record<string, number>>;
}

function isEvents(s: RequestSeries): boolean {
  return s.resource === 'events';
}

export function dispatcherWrites(deltas: Map<string, RequestCounts>, management: string): DispatchWrites {
  let dispatch = 0;
  let originStatus = 0;
  const byCluster: Record<string, Record<string, number>> = {};
  const requestsByCluster: Record<string, Record<string, number>> = {};
  for (const [cluster, counts] of deltas) {
    requestsByCluster[cluster] = Object.fromEntries(
      [...counts].filter(([, s]) => s.resource !== 'leases').map(([key, s]) => [key, s.count]),
    );
    const writes = (s: RequestSeries) => writeVerbs.has(s.verb);
    byCluster[cluster] = Object.fromEntries(
      [...counts].filter(([, s]) => writes(s) && s.resource !== 'leases').map(([key, s]) => [key, s.count]),
    );
    const jobs = (s: RequestSeries) => writes(s) && s.group === 'batch' && s.resource === 'jobs';
    if (cluster === management) {
      dispatch += sumRequests(counts, (s) => (jobs(s) && s.subresource === '') || (writes(s) && isEvents(s)));
      originStatus += sumRequests(counts, (s) => jobs(s) && s.subresource === 'status');
    } else {
      // On a worker, its own Job controller writes mirror status and pods; ours are the mirror
      // itself (create, delete, spec patch) and the namespaces it needs.
      dispatch += sumRequests(
        counts,
        (s) =>
          (jobs(s) && s.subresource === '') ||
          (writes(s) && s.resource === 'namespaces' && s.verb === 'POST'),
      );
    }
  }
  return { dispatch, originStatus, byCluster, requestsByCluster };
}

/** Every item of a collection, listed in pages of 500. */
export async function listAllPages<T>(
  configuration: Configuration,
  path: string,
  query: Record<string, string | undefined> = {},
): Promise<T[]> {
  const items: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await getPlainJson<{ items: T[]; metadata?: { continue?: string } }>(configuration, path, {
      ...query,
      limit: 500,
      continue: continueToken,
    });
    items.push(...page.items);
    continueToken = page.metadata?.continue || undefined;
  } while (continueToken);
  return items;
}

function origins(fleet: BenchFleet, namespace: string): Promise<BenchJob[]> {
  return listAllPages<BenchJob>(sharedPoolConfiguration(fleet.management.kubeConfig), jobsPath(namespace));
}

export async function waitUntil(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface DrainResult {
  jobs: number;
  dispatchJobsPerSec: number;
  /** From readiness to the first mirror. */
  firstMirrorMs: number;
  controllerCpuMsPerJob: number;
  /**
   * The controller's CPU per second with the drained Jobs tracked and nothing changing (its
   * resyncs, leases, keepalives), over `idleSeconds` from 15 s after the drain; absent when
   * not measured.
   */
  controllerIdleCpuMsPerSec?: number;
  /**
   * CPU per Job net of that idle cost over the drain's length: what dispatching a Job costs,
   * apart from the drain's pace (a slower drain pays the background for longer).
   */
  controllerCpuMsPerJobNetOfIdle?: number;
  writesPerDispatch: number;
  originStatusWritesPerJob: number;
  mirrorStatusChangesPerJob: number;
  /**
   * Origin status writes that met a conflict (`jobrelay_origin_status_writes_total{result="conflict"}`):
   * only jobrelay writes a claimed Job's status, so each is a write planned from a version older
   * than one it had written itself, and costs a write and a retry.
   */
  originStatusWriteConflicts: number;
  /** BullMQ placement tasks run per Job, every outcome (1 when no task is run twice). */
  placementTasksPerJob: number;
  /** Reconciles per Job (an origin's watch events, its mirror's, and the placement's own). */
  reconcilesPerJob: number;
  rssMiB: number;
  redisPeakMiB: number;
  writes: DispatchWrites;
  /** CPU per Job of every part on the machine over the drain, and the machine's busy time (`machineBusy`). */
  cpuByPart: FleetCpu;
}

/** The controller's counter of origin status writes that met a conflict. */
export const statusWriteConflictsMetric = 'jobrelay_origin_status_writes_total{result="conflict"}';

/** Seconds between a drain's end and its idle reading (V8's collections of the drain's garbage). */
const idleSettleSeconds = 15;

/**
 * A backlog of `jobs` idle Jobs claimed while no controller runs; then the controller starts
 * and drains it. Dispatch rate: mirrors created per second, first to last (watched on every
 * worker). CPU: the controller's from readiness until every origin shows its mirror's status.
 */
export async function drainBacklog(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: {
    jobs: number;
    run: string;
    keepController?: boolean;
    flushRedis?: boolean;
    /** Seconds to read the controller's idle CPU after the drain (0: not read). */
    idleSeconds?: number;
  },
): Promise<DrainResult & { controller?: ControllerUnderTest }> {
  const namespace = `bench-${options.run}`;
  if (options.flushRedis !== false) await fleet.flushRedis();
  await fleet.createNamespace(namespace, [fleet.management]);
  const names = benchJobNames('idle', options.jobs);
  settings.log(`  creating a backlog of ${options.jobs} claimed Jobs in ${namespace}`);
  await createJobs(
    fleet.management,
    namespace,
    names.map((name) => benchJob({ name, run: options.run, shape: 'idle', dispatched: true })),
    32,
  );
  const observed = await observeDispatch(fleet, namespace);
  const before = await fleet.requestCounts();
  fleet.startRedisSampling();
  const controller = startController(fleet, settings);
  try {
    await controller.ready();
    const readyAt = performance.now();
    const cpuAtReady = controller.cpuMs();
    const partsAtReady = readFleetCpu(fleet.sandbox.dir, drainParts(controller));
    await waitUntil(
      `${options.jobs} mirrors and origin statuses`,
      () => {
        controller.assertRunning();
        return observed.mirrorsSeen.size >= options.jobs && observed.synced.size >= options.jobs;
      },
      30 * 60_000,
    );
    const drainedAt = performance.now();
    const cpuMs = controller.cpuMs() - cpuAtReady;
    const partsAtDrained = readFleetCpu(fleet.sandbox.dir, drainParts(controller));
    const rssBytes = controller.rssBytes();
    const placementTasks = await controller.counter('jobrelay_placements_total');
    const reconciles = await controller.counter('jobrelay_reconciles_total');
    const statusConflicts = await controller.counter(statusWriteConflictsMetric);
    if (settings.heapSnapshotDir) await controller.heapSnapshot(settings.heapSnapshotDir);
    // Writes still in flight land in the counts within a moment.
    await new Promise((r) => setTimeout(r, 1000));
    const after = await fleet.requestCounts();
    const redisPeak = fleet.stopRedisSampling();
    const times = [...observed.mirrorsSeen.values()].sort((a, b) => a - b);
    const writes = dispatcherWrites(BenchFleet.requestsBetween(before, after), fleet.management.name);
    const result: DrainResult = {
      jobs: options.jobs,
      dispatchJobsPerSec: (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000),
      firstMirrorMs: times[0]! - readyAt,
      controllerCpuMsPerJob: cpuMs / options.jobs,
      writesPerDispatch: writes.dispatch / options.jobs,
      originStatusWritesPerJob: writes.originStatus / options.jobs,
      mirrorStatusChangesPerJob: observed.mirrorStatusChanges() / options.jobs,
      originStatusWriteConflicts: statusConflicts,
      placementTasksPerJob: placementTasks / options.jobs,
      reconcilesPerJob: reconciles / options.jobs,
      rssMiB: rssBytes / 2 ** 20,
      redisPeakMiB: redisPeak / 2 ** 20,
      writes,
      cpuByPart: fleetCpuPerJob(partsAtReady, partsAtDrained, options.jobs),
    };
    const idleSeconds = options.idleSeconds ?? 0;
    if (idleSeconds > 0) {
      // Not at once: V8 collects the drain's garbage in the seconds after it (work of the
      // drain, on its background threads); the idle reading starts once that is done.
      await new Promise((r) => setTimeout(r, idleSettleSeconds * 1000));
      const from = controller.cpuMs();
      await new Promise((r) => setTimeout(r, idleSeconds * 1000));
      const idleCpuMsPerSec = (controller.cpuMs() - from) / idleSeconds;
      result.controllerIdleCpuMsPerSec = idleCpuMsPerSec;
      result.controllerCpuMsPerJobNetOfIdle =
        (cpuMs - (idleCpuMsPerSec * (drainedAt - readyAt)) / 1000) / options.jobs;
    }
    if (options.keepController) return { ...result, controller };
    await controller.stop();
    return result;
  } catch (err) {
    await controller.stop();
    throw err;
  } finally {
    observed.stop();
  }
}

/** The parts of a drain besides the sandbox's processes: the controller and the benchmark itself. */
export function drainParts(controller: ControllerUnderTest) {
  return { controller: () => controller.cpuMs(), benchmark: benchProcessCpuMs };
}

/**
 * The benchmark's own watches of a dispatch into `namespace`: every worker's Jobs (mirrors
 * first seen, their status changes) and the management cluster's (origins showing a status).
 * The replay runs them too, so both sides pay the apiservers the same for being observed.
 */
export async function observeDispatch(fleet: BenchFleet, namespace: string) {
  const mirrorsSeen = new Map<string, number>();
  const mirrorStatus = new Map<string, string>();
  let mirrorStatusChanges = 0;
  // When each mirror first showed a startTime (its worker's Job controller wrote it), and when
  // its origin did (jobrelay copied it): the status lag split between the two.
  const mirrorsStarted = new Map<string, number>();
  const syncedAt = new Map<string, number>();
  const synced = new Set<string>();
  const watches = [
    ...fleet.workers.map(
      (worker) =>
        new JobWatch(
          worker.kubeConfig,
          jobsPath(namespace),
          ({ at, job }: SeenJob) => {
            const uid = job.metadata?.labels?.[originUidLabel];
            if (!uid) return;
            if (!mirrorsSeen.has(uid)) mirrorsSeen.set(uid, at);
            if (job.status?.startTime && !mirrorsStarted.has(uid)) mirrorsStarted.set(uid, at);
            const key = statusKey(job);
            const previous = mirrorStatus.get(uid);
            if (previous !== undefined && previous !== key) mirrorStatusChanges += 1;
            mirrorStatus.set(uid, key);
          },
          originUidLabel,
        ),
    ),
    new JobWatch(fleet.management.kubeConfig, jobsPath(namespace), ({ at, job }) => {
      const uid = job.metadata!.uid!;
      if (!job.status?.startTime || synced.has(uid)) return;
      synced.add(uid);
      syncedAt.set(uid, at);
    }),
  ];
  await Promise.all(watches.map((w) => w.start()));
  return {
    mirrorsSeen,
    mirrorsStarted,
    syncedAt,
    synced,
    mirrorStatusChanges: () => mirrorStatusChanges,
    stop: () => {
      for (const w of watches) w.stop();
    },
  };
}

/** B: plain Job creates against the worker apiservers, round robin, same client limits and concurrency. */
export async function rawCreates(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: { jobs: number; run: string },
): Promise<number> {
  const namespace = `bench-${options.run}`;
  await fleet.createNamespace(namespace, fleet.workers);
  const clients = fleet.workers.map((w) =>
    batchJobAdapter.client(
      makeClusterApiClients(w.kubeConfig, { qps: settings.workerQps, burst: settings.workerBurst }),
    ),
  );
  const names = benchJobNames('raw', options.jobs);
  const began = performance.now();
  await mapWithConcurrency(names, settings.concurrency, async (name, i) => {
    await clients[i % clients.length]!.create(
      namespace,
      benchJob({ name, run: options.run, shape: 'idle', dispatched: false }),
    );
  });
  return options.jobs / ((performance.now() - began) / 1000);
}

export interface ReplayResult {
  replayJobsPerSec: number;
  /** Short Jobs replayed beside the backlog (`shortJobsPerSecond`). */
  shortJobsReplayed: number;
  writes: DispatchWrites;
  /** CPU per Job of every part on the machine over the replay (the benchmark's process replays the calls). */
  cpuByPart: FleetCpu;
  /** Shares of the replay's wall time the benchmark's main thread ran, and waited runnable for a core. */
  mainThread: ScheduleShares;
}

/**
 * B_seq: the dispatcher's per-Job API calls, replayed in order without queue or logic: the
 * placement record written on the origin over the version read, the mirror created on a
 * worker (round robin), the mirror's first status written back to the origin. Same clients
 * (one connection pool and rate limit per cluster), same concurrency, origins read up front
 * as the controller's cache holds them.
 *
 * `shortJobsPerSecond`: beside the backlog, short Jobs (one pod each) created on the management
 * cluster at this rate and replayed the same way, so their pods run on the workers as they do
 * when a drain dispatches such a stream (the rate counts the backlog alone).
 */
export async function replayDispatch(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: {
    jobs: number;
    run: string;
    shortJobsPerSecond?: number;
    /** Other processes beside the replay whose CPU is a part of its own (name: CPU so far, ms). */
    besideParts?: Record<string, () => number>;
  },
): Promise<ReplayResult> {
  const namespace = `bench-${options.run}`;
  await fleet.createNamespace(namespace);
  const names = benchJobNames('replay', options.jobs);
  await createJobs(
    fleet.management,
    namespace,
    names.map((name) => benchJob({ name, run: options.run, shape: 'idle', dispatched: true })),
    32,
  );
  const backlog = await origins(fleet, namespace);
  const originId = await defaultOriginId(fleet.management.kubeConfig);
  // The installation's record key, as the controller would seal with it (made here if no controller ran yet).
  const { keyring } = await loadRecordKeyring(
    fleet.management.kubeConfig.makeApiClient(CoreV1Api),
    'jobrelay-system',
    { createIfMissing: true },
  );
  const management = batchJobAdapter.client(
    makeClusterApiClients(fleet.management.kubeConfig, { qps: 200, burst: 400 }),
  );
  const workers = fleet.workers.map((w) =>
    batchJobAdapter.client(
      makeClusterApiClients(w.kubeConfig, { qps: settings.workerQps, burst: settings.workerBurst }),
    ),
  );
  // Observed as the drain is, so the ratio compares the dispatcher with its calls alone.
  const observed = await observeDispatch(fleet, namespace);
  const before = await fleet.requestCounts();
  const fleetCpu = () =>
    readFleetCpu(fleet.sandbox.dir, { benchmark: benchProcessCpuMs, ...options.besideParts });
  const partsBefore = fleetCpu();
  const replayOne = async (origin: BenchJob, i: number) => {
    const cluster = fleet.workers[i % workers.length]!.name;
    const record = {
      attempt: 1,
      carried: nothingCarried,
      excludedClusters: [],
      cluster,
      placedAt: new Date().toISOString(),
    };
    // The controller's own placement write, so the replay cannot drift from what it sends.
    const written = await patchPlacement(management, origin, record, keyring);
    if (written.kind === 'conflict') throw new Error(`replay: ${origin.metadata!.name} changed under it`);
    const placed = written.value;
    const mirror = await workers[i % workers.length]!.create(
      origin.metadata!.namespace!,
      batchJobAdapter.buildMirror(placed, {
        originId,
        attempt: 1,
        carried: nothingCarried,
        now: new Date(),
      }),
    );
    await management.replaceStatus({
      ...placed,
      status: { startTime: mirror.metadata!.creationTimestamp },
    });
  };
  const shortNamespace = `${namespace}-short`;
  if (options.shortJobsPerSecond) await fleet.createNamespace(shortNamespace);
  const began = performance.now();
  const scheduleBefore = mainThreadSchedule(process.pid);
  const shorts = shortJobStream(fleet, {
    namespace: shortNamespace,
    run: options.run,
    perSecond: options.shortJobsPerSecond ?? 0,
    afterCreate: replayOne,
  });
  try {
    await mapWithConcurrency(backlog, settings.concurrency, replayOne);
  } finally {
    observed.stop();
  }
  const seconds = (performance.now() - began) / 1000;
  const mainThread = scheduleShares(scheduleBefore, mainThreadSchedule(process.pid), seconds * 1000);
  const shortJobsReplayed = await shorts.stop();
  const partsAfter = fleetCpu();
  await new Promise((r) => setTimeout(r, 1000));
  const after = await fleet.requestCounts();
  return {
    replayJobsPerSec: options.jobs / seconds,
    shortJobsReplayed,
    cpuByPart: fleetCpuPerJob(partsBefore, partsAfter, options.jobs),
    mainThread,
    writes: dispatcherWrites(BenchFleet.requestsBetween(before, after), fleet.management.name),
  };
}

/**
 * Short Jobs (one KWOK pod, 1 s) created on the management cluster at a steady rate, the pace
 * kept whatever a create's answer takes; `afterCreate` (if given) follows each create, as a replay
 * does. Failures are counted, not thrown: a background stream must not end the run it
 * accompanies.
 */
export function shortJobStream(
  fleet: BenchFleet,
  options: {
    namespace: string;
    run: string;
    perSecond: number;
    afterCreate?: (origin: BenchJob, i: number) => Promise<void>;
  },
) {
  let created = 0;
  let failed = 0;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    while (!stopped && options.perSecond > 0) {
      const i = created++;
      const one: Promise<void> = fleet.management.jobs
        .create(
          options.namespace,
          benchJob({ name: `short-${i}`, run: options.run, shape: 'short', dispatched: true }),
        )
        .then((origin) => options.afterCreate?.(origin, i))
        .catch(() => {
          failed++;
        })
        .finally(() => inFlight.delete(one));
      inFlight.add(one);
      await delay(1000 / options.perSecond);
    }
  })();
  return {
    created: () => created,
    /** Stops creating and waits for those in flight; the number that went through whole. */
    stop: async (): Promise<number> => {
      stopped = true;
      await loop;
      await Promise.all(inFlight);
      return created - failed;
    },
  };
}

export interface SteadyResult {
  dispatchLatencyP50Ms: number;
  dispatchLatencyP99Ms: number;
  statusLagP50Ms: number;
  statusLagP99Ms: number;
  jobs: number;
  statusChanges: number;
}

/**
 * Jobs created at a steady rate against a running controller: idle ones (dispatch and status
 * measured apart from pod execution) or short ones (one KWOK pod, 1 s: every pod transition
 * is a status change to carry).
 * Dispatch latency: the origin's create answered → its mirror seen on a worker. Status lag:
 * a mirror's status seen changed → the origin's status seen showing it (or a later state of
 * the mirror, when the writer coalesced several changes into one write).
 */
export async function steadyLatency(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: { perSecond: number; seconds: number; run: string; shape: 'idle' | 'short' },
): Promise<SteadyResult> {
  const namespace = `bench-${options.run}`;
  await fleet.flushRedis();
  await fleet.createNamespace(namespace, [fleet.management]);
  const controller = startController(fleet, settings);
  const createdAt = new Map<string, number>();
  const mirrorAt = new Map<string, number>();
  /** Per origin UID, the mirror's distinct statuses in order, with when each was seen. */
  const mirrorChanges = new Map<string, { at: number; key: string }[]>();
  const lags: number[] = [];
  const finished = new Set<string>();
  /** Per origin UID, the statuses its origin has shown, with when each was first seen. */
  const originStates = new Map<string, Map<string, number>>();
  const show = (change: { at: number; key: string }, shownAt: number) => {
    // Watches of two apiservers are not in step: the origin may be seen showing a state a
    // moment before the mirror's own event arrives here. That lag counts as zero.
    lags.push(Math.max(0, shownAt - change.at));
    change.at = -1;
  };
  const onMirror = ({ at, job }: SeenJob) => {
    const uid = job.metadata?.labels?.[originUidLabel];
    if (!uid) return;
    if (!mirrorAt.has(uid)) mirrorAt.set(uid, at);
    const changes = mirrorChanges.get(uid);
    const key = statusKey(job);
    // The state a mirror is created with is not a change (at -1: nothing to show).
    if (!changes) {
      mirrorChanges.set(uid, [{ at: -1, key }]);
      return;
    }
    if (changes.at(-1)?.key === key) return;
    const change = { at, key };
    changes.push(change);
    const shownAt = originStates.get(uid)?.get(key);
    if (shownAt !== undefined) show(change, shownAt);
  };
  const onOrigin = ({ at, job }: SeenJob) => {
    const uid = job.metadata!.uid!;
    if (
      job.status?.conditions?.some(
        (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
      )
    )
      finished.add(uid);
    const key = statusKey(job);
    const states = originStates.get(uid) ?? new Map<string, number>();
    if (!states.has(key)) states.set(key, at);
    originStates.set(uid, states);
    const changes = mirrorChanges.get(uid);
    if (!changes) return;
    const index = changes.findIndex((c) => c.key === key);
    if (index < 0) return;
    // Every mirror state up to this one that had no origin write of its own is now shown.
    for (let i = 0; i <= index; i++) if (changes[i]!.at >= 0) show(changes[i]!, at);
  };
  const watches = [
    ...fleet.workers.map((w) => new JobWatch(w.kubeConfig, jobsPath(namespace), onMirror, originUidLabel)),
    new JobWatch(fleet.management.kubeConfig, jobsPath(namespace), onOrigin),
  ];
  try {
    await Promise.all(watches.map((w) => w.start()));
    await controller.ready();
    const total = options.perSecond * options.seconds;
    const names = benchJobNames('steady', total);
    const intervalMs = 1000 / options.perSecond;
    const began = performance.now();
    const creates: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = began + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      creates.push(
        fleet.management.jobs
          .create(
            namespace,
            benchJob({ name: names[i]!, run: options.run, shape: options.shape, dispatched: true }),
          )
          .then((job) => {
            createdAt.set(job.metadata!.uid!, performance.now());
          }),
      );
    }
    await Promise.all(creates);
    // Idle Jobs never finish: they are done once the origin shows their mirror's one change.
    const done = () =>
      options.shape === 'short'
        ? finished.size >= total
        : [...createdAt.keys()].every((uid) => {
            const changes = mirrorChanges.get(uid) ?? [];
            return changes.length > 1 && changes.every((c) => c.at < 0);
          });
    // A state that never shows (which would be a bug) is reported below, not waited for forever.
    await waitUntil(`${total} Jobs to show their mirror's status on the origin`, done, 5 * 60_000).catch(
      (err: Error) => settings.log(`  ${err.message}`),
    );
    const latencies = [...createdAt].map(([uid, at]) => (mirrorAt.get(uid) ?? Number.NaN) - at);
    if (process.env.JOBRELAY_BENCH_TRACE) {
      const ordered = [...createdAt].sort((a, b) => a[1] - b[1]);
      settings.log(
        `  latency by creation order (per 5%): ${Array.from({ length: 20 }, (_, k) => {
          const slice = ordered.slice((k * ordered.length) / 20, ((k + 1) * ordered.length) / 20);
          return Math.max(...slice.map(([uid, at]) => (mirrorAt.get(uid) ?? Number.NaN) - at)).toFixed(0);
        }).join(' ')}`,
      );
    }
    const unshown = [...mirrorChanges.values()].flat().filter((c) => c.at >= 0);
    if (unshown.length > 0) {
      settings.log(
        `  ${unshown.length} mirror states never shown on their origin, e.g. ${unshown
          .slice(0, 3)
          .map((c) => c.key)
          .join(' ')}`,
      );
    }
    return {
      dispatchLatencyP50Ms: percentile(latencies, 50)!,
      dispatchLatencyP99Ms: percentile(latencies, 99)!,
      statusLagP50Ms: percentile(lags, 50)!,
      statusLagP99Ms: percentile(lags, 99)!,
      jobs: total,
      statusChanges: lags.length,
    };
  } finally {
    for (const w of watches) w.stop();
    await controller.stop();
  }
}

/**
 * `jobs` short Jobs created by `clients` parallel clients, timed from the first create to the
 * last Complete seen: through jobrelay (a running controller, watched on the origin) or
 * created directly on one worker.
 */
export async function endToEnd(
  fleet: BenchFleet,
  settings: BenchSettings,
  options: { jobs: number; clients: number; run: string; direct: boolean },
): Promise<number> {
  const namespace = `bench-${options.run}`;
  const target = options.direct ? (fleet.workers[1] ?? fleet.workers[0]!) : fleet.management;
  await fleet.flushRedis();
  await fleet.createNamespace(namespace, [target]);
  const controller = options.direct ? undefined : startController(fleet, settings);
  const complete = new Set<string>();
  const watch = new JobWatch(target.kubeConfig, jobsPath(namespace), ({ job }) => {
    if (job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'))
      complete.add(job.metadata!.uid!);
  });
  try {
    await watch.start();
    await controller?.ready();
    const names = benchJobNames('e2e', options.jobs);
    const began = performance.now();
    await createJobs(
      target,
      namespace,
      names.map((name) => benchJob({ name, run: options.run, shape: 'short', dispatched: !options.direct })),
      options.clients,
    );
    await waitUntil(`${options.jobs} Jobs to complete`, () => complete.size >= options.jobs, 30 * 60_000);
    return (performance.now() - began) / 1000;
  } finally {
    watch.stop();
    await controller?.stop();
  }
}
