import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { sleep } from './local-process.ts';

export interface ProbeOptions {
  /** PEM of the CA that signed the server certificate; omit to skip verification (self-signed component ports). */
  ca?: string;
  bearerToken?: string;
  timeoutMs?: number;
}

/** GET a health endpoint; true on 200. Never throws: a probe answers yes or no. */
export function httpOk(url: string, options: ProbeOptions = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const isHttps = url.startsWith('https:');
    const request = isHttps ? httpsRequest : httpRequest;
    const req = request(
      url,
      {
        method: 'GET',
        timeout: options.timeoutMs ?? 2000,
        headers: options.bearerToken ? { authorization: `Bearer ${options.bearerToken}` } : {},
        ...(isHttps ? { ca: options.ca, rejectUnauthorized: options.ca !== undefined } : {}),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Redis PING over a raw socket, so the sandbox needs no Redis client. */
export function redisPing(port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export async function waitFor(
  description: string,
  check: () => Promise<boolean>,
  {
    timeoutMs,
    intervalMs = 250,
    onTimeout,
  }: { timeoutMs: number; intervalMs?: number; onTimeout?: () => string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(intervalMs);
  }
  const hint = onTimeout?.() ?? '';
  throw new Error(
    `timed out after ${timeoutMs / 1000}s waiting for ${description}${hint ? `\n${hint}` : ''}`,
  );
}
