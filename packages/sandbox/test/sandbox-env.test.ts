import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox.ts';
import { sandboxEnv } from '../src/sandbox.ts';

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
  kubeconfigPath: (cluster) => `/tmp/it's here/${cluster}.kubeconfig`,
  token: () => 'secret',
};

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

  it('never prints a token', () => {
    expect(sandboxEnv(sandbox)).not.toContain('secret');
  });
});
