import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ApiProblem } from './problems.ts';

export const pageQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe('Items per page (1 to 1000, default 100).'),
  continue: z
    .string()
    .max(1024)
    .optional()
    .describe('The `continue` token of the previous page, with the same filters.'),
});

interface ContinueToken {
  /** Sort key of the last item sent: the next page starts after it. */
  after: string;
  /** Digest of the filters the token was made for; another filter set makes it invalid. */
  filters: string;
}

function digest(filters: unknown): string {
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
}

/** The key a page starts after, from a continue token made for these filters. */
function startAfter(continueToken: string | undefined, filterDigest: string): string | undefined {
  if (continueToken === undefined) return undefined;
  let token: ContinueToken;
  try {
    token = JSON.parse(Buffer.from(continueToken, 'base64url').toString('utf8')) as ContinueToken;
  } catch {
    throw invalidToken('it is not a token this API issued');
  }
  if (typeof token?.after !== 'string' || typeof token.filters !== 'string')
    throw invalidToken('it is not a token this API issued');
  if (token.filters !== filterDigest)
    throw invalidToken('it was issued for other filters; repeat the first request without continue');
  return token.after;
}

function nextToken(last: string, filterDigest: string): string {
  const next: ContinueToken = { after: last, filters: filterDigest };
  return Buffer.from(JSON.stringify(next)).toString('base64url');
}

/**
 * Keyset pagination over items sorted by a unique key: a page is the `limit` items after the
 * token's key. Items added or removed between pages never make the next page repeat or skip
 * one that stayed (unlike offsets), like the apiserver's continue tokens.
 */
export function paginate<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  page: { limit: number; continue?: string | undefined },
  filters: unknown,
): { items: T[]; continue?: string } {
  const filterDigest = digest(filters);
  const after = startAfter(page.continue, filterDigest);
  const sorted = [...items].sort((a, b) => compare(keyOf(a), keyOf(b)));
  const start = after === undefined ? 0 : sorted.findIndex((item) => compare(keyOf(item), after) > 0);
  const rest = start < 0 ? [] : sorted.slice(start);
  const pageItems = rest.slice(0, page.limit);
  if (rest.length <= page.limit) return { items: pageItems };
  return { items: pageItems, continue: nextToken(keyOf(pageItems[pageItems.length - 1]!), filterDigest) };
}

/**
 * The same pages, tokens and errors as paginate() over the items `select` returns, for keys
 * already sorted (by the same code-unit order, unique): the page's start is found by binary
 * search and only keys up to the page's end (and one more match) are looked at, instead of
 * selecting and sorting every item per request. `select` returns undefined for a key whose
 * item is filtered out (or gone).
 */
export function paginateSorted<T>(
  sortedKeys: readonly string[],
  select: (key: string) => T | undefined,
  page: { limit: number; continue?: string | undefined },
  filters: unknown,
): { items: T[]; continue?: string } {
  const filterDigest = digest(filters);
  const after = startAfter(page.continue, filterDigest);
  let index = 0;
  if (after !== undefined) {
    let high = sortedKeys.length;
    while (index < high) {
      const middle = (index + high) >>> 1;
      if (compare(sortedKeys[middle]!, after) > 0) high = middle;
      else index = middle + 1;
    }
  }
  const items: T[] = [];
  let last = '';
  for (; index < sortedKeys.length; index++) {
    const key = sortedKeys[index]!;
    const item = select(key);
    if (item === undefined) continue;
    // One more match after a full page: there is a next page.
    if (items.length === page.limit) return { items, continue: nextToken(last, filterDigest) };
    items.push(item);
    last = key;
  }
  return { items };
}

/** Sorts keys as paginate() and paginateSorted() order them. */
export function sortKeys(keys: string[]): string[] {
  return keys.sort(compare);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function invalidToken(why: string): ApiProblem {
  return new ApiProblem('validation-failed', `the continue token is not valid: ${why}`, {
    errors: [{ path: 'querystring.continue', message: why }],
  });
}
