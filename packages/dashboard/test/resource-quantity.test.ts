import { describe, expect, it } from 'vitest';
import { formatQuantity } from '../src/resource-quantity.ts';

describe('formatQuantity', () => {
  it('writes cores and binary bytes for people', () => {
    expect(formatQuantity('cpu', 2.25)).toBe('2.3');
    expect(formatQuantity('memory', 1.5 * 2 ** 30)).toBe('1.5 GiB');
    expect(formatQuantity('memory', 512)).toBe('512 B');
    expect(formatQuantity('nvidia.com/gpu', 8)).toBe('8');
  });
});
