import { describe, expect, it } from 'vitest';
import { rfc3339Seconds } from '../src/plain-json.ts';

describe('rfc3339Seconds', () => {
  it.each([
    ['a whole second', new Date('2026-12-03T10:00:00Z'), '2026-12-03T10:00:00Z'],
    [
      'a fraction, cut (never rounded up past the instant)',
      new Date('2026-12-03T10:00:00.999Z'),
      '2026-12-03T10:00:00Z',
    ],
    ['epoch milliseconds', Date.parse('2026-12-03T23:59:59.500Z'), '2026-12-03T23:59:59Z'],
    ['before 1970, still cut downwards', new Date('1969-12-31T23:59:59.250Z'), '1969-12-31T23:59:59Z'],
  ])('%s', (_name, time, expected) => {
    expect(rfc3339Seconds(time)).toBe(expected);
  });

  it('reads back as the instant the apiserver stores (whole seconds, UTC)', () => {
    const now = Date.parse('2026-12-03T10:11:12.345Z');
    expect(Date.parse(rfc3339Seconds(now))).toBe(Math.floor(now / 1000) * 1000);
  });
});
