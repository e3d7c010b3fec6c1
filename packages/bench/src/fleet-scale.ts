// The fleet scenario (`npm run bench -- --only fleet`, issue 31): many workers and a big backlog,
// with the replicas production runs (a leader, a follower, an admin API), pod churn from other
// tenants on every worker and a stream of short Jobs through jobrelay. What it reads: the
// sustained dispatch rate against a replay of the same API calls on the same fleet, memory with
// everything tracked, the LIST requests an idle fleet serves, which replica watches workers'
// pods and nodes, and the controller's CPU per worker pod event.
import { builtInKinds, collectionPath, type KubeObject } from '@jobrelay/kinds';
import { defaultOriginId, getPlainJson, isNotFound, sharedPoolConfiguration } from '@jobrelay/kube';
import { originLabel } from '@jobrelay/mirror';
import { sandboxNode } from '@jobrelay/sandbox';
import type { Configuration, V1Pod } from '@kubernetes/client-node';
import type { RequestCounts } from './apiserver-requests.ts';
import { BenchFleet, histogramMean, metricSum, startBenchApi, startBenchController } from './bench-fleet.ts';
import { benchJob, benchJobNames } from './bench-jobs.ts';
import {
  benchProcessCpuMs,
  coresOver,
  describeCores,
  describeParts,
  type FleetCpu,
  fleetCpuPerJob,
  readFleetCpu,
} from './fleet-cpu.ts';
import { PodWatch } from './job-watch.ts';
import { startLeaderWatches } from './leader-watches.ts';
import { mainThreadSchedule, type ScheduleShares, scheduleShares } from './process-usage.ts';
import {
  type BenchSettings,
  createJobs,
  type DispatchWrites,
  dispatcherWrites,
  drainParts,
  listAllPages,
  observeDispatch,
  type ReplayResult,
  replayDispatch,
  shortJobStream,
  startController,
  statusWriteConflictsMetric,
  waitUntil,
} from './scenarios.ts';
import { lowerMean, percentile } from './statistics.ts';

export interface FleetScaleOptions {
  run: string;
  /** Idle Jobs in the backlog the leader drains (the tracked workloads). */
  workloads: number;
  /** Jobs replayed for the ratio (the replay's rate does not depend on the backlog it came from). */
  replayJobs: number;
  /** Short running Jobs created through jobrelay per second while it drains. */
  shortJobsPerSecond: number;
  /** Other tenants' pods created (and deleted after they ran) per second, over the whole fleet. */
  churnPodsPerSecond: number;
  /** KWOK nodes per worker (the sandbox starts each with a few; more are added; 0 adds none). */
  nodesPerWorker: number;
  /** The idle window the LIST requests are counted over. */
  idleSeconds: number;
  /** The window of pod churn alone, for the CPU per pod event. */
  churnSeconds: number;
  /**
   * Only the phases whose figures the CI guard asserts (e2e/test/fleet-guard.test.ts), each as
   * the full benchmark runs it (same windows, same lengths): the drain, the settle and idle
   * window (its LISTs, relists, watch streams, and the two resync passes it counts), the churn
   * window, the replay, and the replay beside the leader's watches. Left out, 85 s of waiting at
   * the guard's window lengths, and a replay: the baseline LIST window before any jobrelay process (the guard asserts
   * the idle window's LISTs themselves, none allowed, not their excess over a baseline), the two
   * standing windows with the 5 s and 20 s settles before them (the watches' standing cost), and
   * the replay without short Jobs (a comparison with the method before 2026-12-05). The replay
   * beside the watches then starts once they have listed; the guard asserts only that it ran
   * and that the watches used CPU through it, so the bound read from its rate (the apiservers
   * not yet settled from those lists) is not reported. The figures left out are undefined.
   */
  guardOnly?: boolean;
}

/** Open watch streams to workers, by resource (jobrelay_worker_watch_streams); undefined when the process does not report it. */
export type WatchStreams = Record<string, number> | undefined;

export interface FleetScaleResult {
  workers: number;
  nodesPerWorker: number;
  workloads: number;
  fleetDispatchJobsPerSec: number;
  fleetReplayJobsPerSec: number;
  fleetRatioReplay: number;
  /**
   * Workloads per second counted when the last origin status was written back, from the first
   * mirror: what the replay does per Job (placement, mirror, status), where the mirror rate leaves
   * out statuses still waiting when the last mirror is made.
   */
  fleetSyncedJobsPerSec: number;
  fleetSyncedRatioReplay: number;
  /**
   * The replay without the short Jobs' stream beside it (churn only), and the ratio over it: how
   * the ratio was taken before 2026-12-05, when the short Jobs' pods were charged to the drain.
   */
  fleetReplayWithoutShortJobsPerSec?: number;
  fleetRatioReplayWithoutShortJobs?: number;
  /**
   * The replay once more (short Jobs beside it), with the leader's watches held beside it by a
   * process that does nothing else (`leader-watches.ts`): every stream a leader holds, each
   * object parsed and cached by the controller's informer code. Its rate over the replay's is
   * the highest ratio a dispatcher that watches what jobrelay watches could measure on this
   * machine if its decisions, queue and bookkeeping cost nothing (not reported with `guardOnly`:
   * that replay then starts without the settle the bound is read after).
   */
  fleetReplayBesideLeaderWatchesJobsPerSec: number;
  fleetWatchesBoundRatio?: number;
  replayBesideLeaderWatchesCpuMsPerJobByPart: FleetCpu;
  /**
   * The machine's cores by part over a window of the same churn with nothing dispatched and no
   * jobrelay process, then with the leader's watches alone; the difference of the two machine
   * totals is what holding those watches costs the fleet standing, the watching process's own
   * CPU included (`leaderWatchesStandingCores`).
   */
  fleetAtRestWithoutJobrelayCoresByPart?: FleetCpu;
  fleetAtRestBesideLeaderWatchesCoresByPart?: FleetCpu;
  leaderWatchesStandingCores?: number;
  /**
   * CPU per workload of every part of the machine, in ms: over the drain (leader ready to the
   * last origin status, the churn and short Jobs included, per drained workload) and over the
   * replays (the same churn; the same short Jobs, and none). On two shared cores the ratio is
   * decided by these: what the drain costs beyond the replay's calls is taken from the
   * apiservers that serve them.
   */
  drainCpuMsPerJobByPart: FleetCpu;
  replayCpuMsPerJobByPart: FleetCpu;
  replayWithoutShortJobsCpuMsPerJobByPart?: FleetCpu;
  /**
   * Cores of the machine busy over the churn window with nothing dispatched (every control
   * plane at rest with everything tracked, the churn, node heartbeats, the benchmark's
   * watches), jobrelay's idle replicas left out; and every part's cores over that window.
   */
  fleetAtRestCores: number;
  restingCpuCoresByPart: FleetCpu;
  /**
   * The machine's CPU per workload beyond the fleet at rest (its cores times the phase's
   * seconds, per workload, taken off): what each workload costs the machine on its own, over
   * the drain and the two replays. The ratio on saturated cores is about replay over drain.
   */
  netMachineCpuMsPerJob: {
    drain: number;
    replay: number;
    replayWithoutShortJobs?: number;
    replayBesideLeaderWatches?: number;
  };
  /**
   * Shares of the wall time the dispatcher's main thread (Node's event loop) ran and waited,
   * runnable, for a core (/proc schedstat): the leader's over the drain, the benchmark's own
   * over the replay (with the short Jobs), where the benchmark is the dispatcher.
   */
  leaderMainThread: ScheduleShares;
  replayMainThread: ScheduleShares;
  /**
   * Requests the apiservers served per workload over the drain and over the replay (short Jobs
   * alongside in both), by verb and resource, on the management cluster and summed over the
   * workers: whose calls the apiservers' CPU above went to. Leases left out.
   */
  drainRequestsPerJob: RequestsPerJob;
  replayRequestsPerJob: RequestsPerJob;
  /** Where the drain's statuses waited: the workers' Job controllers, or jobrelay (`statusTailOf`). */
  statusTail: StatusTail;
  /** The leader's mean jobrelay_reconcile_duration_seconds over the drain, by lane (null: none ran). */
  reconcileMeanSecondsByLane: Record<string, number | null>;
  /** The leader's mean jobrelay_status_lag_seconds over the drain: a mirror's change to its origin's status. */
  statusLagMeanSeconds: number;
  /** The leader's origin status writes that met a conflict over the drain (`statusWriteConflictsMetric`). */
  statusWriteConflicts: number;
  controllerRssMiBTracked: number;
  controllerHeapUsedMiBTracked: number;
  /** Per worker, settled: its status's activeWorkloads (counted from watch events) and a LIST's unfinished mirrors. */
  activeWorkloads: Record<string, { published: number | undefined; listed: number }>;
  followerRssMiB: number;
  apiRssMiB: number;
  /** LIST requests per hour while idle with everything tracked, all processes' but the control plane's own timers (the apiserver cannot tell who asked). */
  managementListsPerHour: number;
  workerListsPerHour: number;
  /** The same, before any jobrelay process ran: the sandbox's own components. */
  baselineManagementListsPerHour?: number;
  baselineWorkerListsPerHour?: number;
  /** LIST requests in the idle window, per cluster and resource (the control plane's own timers left out). */
  idleLists: Record<string, Record<string, number>>;
  /** The control plane's own timer LISTs in the idle window (controlPlaneTimerLists), per cluster and resource. */
  idleControlPlaneLists: Record<string, Record<string, number>>;
  /** Relists the leader's informers made in the idle window (jobrelay_informer_relists_total). */
  leaderRelistsWhileIdle: number;
  /** CPU each replica used in the idle window, in cores (its 30 s resync passes, health checks, GC). */
  idleCpuCores: { leader: number; follower: number; api: number };
  /**
   * Origins the leader's resync passes went through from the follower and API being ready
   * (after the drain) to the idle window's end (jobrelay_resync_origins_total): queued to be
   * planned again, or passed over unchanged.
   */
  resyncOrigins: { queued: number; unchanged: number };
  watchStreams: { leader: WatchStreams; follower: WatchStreams; api: WatchStreams };
  /** Pod events per second the churn window produced on the stream the capacity cache reads, fleet-wide. */
  churnPodEventsPerSec: number;
  podEventCpuUsPerEvent: number;
  followerPodEventCpuUsPerEvent: number;
  apiPodEventCpuUsPerEvent: number;
  /**
   * Seconds from a short Job's create answered to its mirror seen on a worker, over the short
   * Jobs created while the backlog drained: how long another team's Job waits behind a backlog
   * (placement turns by namespace). Null when none was placed.
   */
  shortJobDispatchSeconds: { p50: number | null; p99: number | null; max: number | null; placed: number };
  /** Short Jobs replayed beside the replay's backlog (its pods ran, as the drain's did). */
  replayShortJobs: number;
  shortJobsCreated: number;
  churnPodsCreated: number;
  /** From starting a follower and an API with everything tracked until both are ready. */
  replicasReadySeconds: number;
}

/** The field selector of the controller's pod watch (worker-capacity.ts): non-terminal pods. */
const capacityPodSelector = 'status.phase!=Succeeded,status.phase!=Failed';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resources the control plane itself LISTs on a timer, whoever else runs: kube-apiserver's
 * bootstrap controller repairs ClusterIPs and NodePorts by listing every Service every 3 minutes,
 * which an idle window catches now and then. jobrelay never reads a Service (no code path, no
 * RBAC for it), so a LIST of one is the cluster's own and is reported apart, not counted.
 */
export const controlPlaneTimerLists: ReadonlySet<string> = new Set(['services']);

/** LIST requests in `counts`, per resource, split into those jobrelay may have made and the control plane's own. */
export function listsByResource(counts: RequestCounts): {
  anyClient: Record<string, number>;
  controlPlane: Record<string, number>;
} {
  const anyClient: Record<string, number> = {};
  const controlPlane: Record<string, number> = {};
  for (const series of counts.values()) {
    if (series.verb !== 'LIST') continue;
    const resource = `${series.group ? `${series.group}/` : ''}${series.resource}`;
    const into = controlPlaneTimerLists.has(resource) ? controlPlane : anyClient;
    into[resource] = (into[resource] ?? 0) + series.count;
  }
  return { anyClient, controlPlane };
}

interface ListWindow {
  /** Per hour, for the management cluster and summed over the workers, control-plane timers left out. */
  management: number;
  workers: number;
  /** Per cluster and resource, control-plane timers left out. */
  byCluster: Record<string, Record<string, number>>;
  /** The control plane's own timer LISTs (controlPlaneTimerLists), per cluster and resource. */
  controlPlaneByCluster: Record<string, Record<string, number>>;
}

/** LIST requests over a window, per hour. */
async function listsPerHour(fleet: BenchFleet, seconds: number): Promise<ListWindow> {
  const before = await fleet.requestCounts();
  await sleep(seconds * 1000);
  const after = await fleet.requestCounts();
  const deltas = BenchFleet.requestsBetween(before, after);
  const split = [...deltas].map(([name, counts]) => [name, listsByResource(counts)] as const);
  const byCluster = Object.fromEntries(split.map(([name, lists]) => [name, lists.anyClient]));
  const controlPlaneByCluster = Object.fromEntries(split.map(([name, lists]) => [name, lists.controlPlane]));
  const total = (name: string) => Object.values(byCluster[name] ?? {}).reduce((a, b) => a + b, 0);
  const perHour = 3600 / seconds;
  return {
    management: total(fleet.management.name) * perHour,
    workers: fleet.workers.reduce((sum, w) => sum + total(w.name), 0) * perHour,
    byCluster,
    controlPlaneByCluster,
  };
}

/** jobrelay_worker_watch_streams by resource, from a /metrics text. */
export function watchStreamsOf(metricsText: string): WatchStreams {
  const out: Record<string, number> = {};
  let seen = false;
  for (const line of metricsText.split('\n')) {
    const match = /^jobrelay_worker_watch_streams\{[^}]*resource="([^"]+)"[^}]*\}\s+(\S+)$/.exec(line);
    if (!match) continue;
    seen = true;
    out[match[1]!] = (out[match[1]!] ?? 0) + Number(match[2]);
  }
  return seen ? out : undefined;
}

/**
 * Other tenants' pods: created round robin over the workers at `perSecond`, each running one
 * second (KWOK's stages), deleted a few seconds after creation so the workers stay small.
 */
class PodChurn {
  created = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly fleet: BenchFleet;
  private readonly namespace: string;

  constructor(fleet: BenchFleet, namespace: string) {
    this.fleet = fleet;
    this.namespace = namespace;
  }

  start(perSecond: number): void {
    if (perSecond <= 0) return;
    const every = 1000 / perSecond;
    let due = performance.now();
    this.timer = setInterval(
      () => {
        const now = performance.now();
        // Catch up when the event loop was late, at most one second's worth at once.
        while (due <= now && this.inFlight.size < perSecond * 5) {
          this.createOne();
          due += every;
        }
        if (due < now - 1000) due = now;
      },
      Math.max(10, every),
    );
  }

  private createOne(): void {
    const n = this.created++;
    const worker = this.fleet.workers[n % this.fleet.workers.length]!;
    const name = `churn-${n}`;
    const body: V1Pod = {
      metadata: { name, annotations: { 'sandbox.jobrelay.dev/run-seconds': '1' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: 'registry.invalid/sandbox:fake',
            resources: { requests: { cpu: '10m', memory: '16Mi' } },
          },
        ],
      },
    };
    const life = (async () => {
      await worker.core.createNamespacedPod({ namespace: this.namespace, body });
      await sleep(4000);
      await worker.core.deleteNamespacedPod({ namespace: this.namespace, name, gracePeriodSeconds: 0 });
    })().catch(() => {});
    this.inFlight.add(life);
    void life.finally(() => this.inFlight.delete(life));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.inFlight]);
  }
}

export interface StatusTail {
  /** Mean seconds from a mirror first seen to its startTime seen (the worker's Job controller). */
  workerMeanSeconds: number;
  /** Mean seconds from a mirror's startTime seen to its origin's seen (jobrelay's copy). */
  jobrelayMeanSeconds: number;
  /** After the last mirror was seen: seconds until the last mirror startTime, and the last origin status. */
  lastMirrorStartedSeconds: number;
  lastOriginSyncedSeconds: number;
}

/**
 * Seconds from each workload's create to its mirror first seen (both on the benchmark's
 * performance clock), over those with a mirror: p50, p99 and the longest, and how many.
 */
export function dispatchSecondsOf(
  createdAt: ReadonlyMap<string, number>,
  mirrorSeenAt: ReadonlyMap<string, number>,
): FleetScaleResult['shortJobDispatchSeconds'] {
  const seconds: number[] = [];
  for (const [uid, created] of createdAt) {
    const seen = mirrorSeenAt.get(uid);
    // A mirror seen before the create's answer came back waited no time.
    if (seen !== undefined) seconds.push(Math.max(0, seen - created) / 1000);
  }
  return {
    p50: percentile(seconds, 50) ?? null,
    p99: percentile(seconds, 99) ?? null,
    max: seconds.length > 0 ? Math.max(...seconds) : null,
    placed: seconds.length,
  };
}

/** The drain's status lag split at the mirror's own status, from the benchmark's watches. */
export function statusTailOf(observed: {
  mirrorsSeen: Map<string, number>;
  mirrorsStarted: Map<string, number>;
  syncedAt: Map<string, number>;
}): StatusTail {
  // Origins are watched by their own uid, mirrors by the origin's uid label: the same key.
  let worker = 0;
  let jobrelay = 0;
  let pairs = 0;
  for (const [uid, started] of observed.mirrorsStarted) {
    const seen = observed.mirrorsSeen.get(uid);
    const synced = observed.syncedAt.get(uid);
    if (seen === undefined || synced === undefined) continue;
    worker += started - seen;
    jobrelay += synced - started;
    pairs++;
  }
  // A loop, not Math.max(...times): 100,000 arguments overflow the stack.
  const last = (times: Iterable<number>) => {
    let latest = Number.NEGATIVE_INFINITY;
    for (const t of times) if (t > latest) latest = t;
    return latest;
  };
  const lastMirror = last(observed.mirrorsSeen.values());
  return {
    workerMeanSeconds: worker / pairs / 1000,
    jobrelayMeanSeconds: jobrelay / pairs / 1000,
    lastMirrorStartedSeconds: (last(observed.mirrorsStarted.values()) - lastMirror) / 1000,
    lastOriginSyncedSeconds: (last(observed.syncedAt.values()) - lastMirror) / 1000,
  };
}

export interface RequestsPerJob {
  management: Record<string, number>;
  workers: Record<string, number>;
}

/** Requests per workload from a run's account, workers summed; under 0.01 a workload left out. */
export function requestsPerJob(account: DispatchWrites, management: string, jobs: number): RequestsPerJob {
  const management_: Record<string, number> = {};
  const workers: Record<string, number> = {};
  for (const [cluster, requests] of Object.entries(account.requestsByCluster))
    for (const [key, count] of Object.entries(requests)) {
      const into = cluster === management ? management_ : workers;
      into[key] = (into[key] ?? 0) + count;
    }
  const perJob = (counts: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(counts)
        .map(([key, count]) => [key, Math.round((count / jobs) * 100) / 100] as const)
        .filter(([, perJob]) => perJob >= 0.01)
        .sort((a, b) => b[1] - a[1]),
    );
  return { management: perJob(management_), workers: perJob(workers) };
}

/** The bucket each replica's CPU rate is sampled in, for the CPU per pod event. */
const cpuBucketMs = 5000;

/**
 * Each process's CPU rate (cores) in consecutive buckets of `bucketMs` until stopped (a partial
 * last bucket is dropped).
 */
function sampleCpuRates<K extends string>(processes: Record<K, { cpuMs(): number }>, bucketMs: number) {
  const names = Object.keys(processes) as K[];
  const read = () => ({
    at: performance.now(),
    cpu: Object.fromEntries(names.map((n) => [n, processes[n].cpuMs()])) as Record<K, number>,
  });
  const rates = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  let from = read();
  const timer = setInterval(() => {
    const now = read();
    for (const n of names) rates[n].push((now.cpu[n] - from.cpu[n]) / (now.at - from.at));
    from = now;
  }, bucketMs);
  return {
    stop: (): Record<K, number[]> => {
      clearInterval(timer);
      return rates;
    },
  };
}

/**
 * Adds KWOK nodes to every worker until each has `perWorker`, shaped as the worker's first node
 * (0 adds none: a shared fleet's capacity stays as it is). Returns the fewest nodes a worker has.
 */
async function addNodes(fleet: BenchFleet, perWorker: number): Promise<number> {
  const counts = await Promise.all(
    fleet.workers.map(async (worker) => {
      const nodes = (await worker.core.listNode()).items;
      const first = nodes[0]?.status?.allocatable;
      if (!first) throw new Error(`${worker.name} has no node to copy the shape of`);
      const gpus = Number(first['nvidia.com/gpu'] ?? 0);
      const shape = { count: perWorker, cpu: first.cpu!, memory: first.memory!, ...(gpus ? { gpus } : {}) };
      for (let i = nodes.length; i < perWorker; i++)
        await worker.core.createNode({ body: sandboxNode(worker.name, i, shape) }).catch((err) => {
          if ((err as { code?: number }).code !== 409) throw err;
        });
      return Math.max(nodes.length, perWorker);
    }),
  );
  return Math.min(...counts);
}

/**
 * Each worker's published `activeWorkloads` (its WorkerCluster's status, which the leader counts
 * from its mirror watch's events) beside the unfinished mirrors a LIST of the worker finds.
 */
async function activeWorkloadsByWorker(
  fleet: BenchFleet,
  clients: { management: Configuration; workers: Map<string, Configuration> },
): Promise<Record<string, { published: number | undefined; listed: number }>> {
  const selector = `${originLabel}=${await defaultOriginId(fleet.management.kubeConfig)}`;
  const entries = await Promise.all(
    fleet.workers.map(async (worker) => {
      const status = await getPlainJson<{ status?: { activeWorkloads?: number } }>(
        clients.management,
        `/apis/jobrelay.dev/v1alpha1/workerclusters/${worker.name}`,
        {},
      );
      let listed = 0;
      // Every built-in kind the worker serves (Jobs, and KubeRay's where its CRDs are installed).
      for (const adapter of builtInKinds) {
        const mirrors = await listAllPages<KubeObject>(
          clients.workers.get(worker.name)!,
          collectionPath(adapter.resource),
          { labelSelector: selector },
        ).catch((err: unknown) => {
          // A kind this worker does not serve (no KubeRay CRDs on the fleet scenario's workers).
          if (isNotFound(err)) return [];
          throw err;
        });
        listed += mirrors.filter((object) => !adapter.isFinished(object as never)).length;
      }
      return [worker.name, { published: status.status?.activeWorkloads, listed }] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** Lease duration and renew deadline the fleet scenario's controllers run with (see fleetScale). */
export const fleetLeaseArgs = ['--lease-duration-seconds=60', '--renew-deadline-seconds=45'];

export async function fleetScale(
  fleet: BenchFleet,
  givenSettings: BenchSettings,
  options: FleetScaleOptions,
): Promise<FleetScaleResult> {
  // The Lease's timings, for this scenario only: its 21 control planes share two cores with
  // jobrelay, and at load averages of 14–18 the management apiserver once left a renewal
  // unanswered for 10 s, 96 minutes into a 100,000-workload drain, so the leader exited as it
  // must (docs/scale.md). What is measured here is the controller's memory, rate and
  // footprint, not how fast an overloaded apiserver answers; production keeps 15 s / 10 s.
  const settings: BenchSettings = {
    ...givenSettings,
    controllerArgs: [...fleetLeaseArgs, ...givenSettings.controllerArgs],
  };
  const log = settings.log;
  const namespace = `bench-${options.run}`;
  const shortNamespace = `bench-${options.run}-short`;
  const tenantNamespace = `bench-${options.run}-tenant`;
  await fleet.flushRedis();
  await fleet.createNamespace(namespace, [fleet.management]);
  await fleet.createNamespace(shortNamespace, [fleet.management]);
  await fleet.createNamespace(tenantNamespace, fleet.workers);
  const nodesPerWorker = await addNodes(fleet, options.nodesPerWorker);
  log(`  ${fleet.workers.length} workers of at least ${nodesPerWorker} KWOK nodes`);

  // What the sandbox's own components LIST with no jobrelay process running.
  const baselineSeconds = Math.min(options.idleSeconds, 60);
  const baseline = options.guardOnly ? undefined : await listsPerHour(fleet, baselineSeconds);
  if (baseline)
    log(
      `  baseline (no jobrelay process): ${baseline.management.toFixed(0)} LISTs/h on management, ${baseline.workers.toFixed(0)} on the workers: ${JSON.stringify(baseline.byCluster)}`,
    );

  log(`  creating a backlog of ${options.workloads} claimed Jobs in ${namespace}`);
  const createdAt = performance.now();
  await createJobs(
    fleet.management,
    namespace,
    benchJobNames('idle', options.workloads).map((name) =>
      benchJob({ name, run: options.run, shape: 'idle', dispatched: true }),
    ),
    32,
  );
  log(`  created in ${((performance.now() - createdAt) / 1000).toFixed(0)} s`);

  const observed = await observeDispatch(fleet, namespace);
  const observedShorts = await observeDispatch(fleet, shortNamespace);
  const churn = new PodChurn(fleet, tenantNamespace);
  const leader = startController(fleet, settings);
  const others: Array<{ stop(): Promise<void> }> = [leader];
  try {
    await leader.ready(30 * 60_000);
    const readyAt = performance.now();
    const leaderScheduleAtReady = mainThreadSchedule(leader.pid);
    const cpuParts = () => readFleetCpu(fleet.sandbox.dir, drainParts(leader));
    const partsAtReady = cpuParts();
    const requestsAtReady = await fleet.requestCounts();
    log(`  leader ready: it drains while other tenants' pods churn and short Jobs stream through it`);
    churn.start(options.churnPodsPerSecond);
    const shortsCreatedAt = new Map<string, number>();
    const shorts = shortJobStream(fleet, {
      namespace: shortNamespace,
      run: options.run,
      perSecond: options.shortJobsPerSecond,
      afterCreate: async (origin) => {
        shortsCreatedAt.set(origin.metadata!.uid!, performance.now());
      },
    });
    let lastLog = 0;
    await waitUntil(
      `${options.workloads} mirrors and origin statuses`,
      () => {
        leader.assertRunning();
        if (performance.now() - lastLog > 30_000) {
          lastLog = performance.now();
          const progress = `  ${observed.mirrorsSeen.size} mirrors, ${observed.synced.size} statuses; leader RSS ${(leader.rssBytes() / 2 ** 20).toFixed(0)} MiB`;
          // The heap beside the resident set: what is live objects, what V8 holds, what is outside it.
          void leader.heap().then(
            (heap) =>
              log(
                `${progress}, heap used ${heap.usedMiB.toFixed(0)} of ${heap.totalMiB.toFixed(0)} MiB, external ${heap.externalMiB.toFixed(0)} MiB`,
              ),
            () => log(progress),
          );
        }
        return observed.mirrorsSeen.size >= options.workloads && observed.synced.size >= options.workloads;
      },
      Math.max(30 * 60_000, options.workloads * 100),
    );
    const syncedAt = performance.now();
    const drainMs = syncedAt - readyAt;
    // On cores shared with 21 control planes, how much of the drain the leader's event loop ran
    // and how much it waited, runnable, for a core: the second bounds its rate more than its
    // own work does when it is large.
    const leaderMainThread = scheduleShares(leaderScheduleAtReady, mainThreadSchedule(leader.pid), drainMs);
    log(
      `  the leader's main thread over the drain: running ${(leaderMainThread.running * 100).toFixed(0)} % of the time, waiting for a core ${(leaderMainThread.waitingForCpu * 100).toFixed(0)} %`,
    );
    const drainCpuMsPerJobByPart = fleetCpuPerJob(partsAtReady, cpuParts(), options.workloads);
    const drainRequestsPerJob = requestsPerJob(
      dispatcherWrites(
        BenchFleet.requestsBetween(requestsAtReady, await fleet.requestCounts()),
        fleet.management.name,
      ),
      fleet.management.name,
      options.workloads,
    );
    const times = [...observed.mirrorsSeen.values()].sort((a, b) => a - b);
    const fleetDispatchJobsPerSec = (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
    const fleetSyncedJobsPerSec = options.workloads / ((syncedAt - times[0]!) / 1000);
    const statusTail = statusTailOf(observed);
    log(
      `  where statuses waited (seen by the benchmark's watches): mirror created → its startTime ${statusTail.workerMeanSeconds.toFixed(1)} s, ` +
        `→ the origin's ${statusTail.jobrelayMeanSeconds.toFixed(1)} s, mean; after the last mirror, the last mirror startTime came ` +
        `${statusTail.lastMirrorStartedSeconds.toFixed(0)} s later and the last origin status ${statusTail.lastOriginSyncedSeconds.toFixed(0)} s later`,
    );
    const drainMetrics = await leader.metrics();
    const statusLagMeanSeconds = histogramMean(drainMetrics, 'jobrelay_status_lag_seconds') ?? Number.NaN;
    const statusWriteConflictCount = metricSum(drainMetrics, statusWriteConflictsMetric);
    // How long one reconcile took, by lane: with the reconcile concurrency, what a backlog of
    // status changes can be written back at.
    const reconcileMeanSecondsByLane = Object.fromEntries(
      (['urgent', 'changes', 'resync'] as const).map((lane) => [
        lane,
        histogramMean(drainMetrics, 'jobrelay_reconcile_duration_seconds', `{lane="${lane}"}`) ?? null,
      ]),
    );
    log(`  mean reconcile seconds by lane over the drain: ${JSON.stringify(reconcileMeanSecondsByLane)}`);
    log(
      `  drained ${options.workloads} in ${(drainMs / 1000).toFixed(0)} s: mirrors ${fleetDispatchJobsPerSec.toFixed(1)} Jobs/s, ` +
        `with their statuses ${fleetSyncedJobsPerSec.toFixed(1)} Jobs/s; mean status lag ${statusLagMeanSeconds.toFixed(1)} s; ` +
        `${statusWriteConflictCount} status writes met a conflict`,
    );
    log(`  drain CPU ms per workload: ${describeParts(drainCpuMsPerJobByPart)}`);
    log(`  drain requests per workload: ${JSON.stringify(drainRequestsPerJob)}`);
    await shorts.stop();
    // Each short Job created during the drain, from its create's answer to its mirror.
    await waitUntil(
      'every short Job’s mirror',
      () => [...shortsCreatedAt.keys()].every((uid) => observedShorts.mirrorsSeen.has(uid)),
      120_000,
    ).catch(() => log('  some short Jobs had no mirror 120 s after the drain: counted as not placed'));
    const shortJobDispatchSeconds = dispatchSecondsOf(shortsCreatedAt, observedShorts.mirrorsSeen);
    log(
      `  short Jobs beside the backlog: ${shortJobDispatchSeconds.placed} of ${shortsCreatedAt.size} placed; ` +
        `create → mirror p50 ${shortJobDispatchSeconds.p50?.toFixed(2)} s, p99 ${shortJobDispatchSeconds.p99?.toFixed(2)} s, max ${shortJobDispatchSeconds.max?.toFixed(2)} s`,
    );
    await churn.stop();
    observed.stop();
    observedShorts.stop();
    // The replicas production runs beside the leader start now, each listing everything once: on
    // two cores, their start beside the drain starved the leader's Lease renewals (on real
    // clusters each apiserver has its own).
    const follower = startBenchController(fleet.sandbox, {
      runtime: settings.controllerRuntime,
      args: [
        `--worker-qps=${settings.workerQps}`,
        `--worker-burst=${settings.workerBurst}`,
        ...settings.controllerArgs,
      ],
      logDir: settings.logDir,
      identity: 'bench-follower',
    });
    others.push(follower);
    const replicasFrom = performance.now();
    const api = await startBenchApi(fleet.sandbox, { logDir: settings.logDir });
    others.push(api);
    await follower.ready(10 * 60_000, 'follower');
    const replicasReadySeconds = (performance.now() - replicasFrom) / 1000;
    log(`  a follower and an API ready beside it in ${replicasReadySeconds.toFixed(0)} s`);

    const resyncCounts = async () => {
      const text = await leader.metrics();
      return {
        queued: metricSum(text, 'jobrelay_resync_origins_total{outcome="queued"}'),
        unchanged: metricSum(text, 'jobrelay_resync_origins_total{outcome="unchanged"}'),
      };
    };
    const resyncBefore = await resyncCounts();
    // Settled: the drain's garbage collected and returned (V8's memory reducer), watches quiet.
    await sleep(30_000);
    const [leaderMetrics, followerMetrics, apiMetrics] = await Promise.all([
      leader.metrics(),
      follower.metrics(),
      api.metrics(),
    ]);
    const watchStreams = {
      leader: watchStreamsOf(leaderMetrics),
      follower: watchStreamsOf(followerMetrics),
      api: watchStreamsOf(apiMetrics),
    };
    const heap = await leader.heap();
    const controllerRssMiBTracked = leader.rssBytes() / 2 ** 20;
    log(
      `  with ${options.workloads} tracked: leader RSS ${controllerRssMiBTracked.toFixed(0)} MiB (heap ${heap.usedMiB.toFixed(0)} MiB), ` +
        `follower ${(follower.rssBytes() / 2 ** 20).toFixed(0)} MiB, API ${(api.rssBytes() / 2 ** 20).toFixed(0)} MiB; ` +
        `watch streams leader ${JSON.stringify(watchStreams.leader)}, follower ${JSON.stringify(watchStreams.follower)}, API ${JSON.stringify(watchStreams.api)}`,
    );

    const relistsBefore = metricSum(leaderMetrics, 'jobrelay_informer_relists_total');
    const leaderIdleFrom = { cpu: leader.cpuMs(), at: performance.now() };
    const followerIdleFrom = follower.cpuMs();
    const apiIdleFrom = api.cpuMs();
    const replicas = { leader, follower, api };
    const idleSampler = sampleCpuRates(replicas, cpuBucketMs);
    const idle = await listsPerHour(fleet, options.idleSeconds);
    const idleRates = idleSampler.stop();
    const idleMs = performance.now() - leaderIdleFrom.at;
    const idleCpuPerMs = {
      leader: (leader.cpuMs() - leaderIdleFrom.cpu) / idleMs,
      follower: (follower.cpuMs() - followerIdleFrom) / idleMs,
      api: (api.cpuMs() - apiIdleFrom) / idleMs,
    };
    const leaderRelistsWhileIdle = (await leader.counter('jobrelay_informer_relists_total')) - relistsBefore;
    const resyncAfter = await resyncCounts();
    const resyncOrigins = {
      queued: resyncAfter.queued - resyncBefore.queued,
      unchanged: resyncAfter.unchanged - resyncBefore.unchanged,
    };
    log(
      `  idle ${options.idleSeconds} s: ${idle.management.toFixed(0)} LISTs/h on management, ${idle.workers.toFixed(0)} on the workers; ` +
        `${leaderRelistsWhileIdle} relists by the leader; by cluster and resource: ${JSON.stringify(idle.byCluster)}; ` +
        `CPU leader ${idleCpuPerMs.leader.toFixed(3)} cores, follower ${idleCpuPerMs.follower.toFixed(3)}, API ${idleCpuPerMs.api.toFixed(3)}; ` +
        `resync since the drain: ${resyncOrigins.queued} origins queued, ${resyncOrigins.unchanged} passed over unchanged; ` +
        `the control plane's own timers: ${JSON.stringify(idle.controlPlaneByCluster)}`,
    );

    // Pod churn alone: the CPU each replica spends per event of the stream capacity reads.
    let podEvents = 0;
    const podWatches = fleet.workers.map(
      (w) =>
        new PodWatch(w.kubeConfig, capacityPodSelector, () => {
          podEvents += 1;
        }),
    );
    await Promise.all(podWatches.map((w) => w.start()));
    const churnFrom = performance.now();
    const restingParts = () =>
      readFleetCpu(fleet.sandbox.dir, {
        benchmark: benchProcessCpuMs,
        jobrelay: () => leader.cpuMs() + follower.cpuMs() + api.cpuMs(),
      });
    const restingBefore = restingParts();
    const churnSampler = sampleCpuRates(replicas, cpuBucketMs);
    churn.start(options.churnPodsPerSecond);
    await sleep(options.churnSeconds * 1000);
    const churnRates = churnSampler.stop();
    const eventsInWindow = podEvents;
    const churnMs = performance.now() - churnFrom;
    const restingCores = coresOver(restingBefore, restingParts(), churnMs);
    // What the fleet takes of the machine with nothing dispatched: every control plane at rest
    // with everything tracked, the churn and node heartbeats, the benchmark's watches. jobrelay's
    // idle replicas are left out: the drain has its leader's own account, the replay none.
    const fleetAtRestCores = restingCores.machineBusy! - restingCores.jobrelay!;
    await churn.stop();
    // The last pods' deletions, so the next phase starts quiet.
    await sleep(3000);
    for (const w of podWatches) w.stop();
    // Each replica's rate over the churn window against its idle rate, each taken as the mean of
    // its 5 s buckets but the highest third: the resync's pass every 30 s (about 1.4 s of the
    // leader's CPU at 100,000 tracked, more than the churn's whole cost) lands in those, in both
    // windows alike. A difference of whole-window means could not resolve it (2026-12-05).
    const churnPodEventsPerSec = eventsInWindow / (churnMs / 1000);
    const perEvent = (role: keyof typeof replicas) => {
      const churned = lowerMean(churnRates[role], 2 / 3);
      const quiet = lowerMean(idleRates[role], 2 / 3);
      return churned === undefined || quiet === undefined || churnPodEventsPerSec === 0
        ? Number.NaN
        : ((churned - quiet) * 1e6) / churnPodEventsPerSec;
    };
    log(
      `  the fleet at rest beside the churn: ${fleetAtRestCores.toFixed(2)} cores of the machine (jobrelay's idle replicas left out): ${describeCores(restingCores)}`,
    );
    const leaderPerEvent = perEvent('leader');
    // Not a number when the leader's churn window cost no more than its quiet one.
    const podEventCpuUsPerEvent = leaderPerEvent > 0 ? leaderPerEvent : Number.NaN;
    // The follower and the API watch no pods: their figures say how fine the method resolves.
    const followerPodEventCpuUsPerEvent = perEvent('follower');
    const apiPodEventCpuUsPerEvent = perEvent('api');
    log(
      `  churn ${options.churnPodsPerSecond} pods/s: ${churnPodEventsPerSec.toFixed(1)} pod events/s; ` +
        `CPU per event: leader ${podEventCpuUsPerEvent.toFixed(0)} µs, follower ${followerPodEventCpuUsPerEvent.toFixed(0)} µs, API ${apiPodEventCpuUsPerEvent.toFixed(0)} µs`,
    );
    // Settled (no churn, no short Jobs for minutes): what each worker's status says is active.
    // A mirror left by another run may finish meanwhile, and the status follows within a health
    // check: read again for up to 30 s until the two agree.
    const readClients = {
      management: sharedPoolConfiguration(fleet.management.kubeConfig),
      workers: new Map(fleet.workers.map((w) => [w.name, sharedPoolConfiguration(w.kubeConfig)])),
    };
    let activeWorkloads = await activeWorkloadsByWorker(fleet, readClients);
    for (let i = 0; i < 6 && Object.values(activeWorkloads).some((w) => w.published !== w.listed); i++) {
      await sleep(5000);
      activeWorkloads = await activeWorkloadsByWorker(fleet, readClients);
    }
    const followerRssMiB = follower.rssBytes() / 2 ** 20;
    const apiRssMiB = api.rssBytes() / 2 ** 20;
    // Last, as a snapshot inflates the resident set and costs CPU: every figure above is read.
    if (settings.heapSnapshotDir)
      log(`  the leader's heap snapshot: ${await leader.heapSnapshot(settings.heapSnapshotDir)}`);
    for (const process of others.splice(0).reverse()) await process.stop();

    // The replay on the same fleet as the drain: the same churn, and the same stream of short
    // Jobs, their calls replayed too (their pods run on the workers as the drain's did). Then the
    // bound: the same replay beside the leader's watches alone (and the standing windows before
    // it). Last, once more without the short Jobs, the method before 2026-12-05, for comparison.
    // `guardOnly` leaves out the standing windows, their settles and the last replay.
    churn.start(options.churnPodsPerSecond);
    let replay: ReplayResult;
    let replayBesideLeaderWatches: ReplayResult;
    let replayWithoutShortJobs: ReplayResult | undefined;
    let standing: { withoutJobrelay: FleetCpu; besideLeaderWatches: FleetCpu } | undefined;
    try {
      replay = await replayDispatch(fleet, settings, {
        jobs: options.replayJobs,
        run: `${options.run}-replay`,
        shortJobsPerSecond: options.shortJobsPerSecond,
      });
      // What the leader's watches cost the machine standing, nothing dispatched: the churn with
      // no jobrelay process at all, then with the watches alone. The replay's last short Jobs'
      // pods are gone first (each deleted 4 s after its create).
      const standingMs = Math.min(60, options.churnSeconds) * 1000;
      const machineOver = async (extra: Record<string, () => number> = {}) => {
        const parts = () => readFleetCpu(fleet.sandbox.dir, { benchmark: benchProcessCpuMs, ...extra });
        const [before, from] = [parts(), performance.now()];
        await sleep(standingMs);
        return coresOver(before, parts(), performance.now() - from);
      };
      let withoutJobrelay: FleetCpu | undefined;
      if (!options.guardOnly) {
        await sleep(5000);
        withoutJobrelay = await machineOver();
      }
      // The bound: the same replay beside the leader's watches alone (listed before it starts).
      const watches = await startLeaderWatches(fleet.sandbox, {
        logDir: settings.logDir,
        nodeFlags: settings.controllerRuntime.nodeFlags,
        environment: settings.controllerRuntime.environment,
      });
      try {
        if (withoutJobrelay) {
          // Their lists (every origin, every worker's mirrors and pods) leave the apiservers garbage
          // to collect: let that pass before any window starts.
          await sleep(20_000);
          standing = {
            withoutJobrelay,
            besideLeaderWatches: await machineOver({ 'leader watches': watches.cpuMs }),
          };
        }
        replayBesideLeaderWatches = await replayDispatch(fleet, settings, {
          jobs: options.replayJobs,
          run: `${options.run}-replay-watched`,
          shortJobsPerSecond: options.shortJobsPerSecond,
          besideParts: { 'leader watches': watches.cpuMs },
        });
      } finally {
        await watches.stop();
      }
      if (!options.guardOnly)
        replayWithoutShortJobs = await replayDispatch(fleet, settings, {
          jobs: options.replayJobs,
          run: `${options.run}-replay-alone`,
        });
    } finally {
      await churn.stop();
    }
    // Each workload's share of the machine beyond the fleet at rest: on two saturated cores,
    // what the rates divide among themselves (docs/scale.md).
    const netOfRest = (busyMsPerJob: number, jobsPerSec: number) =>
      busyMsPerJob - (fleetAtRestCores * 1000) / jobsPerSec;
    const netOfRestReplayed = (replayed: ReplayResult) =>
      netOfRest(replayed.cpuByPart.machineBusy!, replayed.replayJobsPerSec);
    const netMachineCpuMsPerJob = {
      drain: netOfRest(drainCpuMsPerJobByPart.machineBusy!, options.workloads / (drainMs / 1000)),
      replay: netOfRestReplayed(replay),
      replayWithoutShortJobs: replayWithoutShortJobs && netOfRestReplayed(replayWithoutShortJobs),
      // The bound's figures are read only after the settle (see `guardOnly`).
      replayBesideLeaderWatches: options.guardOnly ? undefined : netOfRestReplayed(replayBesideLeaderWatches),
    };
    log(
      `  machine CPU per workload beyond the fleet at rest: drain ${netMachineCpuMsPerJob.drain.toFixed(2)} ms, replay ${netMachineCpuMsPerJob.replay.toFixed(2)} ms` +
        (netMachineCpuMsPerJob.replayWithoutShortJobs === undefined
          ? ''
          : ` (without short Jobs ${netMachineCpuMsPerJob.replayWithoutShortJobs.toFixed(2)})`),
    );
    const replayRequestsPerJob = requestsPerJob(replay.writes, fleet.management.name, options.replayJobs);
    log(
      `  replay of ${options.replayJobs} beside ${replay.shortJobsReplayed} short Jobs: ${replay.replayJobsPerSec.toFixed(1)} Jobs/s; CPU ms per Job: ${describeParts(replay.cpuByPart)}`,
    );
    log(`  replay requests per Job: ${JSON.stringify(replayRequestsPerJob)}`);
    const fleetWatchesBoundRatio = options.guardOnly
      ? undefined
      : replayBesideLeaderWatches.replayJobsPerSec / replay.replayJobsPerSec;
    log(
      `  replay of ${options.replayJobs} beside the leader's watches alone and ${replayBesideLeaderWatches.shortJobsReplayed} short Jobs: ${replayBesideLeaderWatches.replayJobsPerSec.toFixed(1)} Jobs/s` +
        (fleetWatchesBoundRatio === undefined || netMachineCpuMsPerJob.replayBesideLeaderWatches === undefined
          ? ' (started once the watches had listed, no settle: no bound read)'
          : ` (${fleetWatchesBoundRatio.toFixed(2)} of the replay's; ${netMachineCpuMsPerJob.replayBesideLeaderWatches.toFixed(2)} ms beyond the fleet at rest)`) +
        `; CPU ms per Job: ${describeParts(replayBesideLeaderWatches.cpuByPart)}`,
    );
    const leaderWatchesStandingCores =
      standing && standing.besideLeaderWatches.machineBusy! - standing.withoutJobrelay.machineBusy!;
    if (standing && leaderWatchesStandingCores !== undefined)
      log(
        `  the churn with no jobrelay process: ${describeCores(standing.withoutJobrelay)}; with the leader's watches alone: ${describeCores(standing.besideLeaderWatches)}: ` +
          `they take ${leaderWatchesStandingCores.toFixed(3)} cores standing`,
      );
    if (replayWithoutShortJobs)
      log(
        `  replay of ${options.replayJobs} without short Jobs: ${replayWithoutShortJobs.replayJobsPerSec.toFixed(1)} Jobs/s; CPU ms per Job: ${describeParts(replayWithoutShortJobs.cpuByPart)}`,
      );

    return {
      workers: fleet.workers.length,
      nodesPerWorker,
      workloads: options.workloads,
      fleetDispatchJobsPerSec,
      fleetReplayJobsPerSec: replay.replayJobsPerSec,
      fleetRatioReplay: fleetDispatchJobsPerSec / replay.replayJobsPerSec,
      fleetSyncedJobsPerSec,
      fleetSyncedRatioReplay: fleetSyncedJobsPerSec / replay.replayJobsPerSec,
      fleetReplayWithoutShortJobsPerSec: replayWithoutShortJobs?.replayJobsPerSec,
      fleetRatioReplayWithoutShortJobs:
        replayWithoutShortJobs && fleetDispatchJobsPerSec / replayWithoutShortJobs.replayJobsPerSec,
      fleetReplayBesideLeaderWatchesJobsPerSec: replayBesideLeaderWatches.replayJobsPerSec,
      fleetWatchesBoundRatio,
      replayBesideLeaderWatchesCpuMsPerJobByPart: replayBesideLeaderWatches.cpuByPart,
      fleetAtRestWithoutJobrelayCoresByPart: standing?.withoutJobrelay,
      fleetAtRestBesideLeaderWatchesCoresByPart: standing?.besideLeaderWatches,
      leaderWatchesStandingCores,
      drainCpuMsPerJobByPart,
      replayCpuMsPerJobByPart: replay.cpuByPart,
      replayWithoutShortJobsCpuMsPerJobByPart: replayWithoutShortJobs?.cpuByPart,
      fleetAtRestCores,
      restingCpuCoresByPart: restingCores,
      netMachineCpuMsPerJob,
      leaderMainThread,
      replayMainThread: replay.mainThread,
      statusTail,
      reconcileMeanSecondsByLane,
      drainRequestsPerJob,
      replayRequestsPerJob,
      statusLagMeanSeconds,
      statusWriteConflicts: statusWriteConflictCount,
      controllerRssMiBTracked,
      controllerHeapUsedMiBTracked: heap.usedMiB,
      activeWorkloads,
      followerRssMiB,
      apiRssMiB,
      managementListsPerHour: idle.management,
      workerListsPerHour: idle.workers,
      baselineManagementListsPerHour: baseline?.management,
      baselineWorkerListsPerHour: baseline?.workers,
      idleLists: idle.byCluster,
      idleControlPlaneLists: idle.controlPlaneByCluster,
      leaderRelistsWhileIdle,
      idleCpuCores: idleCpuPerMs,
      resyncOrigins,
      watchStreams,
      churnPodEventsPerSec,
      podEventCpuUsPerEvent,
      followerPodEventCpuUsPerEvent,
      apiPodEventCpuUsPerEvent,
      shortJobDispatchSeconds,
      shortJobsCreated: shorts.created(),
      replayShortJobs: replay.shortJobsReplayed,
      churnPodsCreated: churn.created,
      replicasReadySeconds,
    };
  } finally {
    observed.stop();
    observedShorts.stop();
    await churn.stop();
    for (const process of others.reverse()) await process.stop();
  }
}
