import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linePath, niceScale, stackedBars, timeLinePath, yOf } from '../src/chart-scale.ts';

describe('niceScale', () => {
  it('rounds the top up to a readable step', () => {
    expect(niceScale(7)).toEqual({ top: 8, ticks: [0, 2, 4, 6, 8] });
    expect(niceScale(37)).toEqual({ top: 40, ticks: [0, 10, 20, 30, 40] });
    expect(niceScale(0.3).top).toBeCloseTo(0.3);
    expect(niceScale(0)).toEqual({ top: 1, ticks: [0, 1] });
    expect(niceScale(Number.NaN)).toEqual({ top: 1, ticks: [0, 1] });
  });

  it('always covers the maximum, from 0, with evenly spaced ticks and not too many', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e9, noNaN: true }), (max) => {
        const { top, ticks } = niceScale(max);
        expect(top).toBeGreaterThanOrEqual(max * (1 - 1e-9));
        expect(ticks[0]).toBe(0);
        expect(ticks.at(-1)).toBe(top);
        expect(ticks.length).toBeLessThanOrEqual(6);
        const step = ticks[1]! - ticks[0]!;
        for (const [i, tick] of ticks.entries()) expect(tick).toBeCloseTo(i * step, 6);
      }),
    );
  });
});

describe('linePath and yOf', () => {
  it('draws left to right, 0 at the bottom, the top at the top, with gaps for nulls', () => {
    expect(linePath([0, 5, null, 10], 10, { width: 300, height: 100 })).toBe('M0 100L100 50M300 0');
    expect(linePath([], 10, { width: 300, height: 100 })).toBe('');
  });

  it('keeps every point inside the plot area', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }), (value, top) => {
        const y = yOf(value, top, 100);
        expect(y).toBeGreaterThanOrEqual(0);
        expect(y).toBeLessThanOrEqual(100);
      }),
    );
  });

  it('places timed samples by their time and leaves out those outside the window', () => {
    const points = [
      { at: 500, value: 1 },
      { at: 1000, value: 2 },
      { at: 1500, value: 0 },
      { at: 3000, value: 5 },
    ];
    expect(timeLinePath(points, 1000, 2000, 2, { width: 100, height: 10 })).toBe('M0 0L50 10');
  });
});

describe('stackedBars', () => {
  it('stacks each slot bottom up, the heights adding up to the sum', () => {
    const bars = stackedBars(
      [
        [1, 0],
        [3, 2],
      ],
      4,
      100,
    );
    expect(bars[0]).toEqual([
      { y: 75, height: 25 },
      { y: 0, height: 75 },
    ]);
    expect(bars[1]).toEqual([
      { y: 100, height: 0 },
      { y: 50, height: 50 },
    ]);
  });
});
