import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShareHistory, usageBar } from '../src/queue-usage.ts';

describe('usageBar', () => {
  it('scales to nominal plus the borrowing limit, and splits what is held at nominal', () => {
    expect(usageBar('44', '40', '8')).toEqual({
      withinPct: (40 / 48) * 100,
      borrowedPct: (4 / 48) * 100,
      nominalPct: (40 / 48) * 100,
      limitPct: 100,
      used: 44,
      nominal: 40,
      limit: 8,
    });
  });

  it('reads quantities: memory in binary units, cpu in millicores', () => {
    const memory = usageBar('16Gi', '64Gi', null);
    expect(memory.withinPct).toBe(25);
    expect(memory.borrowedPct).toBe(0);
    expect(memory.nominalPct).toBe(100);
    expect(memory.limitPct).toBeNull();
    expect(usageBar('500m', '2', '0').withinPct).toBe(25);
  });

  it('without a borrowing limit, scales to what is held when above nominal', () => {
    const bar = usageBar('60', '40', null);
    expect(bar.nominalPct).toBeCloseTo((40 / 60) * 100);
    expect(bar.withinPct + bar.borrowedPct).toBeCloseTo(100);
  });

  it('shows nothing held before a status, and survives a zero quota', () => {
    expect(usageBar(null, '40', '8').withinPct).toBe(0);
    expect(usageBar('0', '0', null)).toMatchObject({ withinPct: 0, borrowedPct: 0, nominalPct: 0 });
  });

  it('never draws past its end, whatever it is given', () => {
    const amount = fc.oneof(fc.constant(null), fc.nat({ max: 1000 }).map(String), fc.constant('junk'));
    fc.assert(
      fc.property(amount, fc.nat({ max: 1000 }).map(String), amount, (used, nominal, limit) => {
        const bar = usageBar(used, nominal, limit);
        expect(bar.withinPct).toBeGreaterThanOrEqual(0);
        expect(bar.borrowedPct).toBeGreaterThanOrEqual(0);
        expect(bar.withinPct + bar.borrowedPct).toBeLessThanOrEqual(100 + 1e-9);
        expect(bar.nominalPct).toBeLessThanOrEqual(100);
        if (bar.limitPct !== null) expect(bar.limitPct).toBeGreaterThanOrEqual(bar.nominalPct);
      }),
    );
  });
});

describe('ShareHistory', () => {
  it('keeps each queue’s samples oldest first, at most its capacity', () => {
    const history = new ShareHistory(3);
    for (let i = 0; i < 5; i++)
      history.record(i * 1000, [
        { queue: 'a', share: String(i / 10) },
        { queue: 'b', share: i % 2 ? '1' : null },
      ]);
    expect(history.samples('a')).toEqual([
      { at: 2000, share: 0.2 },
      { at: 3000, share: 0.3 },
      { at: 4000, share: 0.4 },
    ]);
    expect(history.samples('b')).toEqual([
      { at: 1000, share: 1 },
      { at: 3000, share: 1 },
    ]);
    expect(history.samples('c')).toEqual([]);
  });

  it('skips a share that is not a number', () => {
    const history = new ShareHistory(10);
    history.record(1, [
      { queue: 'a', share: 'NaN' },
      { queue: 'a', share: 'x' },
    ]);
    expect(history.samples('a')).toEqual([]);
  });
});
