import type { KubeObject } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import { WrittenPlacements } from '../src/written-placements.ts';

const job = (uid: string, resourceVersion: string, cluster?: string): KubeObject => ({
  metadata: {
    name: 'a',
    namespace: 'team',
    uid,
    resourceVersion,
    ...(cluster ? { annotations: { placed: cluster } } : {}),
  },
});

describe('WrittenPlacements', () => {
  it('answers the written version while the cache holds the version it was written over', () => {
    const written = new WrittenPlacements();
    const read = job('u1', '10');
    const answer = job('u1', '11', 'worker-1');
    written.record('batch/team/a', '10', answer);
    expect(written.newest('batch/team/a', read)).toBe(answer);
    // Asked again before the watch caught up: still the answer.
    expect(written.newest('batch/team/a', read)).toBe(answer);
  });

  it('gives the cache back once it holds any other version, and forgets the entry', () => {
    const written = new WrittenPlacements();
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
    const written = new WrittenPlacements();
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    // Deleted and recreated with a version string that happens to match: another UID.
    const recreated = job('u2', '10');
    expect(written.newest('batch/team/a', recreated)).toBe(recreated);
    written.record('batch/team/a', '10', job('u1', '11', 'worker-1'));
    expect(written.newest('batch/team/a', undefined)).toBeUndefined();
    expect(written.size).toBe(0);
  });
});
