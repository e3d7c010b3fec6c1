import { Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LogOutput } from '../src/log-output.ts';

/** A worker's log response that never stops talking: a chunk per turn of the event loop, as a socket gives them. */
function chattyLog(chunkBytes: number) {
  let produced = 0;
  const source = new Readable({
    read() {
      setImmediate(() => {
        produced += chunkBytes;
        this.push(`${'x'.repeat(chunkBytes - 1)}\n`);
      });
    },
  });
  return {
    source,
    get produced() {
      return produced;
    },
  };
}

describe('LogOutput', () => {
  it('pauses a chatty upstream while the client does not read, and resumes it when it does', async () => {
    const output = new LogOutput();
    const log = chattyLog(4096);
    log.source.on('data', (chunk: Buffer) => output.write(chunk, log.source));
    for (let i = 0; i < 200; i++) await tick();

    // Nobody reads: the upstream is paused, and what waits is bounded by the high-water mark.
    expect(log.source.isPaused()).toBe(true);
    const highWaterMark = output.stream.writableHighWaterMark + output.stream.readableHighWaterMark;
    expect(output.bufferedBytes).toBeLessThanOrEqual(highWaterMark + 4096);
    const producedWhilePaused = log.produced;
    for (let i = 0; i < 200; i++) await tick();
    // Paused means paused: nothing more was pulled from the worker.
    expect(log.produced - producedWhilePaused).toBeLessThanOrEqual(log.source.readableHighWaterMark + 4096);

    // The client reads: the upstream flows again.
    let read = 0;
    output.stream.on('data', (chunk: Buffer) => {
      read += chunk.length;
    });
    for (let i = 0; i < 200; i++) await tick();
    expect(read).toBeGreaterThan(highWaterMark);
    expect(log.produced).toBeGreaterThan(producedWhilePaused + highWaterMark);
    log.source.destroy();
    output.end();
  });

  it('ends with the last line on a line of its own, once', async () => {
    const output = new LogOutput();
    const text: string[] = [];
    output.stream.on('data', (chunk: Buffer) => text.push(chunk.toString()));
    const ended = new Promise((resolve) => output.stream.on('end', resolve));
    output.write('a complete line\n');
    output.write('half a line');
    output.end('[jobrelay] stream closed (forbidden): no\n');
    output.end('[jobrelay] again\n');
    output.write('too late\n');
    await ended;
    expect(text.join('')).toBe('a complete line\nhalf a line\n[jobrelay] stream closed (forbidden): no\n');
  });
});
