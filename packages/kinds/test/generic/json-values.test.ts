import { describe, expect, it } from 'vitest';
import {
  absentWhenNullOrEmpty,
  absentWhenZeroValue,
  agrees,
  equalIgnoringAbsent,
  jsonEqual,
  mergeObjects,
  mergePatchTowards,
  objectAt,
  valueAt,
} from '../../src/generic/json-values.ts';

describe('jsonEqual', () => {
  it('ignores key order and undefined members, not array order', () => {
    expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1, c: undefined })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: null }, {})).toBe(false);
  });
});

describe('equalIgnoringAbsent', () => {
  it('drops what the rule calls absent, at every depth', () => {
    expect(equalIgnoringAbsent({ a: { b: null, c: [] } }, {}, absentWhenNullOrEmpty)).toBe(true);
    expect(equalIgnoringAbsent({ a: 0 }, {}, absentWhenNullOrEmpty)).toBe(false);
    expect(equalIgnoringAbsent({ a: 0, b: '', c: { d: false } }, {}, absentWhenZeroValue)).toBe(true);
    expect(equalIgnoringAbsent([{ a: '' }], [{}], absentWhenZeroValue)).toBe(true);
  });
});

describe('agrees and mergePatchTowards', () => {
  it('ignores fields only the current value has (defaults), not differing ones', () => {
    expect(agrees({ a: 1, b: 2 }, { a: 1 })).toBe(true);
    expect(agrees({ a: 1 }, { a: 2 })).toBe(false);
    expect(agrees([{ a: 1, extra: true }], [{ a: 1 }])).toBe(true);
    expect(agrees([{ a: 1 }, { a: 2 }], [{ a: 1 }])).toBe(false);
    expect(agrees(undefined, { a: 1 })).toBe(false);
  });

  it('patches objects field by field and sends differing arrays whole', () => {
    const have = { keep: 1, nested: { x: 1, y: 2 }, list: [{ n: 'a', v: 1, d: 0 }] };
    const want = { nested: { x: 5 }, list: [{ n: 'a', v: 2 }] };
    expect(mergePatchTowards(have, want)).toEqual({ nested: { x: 5 }, list: [{ n: 'a', v: 2 }] });
    expect(mergePatchTowards(have, { nested: { x: 1 } })).toBeUndefined();
    expect(mergePatchTowards(undefined, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });
});

describe('paths', () => {
  it('reads through objects and array indexes', () => {
    const object = { spec: { items: [{ a: 1 }, { a: 2 }] } };
    expect(valueAt(object, 'spec.items.1.a')).toBe(2);
    expect(valueAt(object, 'spec.missing.a')).toBeUndefined();
    expect(valueAt(object, 'spec.items.a')).toBeUndefined();
  });

  it('builds and merges nested patches', () => {
    expect(objectAt('a.b.c', 1)).toEqual({ a: { b: { c: 1 } } });
    expect(mergeObjects(objectAt('a.b', 1), objectAt('a.c', [2]))).toEqual({ a: { b: 1, c: [2] } });
  });
});
