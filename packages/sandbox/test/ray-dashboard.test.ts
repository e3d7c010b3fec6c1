import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRayDashboardProxy,
  dashboardTarget,
  jobInfoAt,
  newSimulatedJob,
  parseExitCode,
  parseRunMs,
  proxyUser,
  rayJobSimulation,
  SimulatedRayDashboards,
  simulatedRayVersion,
  stopJob,
} from '../src/ray-dashboard.ts';
import { k8sJobModeRayJob, submittedAtFromSubmitterPods } from '../src/ray-dashboard-lookup.ts';

const { runSecondsKey, exitCodeKey } = rayJobSimulation;

describe('the simulation conventions', () => {
  it('reads run-seconds like the pod annotation: seconds, fractions, Go-style units; the default otherwise', () => {
    expect(parseRunMs('3')).toBe(3000);
    expect(parseRunMs(' 0.5 ')).toBe(500);
    expect(parseRunMs('2m')).toBe(120_000);
    expect(parseRunMs('250ms')).toBe(250);
    expect(parseRunMs(undefined)).toBe(rayJobSimulation.defaultRunSeconds * 1000);
    expect(parseRunMs('soon')).toBe(rayJobSimulation.defaultRunSeconds * 1000);
  });

  it('reads exit-code like the pod annotation: missing or 0 succeeds, a non-number fails with 1', () => {
    expect(parseExitCode(undefined)).toBe(0);
    expect(parseExitCode('')).toBe(0);
    expect(parseExitCode('0')).toBe(0);
    expect(parseExitCode('3')).toBe(3);
    expect(parseExitCode('boom')).toBe(1);
  });
});

describe('a simulated job', () => {
  const at = 1_700_000_000_000;
  const job = () =>
    newSimulatedJob(
      { entrypoint: 'python train.py', metadata: { [runSecondsKey]: '5', [exitCodeKey]: '0' } },
      'rayjob-abc',
      '01000000',
      at,
    );

  it('is RUNNING from its submission for run-seconds, then SUCCEEDED with an end time', () => {
    const j = job();
    expect(jobInfoAt(j, at)).toMatchObject({ status: 'RUNNING', start_time: at, end_time: null });
    expect(jobInfoAt(j, at + 4999).status).toBe('RUNNING');
    expect(jobInfoAt(j, at + 5000)).toMatchObject({
      status: 'SUCCEEDED',
      message: 'Job finished successfully.',
      end_time: at + 5000,
      driver_exit_code: 0,
      error_type: null,
      submission_id: 'rayjob-abc',
      job_id: '01000000',
      type: 'SUBMISSION',
    });
  });

  it('ends FAILED with the exit code in its message when exit-code is not 0', () => {
    const j = newSimulatedJob({ entrypoint: 'x', metadata: { [exitCodeKey]: '2' } }, 's', '01000000', at);
    const info = jobInfoAt(j, at + 60_000);
    expect(info).toMatchObject({
      status: 'FAILED',
      error_type: 'JOB_ENTRYPOINT_COMMAND_ERROR',
      driver_exit_code: 2,
      end_time: at + rayJobSimulation.defaultRunSeconds * 1000,
    });
    expect(info.message).toMatch(/^Job entrypoint command failed with exit code 2/);
  });

  it('stops while running (STOPPED at that time), and not once it ended', () => {
    const running = job();
    expect(stopJob(running, at + 1000)).toBe(true);
    expect(jobInfoAt(running, at + 10_000)).toMatchObject({ status: 'STOPPED', end_time: at + 1000 });
    const ended = job();
    expect(stopJob(ended, at + 6000)).toBe(false);
    expect(jobInfoAt(ended, at + 10_000).status).toBe('SUCCEEDED');
  });
});

describe('proxy requests', () => {
  it('reach a dashboard only at <svc>.<ns>.svc.cluster.local', () => {
    expect(dashboardTarget('http://rc-head-svc.team-a.svc.cluster.local:8265/api/jobs/x')).toEqual({
      service: 'rc-head-svc',
      namespace: 'team-a',
      path: '/api/jobs/x',
      search: '',
    });
    expect(dashboardTarget('http://10.0.0.1:8265/api/jobs/')).toBeUndefined();
    expect(dashboardTarget('https://rc-head-svc.ns.svc.cluster.local:8265/')).toBeUndefined();
    expect(dashboardTarget('/healthz')).toBeUndefined();
  });

  it('name the cluster as the proxy user', () => {
    expect(proxyUser(`Basic ${Buffer.from('worker-1:').toString('base64')}`)).toBe('worker-1');
    expect(proxyUser(undefined)).toBeUndefined();
    expect(proxyUser('Bearer x')).toBeUndefined();
  });
});

describe('SimulatedRayDashboards (the Jobs API as ray-operator v1.5.0 calls it)', () => {
  const target = (path: string) => ({ service: 'rc-head-svc', namespace: 'ns', path });
  let now = 1_000_000;
  const dashboards = () => new SimulatedRayDashboards({ now: () => now });

  it('HTTPMode: 404 before the submission, then the job by submission id, then its end', async () => {
    const d = dashboards();
    expect((await d.answer('worker-1', target('/api/jobs/rj-1'), 'GET', '')).status).toBe(404);
    const submitted = await d.answer(
      'worker-1',
      target('/api/jobs/'),
      'POST',
      JSON.stringify({
        entrypoint: 'python x.py',
        submission_id: 'rj-1',
        metadata: { [runSecondsKey]: '2' },
      }),
    );
    expect(submitted).toEqual({ status: 200, body: { job_id: 'rj-1', submission_id: 'rj-1' } });
    expect((await d.answer('worker-1', target('/api/jobs/rj-1'), 'GET', '')).body).toMatchObject({
      status: 'RUNNING',
    });
    now += 2000;
    expect((await d.answer('worker-1', target('/api/jobs/rj-1'), 'GET', '')).body).toMatchObject({
      status: 'SUCCEEDED',
    });
    // Another cluster, or another head Service, is another dashboard.
    expect((await d.answer('worker-2', target('/api/jobs/rj-1'), 'GET', '')).status).toBe(404);
    expect(
      (await d.answer('worker-1', { ...target('/api/jobs/rj-1'), service: 'other-head-svc' }, 'GET', ''))
        .status,
    ).toBe(404);
  });

  it('refuses a second submission with the same id as Ray does (500, "use a different submission_id")', async () => {
    const d = dashboards();
    const body = JSON.stringify({ entrypoint: 'x', submission_id: 'dup' });
    expect((await d.answer('c', target('/api/jobs/'), 'POST', body)).status).toBe(200);
    const again = await d.answer('c', target('/api/jobs/'), 'POST', body);
    expect(again.status).toBe(500);
    expect(again.body).toContain('Please use a different submission_id');
  });

  it('lists, stops, serves logs and deletes only ended jobs', async () => {
    const d = dashboards();
    await d.answer(
      'c',
      target('/api/jobs/'),
      'POST',
      JSON.stringify({ entrypoint: 'x', submission_id: 'a' }),
    );
    const list = await d.answer('c', target('/api/jobs/'), 'GET', '');
    expect((list.body as { submission_id: string }[]).map((j) => j.submission_id)).toEqual(['a']);
    expect((await d.answer('c', target('/api/jobs/a'), 'DELETE', '')).status).toBe(400);
    expect((await d.answer('c', target('/api/jobs/a/stop'), 'POST', '')).body).toEqual({ stopped: true });
    expect((await d.answer('c', target('/api/jobs/a/stop'), 'POST', '')).body).toEqual({ stopped: false });
    expect((await d.answer('c', target('/api/jobs/a'), 'GET', '')).body).toMatchObject({ status: 'STOPPED' });
    const logs = (await d.answer('c', target('/api/jobs/a/logs'), 'GET', '')).body as { logs: string };
    expect(logs.logs).toContain('simulated');
    expect((await d.answer('c', target('/api/jobs/a'), 'DELETE', '')).body).toEqual({ deleted: true });
    expect((await d.answer('c', target('/api/jobs/a'), 'GET', '')).status).toBe(404);
    expect((await d.answer('c', target('/api/version'), 'GET', '')).body).toEqual(simulatedRayVersion);
  });

  it('K8sJobMode: takes a job id it has not seen from the lookup (the submitter pod), once', async () => {
    const lookups: string[] = [];
    const d = new SimulatedRayDashboards({
      now: () => now,
      lookupSubmittedJob: async (cluster, namespace, id) => {
        lookups.push(`${cluster}/${namespace}/${id}`);
        return id === 'rj-k8s'
          ? { entrypoint: 'python y.py', metadata: { [exitCodeKey]: '1' }, submittedAtMs: now - 10_000 }
          : undefined;
      },
    });
    expect((await d.answer('worker-1', target('/api/jobs/unknown'), 'GET', '')).status).toBe(404);
    const info = await d.answer('worker-1', target('/api/jobs/rj-k8s'), 'GET', '');
    expect(info.body).toMatchObject({
      status: 'FAILED',
      entrypoint: 'python y.py',
      start_time: now - 10_000,
    });
    await d.answer('worker-1', target('/api/jobs/rj-k8s'), 'GET', '');
    expect(lookups).toEqual(['worker-1/ns/unknown', 'worker-1/ns/rj-k8s']);
  });
});

describe('the K8sJobMode lookup', () => {
  it("finds the RayJob by status.jobId, only in K8sJobMode (HTTPMode's operator submits itself)", () => {
    const items = [
      { metadata: { name: 'a' }, spec: { submissionMode: 'HTTPMode' }, status: { jobId: 'id-a' } },
      { metadata: { name: 'b' }, spec: {}, status: { jobId: 'id-b' } },
    ];
    expect(k8sJobModeRayJob(items, 'id-a')).toBeUndefined();
    expect(k8sJobModeRayJob(items, 'id-b')?.metadata?.name).toBe('b');
  });

  it('takes the earliest start of a submitter that runs or succeeded; a failed one never submitted', () => {
    const running = {
      status: { containerStatuses: [{ state: { running: { startedAt: '2025-01-01T00:00:05Z' } } }] },
    };
    const succeeded = {
      status: {
        containerStatuses: [{ state: { terminated: { startedAt: '2025-01-01T00:00:02Z', exitCode: 0 } } }],
      },
    };
    const failed = {
      status: {
        containerStatuses: [{ state: { terminated: { startedAt: '2025-01-01T00:00:01Z', exitCode: 1 } } }],
      },
    };
    expect(submittedAtFromSubmitterPods([running, succeeded, failed])).toBe(
      Date.parse('2025-01-01T00:00:02Z'),
    );
    expect(submittedAtFromSubmitterPods([failed])).toBeUndefined();
    expect(submittedAtFromSubmitterPods([{ status: { phase: 'Pending' } }])).toBeUndefined();
  });
});

describe('the proxy server', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  function send(
    port: number,
    path: string,
    options: { method?: string; user?: string; body?: string } = {},
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: options.method ?? 'GET',
          headers: options.user
            ? { 'proxy-authorization': `Basic ${Buffer.from(`${options.user}:`).toString('base64')}` }
            : {},
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  it('answers proxied dashboard requests of a named cluster, /healthz directly, and nothing else', async () => {
    const server = createRayDashboardProxy(new SimulatedRayDashboards());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const { port } = server.address() as AddressInfo;
    const dashboard = 'http://rc-head-svc.ns.svc.cluster.local:8265';

    expect(await send(port, '/healthz')).toEqual({ status: 200, body: 'ok' });
    expect((await send(port, `${dashboard}/api/jobs/`)).status).toBe(407);
    expect((await send(port, 'http://example.com/', { user: 'worker-1' })).status).toBe(502);
    const submitted = await send(port, `${dashboard}/api/jobs/`, {
      method: 'POST',
      user: 'worker-1',
      body: JSON.stringify({ entrypoint: 'x', submission_id: 'p-1' }),
    });
    expect(JSON.parse(submitted.body)).toEqual({ job_id: 'p-1', submission_id: 'p-1' });
    const info = await send(port, `${dashboard}/api/jobs/p-1`, { user: 'worker-1' });
    expect(JSON.parse(info.body)).toMatchObject({ submission_id: 'p-1', status: 'RUNNING' });
  });
});
