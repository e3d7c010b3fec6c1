import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox.ts';
import { openSandbox, recordSandboxApi, sandboxEnv, sandboxProcessIds } from '../src/sandbox.ts';
import { type Identity, SandboxLayout, userIdentities } from '../src/sandbox-layout.ts';
import { planState, writeState } from '../src/sandbox-state.ts';

const sandbox: Sandbox = {
  dir: "/tmp/it's here",
  redisUrl: 'redis://127.0.0.1:7000',
  clusters: [
    { name: 'management', role: 'management', server: 'https://127.0.0.1:1' },
    { name: 'worker-1', role: 'worker', server: 'https://127.0.0.1:2' },
  ],
  management: { name: 'management', role: 'management', server: 'https://127.0.0.1:1' },
  workers: [{ name: 'worker-1', role: 'worker', server: 'https://127.0.0.1:2' }],
  caPem: '',
  binariesDir: '/cache/bin',
  kubeconfigPath: (cluster, identity = 'admin') =>
    identity === 'admin'
      ? `/tmp/it's here/${cluster}.kubeconfig`
      : `/tmp/it's here/${cluster}-${identity}.kubeconfig`,
  serviceAccountKubeconfigPath: (serviceAccount) =>
    `/tmp/it's here/management-sa-${serviceAccount}.kubeconfig`,
  token: (identity: Identity) => `secret-token-of-${identity}`,
};

/** Evaluates the exports in bash and prints the named variables, `<unset>` for a missing one. */
function evaluated(env: string, variables: string[]): string[] {
  const script = `${env}\nprintf '%s\\n' ${variables.map((v) => `"\${${v}-<unset>}"`).join(' ')}`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trimEnd().split('\n');
}

describe('sandboxEnv', () => {
  it('prints exports a shell evaluates to the right values, quotes included', () => {
    const script = `${sandboxEnv(sandbox)}\nprintf '%s\\n' "$KUBECONFIG" "$JOBRELAY_WORKER_1_KUBECONFIG" "$REDIS_URL" "$JOBRELAY_SANDBOX_DIR" "\${PATH%%:*}"`;
    const out = execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trim().split('\n');
    expect(out).toEqual([
      "/tmp/it's here/management.kubeconfig",
      "/tmp/it's here/worker-1.kubeconfig",
      'redis://127.0.0.1:7000',
      "/tmp/it's here",
      '/cache/bin',
    ]);
  });

  it("points JOBRELAY_FLEET_ADMIN_KUBECONFIG at the management cluster's fleet-admin kubeconfig", () => {
    expect(evaluated(sandboxEnv(sandbox), ['JOBRELAY_FLEET_ADMIN_KUBECONFIG'])).toEqual([
      "/tmp/it's here/management-fleet-admin.kubeconfig",
    ]);
  });

  it('exports JOBRELAY_API_URL only when an API was recorded', () => {
    expect(evaluated(sandboxEnv(sandbox), ['JOBRELAY_API_URL'])).toEqual(['<unset>']);
    const withApi = { ...sandbox, apiUrl: 'http://127.0.0.1:8080' };
    expect(evaluated(sandboxEnv(withApi), ['JOBRELAY_API_URL'])).toEqual(['http://127.0.0.1:8080']);
  });

  it('never prints a token, of any identity', () => {
    const env = sandboxEnv({ ...sandbox, apiUrl: 'http://127.0.0.1:8080' });
    for (const identity of userIdentities) expect(env).not.toContain(sandbox.token(identity));
    expect(env).not.toMatch(/TOKEN/);
  });
});

describe('recordSandboxApi', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("stores the API's URL in the sandbox state, where openSandbox and env find it", async () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-env-'));
    const layout = new SandboxLayout(dir);
    mkdirSync(layout.pkiDir);
    writeFileSync(join(layout.pkiDir, 'ca.crt'), 'not read by this test\n');
    writeState(
      layout.stateFile,
      await planState(undefined, {
        workers: 1,
        binariesDir: '/b',
        redisServer: '/r',
        kuberay: { operator: '/k/ray-operator', crdDir: '/k/crds', version: 'v1.5.0' },
        jobset: { manager: '/j/jobset-manager', manifestDir: '/j/manifests', version: 'v0.9.1' },
      }),
    );
    expect(openSandbox(dir).apiUrl).toBeUndefined();

    recordSandboxApi(dir, 'http://127.0.0.1:18080');

    const opened = openSandbox(dir);
    expect(opened.apiUrl).toBe('http://127.0.0.1:18080');
    expect(evaluated(sandboxEnv(opened), ['JOBRELAY_API_URL', 'JOBRELAY_FLEET_ADMIN_KUBECONFIG'])).toEqual([
      'http://127.0.0.1:18080',
      join(layout.dir, 'management-fleet-admin.kubeconfig'),
    ]);
  });

  it('lists the running processes with their pids, apps and stale records left out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-env-'));
    const layout = new SandboxLayout(dir);
    const state = await planState(undefined, {
      workers: 1,
      binariesDir: '/b',
      redisServer: '/r',
      kuberay: { operator: '/k/ray-operator', crdDir: '/k/crds', version: 'v1.5.0' },
      jobset: { manager: '/j/jobset-manager', manifestDir: '/j/manifests', version: 'v0.9.1' },
    });
    state.processes = {
      // This test's own process stands in for a running etcd.
      etcd: { pid: process.pid, binary: process.execPath },
      // A recorded pid now held by another program: pids get reused.
      redis: { pid: process.pid, binary: '/bin/sh' },
      'app/controller': { pid: process.pid, binary: process.execPath },
    };
    writeState(layout.stateFile, state);
    expect(sandboxProcessIds(dir)).toEqual([{ name: 'etcd', pid: process.pid }]);
    expect(sandboxProcessIds(join(dir, 'none'))).toEqual([]);
  });

  it('refuses a directory without a sandbox', () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-env-'));
    expect(() => recordSandboxApi(dir!, 'http://127.0.0.1:1')).toThrow(/no sandbox at/);
  });
});
