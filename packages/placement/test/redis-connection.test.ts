import { describe, expect, it } from 'vitest';
import { parseRedisUrl, queuePrefix, redisUrlProblem } from '../src/redis-connection.ts';

describe('parseRedisUrl', () => {
  it.each(['redis://127.0.0.1:6379', 'rediss://:secret@redis.example.com:6380/2', 'redis://redis'])(
    'hands %s to ioredis as one Redis',
    (url) => {
      expect(parseRedisUrl(url)).toEqual({ mode: 'standalone', url });
    },
  );

  it('reads Sentinels, the master name, the database, credentials and TLS', () => {
    expect(parseRedisUrl('rediss+sentinel://app:p%40ss@s1:26379,s2,[::1]:26380/mymaster/3')).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      masterName: 'mymaster',
      db: 3,
      auth: { username: 'app', password: 'p@ss' },
      tls: true,
    });
    expect(parseRedisUrl('redis+sentinel://s1/mymaster')).toMatchObject({ db: 0, auth: {}, tls: false });
  });

  it('reads Cluster seed nodes, with a hash-tagged queue prefix', () => {
    const target = parseRedisUrl('redis+cluster://:secret@n1:7000,n2:7001,n3');
    expect(target).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 7001 },
        { host: 'n3', port: 6379 },
      ],
      auth: { password: 'secret' },
      tls: false,
    });
    expect(queuePrefix(target)).toBe('{jobrelay}');
    expect(queuePrefix(parseRedisUrl('redis://r:6379'))).toBe('bull');
  });

  it.each([
    ['http://redis:6379', 'must be redis://host:port, redis+sentinel://'],
    ['127.0.0.1:6379', 'must be redis://host:port'],
    ['redis+sentinel://s1:26379', 'name the master the Sentinels watch'],
    ['redis+sentinel://s1:26379/mymaster/zero', 'the database after the master name must be a number'],
    ['redis+cluster://n1:7000/0', 'a Redis Cluster has no databases'],
    ['redis+cluster://n1:port', '"n1:port" is not host:port'],
  ])('refuses %s, saying why', (url, reason) => {
    expect(redisUrlProblem(url)).toContain(reason);
  });

  it('never repeats a password in its reasons', () => {
    expect(redisUrlProblem('redis+sentinel://:hunter2@s1:26379')).not.toContain('hunter2');
    expect(redisUrlProblem('redis+cluster://:hunter2@n1:x')).not.toContain('hunter2');
  });
});
