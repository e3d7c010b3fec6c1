import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringInterner } from '../src/string-interner.ts';

// A JSON value as an apiserver sends one: objects, arrays, strings, numbers, booleans, nulls.
const json = fc.jsonValue({ maxDepth: 5 });

describe('StringInterner', () => {
  it('leaves every object it walks equal to what it was', () => {
    fc.assert(
      fc.property(json, (value) => {
        const interner = new StringInterner({ generationSize: 8 });
        const copy = structuredClone(value);
        expect(interner.internWithin(copy)).toBe(copy);
        expect(copy).toEqual(value);
      }),
    );
  });

  it('never holds more than two generations, however many strings pass', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string(), { maxLength: 500 }),
        fc.integer({ min: 1, max: 50 }),
        (strings, size) => {
          const interner = new StringInterner({ generationSize: size });
          for (const s of strings) {
            expect(interner.intern(s)).toBe(s);
            expect(interner.size).toBeLessThanOrEqual(2 * size);
          }
        },
      ),
    );
  });

  it('keeps a string that recurs among a flood of unique ones, and forgets the unique ones', () => {
    const interner = new StringInterner({ generationSize: 100 });
    for (let i = 0; i < 10_000; i++) {
      interner.intern(`resource-version-${i}`);
      if (i % 50 === 0) interner.intern('bench-namespace');
    }
    expect(interner.remembers('bench-namespace')).toBe(true);
    expect(interner.remembers('resource-version-0')).toBe(false);
    expect(interner.remembers('resource-version-9999')).toBe(true);
  });

  it('walks nested objects and arrays and passes over strings longer than its limit', () => {
    const interner = new StringInterner({ maxLength: 10 });
    const long = 'x'.repeat(11);
    const job = JSON.parse(
      JSON.stringify({
        metadata: { namespace: 'team-a', annotations: { record: long } },
        spec: { template: { spec: { containers: [{ image: 'busybox', command: ['true', long] }] } } },
      }),
    );
    interner.internWithin(job);
    for (const s of ['team-a', 'busybox', 'true']) expect(interner.remembers(s)).toBe(true);
    expect(interner.remembers(long)).toBe(false);
    expect(interner.size).toBe(3);
  });
});
