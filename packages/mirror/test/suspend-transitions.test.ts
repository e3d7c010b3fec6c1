// The suspend rule every kind shares: transitions go down once, a standing value never.
import { describe, expect, it } from 'vitest';
import { heldByWorker, suspendRecordUpdate, suspendSentAnnotation, suspendTransition } from '../src/index.ts';

const sent = (value: string | undefined): { metadata: { annotations: Record<string, string> } } => ({
  metadata: { annotations: value === undefined ? {} : { [suspendSentAnnotation]: value } },
});

describe('suspend transitions', () => {
  it('sends a change of intent once, never the standing value over a worker that holds the mirror', () => {
    expect(suspendTransition(true, sent('false'), false)).toBe(true);
    expect(suspendTransition(false, sent('true'), true)).toBe(false);
    // Resumed once already; the worker suspended it since: left held.
    expect(suspendTransition(false, sent('false'), true)).toBeUndefined();
  });

  it('brings a mirror without the record to the intent once, from its own value', () => {
    expect(suspendTransition(false, sent(undefined), true)).toBe(false);
    expect(suspendTransition(false, sent(undefined), false)).toBeUndefined();
  });

  it('records what was sent only when it changed', () => {
    expect(suspendRecordUpdate(true, sent('false'))).toEqual({ [suspendSentAnnotation]: 'true' });
    expect(suspendRecordUpdate(true, sent('true'))).toBeUndefined();
  });

  it('calls a mirror held by its worker only when suspended there while jobrelay last said run', () => {
    expect(heldByWorker(false, sent('false'), true)).toBe(true);
    expect(heldByWorker(true, sent('false'), true)).toBe(false);
    expect(heldByWorker(false, sent(undefined), true)).toBe(false);
    expect(heldByWorker(false, sent('false'), false)).toBe(false);
  });
});
