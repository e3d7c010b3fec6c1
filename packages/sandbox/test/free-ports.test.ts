import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPorts } from '../src/free-ports.ts';

const ephemeralLow = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
);

function listen(port: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

describe('freeLoopbackPorts', () => {
  it('draws distinct ports below the kernel’s ephemeral range, none of those taken, each free to bind', async () => {
    const taken = new Set(await freeLoopbackPorts(20));
    const ports = await freeLoopbackPorts(40, taken);
    expect(new Set(ports).size).toBe(40);
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow);
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(taken.has(port)).toBe(false);
    }
    // Each can be bound now, as the process it is for will bind it.
    const closers = await Promise.all(ports.map(listen));
    await Promise.all(closers.map((close) => close()));
  });
});
