import { createServer } from 'node:net';

function oneFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** Distinct free loopback ports, chosen by the kernel, none of them in `taken`. */
export async function freeLoopbackPorts(
  count: number,
  taken: ReadonlySet<number> = new Set(),
): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = await oneFreePort();
    if (!taken.has(port)) ports.add(port);
  }
  return [...ports];
}
