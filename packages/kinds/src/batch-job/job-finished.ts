import type { Job } from './job-object.ts';

/** Complete=True or Failed=True: the Job API's "finished", on an origin or a mirror alike. */
export function isJobFinished(job: Job): boolean {
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}
