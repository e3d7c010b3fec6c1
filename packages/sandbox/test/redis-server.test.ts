import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findRedisServer,
  isExecutableFile,
  RedisServerNotFoundError,
  redisCacheBinDir,
} from '../src/redis-server.ts';
import { repositoryRoot } from '../src/sandbox-layout.ts';

const cacheDir = '/home/dev/.cache/jobrelay';

/** A lookup over an imaginary file system holding exactly `executables`. */
function lookup(env: NodeJS.ProcessEnv, executables: string[]) {
  const present = new Set(executables);
  return { env, cacheDir, isExecutable: (path: string) => present.has(path) };
}

describe('findRedisServer', () => {
  it('takes JOBRELAY_REDIS_SERVER over PATH and the cache', () => {
    const found = findRedisServer(
      lookup({ JOBRELAY_REDIS_SERVER: '/opt/redis/bin/redis-server', PATH: '/usr/bin' }, [
        '/opt/redis/bin/redis-server',
        '/usr/bin/redis-server',
        `${cacheDir}/redis/bin/valkey-server`,
      ]),
    );
    expect(found).toBe('/opt/redis/bin/redis-server');
  });

  it('refuses a JOBRELAY_REDIS_SERVER that is not executable instead of looking elsewhere', () => {
    expect(() =>
      findRedisServer(
        lookup({ JOBRELAY_REDIS_SERVER: '/nowhere/redis-server', PATH: '/usr/bin' }, [
          '/usr/bin/redis-server',
        ]),
      ),
    ).toThrow(/JOBRELAY_REDIS_SERVER=\/nowhere\/redis-server is not an executable file/);
  });

  it('takes redis-server from the first PATH directory holding it, before any valkey-server', () => {
    const env = { PATH: ['/usr/local/bin', '', '/usr/bin', '/snap/bin'].join(':') };
    const found = findRedisServer(
      lookup(env, ['/usr/local/bin/valkey-server', '/usr/bin/redis-server', '/snap/bin/redis-server']),
    );
    expect(found).toBe('/usr/bin/redis-server');
  });

  it('takes valkey-server on PATH when there is no redis-server', () => {
    expect(findRedisServer(lookup({ PATH: '/usr/bin' }, ['/usr/bin/valkey-server']))).toBe(
      '/usr/bin/valkey-server',
    );
  });

  it('falls back to the server scripts/ensure-redis.sh cached', () => {
    const found = findRedisServer(lookup({ PATH: '/usr/bin:/bin' }, [`${cacheDir}/redis/bin/valkey-server`]));
    expect(found).toBe(`${cacheDir}/redis/bin/valkey-server`);
  });

  it('says where it looked and which command provides one when there is none', () => {
    let error: unknown;
    try {
      findRedisServer(lookup({ PATH: '/usr/bin' }, []));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RedisServerNotFoundError);
    const message = (error as Error).message;
    expect(message).toContain(`${cacheDir}/redis/bin has neither`);
    expect(message).toContain(`bash ${join(repositoryRoot, 'scripts', 'ensure-redis.sh')}`);
  });
});

describe('with real files', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  function fakeServer(path: string, version: string): void {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `#!/bin/sh\necho "Redis server v=${version} sha=00000000:0 malloc=libc bits=64"\n`);
    chmodSync(path, 0o755);
  }

  it('isExecutableFile wants an executable regular file', () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-redis-'));
    const plain = join(dir, 'plain');
    writeFileSync(plain, '');
    fakeServer(join(dir, 'server'), '7.2.4');
    expect(isExecutableFile(plain)).toBe(false);
    expect(isExecutableFile(dir)).toBe(false);
    expect(isExecutableFile(join(dir, 'missing'))).toBe(false);
    expect(isExecutableFile(join(dir, 'server'))).toBe(true);
  });

  it('finds the cached server where scripts/ensure-redis.sh puts and finds it', () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-redis-'));
    const cache = join(dir, 'cache');
    const pathDir = join(dir, 'path');
    // On PATH, a server too old for BullMQ, which the script passes over; in the cache, a good one.
    fakeServer(join(pathDir, 'redis-server'), '6.0.9');
    fakeServer(join(redisCacheBinDir(cache), 'valkey-server'), '8.1.8');
    const script = `. ${JSON.stringify(join(repositoryRoot, 'scripts', 'ensure-redis.sh'))}; jobrelay_find_redis`;
    const fromScript = execFileSync('/bin/bash', ['-c', script], {
      env: { PATH: pathDir, HOME: dir, JOBRELAY_CACHE_DIR: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    }).trim();
    expect(fromScript).toBe(join(redisCacheBinDir(cache), 'valkey-server'));
    // With an empty PATH, the sandbox takes the same one.
    expect(findRedisServer({ env: { PATH: '' }, cacheDir: cache })).toBe(fromScript);
  });

  it('makes scripts/ensure-redis.sh reject a server older than 6.2 and take 6.2 or newer', () => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-redis-'));
    const versions = ['5.0.7', '6.0.16', '6.2.14', '7.0.15', '10.0.0', 'garbage'];
    for (const version of versions) fakeServer(join(dir, version), version);
    const script =
      `. ${JSON.stringify(join(repositoryRoot, 'scripts', 'ensure-redis.sh'))}; ` +
      `for v in ${versions.join(' ')}; do jobrelay_redis_usable "${dir}/$v" && echo "$v"; done; true`;
    const usable = execFileSync('/bin/bash', ['-c', script], {
      env: { PATH: '', HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    expect(usable.trim().split('\n')).toEqual(['6.2.14', '7.0.15', '10.0.0']);
  });
});
