import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originKey, originKeyNamespace, splitOriginKey } from '../src/dispatched-kinds.ts';

describe('originKeyNamespace', () => {
  it('is the namespace splitOriginKey reads, for any kind, namespace and name', () => {
    const segment = fc.stringMatching(/^[a-z0-9.-]{0,20}$/);
    fc.assert(
      fc.property(segment, segment, fc.stringMatching(/^[a-z0-9./-]{1,30}$/), (kind, namespace, name) => {
        const key = originKey(kind, `${namespace}/${name}`);
        expect(originKeyNamespace(key)).toBe(splitOriginKey(key).namespace);
        expect(originKeyNamespace(key)).toBe(namespace);
      }),
    );
  });
});
