import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inNamespace, readNamespace } from '../src/namespace-scope.ts';

describe('readNamespace', () => {
  it('takes an empty field as every namespace, and a namespace name as it is', () => {
    expect(readNamespace('')).toEqual({ ok: true, namespace: undefined });
    expect(readNamespace('   ')).toEqual({ ok: true, namespace: undefined });
    expect(readNamespace(' team-a ')).toEqual({ ok: true, namespace: 'team-a' });
    expect(readNamespace('a'.repeat(63))).toEqual({ ok: true, namespace: 'a'.repeat(63) });
  });

  it('refuses what no namespace can be called, saying what a name looks like', () => {
    for (const bad of ['Team-A', 'team_a', '-team', 'team-', 'a'.repeat(64), 'team a', 'ns/x', '../x']) {
      const read = readNamespace(bad);
      expect(read.ok, bad).toBe(false);
      if (!read.ok) expect(read.message).toContain('is not a namespace name');
    }
  });
});

describe('inNamespace', () => {
  it('leaves a path alone for every namespace, and adds the parameter for one', () => {
    expect(inNamespace('/api/v1/workloads', undefined)).toBe('/api/v1/workloads');
    expect(inNamespace('/api/v1/workloads', 'team-a')).toBe('/api/v1/workloads?namespace=team-a');
    expect(inNamespace('/api/v1/watch?kinds=workloads', 'team-a')).toBe(
      '/api/v1/watch?kinds=workloads&namespace=team-a',
    );
  });

  it('keeps the query it was given and adds exactly that namespace', () => {
    const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    const query = fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string(), { maxKeys: 3 });
    fc.assert(
      fc.property(name, query, (namespace, params) => {
        const path = `/api/v1/x${Object.keys(params).length ? `?${new URLSearchParams(params)}` : ''}`;
        const url = new URL(inNamespace(path, namespace), 'http://api');
        expect(url.searchParams.getAll('namespace')).toEqual(
          Object.hasOwn(params, 'namespace') ? [params.namespace!, namespace] : [namespace],
        );
        for (const [key, value] of Object.entries(params))
          expect(url.searchParams.getAll(key)[0]).toBe(value);
      }),
    );
  });
});
