// The status differential: every Job of a seeded mix (job-mix.ts) runs through jobrelay (origin
// on the management cluster, pinned to one worker) and directly on that same worker, twice
// without managedBy. The origin's final status must equal the direct run's, whole: counts,
// ready, terminating, uncountedTerminatedPods, index lists, conditions with their reasons,
// messages and order. Only timestamps are masked (their presence is still compared), and the
// pod names in podFailurePolicy messages lose their namespace and generated suffix, which
// differ between any two runs by construction.
//
// The second direct run checks the mix's claim that each Job's outcome is decided by its spec:
// a field on which the two direct runs disagree is reported as nondeterminism (a bug of the
// generator), and fails the run as well. Nothing is ever masked because the runs disagree.
import https from 'node:https';
import { mergePatch } from '@jobrelay/kube';
import { clusterPinAnnotation } from '@jobrelay/mirror';
import type { Sandbox } from '@jobrelay/sandbox';
import type { KubeConfig, V1JobSpec } from '@kubernetes/client-node';
import { generateJobMix, type MidRunStep, type MixedJob } from './job-mix.ts';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  dispatcherManagedBy,
  sandboxJob,
} from './kube-test-helpers.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface FieldDifference {
  path: string;
  /** undefined: the field is absent. */
  jobrelay: Json | undefined;
  direct: Json | undefined;
  /** The two direct runs disagree on this field: the mix produced a timing-dependent Job. */
  directRunsDisagree: boolean;
}

export interface JobVerdict {
  job: MixedJob;
  /** origin vs first direct run. */
  differences: FieldDifference[];
  /** first vs second direct run (each entry: path, first, second). */
  nondeterminism: Array<{ path: string; first: Json | undefined; second: Json | undefined }>;
  /** A run that never finished, or an API error. */
  error?: string;
  /** `Complete/CompletionsReached`, `Failed/BackoffLimitExceeded`, ... as the direct run ended. */
  outcome: string;
  seconds: number;
}

export interface DifferentialReport {
  seed: number;
  verdicts: JobVerdict[];
  seconds: number;
}

export interface DifferentialOptions {
  sandbox: Sandbox;
  seed: number;
  jobs: number;
  /** Jobs in flight at once (each is three Jobs: the origin and two direct runs). */
  concurrency?: number;
  /** The worker that runs both the mirror and the direct runs (default: the first). */
  worker?: string;
  /** Per Job: how long to wait for the three runs to finish. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

// --- Comparison ---

const timeFields = new Set(['startTime', 'completionTime', 'lastProbeTime', 'lastTransitionTime']);

/**
 * What is compared of a Job's status: all of it, as the API server returned it, with
 * timestamps replaced by "<time>" and pod names in condition messages made run-independent.
 */
export function maskedStatus(status: JsonObject | undefined, namespace: string, jobName: string): Json {
  const podName = new RegExp(`\\b${namespace}/${jobName}-((?:\\d+-)?)[a-z0-9]{5}\\b`, 'g');
  const mask = (value: Json, key?: string): Json => {
    if (key !== undefined && timeFields.has(key) && value !== null) return '<time>';
    if (key === 'message' && typeof value === 'string')
      return value.replace(podName, `<namespace>/${jobName}-$1<suffix>`);
    if (Array.isArray(value)) return value.map((item) => mask(item));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
    return value;
  };
  return mask(status ?? {});
}

/** Every path where `a` and `b` differ; arrays element by element (order matters). */
export function diffJson(
  a: Json | undefined,
  b: Json | undefined,
  path = 'status',
): Array<{ path: string; a: Json | undefined; b: Json | undefined }> {
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: Array<{ path: string; a: Json | undefined; b: Json | undefined }> = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...diffJson(a[i], b[i], `${path}[${i}]`));
    return out;
  }
  const isObject = (v: Json | undefined): v is JsonObject =>
    v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => diffJson(a[key], b[key], `${path}.${key}`));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path, a, b }];
}

// --- Talking to the clusters: raw JSON, so that nothing the client does not model is lost ---

/** GET of a path on a cluster's apiserver, as raw JSON. */
export async function getJson(kubeConfig: KubeConfig, path: string): Promise<JsonObject> {
  const server = new URL(kubeConfig.getCurrentCluster()!.server);
  const options: https.RequestOptions = {
    method: 'GET',
    hostname: server.hostname,
    port: server.port,
    path,
    headers: { accept: 'application/json' },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const request = https.request(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if ((response.statusCode ?? 0) >= 300)
          reject(new Error(`GET ${path}: ${response.statusCode} ${body}`));
        else resolve(JSON.parse(body) as JsonObject);
      });
      response.on('error', reject);
    });
    request.setTimeout(30_000, () => request.destroy(new Error(`GET ${path}: timed out`)));
    request.on('error', reject);
    request.end();
  });
}

export interface RawJob {
  metadata: { name: string; namespace: string; uid?: string; annotations?: Record<string, string> };
  status?: JsonObject;
}

/** `Complete/<reason>` or `Failed/<reason>`, once the Job has finished. */
export function finishedCondition(job: RawJob): string | undefined {
  const conditions = (job.status?.conditions ?? []) as Array<{
    type: string;
    status: string;
    reason?: string;
  }>;
  const end = conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return end ? `${end.type}/${end.reason}` : undefined;
}

interface Waiter {
  ready: (job: RawJob) => boolean;
  done: (job: RawJob) => void;
}

export function isSuspended(job: RawJob): boolean {
  const conditions = (job.status?.conditions ?? []) as Array<{ type: string; status: string }>;
  return conditions.some((c) => c.type === 'Suspended' && c.status === 'True');
}

/** One list per namespace per second, shared by every Job waiting there. */
class NamespacePoller {
  private readonly waiters = new Map<string, Waiter[]>();
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;

  private readonly clients: ClusterClients;
  readonly namespace: string;

  constructor(clients: ClusterClients, namespace: string) {
    this.clients = clients;
    this.namespace = namespace;
  }

  /** The Job once `ready(job)` holds (checked on each list). */
  waitFor(name: string, what: string, ready: (job: RawJob) => boolean, timeoutMs: number): Promise<RawJob> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        ready,
        done: (job) => {
          clearTimeout(timeout);
          resolve(job);
        },
      };
      const timeout = setTimeout(async () => {
        this.remove(name, waiter);
        const job = await this.read(name).catch(() => undefined);
        reject(
          new Error(
            `${this.namespace}/${name}: no ${what} within ${timeoutMs / 1000}s; status: ${JSON.stringify(job?.status ?? null)}`,
          ),
        );
      }, timeoutMs);
      this.waiters.set(name, [...(this.waiters.get(name) ?? []), waiter]);
      this.timer ??= setTimeout(() => this.poll(), 1000);
    });
  }

  read(name: string): Promise<RawJob> {
    return getJson(
      this.clients.kubeConfig,
      `/apis/batch/v1/namespaces/${this.namespace}/jobs/${name}`,
    ) as unknown as Promise<RawJob>;
  }

  private remove(name: string, waiter: Waiter): void {
    const rest = (this.waiters.get(name) ?? []).filter((w) => w !== waiter);
    if (rest.length > 0) this.waiters.set(name, rest);
    else this.waiters.delete(name);
  }

  private async poll(): Promise<void> {
    try {
      const list = (await getJson(
        this.clients.kubeConfig,
        `/apis/batch/v1/namespaces/${this.namespace}/jobs`,
      )) as unknown as { items: RawJob[] };
      this.failures = 0;
      for (const job of list.items) {
        for (const waiter of this.waiters.get(job.metadata.name) ?? []) {
          if (!waiter.ready(job)) continue;
          this.remove(job.metadata.name, waiter);
          waiter.done(job);
        }
      }
    } catch (err) {
      // A busy API server may time out now and then; the per-Job timeout is the real limit.
      if (++this.failures % 10 === 0) console.warn(`listing Jobs in ${this.namespace}: ${String(err)}`);
    }
    this.timer = this.waiters.size > 0 ? setTimeout(() => this.poll(), 1000) : undefined;
  }
}

// --- Running the mix ---

interface Side {
  clients: ClusterClients;
  poller: NamespacePoller;
  /** Where its pods run: the worker (for the origin: its mirror's, same namespace name). */
  pods: ClusterClients;
}

async function patchSpec(side: Side, name: string, spec: Partial<V1JobSpec>): Promise<void> {
  await side.clients.batch.patchNamespacedJob(
    { name, namespace: side.poller.namespace, body: { spec } },
    mergePatch,
  );
}

async function takeStep(side: Side, name: string, step: MidRunStep): Promise<void> {
  const namespace = side.poller.namespace;
  if (step.kind !== 'delete-pod') {
    await patchSpec(
      side,
      name,
      step.kind === 'scale-down' ? { parallelism: step.parallelism } : { suspend: true },
    );
    return;
  }
  const pods = await side.pods.core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
  const index = (p: (typeof pods.items)[number]) =>
    Number(p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'] ?? 0);
  const victim = pods.items
    .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
    .sort((a, b) => index(a) - index(b))[0];
  if (!victim) throw new Error(`no running pod of ${namespace}/${name} to delete`);
  await side.pods.core.deleteNamespacedPod({ name: victim.metadata!.name!, namespace });
}

async function deleteJob(side: Side, name: string): Promise<void> {
  await side.clients.batch
    .deleteNamespacedJob({ name, namespace: side.poller.namespace, propagationPolicy: 'Background' })
    .catch(() => undefined);
}

async function runOne(
  job: MixedJob,
  sides: { origin: Side; direct: Side; again: Side },
  worker: string,
  timeoutMs: number,
): Promise<JobVerdict> {
  const began = Date.now();
  const options = { name: job.name, spec: job.spec, pod: job.pod };
  const verdict: JobVerdict = { job, differences: [], nondeterminism: [], outcome: '?', seconds: 0 };
  try {
    await Promise.all([
      sides.origin.clients.batch.createNamespacedJob({
        namespace: sides.origin.poller.namespace,
        body: sandboxJob({
          ...options,
          managedBy: dispatcherManagedBy,
          annotations: { [clusterPinAnnotation]: worker },
        }),
      }),
      sides.direct.clients.batch.createNamespacedJob({
        namespace: sides.direct.poller.namespace,
        body: sandboxJob(options),
      }),
      sides.again.clients.batch.createNamespacedJob({
        namespace: sides.again.poller.namespace,
        body: sandboxJob(options),
      }),
    ]);
    const all = [sides.origin, sides.direct, sides.again];
    if (job.spec.suspend) {
      // Resumed once suspended everywhere: the origin through jobrelay, the others by their controller.
      await Promise.all(
        all.map((side) => side.poller.waitFor(job.name, 'Suspended=True', isSuspended, timeoutMs)),
      );
      await Promise.all(all.map((side) => patchSpec(side, job.name, { suspend: false })));
    }
    if (job.step) {
      const step = job.step;
      // Taken on each run as soon as all its first pods are ready (the origin's: its mirror's,
      // as jobrelay reports them), so at the same point of each run; the origin's change goes
      // through jobrelay to the mirror.
      const wave = Math.min(job.spec.parallelism ?? 1, job.spec.completions ?? Number.MAX_SAFE_INTEGER);
      const running = (j: RawJob) => Number(j.status?.ready ?? 0) >= wave;
      await Promise.all(
        all.map(async (side) => {
          await side.poller.waitFor(job.name, `${wave} ready pods`, running, timeoutMs);
          await takeStep(side, job.name, step);
        }),
      );
      if (step.kind === 'suspend-resume') {
        const suspended = (j: RawJob) => isSuspended(j) && !j.status?.active && !j.status?.terminating;
        await Promise.all(
          all.map((side) => side.poller.waitFor(job.name, 'suspended, no pod', suspended, timeoutMs)),
        );
        await Promise.all(all.map((side) => patchSpec(side, job.name, { suspend: false })));
      }
    }
    await Promise.all(
      all.map((side) =>
        side.poller.waitFor(job.name, 'Complete or Failed', (j) => !!finishedCondition(j), timeoutMs),
      ),
    );
    // Read all three again a moment later: the final status, not the first finished one.
    await new Promise((r) => setTimeout(r, 1000));
    const [origin, direct, again] = await Promise.all(
      [sides.origin, sides.direct, sides.again].map((side) => side.poller.read(job.name)),
    );
    verdict.outcome = finishedCondition(direct!) ?? '?';
    const view = (side: Side, raw: RawJob) => maskedStatus(raw.status, side.poller.namespace, job.name);
    const originView = view(sides.origin, origin!);
    const directView = view(sides.direct, direct!);
    const againView = view(sides.again, again!);
    verdict.nondeterminism = diffJson(directView, againView).map(({ path, a, b }) => ({
      path,
      first: a,
      second: b,
    }));
    const unstable = new Set(verdict.nondeterminism.map((n) => n.path));
    verdict.differences = diffJson(originView, directView).map(({ path, a, b }) => ({
      path,
      jobrelay: a,
      direct: b,
      directRunsDisagree: unstable.has(path),
    }));
  } catch (err) {
    verdict.error = err instanceof Error ? err.message : String(err);
  }
  verdict.seconds = (Date.now() - began) / 1000;
  await Promise.all([sides.origin, sides.direct, sides.again].map((side) => deleteJob(side, job.name)));
  return verdict;
}

/**
 * Runs the mix of `seed` against a sandbox whose controller is already running. Returns a
 * verdict per Job; `differencesOf` turns them into what must be empty.
 */
export async function runStatusDifferential(options: DifferentialOptions): Promise<DifferentialReport> {
  const { sandbox, seed } = options;
  const log = options.log ?? (() => {});
  const worker = options.worker ?? sandbox.workers[0]!.name;
  const concurrency = options.concurrency ?? 10;
  const timeoutMs = options.timeoutMs ?? 240_000;
  const began = Date.now();
  const management = clientsFor(sandbox, sandbox.management.name);
  const workerClients = clientsFor(sandbox, worker);
  const [originNs, directNs, againNs] = await Promise.all([
    createTestNamespace(management, 'differential'),
    createTestNamespace(workerClients, 'direct'),
    createTestNamespace(workerClients, 'direct-again'),
  ]);
  const sides = {
    origin: { clients: management, poller: new NamespacePoller(management, originNs), pods: workerClients },
    direct: {
      clients: workerClients,
      poller: new NamespacePoller(workerClients, directNs),
      pods: workerClients,
    },
    again: {
      clients: workerClients,
      poller: new NamespacePoller(workerClients, againNs),
      pods: workerClients,
    },
  };
  const mix = generateJobMix(seed, options.jobs);
  log(
    `seed ${seed}: ${mix.length} Jobs, ${concurrency} at a time, through jobrelay (${originNs}, pinned to ${worker}) and twice directly on ${worker} (${directNs}, ${againNs})`,
  );
  const verdicts: JobVerdict[] = [];
  let next = 0;
  const lane = async () => {
    while (next < mix.length) {
      const job = mix[next++]!;
      const verdict = await runOne(job, sides, worker, timeoutMs);
      verdicts.push(verdict);
      const flaws = verdict.error
        ? 'ERROR'
        : `${verdict.differences.length} difference(s)${verdict.nondeterminism.length ? `, direct runs disagree on ${verdict.nondeterminism.length}` : ''}`;
      log(
        `[${verdicts.length}/${mix.length}] ${job.name} ${verdict.outcome} in ${verdict.seconds.toFixed(0)}s: ${flaws}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, mix.length) }, lane));
  verdicts.sort((a, b) => a.job.position - b.job.position);
  // The mirrors' namespace on the worker was created by the controller; its mirrors go with the origins.
  await Promise.all([
    management.core.deleteNamespace({ name: originNs }).catch(() => undefined),
    workerClients.core.deleteNamespace({ name: directNs }).catch(() => undefined),
    workerClients.core.deleteNamespace({ name: againNs }).catch(() => undefined),
  ]);
  return { seed, verdicts, seconds: (Date.now() - began) / 1000 };
}

/** Whether the report is clean: no difference, no nondeterminism, no error. */
export function isClean(report: DifferentialReport): boolean {
  return report.verdicts.every(
    (v) => !v.error && v.differences.length === 0 && v.nondeterminism.length === 0,
  );
}

const show = (value: Json | undefined): string => (value === undefined ? '(absent)' : JSON.stringify(value));

/** Every difference, one line each under its Job, and a closing tally. */
export function formatReport(report: DifferentialReport): string {
  const lines: string[] = [];
  const outcomes = new Map<string, number>();
  for (const v of report.verdicts) {
    outcomes.set(v.outcome, (outcomes.get(v.outcome) ?? 0) + 1);
    if (!v.error && v.differences.length === 0 && v.nondeterminism.length === 0) continue;
    lines.push(`${v.job.name} (${v.job.summary})`);
    if (v.error) lines.push(`  error: ${v.error}`);
    for (const d of v.differences) {
      lines.push(
        `  ${d.path}: jobrelay ${show(d.jobrelay)}, direct ${show(d.direct)}${d.directRunsDisagree ? '  [the two direct runs disagree here too]' : ''}`,
      );
    }
    for (const n of v.nondeterminism) {
      lines.push(
        `  nondeterministic Job (generator bug): ${n.path}: direct ${show(n.first)}, direct again ${show(n.second)}`,
      );
    }
  }
  const flawed = report.verdicts.filter((v) => v.error || v.differences.length || v.nondeterminism.length);
  const differences = report.verdicts.reduce((n, v) => n + v.differences.length, 0);
  lines.push(
    `seed ${report.seed}: ${report.verdicts.length} Jobs in ${report.seconds.toFixed(0)}s, ` +
      `${differences} difference(s) in ${flawed.length} Job(s); outcomes: ` +
      [...outcomes].map(([outcome, n]) => `${outcome} ${n}`).join(', '),
  );
  return lines.join('\n');
}
