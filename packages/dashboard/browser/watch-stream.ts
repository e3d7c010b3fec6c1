import { inNamespace } from '../src/namespace-scope.ts';
import { reconnectDelayMs } from '../src/reconnect-backoff.ts';
import { ServerSentEventParser } from '../src/server-sent-event-parser.ts';
import { type ApiClient, ApiError } from './api-client.ts';

export type WatchState = 'connecting' | 'live' | 'retrying' | 'stopped';

export interface WatchHandlers {
  onEvent(event: string, data: unknown): void;
  /** `live` again after a break: the lists may have missed changes and are read anew. */
  onState(state: WatchState, detail?: string): void;
}

/**
 * Follows /api/v1/watch (server-sent events) with fetch() and a streaming reader, because the
 * browser's EventSource cannot send the Authorization header. Reconnects with backoff after
 * any break; stops for good on 401/403 (the token expired or lost its rights) and says why.
 */
export function watchFleet(
  client: ApiClient,
  streams: string[],
  handlers: WatchHandlers,
  namespace?: string,
  /** The workload kinds to stream (comma-separated names); undefined: every kind. */
  kinds?: string,
): { close(): void } {
  const abort = new AbortController();
  let failures = 0;
  const run = async () => {
    while (!abort.signal.aborted) {
      handlers.onState(failures === 0 ? 'connecting' : 'retrying');
      const parser = new ServerSentEventParser();
      try {
        const response = await client.request(
          'GET',
          inNamespace(
            `/api/v1/watch?kinds=${streams.join(',')}${kinds ? `&kind=${encodeURIComponent(kinds)}` : ''}`,
            namespace,
          ),
          abort.signal,
        );
        handlers.onState('live');
        failures = 0;
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const event of parser.push(value)) {
            try {
              handlers.onEvent(event.event, JSON.parse(event.data) as unknown);
            } catch {
              // a frame that is not JSON is not ours to show
            }
          }
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
          handlers.onState('stopped', err.message);
          return;
        }
      }
      if (abort.signal.aborted) return;
      failures += 1;
      handlers.onState('retrying');
      const delay = Math.max(parser.retryMs ?? 0, reconnectDelayMs(failures, Math.random()));
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
  void run();
  return { close: () => abort.abort() };
}
