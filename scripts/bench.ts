// `npm run bench -- [options]`: the performance benchmark (docs/benchmarks.md). Starts (or
// reuses) a sandbox of one management cluster and three workers with Redis, runs each
// scenario --runs times, prints a table of medians (min–max) and writes
// docs/benchmarks/latest.json and a dated copy. Not a test: the CI guards are in
// e2e/test/fleet-guard.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  BenchFleet,
  type BenchSettings,
  burstNamespaces,
  type ControllerUnderTest,
  describeParts,
  drainBacklog,
  endToEnd,
  fleetScale,
  queuedBurst,
  rawCreates,
  replayDispatch,
  type Spread,
  spreadOf,
  startController,
  steadyLatency,
} from '@jobrelay/bench';
import { controllerEnvironment, controllerNodeFlags } from '@jobrelay/controller/node-flags';
import {
  pinnedVersions,
  registerSandboxWorkers,
  repositoryRoot,
  sandboxDown,
  sandboxUp,
} from '@jobrelay/sandbox';

const scenarios = [
  'drain',
  'raw',
  'replay',
  'steady',
  'e2e',
  'direct',
  'tracked',
  'queues',
  'fleet',
] as const;
type Scenario = (typeof scenarios)[number];
/** `fleet` runs only when asked for: it needs its own fleet of 20 workers and an hour or more. */
const defaultScenarios = scenarios.filter((s) => s !== 'fleet');

const usage = `usage: npm run bench -- [options]

  --runs N            runs of each scenario; figures are the median, with min and max (default 3)
  --jobs N            backlog drained, raw creates and replayed Jobs per run (default 2000)
  --concurrency N     Jobs in flight in the controller and the replays (default 16)
  --steady-rate N     Jobs per second in the latency run (default 20)
  --steady-seconds N  length of the latency run (default 60)
  --e2e-jobs N        short Jobs in the end-to-end and direct runs (default 2000)
  --e2e-clients N     parallel clients creating them (default 20)
  --tracked-jobs N    Jobs tracked when the controller's memory is read (default 10000)
  --idle-seconds N    15 s after each drain, read the controller's idle CPU this long, to report CPU per
                      Job net of it (default 30, one resync; 0 skips it)
  --queue-jobs N      Jobs in the queues scenario's burst, with queues and again without (default 10000)
  --queues N          DispatchQueues (and namespaces) the burst is spread over (default 20)
  --queue-quota N     each queue's nominal quota of admitted workloads (default 50)
  --fleet-workloads N idle Jobs the fleet scenario's leader drains and then tracks (default 100000)
  --fleet-replay-jobs N
                      Jobs replayed on the same fleet for the fleet scenario's ratio (default 10000)
  --fleet-nodes N     KWOK nodes per worker in the fleet scenario (default 20)
  --fleet-churn N     other tenants' pods created per second over the fleet (default 10)
  --fleet-short-rate N
                      short running Jobs through jobrelay per second while the fleet drains (default 2)
  --fleet-idle-seconds N
                      the idle window the fleet's LIST requests are counted over (default 300)
  --fleet-churn-seconds N
                      the window of churn alone for the CPU per pod event (default 120)
  --only LIST         scenarios to run, comma-separated: ${scenarios.join(',')} (default: all but fleet;
                      fleet runs alone)
  --workers N         worker clusters in the sandbox (default 3; 20 for fleet)
  --sandbox-dir DIR   the sandbox to start or reuse (default .sandbox-bench-perf; .sandbox-bench-fleet for
                      fleet, whose workers run no KubeRay or JobSet controllers)
  --cpu-prof DIR      run the controller with node --cpu-prof, writing profiles into DIR
  --heap-snapshot DIR write a heap snapshot of the controller at the end of each drain into DIR (fleet:
                      of the leader, once every figure is read; read one with scripts/heap-summary.ts)
  --controller-arg A  an extra controller flag (repeatable), e.g. --controller-arg=--log-level=warn
  --node-arg A        an extra node flag for the controller (repeatable), e.g. --node-arg=--max-semi-space-size=8
  --controller-main F the controller entry point to run (default apps/controller/src/main.ts), e.g. an
                      older revision's in a git worktree, to measure before and after on one sandbox
  --label TEXT        a name for this measurement in the JSON (e.g. "before", "after")
  --out FILE          write the JSON to FILE instead of docs/benchmarks/latest.json and its dated copy
  --no-write          print only; do not write docs/benchmarks/
  --keep              leave each run's namespace in place (faster; the sandbox fills up)
  --down              stop the sandbox at the end`;

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    jobs: { type: 'string' },
    concurrency: { type: 'string' },
    'steady-rate': { type: 'string' },
    'steady-seconds': { type: 'string' },
    'e2e-jobs': { type: 'string' },
    'e2e-clients': { type: 'string' },
    'tracked-jobs': { type: 'string' },
    'queue-jobs': { type: 'string' },
    queues: { type: 'string' },
    'queue-quota': { type: 'string' },
    'fleet-workloads': { type: 'string' },
    'fleet-replay-jobs': { type: 'string' },
    'fleet-nodes': { type: 'string' },
    'fleet-churn': { type: 'string' },
    'fleet-short-rate': { type: 'string' },
    'fleet-idle-seconds': { type: 'string' },
    'fleet-churn-seconds': { type: 'string' },
    'idle-seconds': { type: 'string' },
    only: { type: 'string' },
    workers: { type: 'string' },
    'sandbox-dir': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'heap-snapshot': { type: 'string' },
    'controller-arg': { type: 'string', multiple: true },
    'node-arg': { type: 'string', multiple: true },
    label: { type: 'string' },
    'controller-main': { type: 'string' },
    'no-write': { type: 'boolean' },
    out: { type: 'string' },
    down: { type: 'boolean' },
    keep: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

function count(name: keyof typeof values, fallback: number, least = 1): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < least) {
    const what = least === 0 ? 'a whole number, 0 or more' : 'a positive integer';
    console.error(`--${name} must be ${what}, got ${String(raw)}\n\n${usage}`);
    process.exit(2);
  }
  return n;
}

// Read before anything runs: a run takes up to an hour, and a commit meanwhile is not what ran.
const gitRevision = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repositoryRoot }).toString().trim();
  } catch {
    return undefined;
  }
})();
const runs = count('runs', 3);
const jobs = count('jobs', 2000);
const concurrency = count('concurrency', 16);
const steadyRate = count('steady-rate', 20);
const steadySeconds = count('steady-seconds', 60);
const e2eJobs = count('e2e-jobs', 2000);
const e2eClients = count('e2e-clients', 20);
const trackedJobs = count('tracked-jobs', 10_000);
const only = new Set<string>(values.only ? values.only.split(',').map((s) => s.trim()) : defaultScenarios);
for (const name of only) {
  if (!(scenarios as readonly string[]).includes(name)) {
    console.error(`--only: unknown scenario ${name}; choose from ${scenarios.join(', ')}`);
    process.exit(2);
  }
}
const fleetRun = only.has('fleet');
if (fleetRun && only.size > 1) {
  console.error('--only fleet runs alone: it needs its own fleet of 20 workers');
  process.exit(2);
}
const workers = count('workers', fleetRun ? 20 : 3);
const fleetOptions = {
  workloads: count('fleet-workloads', 100_000),
  replayJobs: count('fleet-replay-jobs', 10_000),
  nodesPerWorker: count('fleet-nodes', 20),
  churnPodsPerSecond: count('fleet-churn', 10, 0),
  shortJobsPerSecond: count('fleet-short-rate', 2, 0),
  idleSeconds: count('fleet-idle-seconds', 300),
  churnSeconds: count('fleet-churn-seconds', 120),
};
const queueJobs = count('queue-jobs', 10_000);
const queueCount = count('queues', 20);
const queueQuota = count('queue-quota', 50);
// One resync interval (the controller's default, 30 s): the idle window holds exactly one resync.
const idleSeconds = count('idle-seconds', 30, 0);
const runs_ = (s: Scenario) => only.has(s);

const sandboxDir = resolve(
  values['sandbox-dir'] ?? join(repositoryRoot, fleetRun ? '.sandbox-bench-fleet' : '.sandbox-bench-perf'),
);
const log = (line: string) => console.log(`[bench] ${line}`);
log(`sandbox ${sandboxDir} (1 management + ${workers} workers)`);
const { sandbox } = await sandboxUp({ dir: sandboxDir, workers, log, thirdPartyOperators: !fleetRun });
await registerSandboxWorkers(sandbox);
const fleet = new BenchFleet(sandbox);
const cpuProf = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
const heapSnapshotDir = values['heap-snapshot'] ? resolve(values['heap-snapshot']) : undefined;
const settings: BenchSettings = {
  concurrency,
  controllerRuntime: { nodeFlags: controllerNodeFlags, environment: controllerEnvironment },
  workerQps: 50,
  workerBurst: 100,
  // The controller's own defaults otherwise (placement concurrency is 16, like the replay's).
  controllerArgs: [`--reconcile-concurrency=${concurrency}`, ...(values['controller-arg'] ?? [])],
  nodeArgs: [
    ...(values['node-arg'] ?? []),
    ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []),
    ...(heapSnapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapSnapshotDir}`] : []),
  ],
  ...(heapSnapshotDir ? { heapSnapshotDir } : {}),
  logDir: join(sandboxDir, 'logs', 'bench'),
  log,
  ...(values['controller-main'] ? { controllerMain: resolve(values['controller-main']) } : {}),
};

const figures = new Map<string, number[]>();
const details: Record<string, unknown[]> = {};
// A figure a run did not measure (undefined) is left out, not recorded as a value.
const record = (key: string, value: number | undefined) => {
  if (value !== undefined) figures.set(key, [...(figures.get(key) ?? []), value]);
};
const detail = (key: string, value: unknown) => {
  details[key] = [...(details[key] ?? []), value];
};
const stamp = Date.now().toString(36);
let namespaceCounter = 0;
const runName = (scenario: string) => `${scenario}-${stamp}-${++namespaceCounter}`;

async function scenario<T>(name: string, body: (run: string) => Promise<T>): Promise<T> {
  const run = runName(name);
  const began = Date.now();
  try {
    return await body(run);
  } finally {
    log(`  ${name} took ${((Date.now() - began) / 1000).toFixed(1)} s${values.keep ? '' : '; cleaning up'}`);
    if (!values.keep) await fleet.deleteNamespace(`bench-${run}`);
  }
}

try {
  // The fleet scenario runs once, alone, after this loop.
  for (let i = 1; i <= (fleetRun ? 0 : runs); i++) {
    log(`run ${i}/${runs}`);
    if (runs_('raw')) {
      const rate = await scenario('raw', (run) => rawCreates(fleet, settings, { jobs, run }));
      record('rawCreatesPerSec', rate);
      log(`  raw creates: ${rate.toFixed(1)} Jobs/s`);
    }
    if (runs_('replay')) {
      const replay = await scenario('replay', (run) => replayDispatch(fleet, settings, { jobs, run }));
      record('replayJobsPerSec', replay.replayJobsPerSec);
      record('replayWritesPerJob', replay.writes.dispatch / jobs);
      record('replayMachineCpuMsPerJob', replay.cpuByPart.machineBusy!);
      detail('replayWrites', replay.writes.byCluster);
      detail('replayCpuMsPerJobByPart', replay.cpuByPart);
      log(
        `  replay: ${replay.replayJobsPerSec.toFixed(1)} Jobs/s; CPU ms per Job: ${describeParts(replay.cpuByPart)}`,
      );
    }
    if (runs_('drain')) {
      const drain = await scenario('drain', (run) =>
        drainBacklog(fleet, settings, { jobs, run, idleSeconds }),
      );
      record('dispatchJobsPerSec', drain.dispatchJobsPerSec);
      record('controllerCpuMsPerJob', drain.controllerCpuMsPerJob);
      if (drain.controllerIdleCpuMsPerSec !== undefined) {
        record('controllerIdleCpuMsPerSec', drain.controllerIdleCpuMsPerSec);
        record('controllerCpuMsPerJobNetOfIdle', drain.controllerCpuMsPerJobNetOfIdle!);
      }
      record('writesPerDispatch', drain.writesPerDispatch);
      record('originStatusWritesPerJob', drain.originStatusWritesPerJob);
      record('mirrorStatusChangesPerJob', drain.mirrorStatusChangesPerJob);
      record('placementTasksPerJob', drain.placementTasksPerJob);
      record('reconcilesPerJob', drain.reconcilesPerJob);
      record('firstMirrorMs', drain.firstMirrorMs);
      record('controllerRssMiBAfterDrain', drain.rssMiB);
      record('redisPeakMiB', drain.redisPeakMiB);
      record('drainMachineCpuMsPerJob', drain.cpuByPart.machineBusy!);
      detail('drainWrites', drain.writes.byCluster);
      detail('drainRequests', drain.writes.requestsByCluster);
      detail('drainCpuMsPerJobByPart', drain.cpuByPart);
      const netOfIdle =
        drain.controllerCpuMsPerJobNetOfIdle === undefined
          ? ''
          : ` (${drain.controllerCpuMsPerJobNetOfIdle.toFixed(2)} net of ${drain.controllerIdleCpuMsPerSec!.toFixed(1)} idle CPU ms/s)`;
      log(
        `  drain: ${drain.dispatchJobsPerSec.toFixed(1)} Jobs/s, ${drain.controllerCpuMsPerJob.toFixed(2)} CPU ms/Job${netOfIdle}, ` +
          `${drain.writesPerDispatch.toFixed(2)} writes/dispatch, ${drain.originStatusWritesPerJob.toFixed(2)} status writes ` +
          `for ${drain.mirrorStatusChangesPerJob.toFixed(2)} mirror status changes per Job, RSS ${drain.rssMiB.toFixed(0)} MiB`,
      );
      log(`  drain CPU ms per Job: ${describeParts(drain.cpuByPart)}`);
    }
    if (runs_('steady')) {
      // Idle Jobs: dispatch and status sync apart from pod execution (the targets' figures);
      // then short Jobs, whose pods' every transition is a status change, on the same 2 cores.
      for (const shape of ['idle', 'short'] as const) {
        const steady = await scenario(`steady-${shape}`, (run) =>
          steadyLatency(fleet, settings, { perSecond: steadyRate, seconds: steadySeconds, run, shape }),
        );
        const suffix = shape === 'idle' ? '' : 'WithPods';
        record(`dispatchLatencyP50Ms${suffix}`, steady.dispatchLatencyP50Ms);
        record(`dispatchLatencyP99Ms${suffix}`, steady.dispatchLatencyP99Ms);
        record(`statusLagP50Ms${suffix}`, steady.statusLagP50Ms);
        record(`statusLagP99Ms${suffix}`, steady.statusLagP99Ms);
        log(
          `  steady ${steadyRate} ${shape} Jobs/s: dispatch p50 ${steady.dispatchLatencyP50Ms.toFixed(0)} ms p99 ${steady.dispatchLatencyP99Ms.toFixed(0)} ms; ` +
            `status lag p50 ${steady.statusLagP50Ms.toFixed(0)} ms p99 ${steady.statusLagP99Ms.toFixed(0)} ms (${steady.statusChanges} changes)`,
        );
      }
    }
    if (runs_('e2e')) {
      const seconds = await scenario('e2e', (run) =>
        endToEnd(fleet, settings, { jobs: e2eJobs, clients: e2eClients, run, direct: false }),
      );
      record(`endToEndSeconds${e2eJobs}`, seconds);
      log(`  ${e2eJobs} Jobs through jobrelay: ${seconds.toFixed(1)} s`);
    }
    if (runs_('direct')) {
      const seconds = await scenario('direct', (run) =>
        endToEnd(fleet, settings, { jobs: e2eJobs, clients: e2eClients, run, direct: true }),
      );
      record(`directSeconds${e2eJobs}`, seconds);
      log(`  ${e2eJobs} Jobs directly on one worker: ${seconds.toFixed(1)} s`);
    }
    if (runs_('queues')) {
      // The same burst with and without queues, in one run; which goes first alternates by run.
      const burst = { jobs: queueJobs, queues: queueCount, cohortSize: 5, workloadsPerQueue: queueQuota };
      const side = async (withQueues: boolean) => {
        const run = runName(withQueues ? 'queued' : 'unqueued');
        const began = Date.now();
        try {
          return await queuedBurst(fleet, settings, { ...burst, run, withQueues });
        } finally {
          log(`  ${withQueues ? 'queued' : 'unqueued'} took ${((Date.now() - began) / 1000).toFixed(1)} s`);
          if (!values.keep)
            await Promise.all(burstNamespaces(run, queueCount).map((n) => fleet.deleteNamespace(n)));
        }
      };
      const order = i % 2 === 1 ? [false, true] : [true, false];
      const [first, second] = [await side(order[0]!), await side(order[1]!)];
      const [queued, unqueued] = order[0] ? [first, second] : [second, first];
      record('queuesDispatchJobsPerSec', queued.dispatchJobsPerSec);
      record('queuesUnqueuedDispatchJobsPerSec', unqueued.dispatchJobsPerSec);
      record('queuesRatioToUnqueued', queued.dispatchJobsPerSec / unqueued.dispatchJobsPerSec);
      record('queuesControllerCpuMsPerJob', queued.controllerCpuMsPerJob);
      record('queuesUnqueuedControllerCpuMsPerJob', unqueued.controllerCpuMsPerJob);
      record('admissionDecisionMsP50', queued.decision!.p50Ms);
      record('admissionDecisionMsP99', queued.decision!.p99Ms);
      record('admissionDecisionMsMean', queued.decision!.meanMs);
      record('admissionCycles', queued.decision!.cycles);
      log(
        `  ${queueJobs} Jobs over ${queueCount} queues of ${queueQuota} workloads: ${queued.dispatchJobsPerSec.toFixed(1)} Jobs/s ` +
          `(${queued.seconds.toFixed(0)} s), without queues ${unqueued.dispatchJobsPerSec.toFixed(1)} Jobs/s ` +
          `(${unqueued.seconds.toFixed(0)} s): ratio ${(queued.dispatchJobsPerSec / unqueued.dispatchJobsPerSec).toFixed(2)}; ` +
          `${queued.decision!.cycles} admission decisions, p50 ${queued.decision!.p50Ms.toFixed(1)} ms, p99 ${queued.decision!.p99Ms.toFixed(1)} ms, ` +
          `CPU ${queued.controllerCpuMsPerJob.toFixed(2)} ms/Job with queues, ${unqueued.controllerCpuMsPerJob.toFixed(2)} without`,
      );
    }
  }
  if (runs_('fleet')) {
    const k = `${fleetOptions.workloads / 1000}k`;
    // Its namespaces hold the whole backlog: left for --down (or the next run) to clear, as deleting
    // 100,000 Jobs and their mirrors takes longer than the run.
    const fleetResult = await fleetScale(fleet, settings, { ...fleetOptions, run: runName('fleet') });
    record('fleetDispatchJobsPerSec', fleetResult.fleetDispatchJobsPerSec);
    record('fleetReplayJobsPerSec', fleetResult.fleetReplayJobsPerSec);
    record('fleetRatioReplay', fleetResult.fleetRatioReplay);
    record('fleetSyncedJobsPerSec', fleetResult.fleetSyncedJobsPerSec);
    record('fleetSyncedRatioReplay', fleetResult.fleetSyncedRatioReplay);
    // The ratio as taken before 2026-12-05: over a replay without the drain's short Jobs beside it.
    record('fleetReplayWithoutShortJobsPerSec', fleetResult.fleetReplayWithoutShortJobsPerSec);
    record('fleetRatioReplayWithoutShortJobs', fleetResult.fleetRatioReplayWithoutShortJobs);
    // The bound: the replay beside a process holding the leader's watches and doing nothing else.
    record('fleetReplayBesideLeaderWatchesJobsPerSec', fleetResult.fleetReplayBesideLeaderWatchesJobsPerSec);
    record('fleetWatchesBoundRatio', fleetResult.fleetWatchesBoundRatio);
    record(
      'fleetReplayBesideLeaderWatchesNetMachineCpuMsPerJob',
      fleetResult.netMachineCpuMsPerJob.replayBesideLeaderWatches,
    );
    // What holding those watches costs the machine with nothing dispatched (the churn on).
    record('leaderWatchesStandingCores', fleetResult.leaderWatchesStandingCores);
    record('statusLagMeanSeconds', fleetResult.statusLagMeanSeconds);
    record('fleetStatusWriteConflicts', fleetResult.statusWriteConflicts);
    // Another team's short Jobs behind the backlog: create → mirror (placement turns by namespace).
    const shortDispatch = fleetResult.shortJobDispatchSeconds;
    if (shortDispatch.p50 !== null) record('shortJobDispatchP50Seconds', shortDispatch.p50);
    if (shortDispatch.p99 !== null) record('shortJobDispatchP99Seconds', shortDispatch.p99);
    // The machine's CPU per workload, drain against replay: what the ratio is made of.
    record('fleetDrainMachineCpuMsPerJob', fleetResult.drainCpuMsPerJobByPart.machineBusy!);
    record('fleetReplayMachineCpuMsPerJob', fleetResult.replayCpuMsPerJobByPart.machineBusy!);
    // The same beyond what the fleet takes at rest (churn, heartbeats, idle control planes).
    record('fleetAtRestCores', fleetResult.fleetAtRestCores);
    record('fleetDrainNetMachineCpuMsPerJob', fleetResult.netMachineCpuMsPerJob.drain);
    record('fleetReplayNetMachineCpuMsPerJob', fleetResult.netMachineCpuMsPerJob.replay);
    // The dispatcher's event loop, runnable but waiting for a core: the leader's over the drain.
    record('leaderMainThreadWaitingForCpuShare', fleetResult.leaderMainThread.waitingForCpu);
    record(`controllerRssMiB${k}`, fleetResult.controllerRssMiBTracked);
    record(`controllerHeapUsedMiB${k}`, fleetResult.controllerHeapUsedMiBTracked);
    record('managementListsPerHour', fleetResult.managementListsPerHour);
    record('workerListsPerHour', fleetResult.workerListsPerHour);
    record('baselineManagementListsPerHour', fleetResult.baselineManagementListsPerHour);
    record('baselineWorkerListsPerHour', fleetResult.baselineWorkerListsPerHour);
    record('leaderIdleCpuCores', fleetResult.idleCpuCores.leader);
    record(
      'resyncUnchangedShare',
      fleetResult.resyncOrigins.unchanged /
        (fleetResult.resyncOrigins.unchanged + fleetResult.resyncOrigins.queued),
    );
    record('podEventCpuUsPerEvent', fleetResult.podEventCpuUsPerEvent);
    record('churnPodEventsPerSec', fleetResult.churnPodEventsPerSec);
    // One core's worth of pod events, at 10 events a second per worker.
    record('workersPerCoreAt10PodEventsPerSec', 1e6 / (fleetResult.podEventCpuUsPerEvent * 10));
    for (const role of ['follower', 'api'] as const) {
      const streams = fleetResult.watchStreams[role];
      if (streams) record(`${role}WorkerPodAndNodeWatchStreams`, (streams.pods ?? 0) + (streams.nodes ?? 0));
    }
    detail('fleet', fleetResult);
  }
  if (runs_('tracked')) {
    // One drain of the big backlog, then restarts over the same Jobs (each relists them all).
    const k = `${trackedJobs / 1000}k`;
    // Resident memory, and the V8 heap within it: live objects against what the process holds.
    const recordMemory = async (controller: ControllerUnderTest) => {
      record(`controllerRssMiB${k}`, controller.rssBytes() / 2 ** 20);
      const heap = await controller.heap();
      record(`controllerHeapUsedMiB${k}`, heap.usedMiB);
      record(`controllerHeapTotalMiB${k}`, heap.totalMiB);
      record(`controllerExternalMiB${k}`, heap.externalMiB);
    };
    await scenario('tracked', async (run) => {
      const drain = await drainBacklog(fleet, settings, { jobs: trackedJobs, run, keepController: true });
      record(`dispatchJobsPerSec${k}`, drain.dispatchJobsPerSec);
      record(`controllerCpuMsPerJob${k}`, drain.controllerCpuMsPerJob);
      record(`redisPeakMiB${k}`, drain.redisPeakMiB);
      // Right after the burst: garbage V8 has not collected yet counts.
      await new Promise((r) => setTimeout(r, 5000));
      record(`controllerRssMiB${k}AfterBurst`, drain.controller!.rssBytes() / 2 ** 20);
      // Settled: past V8's memory reducer (it starts 8 s after allocation slows), as the
      // restarts below are read 35 s after they start.
      await new Promise((r) => setTimeout(r, 25_000));
      await recordMemory(drain.controller!);
      await drain.controller!.stop();
      for (let i = 2; i <= runs; i++) {
        const controller = startController(fleet, settings);
        await controller.ready();
        // Past one full resync (every origin reconciled again).
        await new Promise((r) => setTimeout(r, 35_000));
        await recordMemory(controller);
        await controller.stop();
      }
      log(
        `  RSS with ${trackedJobs} Jobs tracked: ${figures
          .get(`controllerRssMiB${trackedJobs / 1000}k`)!
          .map((v) => v.toFixed(0))
          .join(', ')} MiB`,
      );
    });
  }
} finally {
  await fleet.close();
  if (values.down) await sandboxDown(sandboxDir);
}

const summary: Record<string, Spread> = Object.fromEntries([...figures].map(([k, v]) => [k, spreadOf(v)]));
if (summary.dispatchJobsPerSec && summary.replayJobsPerSec) {
  // The ratio of medians; each run's own ratio is in the runs list.
  const ratios = figures
    .get('dispatchJobsPerSec')!
    .map((d, i) => d / (figures.get('replayJobsPerSec')![i] ?? Number.NaN));
  summary.ratioReplay = {
    ...spreadOf(ratios),
    median: summary.dispatchJobsPerSec.median / summary.replayJobsPerSec.median,
  };
}

const rows = Object.entries(summary).map(([key, s]) => [
  key,
  s.median.toFixed(2),
  `${s.min.toFixed(2)}–${s.max.toFixed(2)}`,
  String(s.runs.length),
]);
const widths = [0, 1, 2, 3].map((c) =>
  Math.max(...[['figure', 'median', 'min–max', 'runs'], ...rows].map((r) => r[c]!.length)),
);
const line = (r: string[]) =>
  r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
console.log(
  `\n${line(['figure', 'median', 'min–max', 'runs'])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`,
);
for (const r of rows) console.log(line(r));

const report = {
  label: values.label,
  date: new Date().toISOString(),
  revision: gitRevision,
  machine: {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverageAtEnd: loadavg(),
    node: process.version,
  },
  versions: {
    ...pinnedVersions,
    jobrelay: JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')).version,
  },
  parameters: {
    controllerMain: values['controller-main'] ?? 'apps/controller/src/main.ts',
    runs,
    jobs,
    concurrency,
    workerQps: settings.workerQps,
    workerBurst: settings.workerBurst,
    steadyRate,
    steadySeconds,
    e2eJobs,
    e2eClients,
    trackedJobs,
    queueJobs,
    queueCount,
    queueQuota,
    ...(fleetRun ? { fleet: fleetOptions } : {}),
    idleSeconds,
    workers,
    scenarios: [...only],
    controllerArgs: settings.controllerArgs,
    throughputJobs: 'idle: parallelism 0, one container requesting 10m cpu and 16Mi; no pod is ever created',
    shortJobs: 'one KWOK pod requesting 10m cpu and 16Mi that runs 1 s',
    queueBurstJobs:
      'finishing: completions 0 (completed by the worker without a pod), deleted by their TTL once Complete on the origin',
  },
  figures: Object.fromEntries(Object.entries(summary).map(([k, s]) => [k, s.median])),
  spread: summary,
  details,
};
if (values.out && !values['no-write']) {
  writeFileSync(resolve(values.out), `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote ${values.out}`);
} else if (!values['no-write']) {
  const dir = join(repositoryRoot, 'docs', 'benchmarks');
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(report, null, 2)}\n`;
  const latestFile = join(dir, 'latest.json');
  if (fleetRun) {
    // Its own key: the fleet's figures come from another sandbox and do not replace the drain's.
    const latest = JSON.parse(readFileSync(latestFile, 'utf8')) as Record<string, unknown>;
    latest.fleet = report;
    writeFileSync(latestFile, `${JSON.stringify(latest, null, 2)}\n`);
  } else writeFileSync(latestFile, text);
  writeFileSync(join(dir, `${report.date.slice(0, 10)}${values.label ? `-${values.label}` : ''}.json`), text);
  log(`wrote docs/benchmarks/latest.json`);
}
