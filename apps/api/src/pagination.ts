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
  let after: string | undefined;
  if (page.continue !== undefined) {
    let token: ContinueToken;
    try {
      token = JSON.parse(Buffer.from(page.continue, 'base64url').toString('utf8')) as ContinueToken;
    } catch {
      throw invalidToken('it is not a token this API issued');
    }
    if (typeof token?.after !== 'string' || typeof token.filters !== 'string')
      throw invalidToken('it is not a token this API issued');
    if (token.filters !== filterDigest)
      throw invalidToken('it was issued for other filters; repeat the first request without continue');
    after = token.after;
  }
  const sorted = [...items].sort((a, b) => compare(keyOf(a), keyOf(b)));
  const start = after === undefined ? 0 : sorted.findIndex((item) => compare(keyOf(item), after) > 0);
  const rest = start < 0 ? [] : sorted.slice(start);
  const pageItems = rest.slice(0, page.limit);
  if (rest.length <= page.limit) return { items: pageItems };
  const last = keyOf(pageItems[pageItems.length - 1]!);
  const next: ContinueToken = { after: last, filters: filterDigest };
  return { items: pageItems, continue: Buffer.from(JSON.stringify(next)).toString('base64url') };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function invalidToken(why: string): ApiProblem {
  return new ApiProblem('validation-failed', `the continue token is not valid: ${why}`, {
    errors: [{ path: 'querystring.continue', message: why }],
  });
}
