import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reconnectDelayMs } from '../src/reconnect-backoff.ts';

describe('reconnectDelayMs', () => {
  it('doubles from the base up to the cap, half of it random', () => {
    expect(reconnectDelayMs(1, 0)).toBe(500);
    expect(reconnectDelayMs(2, 0)).toBe(1000);
    expect(reconnectDelayMs(3, 0.999_999)).toBe(4000);
    expect(reconnectDelayMs(50, 0)).toBe(15_000);
  });

  it('stays within [ceiling/2, ceiling] and never exceeds the cap, whatever the attempt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -5, max: 1000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, random) => {
          const delay = reconnectDelayMs(attempt, random);
          expect(delay).toBeGreaterThanOrEqual(500);
          expect(delay).toBeLessThanOrEqual(30_000);
        },
      ),
    );
  });
});
