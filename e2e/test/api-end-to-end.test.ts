// The admin API as its own process on a real port, and the kubectl plugin from a shell, doing an
// admin's daily work against the real fleet: register a worker from its kubeconfig, see it
// become Active, have a Job placed on it, stream that Job's pod logs, drain the worker so the
// Job moves, deregister it; all while the live change stream (SSE) reports what happens.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registerSandboxWorkers, repositoryRoot } from '@jobrelay/sandbox';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type ApiProcess, startApiProcess } from '../src/api-process.ts';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { collectServerSentEvents } from '../src/server-sent-events.ts';
import { workerClusterAdmin } from '../src/worker-cluster-admin.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const workerNames = sandbox.workers.map((w) => w.name);
const target = workerNames[workerNames.length - 1]!;
const others = workerNames.filter((n) => n !== target);
let controller: ControllerProcess;
let api: ApiProcess;
let url: string;
let namespace: string;
let registeredKubeconfig: string;

async function call(method: string, path: string, body?: unknown, identity = 'fleet-admin' as const) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${sandbox.token(identity)}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text, json: () => JSON.parse(text) as Record<string, unknown> };
}

async function jobOf(name: string) {
  return (await call('GET', `/api/v1/workloads/job/${namespace}/${name}`)).json() as {
    cluster: string | null;
    phase: string;
    attempt: number | null;
  };
}

const expectedLog = 'simulated by KWOK';

/** `kubectl jobrelay ...` from bash, as a user types it, with the fleet-admin's kubeconfig. */
async function plugin(args: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', `kubectl jobrelay ${args}`], {
      env: {
        ...process.env,
        PATH: `${join(repositoryRoot, 'node_modules/.bin')}:${sandbox.binariesDir}:${process.env.PATH}`,
        KUBECONFIG: sandbox.kubeconfigPath(sandbox.management.name, 'fleet-admin'),
        JOBRELAY_API_URL: url,
      },
      timeout: 180_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

beforeAll(async () => {
  controller = startController(sandbox);
  api = startApiProcess(sandbox);
  url = await api.url();
  await eventually('the API ready', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
  namespace = await createTestNamespace(fleet.management, 'api-e2e');
  const secret = await fleet.management.core.readNamespacedSecret({
    name: `${target}-kubeconfig`,
    namespace: 'jobrelay-system',
  });
  registeredKubeconfig = Buffer.from(secret.data!.kubeconfig!, 'base64').toString('utf8');
});

afterAll(async () => {
  // The fleet goes back to how other test files expect it: every worker registered, none cordoned.
  await registerSandboxWorkers(sandbox, [target]).catch(() => {});
  for (const name of workerNames)
    await workerClusterAdmin(fleet)
      .reset(name, [])
      .catch(() => {});
  await api?.kill();
  await controller?.kill();
});

describe('the API over a real port', () => {
  it('registers a worker from its kubeconfig, places a Job there, streams its logs, drains it so the Job moves, deregisters it', async () => {
    // Deregister the worker registered by the sandbox, then register it again through the API.
    const removed = await call('DELETE', `/api/v1/clusters/${target}?force=true`);
    expect(removed.status).toBe(200);
    await eventually('the registration gone', async () =>
      (await call('GET', `/api/v1/clusters/${target}`)).status === 404 ? true : undefined,
    );

    // The live change stream, opened before anything happens.
    const abort = new AbortController();
    const stream = await fetch(`${url}/api/v1/watch?namespace=${namespace}`, {
      headers: { authorization: `Bearer ${sandbox.token('viewer')}` },
      signal: abort.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, done: reading } = collectServerSentEvents<{
      type: string;
      object: Record<string, unknown>;
    }>(stream);

    const dryRun = await call('POST', '/api/v1/clusters?dryRun=true', {
      name: target,
      kubeconfig: registeredKubeconfig,
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.json()).toMatchObject({
      dryRun: true,
      probe: { kubernetesVersion: expect.stringMatching(/^v1\.35\./) },
    });
    expect((await call('GET', `/api/v1/clusters/${target}`)).status).toBe(404);

    const registered = await call('POST', '/api/v1/clusters', {
      name: target,
      kubeconfig: registeredKubeconfig,
      labels: { 'jobrelay.dev/sandbox': 'true' },
    });
    expect(registered.status).toBe(201);
    await eventually(
      `${target} Active`,
      async () =>
        (await call('GET', `/api/v1/clusters/${target}`)).json().active === true ? true : undefined,
      { timeoutMs: 60_000 },
    );
    await eventually('a cluster event for the new registration', async () =>
      events.some((e) => e.event === 'cluster' && e.data.object.name === target) ? true : undefined,
    );

    // Only the new worker takes Jobs for now.
    for (const name of others)
      expect((await call('POST', `/api/v1/clusters/${name}/cordon`)).status).toBe(200);
    const name = uniqueName('moves');
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 600 } }),
    });
    await eventually(`${name} placed on ${target}`, async () =>
      (await jobOf(name)).cluster === target ? true : undefined,
    );

    // Logs through the API, followed: the stream stays open while the pod runs.
    const logs = await eventually('the pod log streaming', async () => {
      const controller = new AbortController();
      const response = await fetch(`${url}/api/v1/workloads/job/${namespace}/${name}/logs?follow=true`, {
        headers: { authorization: `Bearer ${sandbox.token('viewer')}` },
        signal: controller.signal,
      });
      if (response.status !== 200) {
        controller.abort();
        return undefined;
      }
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('\n') || !text.includes(expectedLog)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      controller.abort();
      return text;
    });
    expect(logs).toContain(expectedLog);

    // Drain: the Job leaves for another worker, the drain view counts down to 0.
    for (const other of others)
      expect((await call('POST', `/api/v1/clusters/${other}/uncordon`)).status).toBe(200);
    const drain = await call('POST', `/api/v1/clusters/${target}/drain`);
    expect(drain.status).toBe(200);
    expect(drain.json()).toMatchObject({ draining: true });
    const moved = await eventually(
      `${name} placed elsewhere`,
      async () => {
        const job = await jobOf(name);
        return job.cluster && job.cluster !== target ? job : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(others).toContain(moved.cluster);
    expect(moved.attempt).toBe(2);
    await eventually('the drain done', async () =>
      (await call('GET', `/api/v1/clusters/${target}/drain`)).json().remaining === 0 ? true : undefined,
    );
    expect((await call('DELETE', `/api/v1/clusters/${target}`)).json()).toEqual({
      deleted: target,
      secretDeleted: true,
    });

    // The stream saw the Job placed on the new worker and again elsewhere.
    await eventually('workload events for both placements', async () => {
      const clusters = new Set(
        events
          .filter(
            (e) => e.event === 'workload' && e.data.object.kind === 'job' && e.data.object.name === name,
          )
          .map((e) => e.data.object.cluster),
      );
      return clusters.has(target) && clusters.has(moved.cluster) ? true : undefined;
    });
    abort.abort();
    await reading;
    await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });

    // The API logged every request, and no credential: not the callers' tokens, not the
    // registered kubeconfig or its token.
    const log = api.logs();
    expect(log).toContain('"msg":"request completed"');
    expect(log).toContain('"msg":"registered a worker cluster"');
    const registeredToken = /token: (\S+)/.exec(registeredKubeconfig)![1]!;
    for (const secret of [sandbox.token('fleet-admin'), sandbox.token('viewer'), registeredToken])
      expect(log).not.toContain(secret);
    expect(log).not.toContain('certificate-authority-data');
  });

  it('does the same with the kubectl plugin from a shell', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobrelay-plugin-'));
    // The plugin reads the kubeconfig while `register` runs, which this test waits for.
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfigFile = join(dir, `${target}.kubeconfig`);
    writeFileSync(kubeconfigFile, registeredKubeconfig, { mode: 0o600 });
    const context = /current-context: (\S+)/.exec(registeredKubeconfig)![1]!;

    if ((await call('GET', `/api/v1/clusters/${target}`)).status === 200) {
      expect((await plugin(`deregister ${target} --force`)).code).toBe(0);
    }
    const registered = await plugin(
      `register ${target} --from-context ${context} --kubeconfig-file ${kubeconfigFile} --label jobrelay.dev/sandbox=true`,
    );
    expect(registered.code, registered.stderr).toBe(0);
    await eventually(`${target} Active (plugin)`, async () => {
      const shown = await plugin(`clusters ${target} -o json`);
      return shown.code === 0 && (JSON.parse(shown.stdout) as { active: boolean }).active ? true : undefined;
    });
    // Each plugin run is a process of its own that takes seconds to start on a busy machine:
    // commands that do not depend on each other run at once, each checked as before.
    const [table, ...cordoned] = await Promise.all([
      plugin('clusters'),
      ...others.map((other) => plugin(`cordon ${other}`)),
    ]);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+ACTIVE/);
    for (const name of workerNames) expect(table.stdout).toContain(name);
    for (const cordon of cordoned) expect(cordon.code).toBe(0);
    const name = uniqueName('plugin');
    await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name, managedBy: dispatcherManagedBy, pod: { runSeconds: 600 } }),
    });
    await eventually(`${name} placed on ${target}`, async () =>
      (await jobOf(name)).cluster === target ? true : undefined,
    );
    const [explained, listed, logs] = await Promise.all([
      // Named alone, the workload is found whatever its kind.
      plugin(`explain ${name} -n ${namespace}`),
      plugin(`jobs -n ${namespace}`),
      eventually('logs through the plugin', async () => {
        const result = await plugin(`logs ${name} -n ${namespace} --tail 1`);
        return result.code === 0 && result.stdout.length > 0 ? result : undefined;
      }),
    ]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toContain(`Workload:    job ${namespace}/${name}`);
    expect(explained.stdout).toContain(target);
    expect(listed.stdout.split('\n')[0]).toMatch(/^KIND\s+NAME\s+PHASE/);
    expect(listed.stdout).toMatch(new RegExp(`^job\\s+${name}\\s+(running|placed)\\s+${target}`, 'm'));
    expect(logs.stdout.trim().split('\n')).toHaveLength(1);

    for (const uncordon of await Promise.all(others.map((other) => plugin(`uncordon ${other}`))))
      expect(uncordon.code).toBe(0);
    // Scripts can rely on exit codes: a refusal is 1, a usage error 2. Neither changes anything,
    // so they run while the drain waits.
    const [drained, refused, usage] = await Promise.all([
      plugin(`drain ${target} --wait --timeout 3m`),
      plugin('cordon no-such-cluster'),
      plugin('cordon'),
    ]);
    expect(drained.code, drained.stderr).toBe(0);
    const moved = await jobOf(name);
    expect(others).toContain(moved.cluster);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: /);
    expect(usage.code).toBe(2);

    expect((await plugin(`uncordon ${target}`)).code).toBe(0);
    await fleet.management.batch.deleteNamespacedJob({ name, namespace, propagationPolicy: 'Background' });
  });

  it('serves HTTPS when given a certificate and key, and refuses plain HTTP off loopback', async () => {
    const pki = join(sandbox.dir, 'pki');
    const secure = startApiProcess(sandbox, [
      `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
      `--tls-key-file=${join(pki, 'apiserver.key')}`,
    ]);
    try {
      const secureUrl = await secure.url();
      expect(secureUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const get = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const request = https.get(`${secureUrl}${path}`, {
            ca: sandbox.caPem,
            headers: { authorization: `Bearer ${sandbox.token('viewer')}` },
          });
          request.on('error', reject);
          request.on('response', (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => {
              body += chunk.toString();
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          });
        });
      await eventually('the HTTPS API ready', async () =>
        (await get('/readyz')).status === 200 ? true : undefined,
      );
      const clusters = await get('/api/v1/clusters');
      expect(clusters.status).toBe(200);
      expect((JSON.parse(clusters.body) as { items: unknown[] }).items.length).toBeGreaterThan(0);
      // Plain HTTP to the TLS port gets no API answer.
      const plain = await fetch(`${secureUrl.replace('https:', 'http:')}/healthz`).then(
        (r) => r.status,
        () => 'refused',
      );
      expect(plain).not.toBe(200);
      // The plugin reaches it with the private CA.
      const listed = await plugin(
        `clusters --api-url ${secureUrl} --certificate-authority ${join(pki, 'ca.crt')}`,
      );
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(workerNames[0]);
    } finally {
      await secure.kill();
    }

    const refused = startApiProcess(sandbox, ['--address=0.0.0.0:0']);
    const code = await new Promise<number | null>((resolve) => refused.process.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    await eventually('the refusal in its output', async () =>
      refused.logs().includes('is not loopback') ? true : undefined,
    );
  });
});
