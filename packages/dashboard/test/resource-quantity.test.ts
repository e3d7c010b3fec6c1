import { describe, expect, it } from 'vitest';
import { formatQuantity, quantityValue } from '../src/resource-quantity.ts';

describe('quantityValue', () => {
  it('reads the quantities the API reports', () => {
    expect(quantityValue('4')).toBe(4);
    expect(quantityValue('500m')).toBe(0.5);
    expect(quantityValue('16Gi')).toBe(16 * 2 ** 30);
    expect(quantityValue('1k')).toBe(1000);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue('1.5')).toBe(1.5);
  });

  it('refuses what is not a quantity', () => {
    for (const text of ['', 'abc', '1Qi', '1 Gi', '--1']) expect(quantityValue(text)).toBeUndefined();
  });
});

describe('formatQuantity', () => {
  it('writes cores and binary bytes for people', () => {
    expect(formatQuantity('cpu', 2.25)).toBe('2.3');
    expect(formatQuantity('memory', 1.5 * 2 ** 30)).toBe('1.5 GiB');
    expect(formatQuantity('memory', 512)).toBe('512 B');
    expect(formatQuantity('nvidia.com/gpu', 8)).toBe('8');
  });
});
