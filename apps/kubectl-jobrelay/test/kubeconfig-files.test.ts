import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkerKubeconfig } from '@jobrelay/clusters';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  extractContextKubeconfig,
  kubeconfigFiles,
  loadKubeconfig,
  resolveContext,
} from '../src/kubeconfig-files.ts';
import { OperationError, UnreachableError } from '../src/plugin-errors.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubectl-jobrelay-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: string | object): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('kubeconfigFiles', () => {
  it('prefers --kubeconfig, then every file of KUBECONFIG, then ~/.kube/config', () => {
    expect(kubeconfigFiles('/a', { KUBECONFIG: '/b:/c', HOME: '/h' })).toEqual({
      files: ['/a'],
      explicit: true,
    });
    expect(kubeconfigFiles(undefined, { KUBECONFIG: '/b::/c', HOME: '/h' })).toEqual({
      files: ['/b', '/c'],
      explicit: false,
    });
    expect(kubeconfigFiles(undefined, { HOME: '/h' })).toEqual({
      files: ['/h/.kube/config'],
      explicit: false,
    });
  });
});

describe('loadKubeconfig', () => {
  it('merges as kubectl does: the first file to name an entry or a current-context wins', () => {
    const first = write('first', {
      clusters: [{ name: 'shared', cluster: { server: 'https://first' } }],
      users: [{ name: 'u', user: { token: 'first' } }],
      contexts: [{ name: 'c', context: { cluster: 'shared', user: 'u' } }],
    });
    const second = write('second', {
      clusters: [
        { name: 'shared', cluster: { server: 'https://second' } },
        { name: 'only-second', cluster: { server: 'https://2' } },
      ],
      'current-context': 'c',
    });
    const merged = loadKubeconfig([first, join(dir, 'missing'), second], false);
    expect(merged.files).toEqual([first, second]);
    expect(merged.currentContext).toBe('c');
    expect(merged.clusters.map((c) => [c.name, c.fields.server])).toEqual([
      ['shared', 'https://first'],
      ['only-second', 'https://2'],
    ]);
  });

  it('refuses a missing --kubeconfig file but skips missing KUBECONFIG entries', () => {
    expect(() => loadKubeconfig([join(dir, 'nope')], true)).toThrow(UnreachableError);
    expect(loadKubeconfig([join(dir, 'nope')], false).files).toEqual([]);
  });

  it('resolves relative file paths against the directory of the file that holds them', () => {
    mkdirSync(join(dir, 'sub'));
    const file = write('sub/config', {
      clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority': 'ca.crt' } }],
      users: [
        {
          name: 'u',
          user: {
            'client-certificate': '../tls/u.crt',
            tokenFile: '/abs/token',
            exec: { command: './bin/login' },
          },
        },
        { name: 'v', user: { exec: { command: 'gke-gcloud-auth-plugin' } } },
      ],
      contexts: [],
    });
    const merged = loadKubeconfig([file], true);
    expect(merged.clusters[0]?.fields['certificate-authority']).toBe(join(dir, 'sub', 'ca.crt'));
    expect(merged.users[0]?.fields['client-certificate']).toBe(join(dir, 'tls', 'u.crt'));
    expect(merged.users[0]?.fields.tokenFile).toBe('/abs/token');
    expect((merged.users[0]!.fields.exec as { command: string }).command).toBe(
      join(dir, 'sub', 'bin', 'login'),
    );
    // A bare command is looked up on PATH, as kubectl does: left alone.
    expect((merged.users[1]!.fields.exec as { command: string }).command).toBe('gke-gcloud-auth-plugin');
  });

  it('resolves the current context, or the one named, and says what is missing', () => {
    const file = write('config', {
      clusters: [{ name: 'c', cluster: { server: 'https://x' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [
        { name: 'ok', context: { cluster: 'c', user: 'u', namespace: 'team-a' } },
        { name: 'no-user', context: { cluster: 'c', user: 'ghost' } },
      ],
      'current-context': 'ok',
    });
    const merged = loadKubeconfig([file], true);
    expect(resolveContext(merged, undefined).namespace).toBe('team-a');
    expect(() => resolveContext(merged, 'nope')).toThrow(`context "nope" not found in ${file}`);
    expect(() => resolveContext(merged, 'no-user')).toThrow(
      `context "no-user" names user "ghost", which is not in ${file}`,
    );
    expect(() => resolveContext(loadKubeconfig([], false), undefined)).toThrow(
      'no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config',
    );
  });
});

describe('extractContextKubeconfig', () => {
  it('keeps only the context, its cluster and its user, with every file turned into inline data', () => {
    write('ca.crt', 'CA PEM');
    write('client.crt', 'CERT PEM');
    write('client.key', 'KEY PEM');
    write('token', 'sa-token-value\n');
    const file = write('config', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'worker',
          cluster: {
            server: 'https://w:6443',
            'certificate-authority': 'ca.crt',
            extensions: [{ name: 'x' }],
          },
        },
        { name: 'other', cluster: { server: 'https://other' } },
      ],
      users: [
        {
          name: 'w-admin',
          user: { 'client-certificate': 'client.crt', 'client-key': 'client.key', tokenFile: 'token' },
        },
        { name: 'other', user: { token: 'must-not-leak' } },
      ],
      contexts: [
        { name: 'w', context: { cluster: 'worker', user: 'w-admin', namespace: 'ns' } },
        { name: 'o', context: { cluster: 'other', user: 'other' } },
      ],
      'current-context': 'o',
    });
    const minimal = extractContextKubeconfig(loadKubeconfig([file], true), 'w');
    expect(minimal).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'worker',
          cluster: { server: 'https://w:6443', 'certificate-authority-data': b64('CA PEM') },
        },
      ],
      users: [
        {
          name: 'w-admin',
          user: {
            'client-certificate-data': b64('CERT PEM'),
            'client-key-data': b64('KEY PEM'),
            token: 'sa-token-value',
          },
        },
      ],
      contexts: [{ name: 'w', context: { cluster: 'worker', user: 'w-admin', namespace: 'ns' } }],
      'current-context': 'w',
    });
    // What is POSTed is YAML text of exactly that; nothing of the other context travels.
    const text = stringify(minimal);
    expect(parse(text)).toEqual(minimal);
    expect(text).not.toContain('must-not-leak');
  });

  it('keeps inline data and an inline token over the file fields', () => {
    write('token', 'from-file');
    const file = write('config', {
      clusters: [
        { name: 'c', cluster: { server: 'https://x', 'certificate-authority-data': b64('inline CA') } },
      ],
      users: [
        {
          name: 'u',
          user: { token: 'inline', tokenFile: 'token', exec: { command: 'x', apiVersion: 'v1' } },
        },
      ],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    });
    const minimal = extractContextKubeconfig(loadKubeconfig([file], true), 'c') as {
      users: Array<{ user: Record<string, unknown> }>;
    };
    // exec is passed on as it is: the API decides whether it accepts credential plugins.
    expect(minimal.users[0]?.user).toEqual({ token: 'inline', exec: { command: 'x', apiVersion: 'v1' } });
  });

  it('names the field and the file it cannot read', () => {
    const file = write('config', {
      clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority': 'absent.crt' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    });
    const config = loadKubeconfig([file], true);
    expect(() => extractContextKubeconfig(config, 'c')).toThrow(
      `cannot read certificate-authority ${join(dir, 'absent.crt')}: ENOENT`,
    );
    expect(() => extractContextKubeconfig(config, 'missing')).toThrow(OperationError);
  });
});

describe('what register sends, against the API’s vetting', () => {
  it('passes it for what kubectl and minikube write: relative files, extensions, preferences, disable-compression', () => {
    mkdirSync(join(dir, 'profiles', 'minikube'), { recursive: true });
    write('ca.crt', 'CA PEM');
    write(join('profiles', 'minikube', 'client.crt'), 'CERT PEM');
    write(join('profiles', 'minikube', 'client.key'), 'KEY PEM');
    const minikube = {
      name: 'cluster_info',
      extension: { provider: 'minikube.sigs.k8s.io', version: 'v1.36.0' },
    };
    const file = write('config', {
      apiVersion: 'v1',
      kind: 'Config',
      preferences: {},
      clusters: [
        {
          name: 'minikube',
          cluster: {
            server: 'https://192.168.49.2:8443',
            'certificate-authority': 'ca.crt',
            'disable-compression': true,
            extensions: [minikube],
          },
        },
      ],
      users: [
        {
          name: 'minikube',
          user: {
            'client-certificate': 'profiles/minikube/client.crt',
            'client-key': 'profiles/minikube/client.key',
          },
        },
      ],
      contexts: [
        {
          name: 'minikube',
          context: { cluster: 'minikube', user: 'minikube', namespace: 'default', extensions: [minikube] },
        },
      ],
      'current-context': 'minikube',
    });
    const sent = stringify(extractContextKubeconfig(loadKubeconfig([file], true), 'minikube'));
    const vetted = loadWorkerKubeconfig(sent);
    expect(vetted.ok, vetted.ok ? '' : vetted.message).toBe(true);
  });

  it('leaves the refusal of what cannot be inlined to the API, which names the field', () => {
    const file = write('config', {
      clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority-data': b64('CA') } }],
      users: [{ name: 'u', user: { token: 't', as: 'system:admin' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    });
    const sent = stringify(extractContextKubeconfig(loadKubeconfig([file], true), 'c'));
    expect(loadWorkerKubeconfig(sent)).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe' });
    expect((loadWorkerKubeconfig(sent) as { message: string }).message).toContain(
      'users[0].user.as is not allowed: impersonation is not supported',
    );
  });
});
