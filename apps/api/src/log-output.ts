import { PassThrough, type Readable } from 'node:stream';

/**
 * The text a log read sends its client, merged from one or more workers' log responses, with
 * backpressure: when the client reads slower than the workers write, the response that wrote is
 * paused until the client has taken what waits (`drain`), so TCP slows the worker down instead of
 * the API's memory growing. What waits is at most the stream's high-water mark plus one chunk
 * per response.
 */
export class LogOutput {
  readonly stream = new PassThrough();
  readonly #paused = new Set<Readable>();
  #atLineStart = true;
  #ended = false;

  constructor() {
    // Writes after the client left are dropped, never thrown.
    this.stream.on('error', () => {});
    this.stream.on('drain', () => this.resumeAll());
  }

  /** Bytes written and not yet taken by the client's response. */
  get bufferedBytes(): number {
    return this.stream.readableLength + this.stream.writableLength;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Sends text; when the client is behind, pauses `from` (the response it came from). */
  write(text: string | Buffer, from?: Readable): void {
    if (this.#ended || text.length === 0) return;
    const ok = this.stream.write(text);
    this.#atLineStart = (typeof text === 'string' ? text.at(-1) : text.at(-1) === 10 ? '\n' : '') === '\n';
    if (!ok && from) {
      from.pause();
      this.#paused.add(from);
    }
  }

  /** A response that ended or was closed is no longer resumed. */
  forget(from: Readable): void {
    this.#paused.delete(from);
  }

  resumeAll(): void {
    for (const from of this.#paused) from.resume();
    this.#paused.clear();
  }

  /** Ends the text, after `lastLine` on a line of its own when given. Idempotent. */
  end(lastLine?: string): void {
    if (this.#ended) return;
    if (lastLine) this.write(`${this.#atLineStart ? '' : '\n'}${lastLine}`);
    this.#ended = true;
    // Paused responses are resumed so that closing them is noticed (their 'close' fires).
    this.resumeAll();
    this.stream.end();
  }
}
