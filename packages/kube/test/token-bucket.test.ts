import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenBucket } from '../src/token-bucket.ts';

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

/** Starts `count` takes and reports how many have been granted after each step of the clock. */
function takeMany(bucket: TokenBucket, count: number): { granted: () => number } {
  let granted = 0;
  for (let i = 0; i < count; i++) void bucket.take().then(() => (granted += 1));
  return { granted: () => granted };
}

describe('TokenBucket', () => {
  it('lets a burst through at once, then one request per 1/qps seconds', async () => {
    const bucket = new TokenBucket({ qps: 10, burst: 3, now: () => Date.now() });
    const takes = takeMany(bucket, 6);
    await vi.advanceTimersByTimeAsync(0);
    expect(takes.granted()).toBe(3);
    await vi.advanceTimersByTimeAsync(100);
    expect(takes.granted()).toBe(4);
    await vi.advanceTimersByTimeAsync(200);
    expect(takes.granted()).toBe(6);
  });

  it('saves up to burst tokens while idle, never more', async () => {
    const bucket = new TokenBucket({ qps: 10, burst: 2, now: () => Date.now() });
    await vi.advanceTimersByTimeAsync(10_000);
    const takes = takeMany(bucket, 4);
    await vi.advanceTimersByTimeAsync(0);
    expect(takes.granted()).toBe(2);
    await vi.advanceTimersByTimeAsync(99);
    expect(takes.granted()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(takes.granted()).toBe(3);
  });

  it('grants in the order asked', async () => {
    const bucket = new TokenBucket({ qps: 100, burst: 1, now: () => Date.now() });
    const order: number[] = [];
    const all = [1, 2, 3, 4].map((n) => bucket.take().then(() => order.push(n)));
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('refuses settings that would never grant anything, naming the value', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow('qps must be positive, got 0');
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow('burst must be at least 1, got 0');
  });
});
