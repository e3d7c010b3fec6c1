import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lowerMean } from '../src/statistics.ts';

describe('lowerMean', () => {
  it('leaves out the highest buckets: a pass landing in some of them does not count', () => {
    const steady = [4, 5, 4, 5, 4, 5];
    const withPasses = [...steady, 60, 55];
    expect(lowerMean(withPasses, 2 / 3)).toBeCloseTo(4.4, 5);
  });

  it('moves by exactly the amount every sample moves by', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        (samples, shift) => {
          const shifted = samples.map((x) => x + shift);
          expect(lowerMean(shifted, 2 / 3)! - lowerMean(samples, 2 / 3)!).toBeCloseTo(shift, 6);
        },
      ),
    );
  });

  it('keeps at least one sample, and answers undefined for none', () => {
    expect(lowerMean([7, 9], 0.1)).toBe(7);
    expect(lowerMean([], 2 / 3)).toBeUndefined();
  });
});
