// The decisions about long-lived responses (the SSE watch, pod log reads): who may open one, how
// often an open one is re-authorized, when it ends and what its last words are. Pure; the
// StreamSupervisor applies them with timers and reviews.
import { type Caller, describePermission, type Permission } from './access-review.ts';
import { ApiProblem, type Problem } from './problems.ts';

export type StreamKind = 'watch' | 'logs';

/** Why a stream ended, as jobrelay_api_streams_closed_total labels it. */
export type StreamEndReason =
  | 'forbidden'
  | 'unauthenticated'
  | 'review-unavailable'
  | 'expired'
  | 'slow-reader'
  | 'shutdown'
  | 'client-left'
  | 'finished';

/**
 * Re-authorization runs at least this far apart. With --auth-cache-seconds 0 the API reuses no
 * answer for requests, and a stream is then re-checked every second: one TokenReview and its
 * SubjectAccessReviews per open token and second, not one per event.
 */
export const minimumRecheckMs = 1_000;

/** Open streams are re-authorized as often as answers are reused, so revocation bites as fast. */
export function recheckIntervalMs(authCacheSeconds: number): number {
  return Math.max(authCacheSeconds * 1000, minimumRecheckMs);
}

/**
 * A re-check that cannot reach the apiserver is forgiven this many times in a row minus one: one
 * blip keeps the stream, a second consecutive failure ends it (the client reconnects, and is then
 * reviewed like any new request).
 */
export const unavailableRechecksTolerated = 2;

export interface StreamCaps {
  /** --max-streams-per-identity */
  perIdentity: number;
  /** --max-open-streams */
  total: number;
}

/** Whether one more stream may open; the 429 that says which cap is full when not. */
export function streamAdmission(
  username: string,
  openByIdentity: number,
  openTotal: number,
  caps: StreamCaps,
): ApiProblem | undefined {
  if (openByIdentity >= caps.perIdentity) {
    return new ApiProblem(
      'too-many-streams',
      `${username} already has ${openByIdentity} open streams (watches and log reads), the most one identity may hold (--max-streams-per-identity ${caps.perIdentity}): close one and retry`,
    );
  }
  if (openTotal >= caps.total) {
    return new ApiProblem(
      'too-many-streams',
      `the API holds ${openTotal} open streams, the most it serves at once (--max-open-streams ${caps.total}); retry shortly`,
      {},
      { 'retry-after': '10' },
    );
  }
  return undefined;
}

/** What one re-check of a stream found. */
export type RecheckOutcome =
  | { kind: 'allowed' }
  | { kind: 'unauthenticated' }
  | { kind: 'forbidden'; missing: Permission }
  | { kind: 'unavailable' };

export type RecheckDecision =
  | { keep: true; unavailableInARow: number }
  | { keep: false; reason: StreamEndReason; problem: ApiProblem };

/** Keep the stream, or end it with the problem its last event carries. */
export function recheckDecision(
  outcome: RecheckOutcome,
  unavailableInARow: number,
  username: string,
): RecheckDecision {
  switch (outcome.kind) {
    case 'allowed':
      return { keep: true, unavailableInARow: 0 };
    case 'unauthenticated':
      return {
        keep: false,
        reason: 'unauthenticated',
        problem: new ApiProblem(
          'unauthenticated',
          'the management cluster no longer accepts this token (TokenReview): it expired or was revoked; this stream is closed, reconnect with a valid token',
        ),
      };
    case 'forbidden':
      return {
        keep: false,
        reason: 'forbidden',
        problem: missingPermissionProblem(username, outcome.missing, ' any more; this stream is closed'),
      };
    case 'unavailable': {
      const inARow = unavailableInARow + 1;
      if (inARow < unavailableRechecksTolerated) return { keep: true, unavailableInARow: inARow };
      return {
        keep: false,
        reason: 'review-unavailable',
        problem: new ApiProblem(
          'unavailable',
          `the management cluster could not re-authorize this stream ${inARow} times in a row; it is closed, reconnect shortly`,
          {},
          { 'retry-after': '5' },
        ),
      };
    }
  }
}

/** The 403 of a missing permission, for a request or (with `ending`) for a stream it ends. */
export function missingPermissionProblem(username: string, missing: Permission, ending = ''): ApiProblem {
  return new ApiProblem(
    'forbidden',
    `${username} is not allowed to ${describePermission(missing)}${ending}`,
    {
      missingPermission:
        'nonResourceURL' in missing
          ? { verb: missing.verb, nonResourceURL: missing.nonResourceURL }
          : {
              verb: missing.verb,
              group: missing.group,
              resource: missing.resource,
              ...(missing.subresource ? { subresource: missing.subresource } : {}),
              ...(missing.namespace ? { namespace: missing.namespace } : {}),
              ...(missing.name ? { name: missing.name } : {}),
            },
    },
  );
}

export function expiredProblem(maxStreamSeconds: number): ApiProblem {
  return new ApiProblem(
    'stream-expired',
    `this stream reached the longest a stream stays open (--max-stream-seconds ${maxStreamSeconds}); reconnect to go on`,
  );
}

export function slowReaderProblem(bufferedBytes: number, limitBytes: number): ApiProblem {
  return new ApiProblem(
    'slow-reader',
    `the client read too slowly: ${bufferedBytes} bytes waited unsent, more than --stream-buffer-bytes ${limitBytes}; this stream is dropped, reconnect and read as it comes`,
  );
}

export const shutdownProblem = (): ApiProblem =>
  new ApiProblem('unavailable', 'the API is shutting down; reconnect', {}, { 'retry-after': '2' });

/** The last frame of an event stream: `event: closed`, the problem as its data. */
export function closedEventFrame(problem: ApiProblem, instance: string | undefined): string {
  const body: Problem = problem.toProblem(instance);
  return `event: closed\ndata: ${JSON.stringify(body)}\n\n`;
}

/** The last line of a plain-text log stream. */
export function closedLogLine(problem: ApiProblem): string {
  return `[jobrelay] stream closed (${problem.code}): ${problem.message}\n`;
}

/** One re-check per token: its streams, and every permission any of them was opened with, once. */
export interface RecheckGroup<S> {
  token: string;
  streams: S[];
  permissions: Permission[];
}

export function recheckGroups<S extends { token: string; permissions: readonly Permission[] }>(
  streams: Iterable<S>,
): RecheckGroup<S>[] {
  const groups = new Map<string, RecheckGroup<S> & { seen: Set<string> }>();
  for (const stream of streams) {
    let group = groups.get(stream.token);
    if (!group) {
      group = { token: stream.token, streams: [], permissions: [], seen: new Set() };
      groups.set(stream.token, group);
    }
    group.streams.push(stream);
    for (const permission of stream.permissions) {
      const key = permissionKey(permission);
      if (group.seen.has(key)) continue;
      group.seen.add(key);
      group.permissions.push(permission);
    }
  }
  return [...groups.values()].map(({ token, streams: members, permissions }) => ({
    token,
    streams: members,
    permissions,
  }));
}

export function permissionKey(permission: Permission): string {
  return 'nonResourceURL' in permission
    ? JSON.stringify([permission.verb, permission.nonResourceURL])
    : JSON.stringify([
        permission.verb,
        permission.group,
        permission.resource,
        permission.subresource ?? '',
        permission.namespace ?? '',
        permission.name ?? '',
      ]);
}

/**
 * A stream's outcome from its group's answers: unauthenticated when the token is refused,
 * forbidden naming the first of its own permissions (in the order it was opened with) that is
 * now denied, unavailable when one of them could not be answered.
 */
export function streamOutcome(
  caller: Caller | undefined | 'unavailable',
  permissions: readonly Permission[],
  answers: ReadonlyMap<string, boolean | 'unavailable'>,
): RecheckOutcome {
  if (caller === 'unavailable') return { kind: 'unavailable' };
  if (!caller) return { kind: 'unauthenticated' };
  let unavailable = false;
  for (const permission of permissions) {
    const answer = answers.get(permissionKey(permission));
    if (answer === false) return { kind: 'forbidden', missing: permission };
    if (answer !== true) unavailable = true;
  }
  return unavailable ? { kind: 'unavailable' } : { kind: 'allowed' };
}
