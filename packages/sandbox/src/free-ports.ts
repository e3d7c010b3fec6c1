import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the sandbox's ports come from: below the kernel's ephemeral range. A port picked free is
 * bound by its process only later; a port of the ephemeral range may be handed in between to any
 * outgoing connection's local end (the fleets' clients make thousands), and the process then
 * fails with "address already in use" (a KWOK did, with four fleets starting beside the tests).
 * Below that range the kernel hands out nothing by itself.
 */
function portRange(): { low: number; high: number } {
  let ephemeralLow = 32768;
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    if (Number(low) > 0) ephemeralLow = Number(low);
  } catch {
    // Not Linux: Linux's default range.
  }
  return { low: Math.max(10_000, ephemeralLow - 12_000), high: ephemeralLow - 1 };
}

/** Whether `port` can be bound on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.on('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the kernel picks (the ephemeral range): where no range is left below it. */
function kernelPort(): Promise<number> {
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

/**
 * Distinct free loopback ports, none of them in `taken`: drawn at random below the kernel's
 * ephemeral range (portRange) and checked bindable, so that two sandboxes starting at once
 * rarely draw the same one and no outgoing connection takes one before its process binds it.
 */
export async function freeLoopbackPorts(
  count: number,
  taken: ReadonlySet<number> = new Set(),
): Promise<number[]> {
  const { low, high } = portRange();
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count; tries++) {
    const port =
      high - low < 1000 || tries > 1000
        ? await kernelPort()
        : low + Math.floor(Math.random() * (high - low + 1));
    if (!taken.has(port) && !ports.has(port) && (await bindable(port))) ports.add(port);
  }
  return [...ports];
}
