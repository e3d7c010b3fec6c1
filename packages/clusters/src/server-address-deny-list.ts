import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** A range of addresses a worker's server may not be in, and why it is refused. */
export interface DeniedRange {
  /** The range as written, e.g. `127.0.0.0/8`. */
  cidr: string;
  /** What the range is, for messages: `loopback`, or the flag that listed it. */
  why: string;
}

/**
 * The ranges a worker's apiserver can never legitimately be in, once an installation restricts
 * server addresses: whoever registers a kubeconfig would otherwise aim jobrelay (and its
 * credentials) at the jobrelay process's own host or at the cloud's metadata endpoint.
 */
export const alwaysDeniedRanges: readonly DeniedRange[] = [
  { cidr: '127.0.0.0/8', why: 'loopback' },
  { cidr: '::1/128', why: 'loopback' },
  // 0.0.0.0 and :: reach this host on Linux.
  { cidr: '0.0.0.0/8', why: 'unspecified, reaches this host' },
  { cidr: '::/128', why: 'unspecified, reaches this host' },
  // 169.254.169.254 is the metadata service of most clouds (instance credentials).
  { cidr: '169.254.0.0/16', why: 'link-local' },
  { cidr: 'fe80::/10', why: 'link-local' },
];

/** `address/prefix` with a valid IPv4 or IPv6 address and prefix length, or why it is not. */
export function cidrProblem(cidr: string): string | undefined {
  const slash = cidr.indexOf('/');
  const address = slash < 0 ? cidr : cidr.slice(0, slash);
  const prefixText = slash < 0 ? '' : cidr.slice(slash + 1);
  const family = isIP(address);
  if (family === 0) return `${JSON.stringify(cidr)} is not a CIDR (expected e.g. 10.96.0.0/12 or fd00::/108)`;
  const prefix = Number(prefixText);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || prefix > max)
    return `${JSON.stringify(cidr)} needs a prefix length from 0 to ${max} (e.g. ${address}/${family === 4 ? 16 : 64})`;
  return undefined;
}

/**
 * The server addresses an installation refuses (loopback, link-local, unspecified, and the
 * ranges an admin lists: the pod and service networks). Pure: `rangeOf` answers for one
 * address; `lookup` enforces it where connections are made.
 */
export class ServerAddressDenyList {
  private readonly ranges: ReadonlyArray<{ range: DeniedRange; list: BlockList }>;

  /** `extra` are CIDRs checked by cidrProblem; `why` names where they were configured. */
  constructor(extra: readonly string[] = [], why = '--denied-server-cidrs') {
    const ranges = [...alwaysDeniedRanges, ...extra.map((cidr) => ({ cidr, why }))];
    this.ranges = ranges.map((range) => {
      const problem = cidrProblem(range.cidr);
      if (problem) throw new Error(`ServerAddressDenyList: ${problem}`);
      const [address, prefix] = range.cidr.split('/') as [string, string];
      const list = new BlockList();
      list.addSubnet(address, Number(prefix), isIP(address) === 4 ? 'ipv4' : 'ipv6');
      return { range, list };
    });
  }

  /** The denied range holding `address` (an IP literal; IPv4-mapped IPv6 counts as IPv4), if any. */
  rangeOf(address: string): DeniedRange | undefined {
    const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    const family = isIP(bare);
    if (family === 0) return undefined;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    return this.ranges.find(({ list }) => list.check(bare, type))?.range;
  }

  /**
   * A `lookup` for net/tls connections (undici's `connect` options, node:https requests) that
   * resolves as dns.lookup does and refuses a host name when any of its addresses is denied,
   * so a name that resolves to a denied address is refused at every connection, not only when
   * the kubeconfig was vetted (a name's answer can change: DNS rebinding). IP literals never
   * reach a lookup: they are checked when the kubeconfig is vetted.
   */
  lookup(): LookupFunction {
    return (hostname, options, callback) => {
      const family = typeof options === 'number' ? options : options.family;
      dnsLookup(
        hostname,
        { ...(typeof options === 'object' ? options : {}), ...(family ? { family } : {}), all: true },
        (err, addresses: LookupAddress[]) => {
          if (err) {
            callback(err, '', 0);
            return;
          }
          for (const { address } of addresses) {
            const range = this.rangeOf(address);
            if (range) {
              callback(new ServerAddressDeniedError(hostname, address, range), '', 0);
              return;
            }
          }
          if (typeof options === 'object' && options.all) {
            (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
            return;
          }
          const first = addresses[0];
          if (!first) {
            callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
            return;
          }
          callback(null, first.address, first.family);
        },
      );
    };
  }
}

/** A connection refused because the server's name resolved to a denied address. */
export class ServerAddressDeniedError extends Error {
  readonly code = 'ERR_JOBRELAY_SERVER_ADDRESS_DENIED';
  constructor(hostname: string, address: string, range: DeniedRange) {
    super(
      `${hostname} resolves to ${address}, in ${range.cidr} (${range.why}), where this installation refuses worker servers`,
    );
    this.name = 'ServerAddressDeniedError';
  }
}
