import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import type { ComponentIdentity, Identity, SandboxLayout } from './sandbox-layout.ts';

interface TokenUser {
  identity: Identity | ComponentIdentity;
  user: string;
  groups: string[];
}

/**
 * Static-token users of every sandbox apiserver. `viewer` gets the built-in `view`
 * ClusterRole at bootstrap; `nobody` gets nothing (only what every authenticated user has).
 * fleet-admin, team-a and jobrelay-api get deploy/api's roles on the management cluster from
 * installApiAccess() (api-access.ts); no groups, so RBAC bindings alone decide what they may do.
 */
const tokenUsers: TokenUser[] = [
  { identity: 'admin', user: 'admin', groups: ['system:masters'] },
  { identity: 'viewer', user: 'viewer', groups: [] },
  { identity: 'nobody', user: 'nobody', groups: [] },
  { identity: 'fleet-admin', user: 'fleet-admin', groups: [] },
  { identity: 'team-a', user: 'team-a', groups: [] },
  { identity: 'kube-controller-manager', user: 'system:kube-controller-manager', groups: ['system:masters'] },
  { identity: 'kube-scheduler', user: 'system:kube-scheduler', groups: ['system:masters'] },
  { identity: 'kwok', user: 'system:kwok', groups: ['system:masters'] },
];

/** Creates one random bearer token per identity (once) and the apiservers' --token-auth-file. */
export function ensureTokens(layout: SandboxLayout): void {
  mkdirSync(layout.tokensDir, { recursive: true, mode: 0o700 });
  const lines: string[] = [];
  for (const { identity, user, groups } of tokenUsers) {
    const file = layout.tokenFile(identity);
    if (!existsSync(file)) writeFileSync(file, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
    const token = readFileSync(file, 'utf8').trim();
    lines.push(`${token},${user},${user},"${groups.join(',')}"`);
  }
  mkdirSync(dirname(layout.tokenAuthFile), { recursive: true });
  writeFileSync(layout.tokenAuthFile, `${lines.join('\n')}\n`, { mode: 0o600 });
}

export function readToken(layout: SandboxLayout, identity: Identity | ComponentIdentity): string {
  return readFileSync(layout.tokenFile(identity), 'utf8').trim();
}

export interface KubeconfigOptions {
  clusterName: string;
  server: string;
  caPem: string;
  user: string;
  token: string;
}

/** A self-contained kubeconfig (CA and token inline): it works from anywhere and references no files. */
export function kubeconfigYaml(options: KubeconfigOptions): string {
  const { clusterName, server, caPem, user, token } = options;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: clusterName,
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: clusterName, context: { cluster: clusterName, user } }],
    'current-context': clusterName,
  });
}

export function writeKubeconfig(path: string, options: KubeconfigOptions): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, kubeconfigYaml(options), { mode: 0o600 });
}
