import { rfc3339Seconds } from '@jobrelay/kube/plain-json';
import type { Job, JobCondition, JobStatus } from './job-object.ts';

/**
 * The final status of a Job whose outcome was already decided (FailureTarget or
 * SuccessCriteriaMet is True) when its mirror was lost: it finishes that way instead of being
 * run again, as the built-in controller would once the last pod terminated. Undefined when
 * nothing was decided yet, or the Job is already finished.
 */
export function finishDecidedJob(origin: Job, now: Date): JobStatus | undefined {
  const status = origin.status ?? {};
  const conditions = status.conditions ?? [];
  const isTrue = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  if (isTrue('Complete') || isTrue('Failed')) return undefined;
  const decided = isTrue('FailureTarget') ?? isTrue('SuccessCriteriaMet');
  if (!decided) return undefined;
  // Whole seconds: the apiserver keeps no more, and completionTime must not precede startTime.
  const at = rfc3339Seconds(Math.max(now.getTime(), status.startTime ? Date.parse(status.startTime) : 0));
  const final: JobCondition = {
    type: decided.type === 'FailureTarget' ? 'Failed' : 'Complete',
    status: 'True',
    reason: decided.reason,
    message: decided.message,
    lastProbeTime: at,
    lastTransitionTime: at,
  };
  return {
    ...status,
    active: 0,
    ready: 0,
    terminating: 0,
    // Empty, as the built-in controller leaves it once it has counted its pods.
    uncountedTerminatedPods: {},
    startTime: status.startTime ?? at,
    ...(final.type === 'Complete' ? { completionTime: status.completionTime ?? at } : {}),
    conditions: [...conditions, final],
  };
}
