import { describe, expect, it } from 'vitest';
import { CachedProbe } from '../src/cached-probe.ts';

/** A probe whose answers the test releases one by one. */
function controlledProbe() {
  const pending: Array<(value: number) => void> = [];
  let calls = 0;
  return {
    probe: () => {
      calls += 1;
      return new Promise<number>((resolve) => pending.push(resolve));
    },
    answer: (value: number) => pending.shift()!(value),
    get calls() {
      return calls;
    },
  };
}

describe('CachedProbe', () => {
  it('shares one running probe among concurrent callers, then its answer for the interval', async () => {
    const now = { t: 0 };
    const control = controlledProbe();
    const cached = new CachedProbe(control.probe, 1_000, () => now.t);
    const concurrent = Array.from({ length: 50 }, () => cached.get());
    expect(control.calls).toBe(1);
    control.answer(7);
    expect(await Promise.all(concurrent)).toEqual(new Array(50).fill(7));

    now.t = 999;
    expect(await cached.get()).toBe(7);
    expect(control.calls).toBe(1);

    now.t = 1_000;
    const fresh = cached.get();
    expect(control.calls).toBe(2);
    control.answer(8);
    expect(await fresh).toBe(8);
  });

  it('a failed probe is not remembered: the next caller probes again', async () => {
    let calls = 0;
    const cached = new CachedProbe(async () => {
      calls += 1;
      if (calls === 1) throw new Error('redis down');
      return 'ok';
    }, 1_000);
    await expect(cached.get()).rejects.toThrow('redis down');
    expect(await cached.get()).toBe('ok');
    expect(calls).toBe(2);
  });
});
