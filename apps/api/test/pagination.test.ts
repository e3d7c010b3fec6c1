import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paginate, paginateSorted, sortKeys } from '../src/pagination.ts';
import { ApiProblem } from '../src/problems.ts';

const key = (s: string) => s;

function walk(items: string[], limit: number, filters: unknown = {}): string[][] {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = paginate(items, key, { limit, continue: token }, filters);
    pages.push(page.items);
    token = page.continue;
  } while (token);
  return pages;
}

describe('paginate', () => {
  it('returns every item once, in key order, in pages of at most limit', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 20 }),
        (items, limit) => {
          const pages = walk(items, limit);
          expect(pages.flat()).toEqual([...items].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
          // Only the last page may be short, and no empty page follows a full one.
          for (const page of pages.slice(0, -1)) expect(page.length).toBe(limit);
        },
      ),
    );
  });

  it('neither repeats nor skips an item that stayed when others come and go between pages', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1 }), { minLength: 2, maxLength: 40 }),
        fc.uniqueArray(fc.string({ minLength: 1 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 5 }),
        (items, added, limit) => {
          const first = paginate(items, key, { limit }, {});
          if (!first.continue) return;
          const removed = new Set(items.filter((_, i) => i % 3 === 0));
          const now = [...items.filter((i) => !removed.has(i)), ...added.filter((a) => !items.includes(a))];
          const rest: string[] = [];
          let token: string | undefined = first.continue;
          while (token) {
            const page: { items: string[]; continue?: string } = paginate(
              now,
              key,
              { limit, continue: token },
              {},
            );
            rest.push(...page.items);
            token = page.continue;
          }
          const seen = [...first.items, ...rest];
          expect(new Set(seen).size).toBe(seen.length);
          for (const stayed of items.filter((i) => !removed.has(i))) expect(seen).toContain(stayed);
        },
      ),
    );
  });

  it('refuses a token made for other filters, and one it did not issue, naming the field', () => {
    const token = paginate(['a', 'b', 'c'], key, { limit: 1 }, { phase: 'running' }).continue!;
    const problem = (() => {
      try {
        paginate(['a', 'b', 'c'], key, { limit: 1, continue: token }, { phase: 'failed' });
      } catch (err) {
        return err;
      }
    })();
    expect(problem).toBeInstanceOf(ApiProblem);
    expect((problem as ApiProblem).status).toBe(400);
    expect((problem as ApiProblem).message).toContain('other filters');
    for (const forged of [
      '!!!',
      Buffer.from('{"after":1}').toString('base64url'),
      Buffer.from('null').toString('base64url'),
    ]) {
      expect(() => paginate(['a'], key, { limit: 1, continue: forged }, {})).toThrow(
        /not a token this API issued/,
      );
    }
  });
});

describe('paginateSorted', () => {
  it('gives the pages and tokens paginate gives over the selected items, token by token', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 4 }),
        (items, limit, every) => {
          const selected = (item: string) => item.length % every === 0;
          const sorted = sortKeys([...items]);
          const filters = { every };
          let token: string | undefined;
          do {
            const expected = paginate(items.filter(selected), key, { limit, continue: token }, filters);
            const actual = paginateSorted(
              sorted,
              (item) => (selected(item) ? item : undefined),
              { limit, continue: token },
              filters,
            );
            expect(actual).toEqual(expected);
            token = expected.continue;
          } while (token);
        },
      ),
    );
  });

  it('starts after a token whose key is gone, and refuses tokens as paginate does', () => {
    const first = paginate(['a', 'b', 'c', 'd'], key, { limit: 2 }, {});
    const rest = paginateSorted(['a', 'c', 'd'], (k) => k, { limit: 2, continue: first.continue }, {});
    expect(rest).toEqual({ items: ['c', 'd'] });
    expect(() =>
      paginateSorted(['a'], (k) => k, { limit: 1, continue: first.continue }, { phase: 'failed' }),
    ).toThrow(/other filters/);
    expect(() => paginateSorted(['a'], (k) => k, { limit: 1, continue: '!!!' }, {})).toThrow(
      /not a token this API issued/,
    );
  });
});
