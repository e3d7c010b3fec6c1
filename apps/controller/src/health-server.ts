import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * /healthz (the process answers), /readyz (caches synced, reconciling) and /metrics
 * (Prometheus). Plain node:http: three read-only routes need no framework.
 */
export async function startHealthServer(options: {
  address: string;
  ready: () => boolean;
  metrics: Registry;
}): Promise<{ url: string; close: () => Promise<void> }> {
  const separator = options.address.lastIndexOf(':');
  const host = options.address.slice(0, separator);
  const port = Number(options.address.slice(separator + 1));
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405).end();
    } else if (path === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = options.ready();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ok\n' : 'starting\n');
    } else if (path === '/metrics') {
      options.metrics.metrics().then(
        (text) => response.writeHead(200, { 'content-type': options.metrics.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
