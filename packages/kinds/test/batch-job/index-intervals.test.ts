import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatIndexIntervals,
  parseIndexIntervals,
  unionIndexIntervals,
} from '../../src/batch-job/index-intervals.ts';

describe('parseIndexIntervals', () => {
  it.each([
    { text: undefined, indexes: [] },
    { text: '', indexes: [] },
    { text: '0', indexes: [0] },
    { text: '7', indexes: [7] },
    { text: '1,3', indexes: [1, 3] },
    { text: '3-5', indexes: [3, 4, 5] },
    { text: '0-0', indexes: [0] },
    { text: '1,3-5,7', indexes: [1, 3, 4, 5, 7] },
    { text: '0-2,10-11,99999', indexes: [0, 1, 2, 10, 11, 99999] },
    { text: ' 2 , 4-5 ', indexes: [2, 4, 5] },
  ])('reads $text as $indexes', ({ text, indexes }) => {
    expect(parseIndexIntervals(text)).toEqual(indexes);
  });

  // Damaged parts are skipped; none may invent an index (Number('') is 0).
  it.each([
    { text: '1,3,', indexes: [1, 3] },
    { text: '1,,3', indexes: [1, 3] },
    { text: ',', indexes: [] },
    { text: '-1', indexes: [] },
    { text: '3-', indexes: [] },
    { text: '5-3', indexes: [] },
    { text: 'a,2,b-c', indexes: [2] },
    { text: '1.5,4', indexes: [4] },
    { text: '0x10', indexes: [] },
    { text: '1e2', indexes: [] },
  ])('skips the damaged parts of $text', ({ text, indexes }) => {
    expect(parseIndexIntervals(text)).toEqual(indexes);
  });
});

describe('formatIndexIntervals', () => {
  it.each([
    { indexes: [], text: '' },
    { indexes: [4], text: '4' },
    // The built-in Job controller writes a pair of adjacent indexes with a comma.
    { indexes: [0, 1], text: '0,1' },
    { indexes: [1, 2, 5, 6, 7, 9, 10], text: '1,2,5-7,9,10' },
    { indexes: [0, 1, 2], text: '0-2' },
    { indexes: [0, 2], text: '0,2' },
    { indexes: [1, 3, 4, 5, 7], text: '1,3-5,7' },
    { indexes: [7, 5, 3, 4, 1], text: '1,3-5,7' },
    { indexes: [2, 2, 3, 3, 3], text: '2,3' },
    { indexes: [10, 9, 100, 8], text: '8-10,100' },
  ])('writes $indexes as "$text"', ({ indexes, text }) => {
    expect(formatIndexIntervals(indexes)).toBe(text);
  });

  it('takes any iterable', () => {
    expect(formatIndexIntervals(new Set([3, 1, 2]))).toBe('1-3');
  });
});

describe('unionIndexIntervals', () => {
  it.each([
    { texts: [], union: '' },
    { texts: [undefined, undefined], union: '' },
    { texts: ['', '0-2'], union: '0-2' },
    { texts: ['0-2', undefined], union: '0-2' },
    { texts: ['0-2', '3'], union: '0-3' },
    { texts: ['3', '0-2'], union: '0-3' },
    { texts: ['0-2', '4'], union: '0-2,4' },
    { texts: ['0-2', '4', '3'], union: '0-4' },
    { texts: ['1,5', '2-4'], union: '1-5' },
    { texts: ['0-5', '2-3'], union: '0-5' },
    { texts: ['1,3-5,7', '6,8-9'], union: '1,3-9' },
  ])('$texts → "$union"', ({ texts, union }) => {
    expect(unionIndexIntervals(...texts)).toBe(union);
  });
});

describe('interval notation properties', () => {
  const indexSets = fc.uniqueArray(fc.nat({ max: 300 }), { maxLength: 80 });

  it('parse(format(set)) is the sorted set, and format is stable through a parse', () => {
    fc.assert(
      fc.property(indexSets, (set) => {
        const text = formatIndexIntervals(set);
        const sorted = [...set].sort((a, b) => a - b);
        expect(parseIndexIntervals(text)).toEqual(sorted);
        expect(formatIndexIntervals(parseIndexIntervals(text))).toBe(text);
      }),
    );
  });

  it('writes each maximal run as one part, except a run of two, which is two parts', () => {
    fc.assert(
      fc.property(indexSets, (set) => {
        const text = formatIndexIntervals(set);
        const parts = text === '' ? [] : text.split(',');
        const members = new Set(set);
        const runStarts = set.filter((i) => !members.has(i - 1));
        const runLength = (start: number) => {
          let n = 1;
          while (members.has(start + n)) n++;
          return n;
        };
        const expectedParts = runStarts.reduce((sum, start) => sum + (runLength(start) === 2 ? 2 : 1), 0);
        expect(parts).toHaveLength(expectedParts);
        for (const part of parts) {
          const [first, last] = part.split('-').map(Number);
          if (last !== undefined) expect(last - first!).toBeGreaterThanOrEqual(2);
        }
      }),
    );
  });

  it('union is the set union, whatever the order of its arguments', () => {
    fc.assert(
      fc.property(indexSets, indexSets, (a, b) => {
        const union = unionIndexIntervals(formatIndexIntervals(a), formatIndexIntervals(b));
        expect(parseIndexIntervals(union)).toEqual([...new Set([...a, ...b])].sort((x, y) => x - y));
        expect(unionIndexIntervals(formatIndexIntervals(b), formatIndexIntervals(a))).toBe(union);
      }),
    );
  });
});
