import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureTokens, readToken, writeKubeconfig } from '../src/credentials.ts';
import { SandboxLayout, userIdentities } from '../src/sandbox-layout.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'jobrelay-credentials-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('ensureTokens', () => {
  it('makes a distinct token per identity, stable across calls', () => {
    const layout = new SandboxLayout(dir);
    ensureTokens(layout);
    const first = userIdentities.map((id) => readToken(layout, id));
    expect(userIdentities).toEqual(['admin', 'viewer', 'nobody', 'fleet-admin', 'team-a']);
    expect(new Set(first).size).toBe(userIdentities.length);
    ensureTokens(layout);
    expect(userIdentities.map((id) => readToken(layout, id))).toEqual(first);
  });

  it('writes a token file that grants cluster-admin to admin only', () => {
    const layout = new SandboxLayout(dir);
    ensureTokens(layout);
    const lines = readFileSync(layout.tokenAuthFile, 'utf8').trim().split('\n');
    const byUser = new Map(lines.map((line) => [line.split(',')[1], line]));
    expect(byUser.get('admin')).toContain('"system:masters"');
    expect(byUser.get('viewer')).toMatch(/,""$/);
    expect(byUser.get('nobody')).toMatch(/,""$/);
    // The admin API's identities get their rights from RBAC bindings only, never from a group.
    for (const user of ['fleet-admin', 'team-a']) {
      expect(byUser.get(user)).toBe(`${readToken(layout, user as 'fleet-admin')},${user},${user},""`);
    }
    expect(statSync(layout.tokenAuthFile).mode & 0o077).toBe(0);
  });
});

describe('writeKubeconfig', () => {
  it('writes a self-contained kubeconfig that client-node loads', () => {
    const path = join(dir, 'worker-1.kubeconfig');
    const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeKubeconfig(path, {
      clusterName: 'worker-1',
      server: 'https://127.0.0.1:6443',
      caPem,
      user: 'admin',
      token: 't0k',
    });
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(kc.getCurrentCluster()?.caData).toBe(Buffer.from(caPem).toString('base64'));
    expect(kc.getCurrentUser()?.token).toBe('t0k');
    const raw = parse(readFileSync(path, 'utf8'));
    // No file references: the kubeconfig can be copied into a Secret as it is.
    expect(JSON.stringify(raw)).not.toMatch(
      /certificate-authority"|tokenFile|client-certificate"|client-key"/,
    );
    expect(statSync(path).mode & 0o077).toBe(0);
  });
});
