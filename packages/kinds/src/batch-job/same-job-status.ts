// Whether a Job status write is needed at all. The write itself is the planner's
// (`statusWrite`: refused when the Job's status rules break, else sent by the executor).
import type { JobCondition, JobStatus } from './job-object.ts';

function time(value: Date | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // The apiserver keeps whole seconds; compare at that precision.
  return Math.floor(new Date(value).getTime() / 1000);
}

function conditionKey(c: JobCondition): string {
  return JSON.stringify([c.type, c.status, c.reason ?? '', c.message ?? '']);
}

/** Equal as far as the Job API is concerned (absent counters are 0). */
export function sameJobStatus(a: JobStatus | undefined, b: JobStatus | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  for (const counter of ['active', 'ready', 'terminating', 'succeeded', 'failed'] as const) {
    if ((x[counter] ?? 0) !== (y[counter] ?? 0)) return false;
  }
  if (time(x.startTime) !== time(y.startTime) || time(x.completionTime) !== time(y.completionTime))
    return false;
  if ((x.completedIndexes ?? '') !== (y.completedIndexes ?? '')) return false;
  if ((x.failedIndexes ?? undefined) !== (y.failedIndexes ?? undefined)) return false;
  const cx = (x.conditions ?? []).map(conditionKey);
  const cy = (y.conditions ?? []).map(conditionKey);
  return cx.length === cy.length && cx.every((key, i) => key === cy[i]);
}
