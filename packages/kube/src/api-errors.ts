/** The HTTP status of a failed Kubernetes API call, if it was one. */
export function statusCodeOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
export const isConflict = (err: unknown): boolean =>
  statusCodeOf(err) === 409 && reasonOf(err) !== 'AlreadyExists';
export const isAlreadyExists = (err: unknown): boolean =>
  statusCodeOf(err) === 409 && reasonOf(err) === 'AlreadyExists';

function parsedBody(err: unknown): { reason?: string; message?: string } | undefined {
  const body = (err as { body?: unknown } | undefined)?.body;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as { reason?: string; message?: string };
    } catch {
      return undefined;
    }
  }
  return body && typeof body === 'object' ? (body as { reason?: string; message?: string }) : undefined;
}

/** The Status reason (`AlreadyExists`, `Conflict`, `Invalid`, ...) of a failed call. */
export function reasonOf(err: unknown): string | undefined {
  return parsedBody(err)?.reason;
}

/**
 * One line for logs and Events: the apiserver's own message when there is one. Never the
 * request, its headers or the client configuration, which can carry credentials.
 */
export function describeApiError(err: unknown): string {
  const code = statusCodeOf(err);
  const message = parsedBody(err)?.message;
  if (code !== undefined) return message ? `${message} (HTTP ${code})` : `HTTP ${code}`;
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${err.message}: ${cause.code}` : err.message;
  }
  return String(err);
}

/** HTTP statuses by which an apiserver refuses the object sent, not the moment it was sent. */
const refusalCodes = new Set([400, 403, 413, 422]);
const refusalMessageLimit = 512;

/**
 * An apiserver refusing the object itself (400 BadRequest, 403 Forbidden by an admission
 * policy, a quota or RBAC, 413 too large, 422 Invalid): sending it again as it is will not
 * help. Its code and message (the apiserver's own, at most 512 characters), else undefined.
 */
export function refusalOf(err: unknown): { code: number; message: string } | undefined {
  const code = statusCodeOf(err);
  if (code === undefined || !refusalCodes.has(code)) return undefined;
  const message = parsedBody(err)?.message ?? `HTTP ${code}`;
  return {
    code,
    message: message.length > refusalMessageLimit ? `${message.slice(0, refusalMessageLimit - 1)}…` : message,
  };
}
