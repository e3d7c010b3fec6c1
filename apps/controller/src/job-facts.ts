import type { V1Job } from '@kubernetes/client-node';

export function jobKey(job: V1Job): string {
  return `${job.metadata?.namespace}/${job.metadata?.name}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

function trueCondition(job: V1Job, type: string) {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

export { isJobFinished as isFinished } from '@jobrelay/mirror';

export function finishedAt(job: V1Job): Date | undefined {
  const condition = trueCondition(job, 'Complete') ?? trueCondition(job, 'Failed');
  return condition?.lastTransitionTime ? new Date(condition.lastTransitionTime) : undefined;
}

export function isSuspended(job: V1Job): boolean {
  return job.spec?.suspend === true;
}
