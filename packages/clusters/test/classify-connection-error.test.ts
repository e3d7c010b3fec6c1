import { TimeoutError } from '@jobrelay/kube';
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { classifyConnectionError } from '../src/classify-connection-error.ts';
import { type ActiveReason, activeReasons } from '../src/worker-cluster.ts';

const SERVER = 'https://worker-1.example.com:6443';
const TOKEN = 'jr-token-0b9d2e7c41a8';

/** What client-node throws for an HTTP error, with the headers it echoes into its message. */
function apiException(code: number): ApiException<string> {
  return new ApiException(
    code,
    `Unknown API Status Code! Bearer ${TOKEN}`,
    JSON.stringify({ kind: 'Status', code, message: `request with Bearer ${TOKEN} refused` }),
    { authorization: `Bearer ${TOKEN}`, 'www-authenticate': `Bearer realm="${TOKEN}"` },
  );
}

/** A Node system error, as net and tls raise them. */
function systemError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** undici's fetch: a TypeError('fetch failed') whose cause is the socket's error. */
function fetchFailed(cause: Error): TypeError {
  return new TypeError('fetch failed', { cause });
}

interface Case {
  name: string;
  err: unknown;
  reason: ActiveReason;
  fragments: string[];
}

const cases: Case[] = [
  {
    name: 'HTTP 401',
    err: apiException(401),
    reason: activeReasons.unauthorized,
    fragments: ['HTTP 401', 'renew the token or certificate'],
  },
  {
    name: 'HTTP 403',
    err: apiException(403),
    reason: activeReasons.forbidden,
    fragments: ['HTTP 403', 'jobrelay-worker ClusterRole'],
  },
  {
    name: 'another HTTP status',
    err: apiException(503),
    reason: activeReasons.unreachable,
    fragments: ['answered HTTP 503'],
  },
  {
    name: 'a timeout',
    err: new TimeoutError('listing Jobs did not answer within 10s'),
    reason: activeReasons.unreachable,
    fragments: ['did not answer within 10s'],
  },
  {
    name: 'fetch failed: ECONNREFUSED',
    err: fetchFailed(systemError('ECONNREFUSED', `connect ECONNREFUSED 10.0.0.1:6443 ${TOKEN}`)),
    reason: activeReasons.unreachable,
    fragments: ['cannot reach', '(ECONNREFUSED)'],
  },
  {
    name: 'a system error without a wrapper: ENOTFOUND',
    err: systemError('ENOTFOUND', 'getaddrinfo ENOTFOUND worker-1.example.com'),
    reason: activeReasons.unreachable,
    fragments: ['cannot reach', '(ENOTFOUND)'],
  },
  {
    name: 'undici connect timeout',
    err: fetchFailed(systemError('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error')),
    reason: activeReasons.unreachable,
    fragments: ['(UND_ERR_CONNECT_TIMEOUT)'],
  },
  {
    name: 'an error with no code at all',
    err: new Error(`something odd with ${TOKEN}`),
    reason: activeReasons.unreachable,
    fragments: ['cannot reach', 'check the address'],
  },
  {
    name: 'a thrown string',
    err: `odd ${TOKEN}`,
    reason: activeReasons.unreachable,
    fragments: ['cannot reach'],
  },
  {
    name: 'an expired certificate deep in the cause chain',
    err: new Error('health check failed', {
      cause: fetchFailed(systemError('CERT_HAS_EXPIRED', 'certificate has expired')),
    }),
    reason: activeReasons.tlsError,
    fragments: ['TLS to', '(CERT_HAS_EXPIRED)', 'a certificate has expired'],
  },
  {
    name: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    err: fetchFailed(
      systemError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
    ),
    reason: activeReasons.tlsError,
    fragments: ['(UNABLE_TO_VERIFY_LEAF_SIGNATURE)', 'does not verify against certificate-authority-data'],
  },
  {
    name: 'a self-signed certificate',
    err: fetchFailed(systemError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate')),
    reason: activeReasons.tlsError,
    fragments: ['(DEPTH_ZERO_SELF_SIGNED_CERT)'],
  },
  {
    name: 'a TLS code behind a network code in the chain',
    err: Object.assign(fetchFailed(systemError('CERT_HAS_EXPIRED', 'certificate has expired')), {
      code: 'ECONNRESET',
    }),
    reason: activeReasons.tlsError,
    fragments: ['(CERT_HAS_EXPIRED)'],
  },
];

describe('classifyConnectionError', () => {
  it.each(cases)('$name → $reason', ({ err, reason, fragments }) => {
    const result = classifyConnectionError(err, SERVER);
    expect(result.reason).toBe(reason);
    expect(result.message).toContain(SERVER);
    for (const fragment of fragments) expect(result.message).toContain(fragment);
    expect(result.message).not.toContain(TOKEN);
    expect(result.message).not.toMatch(/bearer|authorization/i);
  });

  it('does not mistake an expiry for a plain verification failure', () => {
    const expired = classifyConnectionError(fetchFailed(systemError('CERT_HAS_EXPIRED', 'x')), SERVER);
    const unverified = classifyConnectionError(
      fetchFailed(systemError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'x')),
      SERVER,
    );
    expect(expired.message).toMatch(/expired/);
    expect(unverified.message).not.toMatch(/expired/);
  });

  it('stops following a cyclic cause chain', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(classifyConnectionError(a, SERVER).reason).toBe(activeReasons.unreachable);
  });
});
