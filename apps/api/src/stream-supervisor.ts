import { mapWithConcurrency } from '@jobrelay/kube';
import type { Logger } from 'pino';
import {
  type AccessReviewer,
  type Caller,
  type Permission,
  ReviewUnavailableError,
} from './access-review.ts';
import type { ApiMetrics } from './api-metrics.ts';
import type { ApiProblem } from './problems.ts';
import {
  expiredProblem,
  permissionKey,
  recheckDecision,
  recheckGroups,
  recheckIntervalMs,
  type StreamCaps,
  type StreamEndReason,
  type StreamKind,
  shutdownProblem,
  streamAdmission,
  streamOutcome,
} from './stream-policy.ts';

/** Who opened a stream and what it was authorized for, exactly as its request was. */
export interface StreamCredentials {
  caller: Caller;
  /** Kept in memory while the stream is open, to review it again; never logged. */
  token: string;
  permissions: readonly Permission[];
}

export interface StreamSupervisorOptions {
  access: Pick<AccessReviewer, 'authenticate' | 'allowed'>;
  caps: StreamCaps;
  /** --max-stream-seconds */
  maxStreamSeconds: number;
  /** --auth-cache-seconds: open streams are re-authorized as often (recheckIntervalMs). */
  authCacheSeconds: number;
  /** --stream-buffer-bytes: what an event stream may hold unsent for a slow reader. */
  streamBufferBytes: number;
  metrics: ApiMetrics;
  log: Logger;
}

export interface StreamHandlers {
  kind: StreamKind;
  /** Writes the stream's last words (an `event: closed`, a last log line), then closes it. */
  end: (problem: ApiProblem) => void;
  /** Bytes this stream holds unsent now. */
  bufferedBytes: () => number;
}

/** One open stream, as its route holds it. */
export interface SupervisedStream {
  /** Ends it now with this problem (a slow reader), through its `end` handler. */
  end(reason: StreamEndReason, problem: ApiProblem): void;
  /** It is over by itself (the client left, the upstream ended). Idempotent. */
  release(reason: 'client-left' | 'finished'): void;
}

interface OpenStream extends StreamCredentials {
  handlers: StreamHandlers;
  lifetime: NodeJS.Timeout;
  unavailableInARow: number;
  ended: boolean;
}

/** Re-checks run for this many tokens at once: a fleet of streams never floods the apiserver. */
const recheckConcurrency = 8;

/**
 * Every long-lived response of the API (the SSE watch, pod log reads) opens through here: the
 * per-identity and total caps, a maximum lifetime, and re-authorization of each open stream at
 * the access-review cache interval with exactly the permissions it was opened with. A stream
 * whose token is refused or whose right was removed ends with a final event saying why.
 */
export class StreamSupervisor {
  readonly streamBufferBytes: number;
  readonly #options: StreamSupervisorOptions;
  readonly #open = new Set<OpenStream>();
  readonly #byIdentity = new Map<string, number>();
  #recheckTimer: NodeJS.Timeout | undefined;
  #rechecking = false;

  constructor(options: StreamSupervisorOptions) {
    this.#options = options;
    this.streamBufferBytes = options.streamBufferBytes;
    options.metrics.observeStreams(this);
  }

  /** Open streams by kind, for the metrics. */
  openByKind(): Record<StreamKind, number> {
    const counts: Record<StreamKind, number> = { watch: 0, logs: 0 };
    for (const stream of this.#open) counts[stream.handlers.kind] += 1;
    return counts;
  }

  /** Bytes all open streams hold unsent, for the metrics. */
  bufferedBytes(): number {
    let total = 0;
    for (const stream of this.#open) total += stream.handlers.bufferedBytes();
    return total;
  }

  /** Admits a stream or throws the 429 that names the cap it would exceed. */
  open(credentials: StreamCredentials, handlers: StreamHandlers): SupervisedStream {
    const username = credentials.caller.username;
    const refusal = streamAdmission(
      username,
      this.#byIdentity.get(username) ?? 0,
      this.#open.size,
      this.#options.caps,
    );
    if (refusal) throw refusal;
    const stream: OpenStream = {
      ...credentials,
      handlers,
      unavailableInARow: 0,
      ended: false,
      lifetime: setTimeout(
        () => this.#end(stream, 'expired', expiredProblem(this.#options.maxStreamSeconds)),
        this.#options.maxStreamSeconds * 1000,
      ),
    };
    stream.lifetime.unref();
    this.#open.add(stream);
    this.#byIdentity.set(username, (this.#byIdentity.get(username) ?? 0) + 1);
    if (!this.#recheckTimer) {
      this.#recheckTimer = setInterval(
        () => void this.#recheck(),
        recheckIntervalMs(this.#options.authCacheSeconds),
      );
      this.#recheckTimer.unref();
    }
    return {
      end: (reason, problem) => this.#end(stream, reason, problem),
      release: (reason) => this.#forget(stream, reason),
    };
  }

  /** Ends every open stream with a final event saying the API stops (its close hook). */
  close(): void {
    for (const stream of [...this.#open]) this.#end(stream, 'shutdown', shutdownProblem());
  }

  #end(stream: OpenStream, reason: StreamEndReason, problem: ApiProblem): void {
    if (!this.#forget(stream, reason)) return;
    try {
      stream.handlers.end(problem);
    } catch (err) {
      this.#options.log.warn({ err, stream: stream.handlers.kind }, 'a stream could not be ended cleanly');
    }
  }

  /** Removes the stream; false when it was already gone. */
  #forget(stream: OpenStream, reason: StreamEndReason): boolean {
    if (stream.ended) return false;
    stream.ended = true;
    clearTimeout(stream.lifetime);
    this.#open.delete(stream);
    const username = stream.caller.username;
    const left = (this.#byIdentity.get(username) ?? 1) - 1;
    if (left > 0) this.#byIdentity.set(username, left);
    else this.#byIdentity.delete(username);
    this.#options.metrics.streamsClosed.inc({ stream: stream.handlers.kind, reason });
    if (this.#open.size === 0 && this.#recheckTimer) {
      clearInterval(this.#recheckTimer);
      this.#recheckTimer = undefined;
    }
    return true;
  }

  /**
   * One TokenReview per token and one SubjectAccessReview per distinct permission of its
   * streams, fresh (never a cached answer: that could be the one the stream opened with), with
   * the identity the TokenReview returns now (a group removed counts too).
   */
  async #recheck(): Promise<void> {
    if (this.#rechecking) return;
    this.#rechecking = true;
    try {
      await mapWithConcurrency(recheckGroups(this.#open), recheckConcurrency, async (group) => {
        let caller: Caller | undefined | 'unavailable';
        try {
          caller = await this.#options.access.authenticate(group.token, { fresh: true });
        } catch (err) {
          if (!(err instanceof ReviewUnavailableError)) throw err;
          caller = 'unavailable';
        }
        const answers = new Map<string, boolean | 'unavailable'>();
        if (caller && caller !== 'unavailable') {
          const who = caller;
          await Promise.all(
            group.permissions.map(async (permission) => {
              let answer: boolean | 'unavailable';
              try {
                answer = await this.#options.access.allowed(who, permission, { fresh: true });
              } catch (err) {
                if (!(err instanceof ReviewUnavailableError)) throw err;
                answer = 'unavailable';
              }
              answers.set(permissionKey(permission), answer);
            }),
          );
        }
        for (const stream of group.streams) {
          if (stream.ended) continue;
          const decision = recheckDecision(
            streamOutcome(caller, stream.permissions, answers),
            stream.unavailableInARow,
            stream.caller.username,
          );
          if (decision.keep) stream.unavailableInARow = decision.unavailableInARow;
          else this.#end(stream, decision.reason, decision.problem);
        }
      });
    } catch (err) {
      this.#options.log.error({ err }, 'stream re-authorization failed');
    } finally {
      this.#rechecking = false;
    }
  }
}
