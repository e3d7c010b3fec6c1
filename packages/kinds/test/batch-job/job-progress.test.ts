// A Job's progress rules: the core hands the Job adapter an opaque value (the placement record's
// `carried`) and asks these questions about it; the shape and every check are the Job's own.
import type { WorkloadProgress } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { batchJobAdapter } from '../../src/batch-job/batch-job-adapter.ts';
import type { Job, JobStatus } from '../../src/batch-job/job-object.ts';

const rules = batchJobAdapter.progress;
const job = (status?: JobStatus): Job => ({
  metadata: { name: 'train', namespace: 'team-a', uid: 'uid-1' },
  spec: { completions: 4, completionMode: 'Indexed', template: {} },
  ...(status ? { status } : {}),
});

describe('the Job’s carried progress, checked', () => {
  it.each<{ name: string; value: WorkloadProgress; problem: RegExp | undefined }>([
    { name: 'nothing carried', value: null, problem: undefined },
    { name: 'counts', value: { succeeded: 2, failed: 1 }, problem: undefined },
    {
      name: 'counts and index sets',
      value: { succeeded: 2, failed: 0, completedIndexes: '0,2' },
      problem: undefined,
    },
    {
      name: 'a count as text',
      value: { succeeded: '2', failed: 0 },
      problem: /^succeeded: .*expected number/,
    },
    { name: 'a negative count', value: { succeeded: 0, failed: -1 }, problem: /^failed: / },
    { name: 'a fractional count', value: { succeeded: 0.5, failed: 0 }, problem: /^succeeded: / },
    {
      name: 'an index set that is not text',
      value: { succeeded: 0, failed: 0, failedIndexes: [1] },
      problem: /^failedIndexes: /,
    },
    { name: 'no counts', value: {}, problem: /^succeeded: .*; failed: / },
    { name: 'an array', value: [1, 2], problem: /^\(root\): / },
    { name: 'a number', value: 3, problem: /^\(root\): / },
  ])('$name', ({ value, problem }) => {
    if (problem === undefined) expect(rules.problem(value)).toBeUndefined();
    else expect(rules.problem(value)).toMatch(problem);
  });

  it('refuses to build a mirror from a value that is not a Job’s progress, naming the field', () => {
    const context = {
      originId: 'mgmt',
      attempt: 2,
      carried: { succeeded: 'x', failed: 0 },
      now: new Date(0),
    };
    expect(() => batchJobAdapter.buildMirror(job(), context)).toThrow(
      /^the carried progress is not a Job's: succeeded: /,
    );
  });
});

describe('the Job’s progress, read from its origin', () => {
  it('is its counters and the index sets it has', () => {
    expect(rules.of(job())).toEqual({ succeeded: 0, failed: 0 });
    expect(rules.of(job({ succeeded: 2, failed: 1, completedIndexes: '0,3', failedIndexes: '' }))).toEqual({
      succeeded: 2,
      failed: 1,
      completedIndexes: '0,3',
    });
  });
});

describe('whether carried progress holds any work done', () => {
  it.each<[string, WorkloadProgress, boolean]>([
    ['nothing carried', null, false],
    ['zero counts', { succeeded: 0, failed: 0 }, false],
    ['empty index sets', { succeeded: 0, failed: 0, completedIndexes: '', failedIndexes: '' }, false],
    ['a success', { succeeded: 1, failed: 0 }, true],
    ['a failure', { succeeded: 0, failed: 1 }, true],
    ['a completed index not counted yet', { succeeded: 0, failed: 0, completedIndexes: '2' }, true],
  ])('%s: %s', (_name, value, expected) => {
    expect(rules.holdsAny(value)).toBe(expected);
  });
});

describe('whether the origin moved past what its attempt carried', () => {
  it.each<[string, JobStatus | undefined, WorkloadProgress, boolean]>([
    ['nothing ran, nothing carried', undefined, null, false],
    ['counts equal to those carried', { succeeded: 2, failed: 1 }, { succeeded: 2, failed: 1 }, false],
    ['a success more', { succeeded: 3, failed: 1 }, { succeeded: 2, failed: 1 }, true],
    ['a failure more', { succeeded: 2, failed: 2 }, { succeeded: 2, failed: 1 }, true],
    ['a success in this attempt, nothing carried', { succeeded: 1 }, null, true],
    // The Job controller adds an index to its set one status update before it counts the pod.
    [
      'an index completed before it is counted',
      { succeeded: 1, completedIndexes: '0,1' },
      { succeeded: 1, failed: 0, completedIndexes: '0' },
      true,
    ],
    [
      'an index failed for good before it is counted',
      { failed: 1, failedIndexes: '1,2' },
      { succeeded: 0, failed: 1, failedIndexes: '1' },
      true,
    ],
    [
      'the same index sets',
      { succeeded: 2, completedIndexes: '0,1' },
      { succeeded: 2, failed: 0, completedIndexes: '0,1' },
      false,
    ],
  ])('%s', (_name, status, carried, expected) => {
    expect(rules.movedPast(job(status), carried)).toBe(expected);
  });
});
