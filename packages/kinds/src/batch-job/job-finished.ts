import type { V1Job } from '@kubernetes/client-node';

/** Complete=True or Failed=True: the Job API's "finished", on an origin or a mirror alike. */
export function isJobFinished(job: V1Job): boolean {
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}
