import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryAfterBursts, type MemoryProbe } from '../src/memory-after-bursts.ts';

const MiB = 2 ** 20;
const log = pino({ level: 'silent' });

/** A heap and an event loop the test sets; collecting shrinks the heap to `liveBytes`. */
function fakeProcess(startBytes: number) {
  const state = { heapBytes: startBytes, utilization: 0, liveBytes: startBytes, collections: 0 };
  const probe: MemoryProbe = {
    heapTotalBytes: () => state.heapBytes,
    utilizationSinceLast: () => state.utilization,
  };
  const collect = () => {
    state.collections += 1;
    state.heapBytes = state.liveBytes;
  };
  return { state, reducer: new MemoryAfterBursts({ log, probe, collect }) };
}

describe('MemoryAfterBursts', () => {
  it('reduces once the event loop is quiet after a burst grew the heap, and not again until it grows again', () => {
    const { state, reducer } = fakeProcess(60 * MiB);
    state.heapBytes = 175 * MiB;
    state.liveBytes = 120 * MiB;
    state.utilization = 0.6;
    expect(reducer.check()).toBe(false);
    state.utilization = 0.01;
    expect(reducer.check()).toBe(true);
    expect(state.collections).toBe(1);
    expect(state.heapBytes).toBe(120 * MiB);
    // Quiet, nothing grown since: no second collection.
    expect(reducer.check()).toBe(false);
    // 25 % of 120 MiB is 30 MiB, under the 32 MiB floor: 150 MiB is not enough, 153 is.
    state.heapBytes = 150 * MiB;
    expect(reducer.check()).toBe(false);
    state.heapBytes = 153 * MiB;
    expect(reducer.check()).toBe(true);
    expect(reducer.reductions).toBe(2);
  });

  it('needs growth of a quarter of the baseline when that is more than 32 MiB', () => {
    const { state, reducer } = fakeProcess(200 * MiB);
    state.utilization = 0;
    state.heapBytes = 245 * MiB;
    expect(reducer.check()).toBe(false);
    state.heapBytes = 250 * MiB;
    expect(reducer.check()).toBe(true);
  });

  it('counts growth from the smallest heap seen when V8 shrank it on its own', () => {
    const { state, reducer } = fakeProcess(200 * MiB);
    state.utilization = 0;
    state.heapBytes = 80 * MiB;
    expect(reducer.check()).toBe(false);
    state.heapBytes = 115 * MiB;
    expect(reducer.check()).toBe(true);
  });

  it('does nothing without a way to collect (node without --expose-gc)', () => {
    const global = globalThis as { gc?: unknown };
    const exposed = global.gc;
    delete global.gc;
    try {
      let heapBytes = 10 * MiB;
      const reducer = new MemoryAfterBursts({
        log,
        probe: { heapTotalBytes: () => heapBytes, utilizationSinceLast: () => 0 },
      });
      expect(reducer.enabled).toBe(false);
      reducer.start();
      heapBytes = 500 * MiB;
      expect(reducer.check()).toBe(false);
      expect(reducer.reductions).toBe(0);
      reducer.stop();
    } finally {
      if (exposed !== undefined) global.gc = exposed;
    }
  });
});
