import { isIPv4, isIPv6 } from 'node:net';

/**
 * Who a failed authentication is counted against: the client's address, with an IPv6 client's
 * whole /64 as one (one host usually holds a /64, and could otherwise rotate through it), and an
 * IPv4-mapped IPv6 address as the IPv4 address it is.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(ip)) return ip;
  const bare = ip.replace(/%.*$/, '');
  if (!isIPv6(bare)) return ip;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) is two groups; only the first four groups matter here.
  const tailLength = tailGroups.reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...new Array<string>(8 - headGroups.length - tailLength).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

interface Window {
  started: number;
  failures: number;
}

export interface FailedAuthenticationLimitOptions {
  /** Failures per window per address before requests from it are refused unreviewed. */
  maxFailures: number;
  windowMs: number;
  /** Addresses remembered at most; the oldest windows go first past it. */
  maxAddresses?: number;
  now?: () => number;
}

/**
 * Counts requests whose token is missing, malformed or refused, per client address, and says
 * when an address is over the limit: asked before any TokenReview, so a flood of bad tokens
 * costs the management apiserver nothing once over it. @fastify/rate-limit counts every request
 * when it is made; this counts only failures, known after the review, and is asked before it.
 */
export class FailedAuthenticationLimit {
  readonly #options: Required<FailedAuthenticationLimitOptions>;
  readonly #windows = new Map<string, Window>();

  constructor(options: FailedAuthenticationLimitOptions) {
    this.#options = { maxAddresses: 100_000, now: Date.now, ...options };
  }

  /** Seconds until the address may try again, or undefined when it is under the limit. */
  retryAfterSeconds(addressKey: string): number | undefined {
    const window = this.#current(addressKey);
    if (!window || window.failures < this.#options.maxFailures) return undefined;
    return Math.max(1, Math.ceil((window.started + this.#options.windowMs - this.#options.now()) / 1000));
  }

  recordFailure(addressKey: string): void {
    const window = this.#current(addressKey);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= this.#options.maxAddresses) {
      // Map keeps insertion order: the first entry is the oldest window.
      const oldest = this.#windows.keys().next().value;
      if (oldest !== undefined) this.#windows.delete(oldest);
    }
    this.#windows.set(addressKey, { started: this.#options.now(), failures: 1 });
  }

  #current(addressKey: string): Window | undefined {
    const window = this.#windows.get(addressKey);
    if (!window) return undefined;
    if (this.#options.now() - window.started < this.#options.windowMs) return window;
    this.#windows.delete(addressKey);
    return undefined;
  }
}
