import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServerSentEventParser } from '../src/server-sent-event-parser.ts';

const frames =
  ': jobrelay watch\nretry: 2000\n\n' +
  'event: workload\ndata: {"type":"added","object":{"name":"a"}}\n\n' +
  ': keep-alive\n\n' +
  'event: cluster\ndata: {"type":"modified"}\n\n';

describe('ServerSentEventParser', () => {
  it('parses the API watch stream: named events, comments skipped, retry remembered', () => {
    const parser = new ServerSentEventParser();
    const events = parser.push(frames);
    expect(events).toEqual([
      { event: 'workload', data: '{"type":"added","object":{"name":"a"}}', id: undefined },
      { event: 'cluster', data: '{"type":"modified"}', id: undefined },
    ]);
    expect(parser.retryMs).toBe(2000);
  });

  it('joins multi-line data, defaults the event name to message, keeps the last id, strips one space', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push('id: 7\ndata:  two spaces\ndata:x\n\ndata: y\n\n')).toEqual([
      { event: 'message', data: ' two spaces\nx', id: '7' },
      { event: 'message', data: 'y', id: '7' },
    ]);
  });

  it('dispatches nothing for an event without data, and nothing before the blank line', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push('event: workload\n\n')).toEqual([]);
    expect(parser.push('event: workload\ndata: 1\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'workload', data: '1', id: undefined }]);
  });

  it('accepts CRLF and CR line ends, even a CRLF cut between two chunks', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push('event: a\r\ndata: 1\r')).toEqual([]);
    expect(parser.push('\n\r\n')).toEqual([{ event: 'a', data: '1', id: undefined }]);
    expect(parser.push('data: 2\r\r')).toEqual([{ event: 'message', data: '2', id: undefined }]);
  });

  it('gives the same events however the stream is cut into chunks', () => {
    const whole = new ServerSentEventParser().push(frames);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: frames.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set([0, ...cuts, frames.length])].sort((a, b) => a - b);
        const parser = new ServerSentEventParser();
        const events = points.slice(1).flatMap((end, i) => parser.push(frames.slice(points[i], end)));
        expect(events).toEqual(whole);
      }),
    );
  });
});
