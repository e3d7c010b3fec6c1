// batch/v1 Job behind the kind seam. Every Job rule lives in this folder (building and
// continuing mirrors, translating and validating status); this file only maps them onto
// WorkloadKindAdapter, so the core never names a Job.
import { rfc3339Seconds } from '@jobrelay/kube';
import { defaultManagedBy } from '@jobrelay/mirror';
import { podRequests } from '@jobrelay/resources';
import { customObjectClient } from '../custom-object-client.ts';
import type { WorkloadKindAdapter, WorkloadResource } from '../workload-kind-adapter.ts';
import { buildMirrorJob } from './build-mirror-job.ts';
import { continuationFor, continuationProblem, mirrorStatusSeed, seededProgress } from './continuation.ts';
import { finishDecidedJob } from './finish-decided-job.ts';
import { isJobFinished } from './job-finished.ts';
import { type Job, type JobCondition, type JobStatus, usesBackoffLimitPerIndex } from './job-object.ts';
import { jobPodsAtOnce } from './job-pods-at-once.ts';
import {
  carriedJob,
  hasJobProgress,
  jobProgressMovedPast,
  jobProgressOf,
  noJobProgress,
} from './job-progress.ts';
import { validateJobStatusTransition } from './job-status-rules.ts';
import { mirrorHeldByWorker, mirrorSpecUpdate, mirrorSuspendRecordUpdate } from './mirror-spec-update.ts';
import { sameJobStatus } from './same-job-status.ts';
import { translateMirrorStatus } from './translate-mirror-status.ts';

const resource: WorkloadResource = { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs' };

function trueCondition(job: Job, type: string): JobCondition | undefined {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

export const batchJobAdapter = {
  name: 'job',
  resource,
  managedBy: { default: defaultManagedBy, followsInstallationValue: true },
  verification: 'real-controller',

  isManagedBy: (job, managedBy) => job.spec?.managedBy === managedBy,

  // Plain JSON, as every kind: `/apis/batch/v1/namespaces/NS/jobs/NAME` is a custom-object
  // path in all but name, so the Job's client is the custom-object one (times stay strings,
  // fields client-node does not know yet are kept).
  client: (apis) => customObjectClient<Job>(resource, apis),

  buildMirror: (origin, { originId, attempt, carried, now }) =>
    buildMirrorJob(origin, {
      originId,
      attempt,
      continuation: continuationFor(origin, attempt, carriedJob.read(carried), now),
    }),
  mirrorSpecUpdate: (origin, mirror) => mirrorSpecUpdate(origin, mirror),
  mirrorRecordUpdate: mirrorSuspendRecordUpdate,
  mirrorHeldByWorker,
  // A seeded mirror's status is already the whole Job's; a fresh one's adds to the carried.
  originStatus: (origin, mirror, carried, now) =>
    translateMirrorStatus(
      origin,
      mirror,
      seededProgress(mirror) === undefined ? carriedJob.read(carried) : noJobProgress,
      now,
    ),
  sameStatus: (a, b) => sameJobStatus(a as JobStatus | undefined, b as JobStatus | undefined),
  statusViolations: (origin, desired) =>
    validateJobStatusTransition({
      metadata: origin.metadata,
      spec: origin.spec!,
      oldStatus: origin.status ?? {},
      newStatus: desired as JobStatus,
    }),
  statusOf: (job) => job.status,

  isFinished: isJobFinished,
  finishedAt: (job) => {
    const condition = trueCondition(job, 'Complete') ?? trueCondition(job, 'Failed');
    return condition?.lastTransitionTime ? new Date(condition.lastTransitionTime) : undefined;
  },
  isSuspended: (job) => job.spec?.suspend === true,
  podDemand: (job) =>
    job.spec?.template.spec
      ? [{ requests: podRequests(job.spec.template.spec), count: jobPodsAtOnce(job.spec) }]
      : [],
  podTemplates: (job) => (job.spec?.template.spec ? [{ role: '', spec: job.spec.template.spec }] : []),

  // Counters and index sets: a re-placed Job's mirror runs only what is left (continuation.ts).
  progress: {
    of: jobProgressOf,
    holdsAny: (progress) => hasJobProgress(carriedJob.read(progress)),
    movedPast: (job, carried) => jobProgressMovedPast(job, carriedJob.read(carried)),
    problem: carriedJob.problem,
  },
  mirrorBookkeepingProblem: (origin, mirror, { attempt, carried }) =>
    continuationProblem(origin, mirror, attempt, carriedJob.read(carried)),
  mirrorStatusSeed: (mirror) => mirrorStatusSeed(mirror),
  suspendedBeforePlacementStatus: (job, now) => {
    const conditions = job.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Suspended' && c.status === 'True')) return undefined;
    const at = rfc3339Seconds(now);
    const suspended: JobCondition = {
      type: 'Suspended',
      status: 'True',
      reason: 'JobSuspended',
      message: 'Job suspended',
      lastProbeTime: at,
      lastTransitionTime: at,
    };
    // What the built-in controller writes for a Job created suspended, field for field.
    return {
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
      ...(usesBackoffLimitPerIndex(job.spec) ? { failedIndexes: '' } : {}),
      ...job.status,
      conditions: [...conditions.filter((c) => c.type !== 'Suspended'), suspended],
    };
  },
  decidedOutcomeStatus: (job, now) => finishDecidedJob(job, now),
  // Nothing reads a mirror's pod template back (a mirror is built from its origin's, spec
  // changes go by patch), and it is most of a Job: the caches of mirrors keep it empty.
  mirrorCacheView: (mirror) => {
    if (mirror.spec) mirror.spec.template = {};
    return mirror;
  },
  /**
   * The mirror's pods, by the label the Job controller puts on them: its controller-uid, which
   * (unlike job-name) never matches the pods of an earlier Job of the same name.
   */
  podsOf: (mirror) => {
    const uid = mirror.metadata?.uid;
    const name = mirror.metadata?.name;
    if (uid)
      return [{ labelSelector: `batch.kubernetes.io/controller-uid=${uid}`, description: "the Job's pods" }];
    return name
      ? [{ labelSelector: `batch.kubernetes.io/job-name=${name}`, description: "the Job's pods" }]
      : [];
  },
  gaveUpStatus: (job, now, reason, message) => {
    const at = rfc3339Seconds(now);
    const failure = (type: string): JobCondition => ({
      type,
      status: 'True',
      reason,
      message,
      lastProbeTime: at,
      lastTransitionTime: at,
    });
    const status = job.status ?? {};
    // FailureTarget and Failed, in one valid update.
    return {
      ...status,
      startTime: status.startTime ?? at,
      active: 0,
      ready: 0,
      terminating: 0,
      conditions: [...(status.conditions ?? []), failure('FailureTarget'), failure('Failed')],
    };
  },
} satisfies WorkloadKindAdapter<Job>;
