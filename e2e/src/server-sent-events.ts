/** One event of a server-sent event stream, its data parsed as JSON. */
export interface ServerSentEvent<T> {
  event: string;
  data: T;
  /** When it arrived (Date.now()). */
  receivedAt: number;
}

/**
 * Collects the events of a text/event-stream response into `events` as they arrive; `done`
 * settles when the stream ends or is aborted (tests abort it when they have seen enough), and
 * `endedAt` is then when that was.
 */
export function collectServerSentEvents<T>(response: Response): {
  events: ServerSentEvent<T>[];
  done: Promise<void>;
  endedAt: () => number | undefined;
} {
  const events: ServerSentEvent<T>[] = [];
  let ended: number | undefined;
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as T, receivedAt: Date.now() });
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted at the end of the test
    }
    ended = Date.now();
  })();
  return { events, done, endedAt: () => ended };
}
