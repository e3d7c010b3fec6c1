import type { ServerResponse } from 'node:http';

export interface EventStreamWriterOptions {
  /**
   * Unsent bytes (the response's and its socket's buffers) past which the reader is too slow:
   * measured before each write, so a reader that takes each event before the next one comes is
   * never too slow, however large one event is.
   */
  maxBufferedBytes: number;
  /** Called once, instead of a write, when more than maxBufferedBytes still wait unsent. */
  onOverflow: (bufferedBytes: number) => void;
  /** After end(), how long a reader gets to take the last bytes before the socket is destroyed. */
  endGraceMs?: number;
}

/**
 * Writes server-sent events to a response without buffering for a slow reader without bound.
 * An event stream cannot be paused (every change goes to every subscriber as it happens), so
 * write() returning false is honoured by watching what stays unsent: past the bound the reader
 * is reported (onOverflow) and dropped by whoever ends the stream. What waits for one reader is
 * at most the bound, one event and the last frame.
 */
export class EventStreamWriter {
  readonly #res: ServerResponse;
  readonly #options: Required<EventStreamWriterOptions>;
  #overflowed = false;
  #ended = false;

  constructor(res: ServerResponse, options: EventStreamWriterOptions) {
    this.#res = res;
    this.#options = { endGraceMs: 5_000, ...options };
  }

  /** What the response and its socket hold unsent. */
  get bufferedBytes(): number {
    return this.#ended && this.#res.destroyed ? 0 : this.#res.writableLength;
  }

  event(name: string, data: unknown): void {
    this.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  write(frame: string): void {
    if (this.#ended || this.#overflowed || this.#res.destroyed) return;
    const backlog = this.#res.writableLength;
    if (backlog > this.#options.maxBufferedBytes) {
      this.#overflowed = true;
      this.#options.onOverflow(backlog);
      return;
    }
    this.#res.write(frame);
  }

  /**
   * Ends the stream with a last frame. A reader that does not take it within the grace time is
   * cut off, so a dropped slow reader's buffer is freed whether it reads again or not.
   */
  end(lastFrame?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#res.destroyed) return;
    this.#res.end(lastFrame);
    const timer = setTimeout(() => {
      if (!this.#res.writableFinished) this.#res.destroy();
    }, this.#options.endGraceMs);
    timer.unref();
    this.#res.once('close', () => clearTimeout(timer));
  }
}
