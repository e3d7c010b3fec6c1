import type { Job, JobCondition, JobStatus } from './job-object.ts';
import { type StatusRuleViolation, validateJobStatusTransition } from './job-status-rules.ts';

export type StatusWriteResult =
  | { kind: 'unchanged' }
  | { kind: 'written'; job: Job }
  /** Our own validator refused it: nothing was sent. */
  | { kind: 'refused'; violations: StatusRuleViolation[] }
  /** The origin changed since it was read: re-read and recompute. */
  | { kind: 'conflict' };

function time(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // The apiserver keeps whole seconds; compare at that precision.
  return Math.floor(Date.parse(value) / 1000);
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

/**
 * Writes `desired` to the origin's /status, but only if it differs, only if it passes the
 * same rules the apiserver enforces, and only over the version that was read
 * (resourceVersion precondition): a concurrent change makes it a conflict, never a lost update.
 */
export async function writeOriginStatus(
  jobs: { replaceStatus(job: Job): Promise<Job> },
  origin: Job,
  desired: JobStatus,
): Promise<StatusWriteResult> {
  if (sameJobStatus(origin.status, desired)) return { kind: 'unchanged' };
  const violations = validateJobStatusTransition({
    metadata: origin.metadata,
    spec: origin.spec!,
    oldStatus: origin.status ?? {},
    newStatus: desired,
  });
  if (violations.length > 0) return { kind: 'refused', violations };
  try {
    const job = await jobs.replaceStatus({ ...origin, status: desired });
    return { kind: 'written', job };
  } catch (err) {
    if ((err as { code?: number }).code === 409) return { kind: 'conflict' };
    throw err;
  }
}
