import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepCopy } from '../src/deep-copy.ts';

/** Every object and array reachable from a value. */
function containers(value: unknown, into = new Set<object>()): Set<object> {
  if (value !== null && typeof value === 'object') {
    into.add(value);
    for (const field of Object.values(value)) containers(field, into);
  }
  return into;
}

const apiData = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('deepCopy', () => {
  it('equals what structuredClone gives, and shares no object or array with its input', () => {
    fc.assert(
      fc.property(apiData, (value) => {
        const copied = deepCopy(value);
        expect(copied).toStrictEqual(structuredClone(value));
        const inside = containers(value);
        for (const object of containers(copied)) expect(inside.has(object)).toBe(false);
      }),
    );
  });

  it('leaves out undefined fields, as JSON does', () => {
    const built = { name: 'a', optional: undefined, when: '2026-01-01T00:00:00Z' };
    const copied = deepCopy({ items: [built] });
    expect(copied).toStrictEqual({ items: [{ name: 'a', when: '2026-01-01T00:00:00Z' }] });
    expect(JSON.stringify(copied)).toBe(JSON.stringify({ items: [built] }));
  });

  it('keeps an own "__proto__" key as a key, as JSON.parse gives it', () => {
    const parsed = JSON.parse('{"labels":{"__proto__":{"polluted":true}}}') as { labels: object };
    const copied = deepCopy(parsed);
    expect(Object.getPrototypeOf(copied.labels)).toBe(Object.prototype);
    expect(Object.keys(copied.labels)).toEqual(['__proto__']);
    expect(JSON.stringify(copied)).toBe(JSON.stringify(parsed));
  });
});
