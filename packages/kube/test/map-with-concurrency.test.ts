import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from '../src/map-with-concurrency.ts';

describe('mapWithConcurrency', () => {
  it('keeps the items’ order and never has more than the limit in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapWithConcurrency([5, 1, 4, 2, 3, 0], 2, async (item, index) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // Later items finish first sometimes: the order of results must not follow completion.
      await new Promise((resolve) => setImmediate(resolve));
      if (item % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return `${index}:${item}`;
    });
    expect(results).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3', '5:0']);
    expect(most).toBe(2);
  });

  it('calls nothing for no items, and runs one lane for a limit below one', async () => {
    expect(await mapWithConcurrency([], 4, async () => 1)).toEqual([]);
    expect(await mapWithConcurrency([1, 2], 0, async (n) => n * 10)).toEqual([10, 20]);
  });
});
