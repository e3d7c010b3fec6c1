import { describe, expect, it } from 'vitest';
import { clientAddressKey, FailedAuthenticationLimit } from '../src/failed-authentication-limit.ts';

describe('clientAddressKey', () => {
  it.each([
    { ip: '192.0.2.7', key: '192.0.2.7' },
    { ip: '::ffff:192.0.2.7', key: '192.0.2.7' },
    { ip: '::FFFF:192.0.2.7', key: '192.0.2.7' },
    // One /64 is one client: a host rotating through its prefix is still counted once.
    { ip: '2001:db8:1:2:aaaa:bbbb:cccc:dddd', key: '2001:db8:1:2::/64' },
    { ip: '2001:db8:1:2::1', key: '2001:db8:1:2::/64' },
    { ip: '2001:0db8:0001:0002::ffff', key: '2001:db8:1:2::/64' },
    { ip: '2001:db8::1', key: '2001:db8:0:0::/64' },
    { ip: '::1', key: '0:0:0:0::/64' },
    { ip: 'fe80::1%eth0', key: 'fe80:0:0:0::/64' },
    { ip: '64:ff9b::192.0.2.1', key: '64:ff9b:0:0::/64' },
    { ip: 'not an address', key: 'not an address' },
  ])('$ip counts as $key', ({ ip, key }) => {
    expect(clientAddressKey(ip)).toBe(key);
  });
});

describe('FailedAuthenticationLimit', () => {
  const limit = (now: { t: number }, maxAddresses?: number) =>
    new FailedAuthenticationLimit({
      maxFailures: 3,
      windowMs: 60_000,
      now: () => now.t,
      ...(maxAddresses ? { maxAddresses } : {}),
    });

  it('refuses an address from its limit-th failure until the window ends, with seconds left', () => {
    const now = { t: 1_000_000 };
    const failures = limit(now);
    for (let i = 0; i < 3; i++) {
      expect(failures.retryAfterSeconds('a')).toBeUndefined();
      failures.recordFailure('a');
      now.t += 1_000;
    }
    expect(failures.retryAfterSeconds('a')).toBe(57);
    // Another address is not affected.
    expect(failures.retryAfterSeconds('b')).toBeUndefined();
    now.t = 1_000_000 + 59_500;
    expect(failures.retryAfterSeconds('a')).toBe(1);
    now.t = 1_000_000 + 60_000;
    expect(failures.retryAfterSeconds('a')).toBeUndefined();
    // A new window starts with the next failure.
    failures.recordFailure('a');
    expect(failures.retryAfterSeconds('a')).toBeUndefined();
  });

  it('remembers at most maxAddresses, dropping the oldest window first', () => {
    const now = { t: 0 };
    const failures = limit(now, 2);
    for (const address of ['a', 'a', 'a', 'b', 'c']) failures.recordFailure(address);
    // a (the oldest) was dropped to make room for c.
    expect(failures.retryAfterSeconds('a')).toBeUndefined();
    for (let i = 0; i < 2; i++) failures.recordFailure('c');
    expect(failures.retryAfterSeconds('c')).toBe(60);
  });
});
