import fc from 'fast-check';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { parseRedisUrl, queuePrefix, redisUrlProblem } from '../src/redis-url.ts';

/** Passwords with every character a URL gives a meaning to. */
const awkwardPasswords = [
  'p@ss',
  'a:b:c',
  's/l/a/s/h',
  'h#sh',
  '100%',
  'q?x=1&y',
  'a@b:c/d#e%f?g',
  ' sp ace ',
];

/** What ioredis itself reads from a one-Redis URL (lazyConnect: nothing is dialled). */
function ioredisReads(url: string): { password?: string; host?: string; port?: number; db?: number } {
  const redis = new Redis(url, { lazyConnect: true });
  const { password, host, port, db } = redis.options;
  redis.disconnect();
  return { password, host, port, db };
}

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

  it.each(awkwardPasswords)('reads the password %j percent-encoded, as ioredis does', (password) => {
    const written = encodeURIComponent(password);
    expect(redisUrlProblem(`redis://:${written}@redis:6379/1`)).toBeUndefined();
    expect(ioredisReads(`redis://:${written}@redis:6379/1`)).toEqual({
      password,
      host: 'redis',
      port: 6379,
      db: 1,
    });
    expect(parseRedisUrl(`redis+sentinel://app:${written}@s1/m`)).toMatchObject({
      auth: { username: 'app', password },
    });
    expect(parseRedisUrl(`redis+cluster://:${written}@n1:7000`)).toMatchObject({ auth: { password } });
  });

  it('reads a raw @ and : in a password up to the last @, as ioredis does', () => {
    expect(ioredisReads('redis://:p@ss:w@rd@redis:6379')).toMatchObject({
      password: 'p@ss:w@rd',
      host: 'redis',
    });
    expect(redisUrlProblem('redis://:p@ss:w@rd@redis:6379')).toBeUndefined();
    expect(parseRedisUrl('redis+sentinel://:p@ss:w/rd@s1:26379,s2/m')).toMatchObject({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      auth: { password: 'p@ss:w/rd' },
    });
  });

  it.each([
    // ioredis's URL parser would throw a TypeError whose `input` is the whole URL, password included.
    ['redis://:pa/ss@redis:6379', 'has an @ after the host'],
    ['redis://:pa#ss@redis:6379', 'has an @ after the host'],
    ['redis://:pw@redis:63x9', 'is not a URL'],
    // These parse, with the password's tail taken for a database or a fragment.
    ['redis://app:6379/pw@redis:6379', 'has an @ after the host'],
    ['redis://app:6379/pw', 'the path after the host must be a database number'],
    ['redis://app:6379#pw@redis:6379', 'has an @ after the host'],
    // Parsed, the password's tail would be the host: a connection error would print it.
    ['redis://:pw@pa?ss@redis:6379', 'has an @ after the host'],
    ['redis://app:6379#pw', 'has a fragment'],
    ['redis://:100%sure@redis:6379', 'the password holds a % that starts no escape'],
    ['redis+sentinel://:100%sure@s1/m', 'the password holds a % that starts no escape'],
  ])('refuses %s, saying what to encode and not repeating it', (url, reason) => {
    const problem = redisUrlProblem(url);
    expect(problem).toContain(reason);
    expect(problem).toContain('percent-encode');
    expect(problem).not.toMatch(/pa.ss|pw|sure/);
  });

  it('refuses a raw password or reads it whole, and never repeats any part of it, whatever it holds', () => {
    // Ω between every character: any two characters of the password that leak carry one.
    const passwords = fc
      .array(fc.constantFrom('@', ':', '/', '#', '%', '?', ',', 'a', '1', ' ', '[', ']'), { maxLength: 12 })
      .map((chars) => `Ω${chars.join('Ω')}Ω`);
    const forms = fc.constantFrom(
      { start: 'redis://:', hosts: 'redis:6379' },
      { start: 'rediss://app:', hosts: 'redis:6379' },
      { start: 'redis+sentinel://:', hosts: 's1:26379,s2/m' },
      { start: 'redis+cluster://u:', hosts: 'n1:7000' },
    );
    fc.assert(
      fc.property(passwords, forms, (password, { start, hosts }) => {
        const url = `${start}${password}@${hosts}`;
        const problem = redisUrlProblem(url);
        if (problem !== undefined) expect(problem).not.toContain('Ω');
        else {
          // Read whole, and none of it taken for a host (whose name a connection error prints).
          const target = parseRedisUrl(url);
          if (target.mode === 'standalone')
            expect(ioredisReads(url), url).toMatchObject({ password, host: 'redis', port: 6379 });
          else {
            expect(target.auth.password, url).toBe(password);
            const named = target.mode === 'sentinel' ? target.sentinels : target.nodes;
            expect(named.map((node) => node.host).join(','), url).toBe(
              target.mode === 'sentinel' ? 's1,s2' : 'n1',
            );
          }
        }
      }),
      // Cheap cases; more of them find the rare orders of @, / ? and # that fool a parser.
      { numRuns: 2_000 },
    );
  });
});
