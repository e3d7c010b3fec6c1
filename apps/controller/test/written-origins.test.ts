import type { KubeObject } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import { WrittenOrigins } from '../src/written-origins.ts';

const job = (uid: string, resourceVersion: string, cluster?: string): KubeObject => ({
  metadata: {
    name: 'a',
    namespace: 'team',
    uid,
    resourceVersion,
    ...(cluster ? { annotations: { placed: cluster } } : {}),
  },
});

describe('WrittenOrigins', () => {
  it('answers the written version while the cache holds the version it was written over', () => {
    const written = new WrittenOrigins();
    const read = job('u1', '10');
    const answer = job('u1', '11', 'worker-1');
    written.record('batch/team/a', '10', answer);
    expect(written.newest('batch/team/a', read)).toBe(answer);
    // Asked again before the watch caught up: still the answer.
    expect(written.newest('batch/team/a', read)).toBe(answer);
  });

  it('gives the cache back once it holds any other version, and forgets the entry', () => {
    const written = new WrittenOrigins();
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    const caughtUp = job('u1', '11', 'worker-1');
    expect(written.newest('batch/team/a', caughtUp)).toBe(caughtUp);
    expect(written.size).toBe(0);
    // A later write by someone else, seen before the answer came back, also wins.
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    const later = job('u1', '12');
    expect(written.newest('batch/team/a', later)).toBe(later);
  });

  it('never answers for another object of the same name, or when the origin is gone', () => {
    const written = new WrittenOrigins();
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    // Deleted and recreated with a version string that happens to match: another UID.
    const recreated = job('u2', '10');
    expect(written.newest('batch/team/a', recreated)).toBe(recreated);
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    expect(written.newest('batch/team/a', undefined)).toBeUndefined();
    expect(written.size).toBe(0);
  });

  it('follows writes in a row: while the cache holds any version one went over, the last answer', () => {
    const written = new WrittenOrigins();
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    // A status written over the placement's answer, before the watch brought either.
    const status = job('u1', '12', 'worker-1');
    written.record('batch/team/a', '11', status);
    expect(written.newest('batch/team/a', job('u1', '10'))).toBe(status);
    // The watch brings the placement: the status answer is still the newest.
    expect(written.newest('batch/team/a', job('u1', '11', 'worker-1'))).toBe(status);
    // The same answer noted again (the placer notes its executor's run) changes nothing.
    written.record('batch/team/a', '10', job('u1', '12', 'worker-1'));
    expect(written.newest('batch/team/a', job('u1', '10'))).toBe(status);
    // Then its echo: the cache rules.
    const echo = job('u1', '12', 'worker-1');
    expect(written.newest('batch/team/a', echo)).toBe(echo);
    expect(written.size).toBe(0);
  });

  it('a write over a version the last answer did not produce starts over: older versions are not vouched for', () => {
    const written = new WrittenOrigins();
    written.record('batch/team/a', '10', job('u1', '11'));
    // Written over a version someone else made after 11 (a patch without a precondition).
    const answer = job('u1', '14');
    written.record('batch/team/a', '13', answer);
    expect(written.newest('batch/team/a', job('u1', '13'))).toBe(answer);
    const stale = job('u1', '10');
    expect(written.newest('batch/team/a', stale)).toBe(stale);
    expect(written.size).toBe(0);
  });
});
