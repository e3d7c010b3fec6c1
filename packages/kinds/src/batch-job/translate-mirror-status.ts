import { rfc3339Seconds } from '@jobrelay/kube/plain-json';
import { continuesFromAnnotation } from '@jobrelay/mirror';
import { formatIndexIntervals, parseIndexIntervals } from './index-intervals.ts';
import { type Job, type JobCondition, type JobStatus, usesBackoffLimitPerIndex } from './job-object.ts';
import type { JobProgress } from './job-progress.ts';
import { mirrorHeldByWorker } from './mirror-spec-update.ts';

/** Conditions the built-in controller writes that mean something on the origin too. */
const mirroredConditionTypes = [
  'Suspended',
  'FailureTarget',
  'Failed',
  'SuccessCriteriaMet',
  'Complete',
] as const;
const terminalConditionTypes = new Set(['FailureTarget', 'Failed', 'SuccessCriteriaMet', 'Complete']);
/** The two ways a Job ends; the Job API lets a Job take only one of them. */
const failurePath = new Set(['FailureTarget', 'Failed']);
const successPath = new Set(['SuccessCriteriaMet', 'Complete']);

function isTrue(conditions: JobCondition[] | undefined, type: string): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

function conditionOf(status: JobStatus | undefined, type: string): JobCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Indexes already decided in earlier attempts keep their verdict: a new mirror runs every index
 * again, but an index cannot be both completed and failed on the origin (the API refuses the
 * overlap), and a failed index is not retried on a single cluster either.
 */
function mergeIndexes(
  carried: JobProgress,
  mirror: JobStatus,
  perIndexBackoff: boolean,
): { completed: number[]; failed: number[] } {
  const carriedCompleted = new Set(parseIndexIntervals(carried.completedIndexes));
  const carriedFailed = new Set(perIndexBackoff ? parseIndexIntervals(carried.failedIndexes) : []);
  const completed = new Set(carriedCompleted);
  for (const index of parseIndexIntervals(mirror.completedIndexes)) {
    if (!carriedFailed.has(index)) completed.add(index);
  }
  const failed = new Set(carriedFailed);
  if (perIndexBackoff) {
    for (const index of parseIndexIntervals(mirror.failedIndexes)) {
      if (!completed.has(index)) failed.add(index);
    }
  }
  return { completed: [...completed], failed: [...failed] };
}

function laterOf(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/**
 * The status the origin should have, given its mirror's. The mirror's counters are added
 * to those carried from earlier attempts; nothing that the Job API forbids to go back does:
 * counters never decrease, startTime stays the first one (except a resume, which restarts
 * it as the built-in controller does), completionTime never changes once set, and terminal
 * conditions are never removed. The result is still validated before it is written.
 */
export function translateMirrorStatus(
  origin: Job,
  mirror: Job,
  carried: JobProgress,
  now: Date = new Date(),
): JobStatus {
  // The API server keeps whole seconds: a time made up here is cut to them, so what is
  // written compares equal to what is stored.
  const at = rfc3339Seconds(now);
  const was = origin.status ?? {};
  const from = mirror.status ?? {};
  const indexed = origin.spec?.completionMode === 'Indexed';

  const perIndexBackoff = usesBackoffLimitPerIndex(origin.spec);
  const indexes = mergeIndexes(carried, from, perIndexBackoff);
  const completedIndexes = indexed ? formatIndexIntervals(indexes.completed) : undefined;
  const failedIndexes = perIndexBackoff ? formatIndexIntervals(indexes.failed) : undefined;
  // A pod in the mirror's uncountedTerminatedPods has terminated, and the worker's controller
  // always moves it into its counter next (it decided to, in the same update): the origin
  // counts it now, since a mirror lost in between would otherwise take it along. A Job decided
  // then (SuccessCriteriaMet or FailureTarget comes in that same update) finishes with it.
  const uncounted = from.uncountedTerminatedPods ?? {};
  const succeededNow = indexed
    ? indexes.completed.length
    : carried.succeeded + (from.succeeded ?? 0) + (uncounted.succeeded?.length ?? 0);
  const failedNow = carried.failed + (from.failed ?? 0) + (uncounted.failed?.length ?? 0);

  // A mirror its worker's own admission holds suspended shows it on the origin as it would
  // on that worker alone: Suspended=True now, Suspended=False (JobResumed) once admitted.
  // A resume the origin did not see the hold of (the worker admitted the mirror before the
  // origin was synced) shows too: the same Job on that worker alone ends with JobResumed. Only
  // a re-placed mirror's resume is jobrelay's own (the hold while its progress was seeded).
  const conditions = mergeConditions(was.conditions ?? [], from.conditions ?? [], {
    originSuspended: origin.spec?.suspend === true || mirrorHeldByWorker(origin, mirror) !== undefined,
    resumeIsJobrelays: mirror.metadata?.annotations?.[continuesFromAnnotation] !== undefined,
  });
  // Created suspended, then resumed before placement: the mirror starts unsuspended and
  // never reports Suspended, so the origin's own Suspended=True is flipped here, as the
  // built-in controller would on resume.
  const suspendedIndex = conditions.findIndex((c) => c.type === 'Suspended' && c.status === 'True');
  const resumedBeforePlacement =
    suspendedIndex >= 0 &&
    origin.spec?.suspend !== true &&
    !conditionOf(from, 'Suspended') &&
    from.startTime !== undefined;
  if (resumedBeforePlacement) {
    conditions[suspendedIndex] = {
      type: 'Suspended',
      status: 'False',
      reason: 'JobResumed',
      message: 'Job resumed',
      lastProbeTime: at,
      lastTransitionTime: at,
    };
  }
  // A placement after the origin took a path (FailureTarget or SuccessCriteriaMet, from an
  // earlier attempt) may end the other way; the origin can only end the way it chose, so when
  // the mirror finishes, so does the origin, along its own path, with its own reason.
  const mirrorFinished = isTrue(from.conditions, 'Complete') || isTrue(from.conditions, 'Failed');
  if (mirrorFinished) {
    for (const [target, end] of [
      ['FailureTarget', 'Failed'],
      ['SuccessCriteriaMet', 'Complete'],
    ] as const) {
      const chosen = conditions.find((c) => c.type === target && c.status === 'True');
      if (chosen && !isTrue(conditions, end)) {
        conditions.push({
          type: end,
          status: 'True',
          reason: chosen.reason,
          message: chosen.message,
          lastProbeTime: at,
          lastTransitionTime: at,
        });
      }
    }
  }
  const finished = isTrue(conditions, 'Complete') || isTrue(conditions, 'Failed');
  const complete = isTrue(conditions, 'Complete');

  const resumedNow =
    conditionOf(was, 'Suspended')?.status === 'True' &&
    (conditionOf(from, 'Suspended')?.status === 'False' || resumedBeforePlacement);
  // While suspended the origin may drop startTime (the API allows it then); on resume it
  // takes the mirror's new one, which restarts activeDeadlineSeconds as on one cluster.
  const startTime = resumedNow || !was.startTime ? (from.startTime ?? was.startTime) : was.startTime;
  // A mirror that failed has no completionTime: the origin completed (along its path) now.
  const completionTime = complete
    ? (was.completionTime ?? laterOf(from.completionTime ?? at, startTime))
    : undefined;

  const status: JobStatus = {
    active: finished ? 0 : (from.active ?? 0),
    ready: finished ? 0 : Math.min(from.ready ?? 0, from.active ?? 0),
    terminating: finished ? 0 : (from.terminating ?? 0),
    succeeded: Math.max(was.succeeded ?? 0, succeededNow),
    failed: Math.max(was.failed ?? 0, failedNow),
    // Empty, as the built-in controller keeps it once it has counted its pods (it never leaves
    // the field out after its first sync): the mirror's uncounted pods are in the counters
    // above, and the mirror's own pod UIDs mean nothing on the management cluster.
    uncountedTerminatedPods: {},
    conditions,
  };
  if (startTime) status.startTime = startTime;
  if (completionTime) status.completionTime = completionTime;
  if (completedIndexes !== undefined) status.completedIndexes = completedIndexes;
  if (failedIndexes !== undefined) status.failedIndexes = failedIndexes;
  return status;
}

/**
 * Origin conditions, updated from the mirror's for the types we mirror. A terminal
 * condition that is True on the origin stays as it is (the API forbids flipping it back);
 * order is kept: existing types in place, new ones appended in the mirror's order, which is
 * the order the built-in controller added them (FailureTarget before Failed,
 * SuccessCriteriaMet before Complete). Once the origin is on one path to the end, the
 * mirror's conditions of the other path are left out: the API refuses the two together.
 */
function mergeConditions(
  origin: JobCondition[],
  mirror: JobCondition[],
  { originSuspended, resumeIsJobrelays }: { originSuspended: boolean; resumeIsJobrelays: boolean },
): JobCondition[] {
  const merged = origin.map((c) => ({ ...c }));
  const originHasSuspended = origin.some((c) => c.type === 'Suspended');
  const onFailurePath = [...failurePath].some((type) => isTrue(origin, type));
  const onSuccessPath = [...successPath].some((type) => isTrue(origin, type));
  for (const incoming of mirror) {
    if (!(mirroredConditionTypes as readonly string[]).includes(incoming.type)) continue;
    if (onFailurePath && successPath.has(incoming.type)) continue;
    if (onSuccessPath && failurePath.has(incoming.type)) continue;
    // On one cluster Suspended=True appears only while the Job is suspended, and
    // Suspended=False only after a Suspended=True. A mirror can be suspended when its origin
    // is not (a re-placed mirror is created suspended until its progress is seeded), and that
    // must not show on the origin; a hold of the worker's own admission does.
    if (incoming.type === 'Suspended') {
      if (incoming.status === 'True' && !originSuspended) continue;
      if (incoming.status !== 'True' && !originHasSuspended && resumeIsJobrelays) continue;
    }
    const index = merged.findIndex((c) => c.type === incoming.type);
    const existing = merged[index];
    if (!existing) {
      merged.push({ ...incoming });
      continue;
    }
    if (terminalConditionTypes.has(existing.type) && existing.status === 'True') continue;
    if (
      existing.status !== incoming.status ||
      existing.reason !== incoming.reason ||
      existing.message !== incoming.message
    ) {
      merged[index] = { ...incoming };
    }
  }
  return merged;
}
