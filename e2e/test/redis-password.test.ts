// Redis with a password, as deploy/controller ships it: the Redis container's own script, run
// here with a real redis-server, asks every client for the Secret's password and never has it on
// a command line; the controller, given the URL its Deployment builds from the same Secret,
// dispatches a Job through that Redis. And a password holding @, :, /, #, %, ? and a space (an
// external Redis an admin brings): the controller reads it percent-encoded, dispatches, and
// neither its log nor its refusal of a URL it cannot read shows any part of the password.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, freeLoopbackPorts, repositoryRoot } from '@jobrelay/sandbox';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  sandboxJob,
  testSandbox,
  uniqueName,
  waitForFinishedJob,
} from '../src/kube-test-helpers.ts';

interface Container {
  name: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
}

function deployment(file: string, name: string): Container {
  const object = parseAllDocuments(readFileSync(join(repositoryRoot, file), 'utf8'))
    .map(
      (d) =>
        d.toJS() as {
          kind?: string;
          metadata: { name: string };
          spec: { template: { spec: { containers: Container[] } } };
        },
    )
    .find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (!object) throw new Error(`no Deployment ${name} in ${file}`);
  return object.spec.template.spec.containers[0]!;
}

const redisContainer = deployment('deploy/controller/redis.yaml', 'jobrelay-redis');
const controllerContainer = deployment('deploy/controller/deployment.yaml', 'jobrelay-controller');
const apiContainer = deployment('deploy/api/deployment.yaml', 'jobrelay-api');
const scratch = mkdtempSync(join(tmpdir(), 'jobrelay-redis-password-'));
const started: ChildProcess[] = [];

/**
 * Runs deploy/controller's Redis script (`sh -c <script>`) with `REDIS_PASSWORD` as the Secret
 * would set it; `redis-server` on its PATH is the real one, listening on a free loopback port
 * instead of the pod's 6379.
 */
async function runShippedRedis(
  password: string,
): Promise<{ port: number; child: ChildProcess; exit: Promise<number | null>; stderr: () => string }> {
  const [port] = await freeLoopbackPorts(1);
  const bin = mkdtempSync(join(scratch, 'bin-'));
  writeFileSync(
    join(bin, 'redis-server'),
    `#!/bin/sh\nexec '${findRedisServer()}' "$@" --port ${port} --bind 127.0.0.1\n`,
  );
  chmodSync(join(bin, 'redis-server'), 0o755);
  const [shell, ...args] = redisContainer.command!;
  const child = spawn(shell!, args, {
    env: { PATH: `${bin}:${process.env.PATH}`, REDIS_PASSWORD: password },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { port: port!, child, exit, stderr: () => stderr };
}

/** A Redis started with `requirepass` from its standard input, for a password the shipped script refuses. */
async function runRedisWithPassword(password: string): Promise<number> {
  const [port] = await freeLoopbackPorts(1);
  const child = spawn(
    findRedisServer(),
    ['-', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  started.push(child);
  child.stdin!.end(`requirepass "${password}"\n`);
  return port!;
}

/** Sends commands over one connection (RESP) and returns Redis's one-line replies. */
async function ask(port: number, commands: string[][]): Promise<string[]> {
  const request = commands
    .map(
      (words) => `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`,
    )
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let replies = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`Redis on ${port} answered only ${JSON.stringify(replies)}`));
    }, 5_000);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      replies += String(chunk);
      const lines = replies.split('\r\n').filter(Boolean);
      if (lines.length >= commands.length) {
        clearTimeout(timer);
        socket.destroy();
        resolve(lines);
      }
    });
    socket.write(request);
  });
}

async function untilListening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (listening) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

/** The Redis URL a Deployment's container gets: $(REDIS_PASSWORD) substituted as the kubelet does. */
function urlOf(container: Container, password: string, port: number): string {
  const value = container.env?.find((e) => e.name === 'JOBRELAY_REDIS_URL')?.value ?? '';
  return value
    .replace('$(REDIS_PASSWORD)', password)
    .replace('jobrelay-redis.jobrelay-system.svc:6379', `127.0.0.1:${port}`);
}

let fleet: Fleet;
let namespace: string;
let controller: ControllerProcess | undefined;

beforeAll(async () => {
  fleet = fleetOf(testSandbox());
  namespace = await createTestNamespace(fleet.management, 'redis-password');
});

afterEach(async () => {
  await controller?.kill('SIGTERM');
  controller = undefined;
});

afterAll(async () => {
  const exited = started.map(
    (child) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  );
  await fleet?.management.core.deleteNamespace({ name: namespace }).catch(() => {});
  await Promise.all(exited);
  // Once the Redis servers started through its wrapper scripts have exited.
  rmSync(scratch, { recursive: true, force: true });
});

async function dispatchOne(): Promise<void> {
  const job = await fleet.management.batch.createNamespacedJob({
    namespace,
    body: sandboxJob({
      name: uniqueName('queued'),
      managedBy: dispatcherManagedBy,
      requests: { cpu: '50m' },
      pod: { runSeconds: 1 },
    }),
  });
  const done = await waitForFinishedJob(fleet.management, namespace, job.metadata!.name!, 120_000);
  expect(done.status?.succeeded).toBe(1);
  expect(placedCluster(done)).toMatch(/^worker-\d$/);
}

describe('deploy/controller’s Redis', () => {
  it('asks every client for the Secret’s password, which is on no command line', async () => {
    const password = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
    const redis = await runShippedRedis(password);
    await untilListening(redis.port);
    expect(await ask(redis.port, [['PING']])).toEqual([expect.stringMatching(/^-NOAUTH/)]);
    expect(await ask(redis.port, [['AUTH', 'wrong-password-0000'], ['PING']])).toEqual([
      expect.stringMatching(/^-(WRONGPASS|ERR invalid password)/),
      expect.stringMatching(/^-NOAUTH/),
    ]);
    expect(await ask(redis.port, [['AUTH', password], ['PING']])).toEqual(['+OK', '+PONG']);
    // The script execs redis-server: the container's main process is Redis itself.
    expect(readFileSync(`/proc/${redis.child.pid}/cmdline`, 'utf8')).toContain('redis-server');
    expect(readFileSync(`/proc/${redis.child.pid}/cmdline`, 'utf8')).not.toContain(password);
    redis.child.kill('SIGTERM');
    expect(await redis.exit).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['short', 'abc123'],
    ['not letters and digits', 'abcdefgh@ijklmnop:qrstuvwxyz'],
  ])('refuses a password that is %s, without printing it', async (_what, password) => {
    const redis = await runShippedRedis(password);
    expect(await redis.exit).toBe(1);
    expect(redis.stderr()).toContain(
      'REDIS_PASSWORD (from its Secret) must be 16 or more letters and digits',
    );
    if (password) expect(redis.stderr()).not.toContain(password);
  });

  it('is where the controller, with the URL its Deployment builds from the Secret, dispatches a Job', {
    timeout: 180_000,
  }, async () => {
    const password = 'f00dfeedc0ffee1234567890abcdef12';
    const redis = await runShippedRedis(password);
    await untilListening(redis.port);
    // The API builds the same URL from the same Secret.
    expect(apiContainer.env?.find((e) => e.name === 'REDIS_PASSWORD')).toEqual(
      controllerContainer.env?.find((e) => e.name === 'REDIS_PASSWORD'),
    );
    expect(urlOf(apiContainer, password, redis.port)).toBe(urlOf(controllerContainer, password, redis.port));
    controller = startController(fleet.sandbox, [
      `--redis-url=${urlOf(controllerContainer, password, redis.port)}`,
      `--namespaces=${namespace}`,
    ]);
    await dispatchOne();
    expect(controller.logs()).toContain(`"redisUrl":"redis://:***@127.0.0.1:${redis.port}"`);
    expect(controller.logs()).not.toContain(password);
  });
});

describe('a Redis password holding @, :, /, #, %, ? and a space', () => {
  const password = 'p@ss:w/rd#50%?x y';
  const encoded = encodeURIComponent(password);
  /**
   * Any 4 characters of the password in a row, raw or encoded, that hold one of its URL
   * characters (every window of the raw password does; the encoded ones with a %): digits alone
   * would also match timestamps.
   */
  const fragments = [password, encoded]
    .flatMap((text) => [...text].slice(0, -3).map((_, i) => text.slice(i, i + 4)))
    .filter((fragment) => /[^A-Za-z0-9]/.test(fragment));
  const leaked = (log: string) => fragments.filter((fragment) => log.includes(fragment));

  it('is read percent-encoded, and no part of it reaches the log', { timeout: 180_000 }, async () => {
    const port = await runRedisWithPassword(password);
    await untilListening(port);
    expect(await ask(port, [['AUTH', password], ['PING']])).toEqual(['+OK', '+PONG']);
    controller = startController(fleet.sandbox, [
      `--redis-url=redis://:${encoded}@127.0.0.1:${port}/0`,
      `--namespaces=${namespace}`,
    ]);
    await dispatchOne();
    expect(controller.logs()).toContain(`"redisUrl":"redis://:***@127.0.0.1:${port}/0"`);
    expect(leaked(controller.logs())).toEqual([]);
  });

  it('is not shown when it is wrong: the controller logs why Redis refused it, not the password', async () => {
    const port = await runRedisWithPassword(password);
    await untilListening(port);
    const wrong = `${password}!`;
    controller = startController(fleet.sandbox, [
      `--redis-url=redis://:${encodeURIComponent(wrong)}@127.0.0.1:${port}`,
      `--namespaces=${namespace}`,
    ]);
    for (let i = 0; i < 100 && !/WRONGPASS|invalid password/.test(controller.logs()); i++)
      await new Promise((r) => setTimeout(r, 200));
    expect(controller.logs()).toMatch(/WRONGPASS|invalid password/);
    expect(leaked(controller.logs())).toEqual([]);
  });

  it('written raw, is refused at start naming the setting and what to encode, and not printed', async () => {
    controller = startController(fleet.sandbox, [`--redis-url=redis://:${password}@127.0.0.1:6379`]);
    const child = controller.process;
    if (child.exitCode === null) await new Promise<void>((resolve) => child.on('exit', () => resolve()));
    expect(controller.process.exitCode).toBe(2);
    expect(controller.logs()).toContain(
      "--redis-url: has an @ after the host: percent-encode a password's / ? # and % (encodeURIComponent)",
    );
    expect(leaked(controller.logs())).toEqual([]);
  });
});
