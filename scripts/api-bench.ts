// `npm run bench:api -- [--jobs N] [--requests N] [--sandbox-dir DIR] [--down]`: a benchmark,
// not a test. Starts (or reuses) a sandbox, makes N dispatched Jobs known to the management
// cluster (created once, reused on later runs; no controller runs, so they stay as created),
// starts the admin API as its own process on a real port and measures sequential requests of
// the list routes with the fleet-admin token. Prints latency percentiles, requests/s, and how
// many TokenReviews, SubjectAccessReviews and Job requests the management apiserver saw while
// the API answered (reads come from informer caches and reviews from the API's auth cache, so
// none of them should grow with the number of requests).
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { mergePatch } from '@jobrelay/kube';
import { placementAnnotation } from '@jobrelay/mirror';
import {
  formatPlacementRecord,
  loadRecordKeyring,
  type PlacementRecord,
  type RecordKeyring,
  sealSubjectOf,
} from '@jobrelay/placement';
import {
  apiCommandLine,
  registerSandboxWorkers,
  repositoryRoot,
  type Sandbox,
  sandboxDown,
  sandboxUp,
} from '@jobrelay/sandbox';
import { BatchV1Api, CoreV1Api, KubeConfig, type V1Job } from '@kubernetes/client-node';
import { integerOption } from './cli-arguments.ts';

const usage = `usage: npm run bench:api -- [--jobs N] [--requests N] [--warmup N] [--sandbox-dir DIR] [--down]
                               [--cpu-prof DIR] [--api-main FILE]

  --jobs         dispatched Jobs on the management cluster (default 10000); existing ones are reused
  --requests     measured requests per scenario (default 2000), sent one after another
  --warmup       requests per scenario before measuring (default 200)
  --sandbox-dir  the sandbox to start or reuse (default: $JOBRELAY_SANDBOX_DIR, else .sandbox-bench)
  --down         stop the sandbox at the end (default: leave it up for the next run)
  --cpu-prof     run the API with node --cpu-prof, writing the profile into DIR
  --api-main     the API entry point to run (default apps/api/src/main.ts), e.g. another
                 checkout's (git worktree) to compare two versions on the same sandbox`;

const { values } = parseArgs({
  options: {
    jobs: { type: 'string' },
    requests: { type: 'string' },
    warmup: { type: 'string' },
    'sandbox-dir': { type: 'string' },
    down: { type: 'boolean' },
    'cpu-prof': { type: 'string' },
    'api-main': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const jobCount = integerOption('jobs', values.jobs, 10_000, { min: 1, usage });
const requests = integerOption('requests', values.requests, 2_000, { min: 1, usage });
const warmup = values.warmup === '0' ? 0 : integerOption('warmup', values.warmup, 200, { min: 1, usage });
const dir = resolve(
  values['sandbox-dir'] ?? process.env.JOBRELAY_SANDBOX_DIR ?? join(repositoryRoot, '.sandbox-bench'),
);
const cpuProfDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
const apiMain = resolve(values['api-main'] ?? join(repositoryRoot, 'apps/api/src/main.ts'));

const managedBy = 'jobrelay.dev/dispatcher';
const benchLabel = 'jobrelay.dev/api-bench';
const namespaces = ['bench-a', 'bench-b', 'bench-c', 'bench-d'];
const creationConcurrency = 32;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

// ---------------------------------------------------------------- the Jobs

/**
 * Job i: in namespace i mod 4. Six in ten are placed (a placement record naming a worker,
 * not suspended, no mirror made: phase placed), two in ten suspended and unplaced, two in ten waiting for
 * a cluster (phase pending). Labels like a team's.
 */
function benchJob(
  i: number,
  workers: string[],
  createdAt: string,
): { namespace: string; job: V1Job; record: PlacementRecord | undefined } {
  const namespace = namespaces[i % namespaces.length]!;
  const kind = i % 10;
  const placed = kind < 6;
  const annotations: Record<string, string> = {};
  // Sealed for the Job's UID, so written once it exists (createAndPlace).
  const record: PlacementRecord | undefined = placed
    ? {
        cluster: workers[i % workers.length]!,
        attempt: 1,
        placedAt: createdAt,
        carried: { succeeded: 0, failed: 0 },
        excludedClusters: [],
      }
    : undefined;
  return {
    namespace,
    record,
    job: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: `job-${String(i).padStart(5, '0')}`,
        namespace,
        labels: { [benchLabel]: 'true', team: `team-${i % 7}`, app: `app-${i % 25}` },
        annotations,
      },
      spec: {
        managedBy,
        suspend: kind === 6 || kind === 7,
        completions: 1,
        parallelism: 1,
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'main',
                image: 'registry.example/batch/worker:1.0',
                command: ['/bin/worker', '--shard', String(i)],
                resources: { requests: { cpu: '100m', memory: '128Mi' } },
              },
            ],
          },
        },
      },
    },
  };
}

/** Creates the Job, then writes its placement record sealed for it, as the controller would. */
async function createAndPlace(
  batch: BatchV1Api,
  keyring: RecordKeyring,
  namespace: string,
  job: V1Job,
  record: PlacementRecord | undefined,
): Promise<void> {
  const created = await batch.createNamespacedJob({ namespace, body: job });
  if (!record) return;
  await batch.patchNamespacedJob(
    {
      namespace,
      name: created.metadata!.name!,
      body: {
        metadata: {
          annotations: {
            [placementAnnotation]: formatPlacementRecord(
              record,
              // What the seal binds, read off the typed object (its times are Dates, not the plain JSON a Workload is).
              sealSubjectOf({
                metadata: { namespace, name: created.metadata!.name, uid: created.metadata!.uid },
              }),
              keyring,
            ),
          },
        },
      },
    },
    mergePatch,
  );
}

async function ensureJobs(sandbox: Sandbox): Promise<{ existing: number; created: number; ms: number }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name));
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const batch = kubeConfig.makeApiClient(BatchV1Api);
  // The installation's record key, as the controller seals with it (made here when none ran yet).
  const { keyring } = await loadRecordKeyring(core, 'jobrelay-system', { createIfMissing: true });
  for (const name of namespaces) {
    await core.createNamespace({ body: { metadata: { name } } }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
  }
  const have = new Set<string>();
  for (const namespace of namespaces) {
    let token: string | undefined;
    do {
      const page = await batch.listNamespacedJob({
        namespace,
        labelSelector: benchLabel,
        limit: 1000,
        ...(token ? { _continue: token } : {}),
      });
      for (const job of page.items) have.add(`${namespace}/${job.metadata!.name}`);
      token = page.metadata?._continue || undefined;
    } while (token);
  }
  const workers = sandbox.workers.map((w) => w.name);
  const createdAt = new Date().toISOString();
  const missing = Array.from({ length: jobCount }, (_, i) => benchJob(i, workers, createdAt)).filter(
    ({ namespace, job }) => !have.has(`${namespace}/${job.metadata!.name}`),
  );
  const started = performance.now();
  let next = 0;
  let done = 0;
  const progress = setInterval(() => console.log(`[jobs] created ${done} of ${missing.length}`), 10_000);
  try {
    await Promise.all(
      Array.from({ length: Math.min(creationConcurrency, missing.length) }, async () => {
        while (next < missing.length) {
          const { namespace, job, record } = missing[next++]!;
          for (let attempt = 1; ; attempt++) {
            try {
              await createAndPlace(batch, keyring, namespace, job, record);
              break;
            } catch (err) {
              const code = (err as { code?: number }).code;
              if (code === 409) break;
              if (attempt >= 5 || (code !== 429 && code !== undefined && code < 500)) throw err;
              await new Promise((r) => setTimeout(r, 200 * attempt));
            }
          }
          done += 1;
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  return { existing: have.size, created: missing.length, ms: performance.now() - started };
}

// ---------------------------------------------------------------- the management apiserver's counters

/** apiserver_request_total summed per resource (every verb and code), from the management apiserver. */
async function apiserverRequests(sandbox: Sandbox): Promise<Map<string, number>> {
  const url = new URL('/metrics', sandbox.management.server);
  const text = await new Promise<string>((resolvePromise, reject) => {
    https
      .get(
        url,
        { ca: sandbox.caPem, headers: { authorization: `Bearer ${sandbox.token('admin')}` } },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('end', () =>
            response.statusCode === 200
              ? resolvePromise(body)
              : reject(new Error(`apiserver /metrics: HTTP ${response.statusCode}`)),
          );
        },
      )
      .on('error', reject);
  });
  const totals = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    totals.set(resource, (totals.get(resource) ?? 0) + value);
  }
  return totals;
}

const countedResources = ['tokenreviews', 'subjectaccessreviews', 'jobs'] as const;
type Counted = Record<(typeof countedResources)[number], number>;

function delta(before: Map<string, number>, after: Map<string, number>): Counted {
  return Object.fromEntries(
    countedResources.map((r) => [r, (after.get(r) ?? 0) - (before.get(r) ?? 0)]),
  ) as Counted;
}

// ---------------------------------------------------------------- the API process

interface ApiProcess {
  child: ChildProcess;
  url: string;
  logFile: string;
  startToReadyMs: number;
}

async function startApi(sandbox: Sandbox): Promise<ApiProcess> {
  const logsDir = join(sandbox.dir, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `api-bench-${process.pid}.log`);
  const log = createWriteStream(logFile);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      apiMain,
      ...apiCommandLine(sandbox).slice(1),
      // The default (1200 a minute per caller) would answer most of a sequential benchmark 429.
      '--rate-limit-per-minute=1000000',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const logs = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let url: string | undefined;
  for (let i = 0; i < 1200 && !url; i++) {
    url = /"url":"(https?:\/\/[^"]+)"[^\n]*"msg":"serving the jobrelay API"/.exec(logs())?.[1];
    if (url) break;
    if (child.exitCode !== null)
      throw new Error(`the API exited (${child.exitCode}); see ${logFile}:\n${logs()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!url) throw new Error(`the API did not log its address within 120 s; see ${logFile}`);
  for (let i = 0; ; i++) {
    const answer = await get(url, '/readyz', undefined).catch(() => undefined);
    if (answer?.status === 200) break;
    if (i >= 600) throw new Error(`the API at ${url} did not become ready within 60 s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, logFile, startToReadyMs: performance.now() - started };
}

async function stopApi(api: ApiProcess): Promise<void> {
  if (api.child.exitCode !== null || api.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => api.child.once('exit', () => r()));
  api.child.kill('SIGTERM');
  await exited;
}

function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return Number.isFinite(kib) ? kib / 1024 : undefined;
}

// ---------------------------------------------------------------- requests

/** One keep-alive connection, as a client sending requests one after another uses. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function get(base: string, path: string, token: string | undefined): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const request = http.get(
      new URL(path, base),
      { agent, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolvePromise({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}

interface Scenario {
  name: string;
  /** The next request's path; `previous` is the last answer's body (for continue tokens). */
  next: (previous: string | undefined) => string;
  /** What a correct first answer looks like, checked once before measuring. */
  check: (body: string) => string | undefined;
}

interface Result {
  name: string;
  requests: number;
  wallMs: number;
  latencies: number[];
  bytes: number;
  apiserver: Counted;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function run(sandbox: Sandbox, api: ApiProcess, token: string, scenario: Scenario): Promise<Result> {
  const first = await get(api.url, scenario.next(undefined), token);
  if (first.status !== 200)
    throw new Error(`${scenario.name}: HTTP ${first.status} ${first.body.slice(0, 300)}`);
  const problem = scenario.check(first.body);
  if (problem) throw new Error(`${scenario.name}: ${problem}`);
  let previous: string | undefined = first.body;
  for (let i = 0; i < warmup; i++) {
    const answer = await get(api.url, scenario.next(previous), token);
    previous = answer.body;
  }
  const before = await apiserverRequests(sandbox);
  const latencies: number[] = [];
  let bytes = 0;
  previous = undefined;
  const started = performance.now();
  for (let i = 0; i < requests; i++) {
    const answer = await get(api.url, scenario.next(previous), token);
    if (answer.status !== 200)
      throw new Error(`${scenario.name}: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
    latencies.push(answer.ms);
    bytes += answer.body.length;
    previous = answer.body;
  }
  const wallMs = performance.now() - started;
  const after = await apiserverRequests(sandbox);
  return { name: scenario.name, requests, wallMs, latencies, bytes, apiserver: delta(before, after) };
}

function itemsOf(body: string): { items: { phase: string; namespace: string }[]; continue?: string } {
  return JSON.parse(body) as { items: { phase: string; namespace: string }[]; continue?: string };
}

// ---------------------------------------------------------------- main

const machine = `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
console.log(`api bench: ${jobCount} dispatched Jobs, ${requests} requests per scenario (${warmup} warm-up)`);
console.log(`machine: ${machine}`);
console.log(`sandbox: ${dir}`);
console.log(`API: ${apiMain}`);
const { sandbox, started } = await sandboxUp({
  dir,
  workers: 2,
  log: (line) => console.log(`[sandbox] ${line}`),
});
console.log(
  `[sandbox] ${started.length === 0 ? 'reused the running sandbox' : `started ${started.length} processes`}`,
);
await registerSandboxWorkers(sandbox);

const jobs = await ensureJobs(sandbox);
console.log(
  jobs.created === 0
    ? `[jobs] all ${jobCount} Jobs already exist (${jobs.existing} found): nothing created`
    : `[jobs] created ${jobs.created} Jobs in ${seconds(jobs.ms)} (${(jobs.created / (jobs.ms / 1000)).toFixed(0)} Jobs/s, ${creationConcurrency} at a time); ${jobs.existing} existed`,
);

const api = await startApi(sandbox);
console.log(`[api] ${api.url} ready ${seconds(api.startToReadyMs)} after start (log: ${api.logFile})`);
const token = sandbox.token('fleet-admin');
const results: Result[] = [];
let rssAfter: number | undefined;
const rssReady = rssMiB(api.child.pid);
try {
  const sample = itemsOf((await get(api.url, '/api/v1/workloads?kind=job&limit=1000', token)).body);
  if (sample.items.length === 0) throw new Error('the API lists no Jobs; did its informer sync?');
  const filterNamespace = namespaces[1]!;
  const scenarios: Scenario[] = [
    {
      name: 'GET /api/v1/workloads?kind=job&limit=100',
      next: () => '/api/v1/workloads?kind=job&limit=100',
      check: (body) => (itemsOf(body).items.length === 100 ? undefined : 'expected 100 items'),
    },
    {
      name: 'GET /api/v1/workloads?kind=job&limit=100&continue=… (walking every page)',
      next: (previous) => {
        const token = previous ? itemsOf(previous).continue : undefined;
        return token
          ? `/api/v1/workloads?kind=job&limit=100&continue=${encodeURIComponent(token)}`
          : '/api/v1/workloads?kind=job&limit=100';
      },
      check: (body) => (itemsOf(body).continue ? undefined : 'expected a continue token'),
    },
    {
      name: `GET /api/v1/workloads?kind=job&limit=100&phase=placed&namespace=${filterNamespace}`,
      next: () => `/api/v1/workloads?kind=job&limit=100&phase=placed&namespace=${filterNamespace}`,
      check: (body) => {
        const items = itemsOf(body).items;
        return items.length === 100 &&
          items.every((item) => item.phase === 'placed' && item.namespace === filterNamespace)
          ? undefined
          : 'expected 100 placed Jobs of the namespace';
      },
    },
    {
      name: 'GET /api/v1/clusters',
      next: () => '/api/v1/clusters',
      check: (body) =>
        itemsOf(body).items.length === sandbox.workers.length
          ? undefined
          : `expected ${sandbox.workers.length} clusters`,
    },
  ];
  for (const scenario of scenarios) {
    console.log(`[bench] ${scenario.name} ...`);
    results.push(await run(sandbox, api, token, scenario));
  }
  rssAfter = rssMiB(api.child.pid);
} finally {
  agent.destroy();
  await stopApi(api);
}

const rows = [
  ['scenario', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'req/s', 'KiB/resp', 'TokenRev', 'SAR', 'job reqs'],
  ...results.map((r) => {
    const sorted = [...r.latencies].sort((a, b) => a - b);
    return [
      r.name,
      percentile(sorted, 50).toFixed(2),
      percentile(sorted, 90).toFixed(2),
      percentile(sorted, 99).toFixed(2),
      sorted[sorted.length - 1]!.toFixed(2),
      (r.requests / (r.wallMs / 1000)).toFixed(0),
      (r.bytes / r.requests / 1024).toFixed(1),
      String(r.apiserver.tokenreviews),
      String(r.apiserver.subjectaccessreviews),
      String(r.apiserver.jobs),
    ];
  }),
];
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
console.log('');
console.log(
  `admin API, ${requests} sequential requests per scenario over one keep-alive connection, ${jobCount} dispatched Jobs, fleet-admin token`,
);
for (const [n, row] of rows.entries()) {
  console.log(
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
  );
  if (n === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}
console.log('');
console.log(
  'TokenRev, SAR, job reqs: TokenReviews, SubjectAccessReviews and requests on jobs (any verb, any client) the management apiserver counted during the scenario',
);
if (jobs.created > 0) console.log(`Jobs created: ${jobs.created} in ${seconds(jobs.ms)}`);
console.log(`API start to ready (informers synced over ${jobCount} Jobs): ${seconds(api.startToReadyMs)}`);
if (rssReady !== undefined && rssAfter !== undefined)
  console.log(
    `API resident memory: ${rssReady.toFixed(0)} MiB when ready, ${rssAfter.toFixed(0)} MiB after the runs`,
  );
if (cpuProfDir) console.log(`CPU profile of the API: ${cpuProfDir}`);

if (values.down) {
  const stopped = await sandboxDown(dir);
  console.log(`[sandbox] stopped ${stopped.length} processes, removed ${dir}`);
} else {
  console.log(`[sandbox] left running; stop it with: JOBRELAY_SANDBOX_DIR=${dir} npm run sandbox -- down`);
}
process.exit(0);
