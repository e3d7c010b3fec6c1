import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { makeClusterApiClients } from '../src/cluster-api-clients.ts';
import { TimeoutError } from '../src/with-timeout.ts';

// A real HTTPS server on loopback standing in for an apiserver: it answers /version and
// counts TLS connections, which is what connection reuse is about.
let dir: string;
let server: Server;
let connections = 0;
let requests = 0;
/** The credential headers of every request the server answered, in order. */
let credentials: string[] = [];
let kubeConfig: KubeConfig;
let serverUrl: string;
let caData: string;

/** key.pem and cert.pem in `dir`: a self-signed certificate for `subject`, valid for a day. */
function selfSignedCertificate(dir: string, subject: string, extra: string[] = []): void {
  const request = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem'];
  execFileSync('openssl', [...request, '-days', '1', '-subj', subject, ...extra], {
    cwd: dir,
    stdio: 'pipe',
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jobrelay-pool-'));
  selfSignedCertificate(dir, '/CN=127.0.0.1', ['-addext', 'subjectAltName=IP:127.0.0.1']);
  const cert = readFileSync(join(dir, 'cert.pem'));
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (request, res) => {
    requests += 1;
    credentials.push(
      `${request.headers.authorization ?? '-'} as ${request.headers['impersonate-user'] ?? '-'}`,
    );
    // Stands in for a frozen apiserver (SIGSTOP): the connection is accepted, no answer comes.
    if (request.url?.startsWith('/api/v1/namespaces/frozen')) return;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ major: '1', minor: '35', gitVersion: 'v1.35.4' }));
  });
  server.on('secureConnection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  serverUrl = `https://127.0.0.1:${port}`;
  caData = cert.toString('base64');
  kubeConfig = kubeConfigFor({ name: 'u', token: 'test-token' });
});

/** A kubeconfig for the test server with `user` as its current user. */
function kubeConfigFor(user: Parameters<KubeConfig['loadFromOptions']>[0]['users'][number]): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: serverUrl, caData }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: user.name }],
    currentContext: 'x',
  });
  return config;
}

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('makeClusterApiClients', () => {
  it('sends every request over one reused connection pool, not a connection per request', async () => {
    const clients = makeClusterApiClients(kubeConfig, { qps: 1000, burst: 1000 });
    connections = 0;
    requests = 0;
    for (let i = 0; i < 10; i++) await clients.version.getCode();
    for (let i = 0; i < 5; i++) await clients.version.getCode();
    expect(requests).toBe(15);
    expect(clients.requestCount).toBe(15);
    // undici may open a second socket while the first is being returned to the pool after
    // the very first response; after that every request reuses them.
    expect(connections).toBeLessThanOrEqual(2);
  });

  it('client-node on its own opens a new connection per request (why the pool exists)', async () => {
    const { VersionApi } = await import('@kubernetes/client-node');
    const plain = kubeConfig.makeApiClient(VersionApi);
    connections = 0;
    for (let i = 0; i < 3; i++) await plain.getCode();
    expect(connections).toBe(3);
  });

  it('abandons a request that gets no answer, instead of waiting on it for minutes', async () => {
    const clients = makeClusterApiClients(kubeConfig, { qps: 1000, burst: 1000, requestTimeoutMs: 300 });
    const outcome = await clients.core.readNamespace({ name: 'frozen' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    // Our TimeoutError (what connection checks classify as "unreachable"), naming the request.
    expect(outcome).toBeInstanceOf(TimeoutError);
    expect((outcome as Error).message).toBe('GET /api/v1/namespaces/frozen got no answer within 0.3s');
    // The pool still serves the next request.
    expect((await clients.version.getCode()).gitVersion).toBe('v1.35.4');
  });

  it('speaks HTTP/1.1 to a server that offers HTTP/2 too, verifying it with the kubeconfig CA', async () => {
    // An apiserver offers h2 in ALPN; the request pool asks for HTTP/1.1 (cheaper per request).
    const versions: string[] = [];
    const h2 = createSecureServer(
      {
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
        allowHTTP1: true,
      },
      (request, res) => {
        versions.push(request.httpVersion);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ major: '1', minor: '35', gitVersion: 'v1.35.4' }));
      },
    );
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const { port } = h2.address() as AddressInfo;
    const config = (caData: string) => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData }],
        users: [{ name: 'u', token: 'test-token' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      return kc;
    };
    try {
      const clients = makeClusterApiClients(config(readFileSync(join(dir, 'cert.pem')).toString('base64')), {
        qps: 1000,
        burst: 1000,
      });
      for (let i = 0; i < 3; i++) expect((await clients.version.getCode()).gitVersion).toBe('v1.35.4');
      expect(versions).toEqual(['1.1', '1.1', '1.1']);
      // Another CA than the server's: refused, as client-node's own pool would.
      const otherCa = mkdtempSync(join(tmpdir(), 'jobrelay-ca-'));
      // Removed even when an expectation below fails.
      onTestFinished(() => rmSync(otherCa, { recursive: true, force: true }));
      selfSignedCertificate(otherCa, '/CN=other');
      const untrusted = makeClusterApiClients(
        config(readFileSync(join(otherCa, 'cert.pem')).toString('base64')),
        {
          qps: 1000,
          burst: 1000,
        },
      );
      await expect(untrusted.version.getCode()).rejects.toThrow();
      expect(versions).toHaveLength(3);
    } finally {
      await new Promise((resolve) => h2.close(resolve));
    }
  });

  it('sends the same credentials as client-node for every kind of kubeconfig user', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'token-from-a-file');
    const users = [
      { name: 'token', token: 'test-token' },
      { name: 'basic', username: 'alice', password: 's3cret' },
      { name: 'impersonating', token: 'test-token', impersonateUser: 'bob' },
      { name: 'file', authProvider: { name: 'tokenFile', config: { tokenFile } } },
      { name: 'certificate-only' },
    ];
    const { VersionApi } = await import('@kubernetes/client-node');
    for (const user of users) {
      credentials = [];
      await kubeConfigFor(user).makeApiClient(VersionApi).getCode();
      const config = kubeConfigFor(user);
      const clients = makeClusterApiClients(config, { qps: 1000, burst: 1000 });
      for (let i = 0; i < 2; i++) await clients.version.getCode();
      const [clientNode, ...ours] = credentials;
      expect(ours, user.name).toEqual([clientNode, clientNode]);
    }
    expect(credentials).toEqual(['- as -', '- as -', '- as -']);
  });

  it('builds no connection pool per request (client-node builds one in its authentication)', async () => {
    const config = kubeConfigFor({ name: 'u', token: 'test-token' });
    const createDispatcher = vi.spyOn(
      config as unknown as { createDispatcher: () => unknown },
      'createDispatcher',
    );
    const clients = makeClusterApiClients(config, { qps: 1000, burst: 1000 });
    for (let i = 0; i < 5; i++) await clients.version.getCode();
    expect(createDispatcher).not.toHaveBeenCalled();
    // client-node's own path calls it on every request, so the spy does watch the right thing.
    const { VersionApi } = await import('@kubernetes/client-node');
    await config.makeApiClient(VersionApi).getCode();
    expect(createDispatcher).toHaveBeenCalledTimes(1);
  });

  it("arms no AbortSignal per request: undici's own timers bound the answer", async () => {
    const timeout = vi.spyOn(AbortSignal, 'timeout');
    try {
      const clients = makeClusterApiClients(kubeConfigFor({ name: 'u', token: 'test-token' }), {
        qps: 1000,
        burst: 1000,
      });
      for (let i = 0; i < 3; i++) await clients.version.getCode();
      expect(timeout).not.toHaveBeenCalled();
    } finally {
      timeout.mockRestore();
    }
  });
});
