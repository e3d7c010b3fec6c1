import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './redis-url.ts';

/** One connection to the target: a Redis (standalone, or the Sentinels' master) or a Cluster. */
export function connectRedis(
  target: RedisTarget,
  options: Pick<RedisOptions, 'maxRetriesPerRequest' | 'lazyConnect'>,
): Redis | Cluster {
  switch (target.mode) {
    case 'standalone':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis({
        ...options,
        sentinels: target.sentinels,
        name: target.masterName,
        db: target.db,
        ...target.auth,
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      });
    case 'cluster':
      return new Cluster(target.nodes, {
        lazyConnect: options.lazyConnect ?? false,
        redisOptions: { ...options, ...target.auth, ...(target.tls ? { tls: {} } : {}) },
      });
  }
}
