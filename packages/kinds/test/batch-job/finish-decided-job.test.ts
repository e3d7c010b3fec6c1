import { describe, expect, it } from 'vitest';
import { finishDecidedJob } from '../../src/batch-job/finish-decided-job.ts';
import type { Job, JobCondition } from '../../src/batch-job/job-object.ts';
import { validateJobStatusTransition } from '../../src/batch-job/job-status-rules.ts';

const start = '2026-01-01T00:00:00Z';
/** The clock, a fraction of a second past a whole one. */
const later = '2026-01-01T00:05:00.700Z';

function condition(type: string, reason: string): JobCondition {
  return { type, status: 'True', reason, message: `${reason} happened`, lastTransitionTime: start };
}

function job(conditions: JobCondition[], extra: Partial<Job['status']> = {}): Job {
  return {
    metadata: { name: 'j', namespace: 'n', uid: 'u' },
    spec: { completions: 2, parallelism: 2, template: { spec: { containers: [] } } },
    status: {
      startTime: start,
      active: 1,
      ready: 1,
      terminating: 1,
      succeeded: 1,
      failed: 1,
      conditions,
      ...extra,
    },
  };
}

function expectValidFrom(origin: Job, next: NonNullable<ReturnType<typeof finishDecidedJob>>): void {
  expect(
    validateJobStatusTransition({ spec: origin.spec!, oldStatus: origin.status!, newStatus: next }),
  ).toEqual([]);
}

describe('finishDecidedJob', () => {
  it('fails a Job that already had FailureTarget, with the same reason, in a valid update', () => {
    const origin = job([condition('FailureTarget', 'BackoffLimitExceeded')]);
    const next = finishDecidedJob(origin, new Date(later))!;
    expect(next.conditions?.map((c) => `${c.type}/${c.reason}`)).toEqual([
      'FailureTarget/BackoffLimitExceeded',
      'Failed/BackoffLimitExceeded',
    ]);
    expect(next).toMatchObject({
      active: 0,
      ready: 0,
      terminating: 0,
      succeeded: 1,
      failed: 1,
      startTime: start,
    });
    expect(next.completionTime).toBeUndefined();
    expectValidFrom(origin, next);
  });

  it('completes a Job that already met its success criteria, with a whole-second completionTime', () => {
    const origin = job([condition('SuccessCriteriaMet', 'SuccessPolicy')]);
    const next = finishDecidedJob(origin, new Date(later))!;
    expect(next.conditions?.at(-1)).toMatchObject({ type: 'Complete', reason: 'SuccessPolicy' });
    expect(next.completionTime).toEqual('2026-01-01T00:05:00Z');
    expectValidFrom(origin, next);
  });

  it('never puts completionTime before startTime, even with a clock behind', () => {
    const origin = job([condition('SuccessCriteriaMet', 'CompletionsReached')]);
    const next = finishDecidedJob(origin, new Date('2025-12-31T23:00:00Z'))!;
    expect(next.completionTime).toEqual(start);
    expectValidFrom(origin, next);
  });

  it('leaves undecided and finished Jobs alone', () => {
    expect(finishDecidedJob(job([]), new Date(later))).toBeUndefined();
    expect(
      finishDecidedJob(
        job([condition('FailureTarget', 'X'), condition('Failed', 'X')], { active: 0 }),
        new Date(later),
      ),
    ).toBeUndefined();
  });
});
