/** One event of a text/event-stream, as the HTML standard's parser dispatches it. */
export interface ServerSentEvent {
  /** `message` when the stream names none. */
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * Incremental text/event-stream parser (HTML standard, "event stream interpretation"): feed it
 * the decoded text as it arrives, in chunks cut anywhere, and it returns the complete events.
 * The browser's EventSource cannot send an Authorization header, so the dashboard reads
 * /api/v1/watch with fetch() and parses the frames itself.
 */
export class ServerSentEventParser {
  private buffer = '';
  /** A chunk ended on '\r': a '\n' starting the next one belongs to the same line end. */
  private pendingCarriageReturn = false;
  private eventType = '';
  private data: string[] = [];
  private lastEventId: string | undefined;
  /** The reconnection delay the server asked for (`retry:`), if any. */
  retryMs: number | undefined;

  push(chunk: string): ServerSentEvent[] {
    let text = chunk;
    if (this.pendingCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.pendingCarriageReturn = false;
    this.buffer += text;
    const events: ServerSentEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) break;
      const line = this.buffer.slice(0, end);
      let skip = 1;
      if (this.buffer[end] === '\r') {
        if (end + 1 === this.buffer.length) this.pendingCarriageReturn = true;
        else if (this.buffer[end + 1] === '\n') skip = 2;
      }
      this.buffer = this.buffer.slice(end + skip);
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventType = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const type = this.eventType;
    const data = this.data;
    this.eventType = '';
    this.data = [];
    if (data.length === 0) return undefined;
    return { event: type || 'message', data: data.join('\n'), id: this.lastEventId };
  }
}
