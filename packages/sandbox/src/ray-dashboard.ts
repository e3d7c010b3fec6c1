// A simulated Ray dashboard (the Ray Jobs REST API) for the sandbox's KubeRay operators.
//
// Under KWOK no Ray head runs: nothing listens at `<head-svc>.<ns>.svc.cluster.local:8265`,
// and that name does not even resolve on the host. The operator's dashboard client is a plain
// Go http.Client (ray-operator controllers/ray/utils/util.go, GetRayDashboardClientFunc), so
// it honours HTTP_PROXY. The sandbox starts every operator with
// HTTP_PROXY=http://<cluster>@127.0.0.1:<port>: every dashboard request of every operator
// arrives here as a proxy request (absolute URL in the request line, the cluster's name as
// the proxy user), and is answered as a Ray dashboard would, from a simulation:
//
// - a job is RUNNING from its submission for `sandbox.jobrelay.dev/run-seconds` (job
//   metadata, RayJob spec.metadata; default 3) and then SUCCEEDED, or FAILED when
//   `sandbox.jobrelay.dev/exit-code` is not 0 (the same keys and parsing as the pod
//   annotations of kwok/stages.yaml). POST /api/jobs/<id>/stop makes a running job STOPPED.
// - HTTPMode: the operator submits the job itself (POST /api/jobs/).
// - K8sJobMode (the default): a real submitter would run `ray job submit` in the submitter
//   Job's pod; under KWOK that pod only "runs". So a job id the dashboard has not seen is
//   looked up in the cluster (lookupSubmittedJob): the RayJob whose status.jobId it is, and
//   the start of its submitter pod, which counts as the submission.
//
// The API shapes are those ray-operator v1.5.0 reads (controllers/ray/utils/dashboardclient
// and utils/types): RayJobInfo, RayJobRequest, RayJobResponse, RayJobStopResponse,
// RayJobLogsResponse, with Ray's field names.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** How a simulated Ray job behaves: keys of the job's metadata (RayJob spec.metadata). */
export const rayJobSimulation = {
  /** Seconds the job stays RUNNING after its submission: "3", "0.5", or a Go-style "2m", "500ms". */
  runSecondsKey: 'sandbox.jobrelay.dev/run-seconds',
  /** The entrypoint's exit code: 0 (default) ends SUCCEEDED, anything else FAILED. */
  exitCodeKey: 'sandbox.jobrelay.dev/exit-code',
  defaultRunSeconds: 3,
} as const;

/** What GET /api/version answers (Ray's dashboard reports its API version "4"). */
export const simulatedRayVersion = { version: '4', ray_version: '2.46.0', ray_commit: 'jobrelay-sandbox' };

export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export interface SimulatedRayJob {
  submissionId: string;
  /** Ray's driver job id (hex), as Ray assigns one per job of a cluster. */
  jobId: string;
  entrypoint: string;
  metadata: Record<string, string>;
  runtimeEnv?: Record<string, unknown>;
  submittedAtMs: number;
  runMs: number;
  exitCode: number;
  stoppedAtMs?: number;
}

/** The Ray Jobs API's JobDetails, as far as the operator reads it (RayJobInfo). */
export interface RayJobInfo {
  type: 'SUBMISSION';
  job_id: string;
  submission_id: string;
  status: RayJobStatus;
  entrypoint: string;
  message: string;
  error_type: string | null;
  start_time: number;
  end_time: number | null;
  metadata: Record<string, string>;
  runtime_env: Record<string, unknown>;
  driver_exit_code: number | null;
}

/** "3" -> 3000, "0.5" -> 500, "2m" -> 120000, "500ms" -> 500; missing or unreadable -> the default. */
export function parseRunMs(value: string | undefined): number {
  const text = (value ?? '').trim();
  const fallback = rayJobSimulation.defaultRunSeconds * 1000;
  if (text === '') return fallback;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  if (!match) return fallback;
  const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unitMs);
}

/** Missing, empty or 0 -> 0; an integer -> itself; anything else -> 1 (as the pod stages do). */
export function parseExitCode(value: string | undefined): number {
  const text = (value ?? '').trim();
  if (text === '') return 0;
  return /^-?\d+$/.test(text) ? Number(text) : 1;
}

export interface SubmitRequest {
  entrypoint: string;
  submission_id?: string;
  metadata?: Record<string, string>;
  runtime_env?: Record<string, unknown>;
}

export function newSimulatedJob(
  request: SubmitRequest,
  submissionId: string,
  jobId: string,
  submittedAtMs: number,
): SimulatedRayJob {
  const metadata = request.metadata ?? {};
  return {
    submissionId,
    jobId,
    entrypoint: request.entrypoint,
    metadata,
    ...(request.runtime_env ? { runtimeEnv: request.runtime_env } : {}),
    submittedAtMs,
    runMs: parseRunMs(metadata[rayJobSimulation.runSecondsKey]),
    exitCode: parseExitCode(metadata[rayJobSimulation.exitCodeKey]),
  };
}

function endOf(job: SimulatedRayJob): { atMs: number; status: RayJobStatus } {
  const ranToEnd = job.submittedAtMs + job.runMs;
  if (job.stoppedAtMs !== undefined && job.stoppedAtMs < ranToEnd) {
    return { atMs: job.stoppedAtMs, status: 'STOPPED' };
  }
  return { atMs: ranToEnd, status: job.exitCode === 0 ? 'SUCCEEDED' : 'FAILED' };
}

export function isTerminal(status: RayJobStatus): boolean {
  return status === 'STOPPED' || status === 'SUCCEEDED' || status === 'FAILED';
}

/** The job as the dashboard reports it at `nowMs`: a pure function of the job and the time. */
export function jobInfoAt(job: SimulatedRayJob, nowMs: number): RayJobInfo {
  const end = endOf(job);
  const ended = nowMs >= end.atMs;
  const status: RayJobStatus = ended ? end.status : 'RUNNING';
  const messages: Record<RayJobStatus, string> = {
    PENDING: 'Job has not started yet.',
    RUNNING: 'Job is currently running.',
    STOPPED: 'Job was intentionally stopped.',
    SUCCEEDED: 'Job finished successfully.',
    FAILED: `Job entrypoint command failed with exit code ${job.exitCode}, last available logs (truncated to 20,000 chars):\n${simulatedJobLogs(job, nowMs)}`,
  };
  return {
    type: 'SUBMISSION',
    job_id: job.jobId,
    submission_id: job.submissionId,
    status,
    entrypoint: job.entrypoint,
    message: messages[status],
    error_type: status === 'FAILED' ? 'JOB_ENTRYPOINT_COMMAND_ERROR' : null,
    start_time: job.submittedAtMs,
    end_time: ended ? end.atMs : null,
    metadata: job.metadata,
    runtime_env: job.runtimeEnv ?? {},
    driver_exit_code: ended && end.status !== 'STOPPED' ? job.exitCode : null,
  };
}

/** What GET /api/jobs/<id>/logs returns: fixed lines saying nothing ran. */
export function simulatedJobLogs(job: SimulatedRayJob, nowMs: number): string {
  const lines = [
    'This Ray job is simulated by the jobrelay sandbox (packages/sandbox/src/ray-dashboard.ts): nothing ran.',
    `entrypoint: ${job.entrypoint}`,
  ];
  const end = endOf(job);
  if (nowMs >= end.atMs) {
    lines.push(end.status === 'STOPPED' ? 'stopped' : `exit code ${job.exitCode}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A running job becomes STOPPED now; true if it was running (Ray's {"stopped": true}). */
export function stopJob(job: SimulatedRayJob, nowMs: number): boolean {
  if (isTerminal(jobInfoAt(job, nowMs).status)) return false;
  job.stoppedAtMs = nowMs;
  return true;
}

/**
 * Where a proxied request goes: `<service>.<namespace>.svc.cluster.local[:port]` (the URL the
 * operator builds from the head Service, utils.FetchHeadServiceURL), else undefined.
 */
export function dashboardTarget(
  target: string,
): { service: string; namespace: string; path: string; search: string } | undefined {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:') return undefined;
  const match =
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc\.cluster\.local$/.exec(
      url.hostname,
    );
  if (!match) return undefined;
  return { service: match[1]!, namespace: match[3]!, path: url.pathname, search: url.search };
}

/** The proxy user of `Proxy-Authorization: Basic base64(user:)`: the cluster the operator runs for. */
export function proxyUser(header: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return undefined;
  const user = Buffer.from(match[1]!, 'base64').toString('utf8').split(':')[0];
  return user ? user : undefined;
}

/** A job a real submitter would have submitted: found in the cluster (K8sJobMode). */
export interface SubmittedElsewhere {
  entrypoint: string;
  metadata?: Record<string, string>;
  submittedAtMs: number;
}

export interface RayDashboardOptions {
  /** Looks up a job id the dashboard has not seen: K8sJobMode submissions. */
  lookupSubmittedJob?: (
    cluster: string,
    namespace: string,
    submissionId: string,
  ) => Promise<SubmittedElsewhere | undefined>;
  now?: () => number;
  log?: (line: string) => void;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const json = (status: number, body: unknown): Reply => ({ status, body });
const text = (status: number, body: string, headers?: Record<string, string>): Reply => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});

/**
 * Every Ray dashboard of every sandbox cluster, in memory: one per head Service
 * (`<cluster>/<namespace>/<service>`), each with its own jobs, as each RayCluster has its own.
 */
export class SimulatedRayDashboards {
  private readonly dashboards = new Map<string, Map<string, SimulatedRayJob>>();
  private readonly nextJobIds = new Map<string, number>();
  private readonly now: () => number;
  private readonly options: RayDashboardOptions;

  constructor(options: RayDashboardOptions = {}) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  private jobsOf(key: string): Map<string, SimulatedRayJob> {
    let jobs = this.dashboards.get(key);
    if (!jobs) {
      jobs = new Map();
      this.dashboards.set(key, jobs);
    }
    return jobs;
  }

  private newJobId(key: string): string {
    const next = (this.nextJobIds.get(key) ?? 0) + 1;
    this.nextJobIds.set(key, next);
    return `${next.toString(16).padStart(2, '0')}000000`;
  }

  private async find(
    cluster: string,
    namespace: string,
    key: string,
    id: string,
  ): Promise<SimulatedRayJob | undefined> {
    const jobs = this.jobsOf(key);
    const known = jobs.get(id) ?? [...jobs.values()].find((job) => job.jobId === id);
    if (known || !this.options.lookupSubmittedJob) return known;
    const found = await this.options.lookupSubmittedJob(cluster, namespace, id);
    if (!found) return undefined;
    // Looked up again meanwhile (a concurrent request): keep the first.
    const raced = jobs.get(id);
    if (raced) return raced;
    const job = newSimulatedJob(
      { entrypoint: found.entrypoint, ...(found.metadata ? { metadata: found.metadata } : {}) },
      id,
      this.newJobId(key),
      found.submittedAtMs,
    );
    jobs.set(id, job);
    this.options.log?.(`${key}: job ${id} submitted by its submitter pod`);
    return job;
  }

  /** Answers one dashboard request (method, path relative to the dashboard, body) of a cluster. */
  async answer(
    cluster: string,
    target: { service: string; namespace: string; path: string },
    method: string,
    body: string,
  ): Promise<Reply> {
    const key = `${cluster}/${target.namespace}/${target.service}`;
    const path = target.path.replace(/\/+$/, '') || '/';
    const now = this.now();
    if (method === 'GET' && path === '/api/version') return json(200, simulatedRayVersion);
    if (method === 'GET' && (path === '/api/gcs_healthz' || path === '/api/local_raylet_healthz')) {
      return text(200, 'success');
    }
    if (path === '/api/jobs') {
      if (method === 'GET')
        return json(
          200,
          [...this.jobsOf(key).values()].map((job) => jobInfoAt(job, now)),
        );
      if (method === 'POST') return this.submit(key, body, now);
      return text(405, `${method} is not allowed on /api/jobs/`);
    }
    const match = /^\/api\/jobs\/([^/]+)(\/logs|\/stop)?$/.exec(path);
    if (!match) return text(404, `the simulated Ray dashboard has no ${method} ${target.path}`);
    const id = decodeURIComponent(match[1]!);
    const job = await this.find(cluster, target.namespace, key, id);
    if (!job) return text(404, `Job ${id} does not exist`);
    const action = `${method} ${match[2] ?? ''}`;
    switch (action) {
      case 'GET ':
        return json(200, jobInfoAt(job, now));
      case 'GET /logs':
        return json(200, { logs: simulatedJobLogs(job, now) });
      case 'POST /stop':
        return json(200, { stopped: stopJob(job, now) });
      case 'DELETE ': {
        if (!isTerminal(jobInfoAt(job, now).status)) {
          return text(400, `Attempted to delete job '${id}', but it is in a non-terminal state RUNNING.`);
        }
        this.jobsOf(key).delete(job.submissionId);
        return json(200, { deleted: true });
      }
      default:
        return text(405, `${method} is not allowed on ${target.path}`);
    }
  }

  private submit(key: string, body: string, now: number): Reply {
    let request: SubmitRequest;
    try {
      request = JSON.parse(body) as SubmitRequest;
    } catch {
      return text(400, 'the request body is not JSON');
    }
    if (typeof request?.entrypoint !== 'string' || request.entrypoint.trim() === '') {
      return text(400, 'entrypoint is required');
    }
    const jobs = this.jobsOf(key);
    const submissionId =
      request.submission_id || `raysubmit_${Math.random().toString(36).slice(2, 18).padEnd(16, '0')}`;
    if (jobs.has(submissionId)) {
      // What Ray answers (HTTP 500); the operator's client recognises this text.
      return text(
        500,
        `Job with submission_id ${submissionId} already exists. Please use a different submission_id.`,
      );
    }
    jobs.set(submissionId, newSimulatedJob(request, submissionId, this.newJobId(key), now));
    this.options.log?.(`${key}: job ${submissionId} submitted over HTTP`);
    return json(200, { job_id: submissionId, submission_id: submissionId });
  }
}

function readBody(req: IncomingMessage, limitBytes = 1 << 20): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: Reply): void {
  const isText = typeof reply.body === 'string';
  res.writeHead(reply.status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    ...reply.headers,
  });
  res.end(isText ? reply.body : JSON.stringify(reply.body));
}

/**
 * The HTTP proxy every sandbox operator uses (HTTP_PROXY): proxied requests to a head
 * Service's dashboard are answered by `dashboards`; `GET /healthz` (not proxied) answers ok.
 */
export function createRayDashboardProxy(dashboards: SimulatedRayDashboards): Server {
  return createServer(async (req, res) => {
    try {
      const url = req.url ?? '/';
      if (url.startsWith('/')) {
        if (req.method === 'GET' && url === '/healthz') return send(res, text(200, 'ok'));
        return send(
          res,
          text(
            400,
            'this is the sandbox HTTP proxy that simulates Ray dashboards: send proxy requests, ' +
              'e.g. curl -x http://<cluster>@127.0.0.1:<port> http://<head-svc>.<ns>.svc.cluster.local:8265/api/jobs/',
          ),
        );
      }
      const target = dashboardTarget(url);
      if (!target) {
        return send(
          res,
          text(
            502,
            `the sandbox proxy only reaches simulated Ray dashboards at http://<head-svc>.<namespace>.svc.cluster.local:<port>, not ${url}`,
          ),
        );
      }
      const cluster = proxyUser(req.headers['proxy-authorization']);
      if (!cluster) {
        return send(
          res,
          text(407, 'name the sandbox cluster as the proxy user: http://<cluster>@127.0.0.1:<port>', {
            'proxy-authenticate': 'Basic realm="sandbox cluster"',
          }),
        );
      }
      const body = await readBody(req);
      send(res, await dashboards.answer(cluster, target, req.method ?? 'GET', body));
    } catch (err) {
      if (!res.headersSent) send(res, text(500, err instanceof Error ? err.message : String(err)));
      else res.destroy();
    }
  });
}
