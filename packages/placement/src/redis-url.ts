// Pure: reading and checking the Redis URL setting loads no Redis client (redis-connection.ts
// connects; it and the queue are @jobrelay/placement/queue).

export interface HostPort {
  host: string;
  port: number;
}

/**
 * Where the placement queue lives, from one URL setting (`--redis-url`):
 *
 * - `redis://[[user]:password@]host:port[/db]` (`rediss://` for TLS): one Redis.
 * - `redis+sentinel://[[user]:password@]sentinel1:26379,sentinel2:26379/<master name>[/db]`
 *   (`rediss+sentinel://`: TLS to the master): the master the Sentinels name, followed across
 *   failovers. The password is the master's.
 * - `redis+cluster://[[user]:password@]node1:6379,node2:6379` (`rediss+cluster://`): a Redis
 *   Cluster, seeded from these nodes. BullMQ runs Lua scripts over several keys of one queue,
 *   which a cluster allows only within one hash slot: the queue's keys get the hash-tagged
 *   prefix `{jobrelay}` (queuePrefix), so every key of it hashes to the same slot.
 */
export type RedisTarget =
  | { mode: 'standalone'; url: string }
  | { mode: 'sentinel'; sentinels: HostPort[]; masterName: string; db: number; auth: Auth; tls: boolean }
  | { mode: 'cluster'; nodes: HostPort[]; auth: Auth; tls: boolean };

interface Auth {
  username?: string;
  password?: string;
}

/** A Redis URL that cannot be used; the message says why and never repeats the URL (it may hold a password). */
export class RedisUrlError extends Error {}

const standalonePattern = /^rediss?:\/\//;
// Credentials run to the last `@` (greedy), so a password may hold `@`, `:` or `/` as written.
const multiHostPattern = /^(rediss?)\+(sentinel|cluster):\/\/(?:(.*)@)?([^/?#@]+)(?:\/([^?#]*))?$/s;
/** Said when credentials cannot be read; never repeats them. */
const encodeHint = "percent-encode a password's / ? # and % (encodeURIComponent)";

function hostPorts(list: string, defaultPort: number): HostPort[] {
  return list.split(',').map((entry) => {
    const match = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?$/.exec(entry.trim());
    if (!match) throw new RedisUrlError(`"${entry}" is not host:port`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : defaultPort };
  });
}

/** A percent-encoded part of the URL, decoded; the error names the part, never its text. */
function decodePart(text: string, what: 'user name' | 'password' | 'master name'): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new RedisUrlError(`the ${what} holds a % that starts no escape: ${encodeHint}`);
  }
}

/**
 * One Redis: the URL goes to ioredis as it is, which reads it with the WHATWG URL parser. It is
 * read here first the same way, so that a URL ioredis would misread is refused with a reason
 * instead: a URL that does not parse (ioredis's TypeError would carry the whole URL, password
 * and all, as its `input`), an `@` after the first `/ ? #` (the parser ended the credentials
 * there and took the password's tail for the host, whose name a connection error would print),
 * a path other than a database number, or a fragment.
 */
function standaloneTarget(url: string): RedisTarget {
  const authority = url.slice(url.indexOf('://') + 3);
  const authorityEnd = authority.search(/[/?#]/);
  if (authorityEnd !== -1 && authority.lastIndexOf('@') > authorityEnd)
    throw new RedisUrlError(`has an @ after the host: ${encodeHint}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisUrlError(`is not a URL: ${encodeHint}`);
  }
  if (parsed.hostname === '') throw new RedisUrlError(`names no host: ${encodeHint}`);
  if (parsed.hash !== '') throw new RedisUrlError(`has a fragment (#…): ${encodeHint}`);
  if (!/^(\/\d*)?$/.test(parsed.pathname))
    throw new RedisUrlError(`the path after the host must be a database number: ${encodeHint}`);
  decodePart(parsed.username, 'user name');
  decodePart(parsed.password, 'password');
  return { mode: 'standalone', url };
}

export function parseRedisUrl(url: string): RedisTarget {
  if (standalonePattern.test(url)) return standaloneTarget(url);
  const match = multiHostPattern.exec(url);
  if (!match)
    throw new RedisUrlError(
      'must be redis://host:port, redis+sentinel://sentinel:26379,…/<master name>, or redis+cluster://node:6379,… (rediss for TLS)',
    );
  const [, scheme, mode, credentials, hosts, path = ''] = match;
  const colon = credentials?.indexOf(':') ?? -1;
  const user = credentials === undefined ? '' : colon === -1 ? credentials : credentials.slice(0, colon);
  const password = credentials === undefined || colon === -1 ? '' : credentials.slice(colon + 1);
  const auth: Auth = {
    ...(user ? { username: decodePart(user, 'user name') } : {}),
    ...(password ? { password: decodePart(password, 'password') } : {}),
  };
  const tls = scheme === 'rediss';
  if (mode === 'cluster') {
    if (path !== '') throw new RedisUrlError(`a Redis Cluster has no databases: drop "/${path}"`);
    return { mode: 'cluster', nodes: hostPorts(hosts!, 6379), auth, tls };
  }
  const [masterName = '', db = '0', ...extra] = path.split('/');
  if (masterName === '')
    throw new RedisUrlError(
      'name the master the Sentinels watch, e.g. redis+sentinel://sentinel:26379/mymaster',
    );
  if (!/^\d+$/.test(db) || extra.length > 0)
    throw new RedisUrlError('the database after the master name must be a number');
  return {
    mode: 'sentinel',
    sentinels: hostPorts(hosts!, 26379),
    masterName: decodePart(masterName, 'master name'),
    db: Number(db),
    auth,
    tls,
  };
}

/** Why the URL cannot be used, or undefined: for the processes' configuration checks. */
export function redisUrlProblem(url: string): string | undefined {
  try {
    parseRedisUrl(url);
    return undefined;
  } catch (err) {
    if (err instanceof RedisUrlError) return err.message;
    throw err;
  }
}

/** BullMQ's key prefix: hash-tagged on a Redis Cluster (see RedisTarget), BullMQ's default elsewhere. */
export function queuePrefix(target: RedisTarget): string {
  return target.mode === 'cluster' ? '{jobrelay}' : 'bull';
}
