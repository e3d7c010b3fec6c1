import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { batchJobAdapter, type WorkloadClient } from '@jobrelay/kinds';
import { makeClusterApiClients } from '@jobrelay/kube';
import { apiCommandLine, repositoryRoot, type Sandbox } from '@jobrelay/sandbox';
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import {
  type ApiserverTarget,
  kubeconfigToken,
  type RequestCounts,
  readRequestCounts,
  requestsBetween,
} from './apiserver-requests.ts';
import type { BenchJob } from './bench-jobs.ts';
import { processUsage } from './process-usage.ts';

export interface BenchCluster {
  name: string;
  kubeConfig: KubeConfig;
  batch: BatchV1Api;
  /** Jobs through the controller's own client (plain JSON, shared pool), unthrottled in practice. */
  jobs: WorkloadClient<BenchJob>;
  core: CoreV1Api;
  metrics: ApiserverTarget;
}

/** The sandbox as the benchmark drives it: admin clients per cluster, /metrics, Redis. */
export class BenchFleet {
  readonly management: BenchCluster;
  readonly workers: BenchCluster[];
  readonly redis: Redis;
  private redisPeakBytes = 0;
  private redisSampler: NodeJS.Timeout | undefined;

  readonly sandbox: Sandbox;

  constructor(sandbox: Sandbox) {
    this.sandbox = sandbox;
    const cluster = (name: string): BenchCluster => {
      const kubeConfig = new KubeConfig();
      const path = sandbox.kubeconfigPath(name);
      kubeConfig.loadFromFile(path);
      return {
        name,
        kubeConfig,
        batch: kubeConfig.makeApiClient(BatchV1Api),
        jobs: batchJobAdapter.client(makeClusterApiClients(kubeConfig, { qps: 1000, burst: 2000 })),
        core: kubeConfig.makeApiClient(CoreV1Api),
        metrics: {
          name,
          server: sandbox.clusters.find((c) => c.name === name)!.server,
          caPem: sandbox.caPem,
          token: kubeconfigToken(path),
        },
      };
    };
    this.management = cluster(sandbox.management.name);
    this.workers = sandbox.workers.map((w) => cluster(w.name));
    this.redis = new Redis(sandbox.redisUrl, { maxRetriesPerRequest: 3 });
  }

  get clusters(): BenchCluster[] {
    return [this.management, ...this.workers];
  }

  async requestCounts(): Promise<Map<string, RequestCounts>> {
    const entries = await Promise.all(
      this.clusters.map(async (c) => [c.name, await readRequestCounts(c.metrics)] as const),
    );
    return new Map(entries);
  }

  static requestsBetween(
    before: Map<string, RequestCounts>,
    after: Map<string, RequestCounts>,
  ): Map<string, RequestCounts> {
    return new Map([...after].map(([name, counts]) => [name, requestsBetween(before.get(name)!, counts)]));
  }

  /** Samples Redis's used_memory every 250 ms; the peak since the last reset. */
  startRedisSampling(): void {
    this.redisPeakBytes = 0;
    const sample = async () => {
      const info = await this.redis.info('memory').catch(() => '');
      const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0);
      this.redisPeakBytes = Math.max(this.redisPeakBytes, used);
    };
    void sample();
    this.redisSampler = setInterval(() => void sample(), 250);
  }

  stopRedisSampling(): number {
    clearInterval(this.redisSampler);
    return this.redisPeakBytes;
  }

  /** Redis holds only the placement queue (design invariant 1): a run starts from an empty one. */
  async flushRedis(): Promise<void> {
    await this.redis.flushall();
  }

  async createNamespace(
    name: string,
    clusters = this.clusters,
    labels: Record<string, string> = {},
  ): Promise<void> {
    await Promise.all(
      clusters.map((c) =>
        c.core.createNamespace({
          body: { metadata: { name, labels: { 'jobrelay.dev/bench': 'true', ...labels } } },
        }),
      ),
    );
  }

  /** Deletes a namespace everywhere and waits until it is gone, so the next run starts quiet. */
  async deleteNamespace(name: string, timeoutMs = 600_000): Promise<void> {
    await Promise.all(this.clusters.map((c) => c.core.deleteNamespace({ name }).catch(() => undefined)));
    const deadline = Date.now() + timeoutMs;
    for (const c of this.clusters) {
      while (Date.now() < deadline) {
        const exists = await c.core.readNamespace({ name }).then(
          () => true,
          () => false,
        );
        if (!exists) break;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.redisSampler);
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export interface ControllerUnderTest {
  readonly process: ChildProcess;
  readonly logFile: string;
  readonly pid: number;
  cpuMs(): number;
  rssBytes(): number;
  /**
   * Throws when the process has exited: a wait on what it should do fails at once with the
   * reason (its last log lines) rather than at its timeout, an hour later in a fleet run.
   */
  assertRunning(): void;
  /** Writes a V8 heap snapshot into `dir` (the process must run with --heapsnapshot-signal=SIGUSR2). */
  heapSnapshot(dir: string): Promise<string>;
  /**
   * Resolves once /readyz answers 200 (caches synced, queue worker running) and it leads; with
   * `follower`, once /readyz answers 200 while another replica leads.
   */
  ready(timeoutMs?: number, role?: 'leader' | 'follower'): Promise<void>;
  /** The V8 heap as the controller's own /metrics reports it (after ready()). */
  heap(): Promise<HeapReading>;
  /** A counter of the controller's /metrics summed over its labels (after ready()). */
  counter(name: string): Promise<number>;
  /** The controller's whole /metrics text (after ready()). */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** MiB: the V8 heap's live objects, what it has reserved, and memory held outside it. */
export interface HeapReading {
  usedMiB: number;
  totalMiB: number;
  externalMiB: number;
}

let controllersStarted = 0;

/** The values of every sample of `name` (any labels) in a Prometheus text exposition. */
function metricSamples(text: string, name: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

/** The sum of every sample of `name` (over all its labels): 0 when there is none. */
export function metricSum(text: string, name: string): number {
  return metricSamples(text, name).reduce((sum, value) => sum + value, 0);
}

/**
 * The mean of a histogram in a Prometheus text exposition (its `_sum` over its `_count`), for one
 * series (`labels` as exposed, e.g. `{lane="urgent"}`) or all of them; undefined without samples.
 */
export function histogramMean(text: string, name: string, labels = ''): number | undefined {
  const count = metricSum(text, `${name}_count${labels}`);
  return count > 0 ? metricSum(text, `${name}_sum${labels}`) / count : undefined;
}

/**
 * The q-th quantile (0..1) of a histogram in a Prometheus text exposition, as Prometheus's
 * histogram_quantile computes it: linear within the bucket it falls in. Undefined without samples.
 */
export function histogramQuantile(text: string, name: string, q: number): number | undefined {
  const buckets = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}_bucket{`))
    .map((line) => ({
      le: Number(/le="([^"]+)"/.exec(line)?.[1]?.replace('+Inf', 'Infinity')),
      count: Number(line.slice(line.lastIndexOf(' ') + 1)),
    }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bucket of buckets) {
    if (bucket.count >= rank) {
      // In the +Inf bucket: the highest finite bound, as Prometheus answers.
      if (!Number.isFinite(bucket.le)) return lower;
      const within = bucket.count - below;
      return within === 0 ? bucket.le : lower + ((bucket.le - lower) * (rank - below)) / within;
    }
    lower = bucket.le;
    below = bucket.count;
  }
  return lower;
}

function metricMiB(text: string, name: string): number {
  const [value] = metricSamples(text, name);
  if (value === undefined) throw new Error(`the controller's /metrics has no ${name}`);
  return value / 2 ** 20;
}

/**
 * How the controller process runs wherever it runs: its V8 flags and malloc settings
 * (apps/controller/src/node-flags.ts). The caller passes them, as a package imports no app.
 */
export interface ControllerRuntime {
  nodeFlags: readonly string[];
  environment: Readonly<Record<string, string>>;
}

/** The real controller as its own process, as production runs it, with its default settings. */
export function startBenchController(
  sandbox: Sandbox,
  options: {
    runtime: ControllerRuntime;
    args?: string[];
    nodeArgs?: string[];
    logDir: string;
    main?: string;
    /** Its identity in the leader election (default `bench`): a second replica needs its own. */
    identity?: string;
  },
): ControllerUnderTest {
  mkdirSync(options.logDir, { recursive: true });
  const logFile = join(options.logDir, `controller-${process.pid}-${++controllersStarted}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [
      // Another revision's controller runs as it ran then: without this one's V8 flags.
      ...(options.main ? [] : options.runtime.nodeFlags),
      ...(options.nodeArgs ?? []),
      options.main ?? join(repositoryRoot, 'apps/controller/src/main.ts'),
      `--kubeconfig=${sandbox.kubeconfigPath(sandbox.management.name)}`,
      `--redis-url=${sandbox.redisUrl}`,
      '--health-address=127.0.0.1:0',
      // One identity across restarts, so a restarted controller takes its Lease back at once
      // rather than after the lease duration (as a restarted pod keeps its name).
      ...(options.main ? [] : [`--leader-election-identity=${options.identity ?? 'bench'}`]),
      ...(options.args ?? []),
    ],
    // Another revision's controller runs without this one's malloc settings too.
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.main ? process.env : { ...process.env, ...options.runtime.environment },
    },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const pid = child.pid!;
  /** The health server's address, read from the controller's log once it serves. */
  let url: string | undefined;
  return {
    process: child,
    logFile,
    pid,
    cpuMs: () => processUsage(pid).cpuMs,
    rssBytes: () => processUsage(pid).rssBytes,
    assertRunning() {
      if (child.exitCode === null && child.signalCode === null) return;
      const lastLines = existsSync(logFile)
        ? readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-3)
        : [];
      throw new Error(
        `the controller exited (${child.exitCode ?? child.signalCode}); see ${logFile}; its last lines:\n${lastLines.join('\n')}`,
      );
    },
    async heapSnapshot(dir: string) {
      mkdirSync(dir, { recursive: true });
      const before = new Set(readdirSync(dir));
      child.kill('SIGUSR2');
      for (let i = 0; i < 1200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const written = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
        // Complete once the size stops changing.
        if (written) {
          const size = statSync(join(dir, written)).size;
          await new Promise((r) => setTimeout(r, 1000));
          if (statSync(join(dir, written)).size === size) return join(dir, written);
        }
      }
      throw new Error(`no heap snapshot appeared in ${dir}`);
    },
    async counter(name: string) {
      if (!url) throw new Error('counter() before ready()');
      return metricSum(await (await fetch(`${url}/metrics`)).text(), name);
    },
    async metrics() {
      if (!url) throw new Error('metrics() before ready()');
      return (await fetch(`${url}/metrics`)).text();
    },
    async heap() {
      if (!url) throw new Error('heap() before ready()');
      const text = await (await fetch(`${url}/metrics`)).text();
      return {
        usedMiB: metricMiB(text, 'jobrelay_controller_nodejs_heap_size_used_bytes'),
        totalMiB: metricMiB(text, 'jobrelay_controller_nodejs_heap_size_total_bytes'),
        externalMiB: metricMiB(text, 'jobrelay_controller_nodejs_external_memory_bytes'),
      };
    },
    async ready(timeoutMs = 120_000, role = 'leader') {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        this.assertRunning();
        if (!url) {
          const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
          url = /"url":"(http:\/\/[^"]+)","msg":"serving \/healthz/.exec(text)?.[1];
        }
        if (url) {
          const ok = await fetch(`${url}/readyz`).then(
            (r) => r.ok,
            () => false,
          );
          // Ready is caches synced; reconciling also needs the leader Lease (a revision
          // without leader election has no such gauge, and always reconciles).
          const follows = ok && /^jobrelay_leader 0$/m.test(await (await fetch(`${url}/metrics`)).text());
          if (ok && follows === (role === 'follower')) return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the controller was not ready within ${timeoutMs} ms; see ${logFile}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The admin API as its own process, as production runs it (an observe-only view of the fleet). */
export interface ApiUnderTest {
  readonly pid: number;
  readonly logFile: string;
  cpuMs(): number;
  rssBytes(): number;
  /** Its /metrics text, read with the sandbox admin's token. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

let apisStarted = 0;

/** Starts the API with its service account's kubeconfig and waits until /readyz answers 200. */
export async function startBenchApi(sandbox: Sandbox, options: { logDir: string }): Promise<ApiUnderTest> {
  mkdirSync(options.logDir, { recursive: true });
  const logFile = join(options.logDir, `api-${process.pid}-${++apisStarted}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, apiCommandLine(sandbox), { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const token = kubeconfigToken(sandbox.kubeconfigPath(sandbox.management.name));
  const pid = child.pid!;
  let url: string | undefined;
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the API exited (${child.exitCode}); see ${logFile}`);
    const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    url ??= /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"serving the jobrelay API"/.exec(text)?.[1];
    if (
      url &&
      (await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!url || Date.now() >= deadline) throw new Error(`the API was not ready within 180 s; see ${logFile}`);
  const base = url;
  return {
    pid,
    logFile,
    cpuMs: () => processUsage(pid).cpuMs,
    rssBytes: () => processUsage(pid).rssBytes,
    async metrics() {
      const answer = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      if (!answer.ok) throw new Error(`the API's /metrics answered ${answer.status}`);
      return answer.text();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
