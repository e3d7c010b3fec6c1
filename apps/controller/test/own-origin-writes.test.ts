import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OwnOriginWrites } from '../src/own-origin-writes.ts';

const key = 'job/team/a';

describe('OwnOriginWrites', () => {
  it('holds what comes while a write is in flight, and judges it on the answer', () => {
    const writes = new OwnOriginWrites();
    writes.writing(key);
    // Its own echo, before the answer: held, then taken as an echo that came before the plan.
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.wrote(key, '11')).toBe(false);
    expect(writes.planned(key, '11', true)).toBe(false);
    expect(writes.size).toBe(0);
    // Another version came too: someone else's, reconciled once the answer is read.
    writes.writing(key);
    expect(writes.needsReconcile(key, '12')).toBe(false);
    expect(writes.needsReconcile(key, '13')).toBe(false);
    expect(writes.wrote(key, '13')).toBe(true);
    // No answer (a failure, a conflict): what came is reconciled; nothing came, nothing is.
    writes.writing(key);
    expect(writes.needsReconcile(key, '14')).toBe(false);
    expect(writes.unanswered(key)).toBe(true);
    writes.writing(key);
    expect(writes.unanswered(key)).toBe(false);
  });

  it('two writers at once: nothing held is taken for an echo, everything is reconciled', () => {
    const writes = new OwnOriginWrites();
    writes.writing(key);
    writes.writing(key);
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.wrote(key, '11')).toBe(true);
    expect(writes.needsReconcile(key, '12')).toBe(false);
    expect(writes.wrote(key, '12')).toBe(true);
    // Both answered: the next event is judged as usual.
    expect(writes.needsReconcile(key, '13')).toBe(true);
  });

  it('still skips an earlier write’s echo that arrives while the next write is in flight', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.planned(key, '11', true)).toBe(false);
    writes.writing(key);
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.wrote(key, '12')).toBe(false);
  });

  it('skips the echo that comes after a settled plan from the written version', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.awaits(key, '11')).toBe(true);
    expect(writes.planned(key, '11', true)).toBe(false);
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.size).toBe(0);
    // The next event of the key is someone else's: reconciled.
    expect(writes.needsReconcile(key, '12')).toBe(true);
  });

  it('holds an echo that comes before the plan, and drops it once the plan settles', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.planned(key, '11', true)).toBe(false);
    expect(writes.size).toBe(0);
  });

  it('hands a held echo back when the plan from the written version still has work', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.needsReconcile(key, '11')).toBe(false);
    expect(writes.planned(key, '11', false)).toBe(true);
    expect(writes.size).toBe(0);
  });

  it('lets a later echo through when the plan from the written version still has work', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.planned(key, '11', false)).toBe(false);
    expect(writes.needsReconcile(key, '11')).toBe(true);
  });

  it('reconciles any other version, and forgets the write', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    expect(writes.needsReconcile(key, '10')).toBe(true);
    expect(writes.awaits(key, '11')).toBe(false);
    expect(writes.needsReconcile(key, '11')).toBe(true);
  });

  it('awaits only the last version written, and nothing after forget', () => {
    const writes = new OwnOriginWrites();
    writes.wrote(key, '11');
    writes.wrote(key, '12');
    expect(writes.awaits(key, '11')).toBe(false);
    expect(writes.planned(key, '11', true)).toBe(false);
    expect(writes.needsReconcile(key, '11')).toBe(true);
    writes.wrote(key, '13');
    writes.forget(key);
    expect(writes.awaits(key, '13')).toBe(false);
    expect(writes.needsReconcile(key, '13')).toBe(true);
    writes.wrote(key, undefined);
    expect(writes.size).toBe(0);
  });

  it('never loses work: an echo is reconciled unless a plan from its version settled', () => {
    // Any interleaving of one write, its echo and the plan's outcome: the echo's version is
    // reconciled (by the echo, or handed back by planned) exactly when the plan did not settle.
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), (echoFirst, settled) => {
        const writes = new OwnOriginWrites();
        writes.wrote(key, '11');
        let reconciled = false;
        if (echoFirst) {
          reconciled ||= writes.needsReconcile(key, '11');
          reconciled ||= writes.planned(key, '11', settled);
        } else {
          reconciled ||= writes.planned(key, '11', settled);
          reconciled ||= writes.needsReconcile(key, '11');
        }
        expect(reconciled).toBe(!settled);
        expect(writes.size).toBe(0);
      }),
    );
  });
});
