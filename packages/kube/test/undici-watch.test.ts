import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LineSplitter, UndiciWatch } from '../src/undici-watch.ts';

describe('LineSplitter', () => {
  it('returns whole lines only, holding a partial one until its end arrives', () => {
    const lines = new LineSplitter();
    expect(lines.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(lines.push(':2}')).toEqual([]);
    expect(lines.push('\n\n{"c":3}\r\n{"d"')).toEqual(['{"b":2}', '{"c":3}']);
    expect(lines.push(':4}\n')).toEqual(['{"d":4}']);
  });
});

// A real HTTP server on loopback that speaks the watch protocol: newline-delimited JSON events
// in chunks that split lines (and a multi-byte character) wherever they fall.
let server: Server;
let kubeConfig: KubeConfig;
const seenQueries: URLSearchParams[] = [];
const seenAuthorization: Array<string | undefined> = [];
const openResponses = new Set<ServerResponse>();

const first = JSON.stringify({
  type: 'ADDED',
  object: { metadata: { name: 'a', annotations: { note: 'café ✓' } } },
});
const second = JSON.stringify({
  type: 'MODIFIED',
  object: { metadata: { name: 'a', resourceVersion: '7' } },
});

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    seenQueries.push(url.searchParams);
    seenAuthorization.push(request.headers.authorization);
    if (url.pathname === '/missing') {
      response.statusCode = 404;
      response.end('{"kind":"Status","code":404}');
      return;
    }
    response.setHeader('content-type', 'application/json');
    response.flushHeaders();
    if (url.pathname === '/silent') {
      openResponses.add(response);
      return;
    }
    if (url.pathname === '/garbled') {
      response.end('not json\n');
      return;
    }
    const bytes = Buffer.from(`${first}\n${second}\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1; // inside the character's three bytes
    response.write(bytes.subarray(0, cut));
    setTimeout(() => {
      response.write(bytes.subarray(cut, cut + first.length));
      setTimeout(() => response.end(bytes.subarray(cut + first.length)), 20);
    }, 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // client-node refuses plain HTTP unless TLS verification is declared off.
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'test-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
});

afterAll(async () => {
  for (const response of openResponses) response.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function watchUntilDone(
  watch: UndiciWatch,
  path: string,
  query: Record<string, unknown> = {},
): Promise<{ events: Array<[string, unknown]>; error: unknown; controller: AbortController }> {
  return new Promise((resolve, reject) => {
    const events: Array<[string, unknown]> = [];
    let controller: AbortController | undefined;
    let finished: unknown = 'pending';
    void watch
      .watch(
        path,
        query,
        (type, object) => events.push([type, object]),
        (error) => {
          finished = error;
          if (controller) resolve({ events, error, controller });
        },
      )
      .then((c) => {
        controller = c;
        if (finished !== 'pending') resolve({ events, error: finished, controller });
      }, reject);
  });
}

describe('UndiciWatch', () => {
  it('delivers every event whole, however the stream is cut, then ends without an error', async () => {
    const { events, error } = await watchUntilDone(new UndiciWatch(kubeConfig), '/apis/batch/v1/jobs', {
      resourceVersion: '5',
      labelSelector: 'a=b',
      fieldSelector: undefined,
    });
    expect(error).toBeNull();
    expect(events).toEqual([
      ['ADDED', JSON.parse(first).object],
      ['MODIFIED', JSON.parse(second).object],
    ]);
    const query = seenQueries.at(-1)!;
    expect(query.get('watch')).toBe('true');
    expect(query.get('resourceVersion')).toBe('5');
    expect(query.get('labelSelector')).toBe('a=b');
    expect(query.has('fieldSelector')).toBe(false);
  });

  it('ends with the HTTP status when the apiserver refuses the watch', async () => {
    const { events, error } = await watchUntilDone(new UndiciWatch(kubeConfig), '/missing');
    expect(events).toEqual([]);
    expect((error as { statusCode?: number }).statusCode).toBe(404);
  });

  it('ends with an error on a line that is not JSON, so the informer relists', async () => {
    const { error } = await watchUntilDone(new UndiciWatch(kubeConfig), '/garbled');
    expect(error).toBeInstanceOf(SyntaxError);
  });

  it('ends with a TimeoutError when nothing arrives within the inactivity timeout', async () => {
    const { error } = await watchUntilDone(new UndiciWatch(kubeConfig, 200), '/silent');
    expect((error as Error).name).toBe('TimeoutError');
  });

  it("sends the kubeconfig's credentials, over one pool kept across watches", async () => {
    const createDispatcher = vi.spyOn(
      kubeConfig as unknown as { createDispatcher: () => unknown },
      'createDispatcher',
    );
    try {
      const watch = new UndiciWatch(kubeConfig);
      seenAuthorization.length = 0;
      for (let i = 0; i < 3; i++) {
        const { error } = await watchUntilDone(watch, '/apis/batch/v1/jobs');
        expect(error).toBeNull();
      }
      expect(seenAuthorization).toEqual(['Bearer test-token', 'Bearer test-token', 'Bearer test-token']);
      // client-node's authentication builds a pool each time it runs; the watch builds none.
      expect(createDispatcher).not.toHaveBeenCalled();
    } finally {
      createDispatcher.mockRestore();
    }
  });

  it('ends without an error when the caller aborts', async () => {
    const watch = new UndiciWatch(kubeConfig);
    const outcome = new Promise<unknown>((resolve) => {
      void watch
        .watch('/silent', {}, () => {}, resolve)
        .then((controller) => setTimeout(() => controller.abort(), 50));
    });
    expect(await outcome).toBeNull();
  });
});
