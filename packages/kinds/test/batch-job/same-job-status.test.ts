import { describe, expect, it } from 'vitest';
import type { JobCondition, JobStatus } from '../../src/batch-job/job-object.ts';
import { sameJobStatus } from '../../src/batch-job/same-job-status.ts';

// sameJobStatus decides whether a write is needed at all: "same" means the API server would store
// nothing new. A false "same" loses an update; a false "different" costs a write (and, for times,
// a write the validator refuses, since a sub-second change counts as a change there).

const START = '2025-03-01T10:00:00Z';
const DONE = '2025-03-01T10:05:00Z';

function condition(type: string, overrides: Partial<JobCondition> = {}): JobCondition {
  return {
    type,
    status: 'True',
    reason: 'CompletionsReached',
    message: 'done',
    lastTransitionTime: DONE,
    ...overrides,
  };
}

const complete: JobStatus = {
  active: 0,
  ready: 0,
  terminating: 0,
  succeeded: 3,
  failed: 1,
  startTime: START,
  completionTime: DONE,
  completedIndexes: '0-2',
  failedIndexes: '',
  conditions: [condition('SuccessCriteriaMet'), condition('Complete')],
};

interface SameCase {
  name: string;
  a: JobStatus | undefined;
  b: JobStatus | undefined;
}

const same: SameCase[] = [
  { name: 'identical statuses', a: complete, b: structuredClone(complete) },
  { name: 'two absent statuses', a: undefined, b: undefined },
  { name: 'absent and empty', a: undefined, b: {} },
  {
    name: 'absent counters and zero counters',
    a: {},
    b: { active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 0 },
  },
  {
    name: 'times that differ below a second (the API server keeps whole seconds)',
    a: { startTime: START, completionTime: DONE },
    b: { startTime: '2025-03-01T10:00:00.999Z', completionTime: '2025-03-01T10:05:00.001Z' },
  },
  {
    name: 'the same second in UTC and with an offset',
    a: { startTime: START },
    b: { startTime: '2025-03-01T11:00:00+01:00' },
  },
  { name: 'completedIndexes "" and absent', a: { completedIndexes: '' }, b: {} },
  { name: 'failedIndexes null and absent', a: { failedIndexes: null as unknown as string }, b: {} },
  {
    name: 'conditions that differ only in their times',
    a: { conditions: [condition('Complete')] },
    b: { conditions: [condition('Complete', { lastTransitionTime: START, lastProbeTime: START })] },
  },
  {
    name: 'a condition message absent and empty',
    a: { conditions: [condition('Complete', { message: undefined })] },
    b: { conditions: [condition('Complete', { message: '' })] },
  },
  { name: 'conditions absent and empty', a: { conditions: [] }, b: {} },
];

const different: SameCase[] = [
  ...(['active', 'ready', 'terminating', 'succeeded', 'failed'] as const).map((counter) => ({
    name: `${counter} differs`,
    a: complete,
    b: { ...complete, [counter]: (complete[counter] ?? 0) + 1 },
  })),
  { name: 'a counter set to 1 where the other is absent', a: {}, b: { ready: 1 } },
  {
    name: 'startTime one second later',
    a: complete,
    b: { ...complete, startTime: '2025-03-01T10:00:01Z' },
  },
  { name: 'startTime set and absent', a: { startTime: START }, b: {} },
  { name: 'completionTime set and absent', a: complete, b: { ...complete, completionTime: undefined } },
  {
    name: 'completionTime one second earlier',
    a: complete,
    b: { ...complete, completionTime: '2025-03-01T10:04:59Z' },
  },
  { name: 'completedIndexes differ', a: complete, b: { ...complete, completedIndexes: '0-1' } },
  // "" is a value for failedIndexes: the API refuses it without backoffLimitPerIndex, so it must be written.
  { name: 'failedIndexes "" and absent', a: { failedIndexes: '' }, b: {} },
  { name: 'failedIndexes differ', a: { failedIndexes: '1' }, b: { failedIndexes: '1,3' } },
  {
    name: 'a condition added',
    a: { conditions: [condition('SuccessCriteriaMet')] },
    b: { conditions: [condition('SuccessCriteriaMet'), condition('Complete')] },
  },
  {
    name: 'a condition status flips',
    a: { conditions: [condition('Suspended', { status: 'True', reason: 'JobSuspended' })] },
    b: { conditions: [condition('Suspended', { status: 'False', reason: 'JobSuspended' })] },
  },
  {
    name: 'a condition reason changes',
    a: { conditions: [condition('Failed', { reason: 'BackoffLimitExceeded' })] },
    b: { conditions: [condition('Failed', { reason: 'DeadlineExceeded' })] },
  },
  {
    name: 'a condition message changes',
    a: { conditions: [condition('Complete', { message: 'done' })] },
    b: { conditions: [condition('Complete', { message: 'all done' })] },
  },
  {
    name: 'the same conditions in another order',
    a: { conditions: [condition('SuccessCriteriaMet'), condition('Complete')] },
    b: { conditions: [condition('Complete'), condition('SuccessCriteriaMet')] },
  },
];

describe('sameJobStatus', () => {
  it.each(same)('same: $name', ({ a, b }) => {
    expect(sameJobStatus(a, b)).toBe(true);
    expect(sameJobStatus(b, a)).toBe(true);
  });

  it.each(different)('different: $name', ({ a, b }) => {
    expect(sameJobStatus(a, b)).toBe(false);
    expect(sameJobStatus(b, a)).toBe(false);
  });
});
