import type { V1Job, V1JobCondition, V1JobStatus } from '@kubernetes/client-node';
import { parseIndexIntervals, unionIndexIntervals } from './index-intervals.ts';

/** Counts the origin reached in earlier placement attempts (recorded with the placement). */
export interface CarriedProgress {
  succeeded: number;
  failed: number;
  completedIndexes?: string;
  failedIndexes?: string;
}

/** Conditions the built-in controller writes that mean something on the origin too. */
const mirroredConditionTypes = [
  'Suspended',
  'FailureTarget',
  'Failed',
  'SuccessCriteriaMet',
  'Complete',
] as const;
const terminalConditionTypes = new Set(['FailureTarget', 'Failed', 'SuccessCriteriaMet', 'Complete']);

function conditionOf(status: V1JobStatus | undefined, type: string): V1JobCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

function laterOf(a: Date | undefined, b: Date | undefined): Date | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.getTime() >= b.getTime() ? a : b;
}

/**
 * The status the origin should have, given its mirror's. The mirror's counters are added
 * to those carried from earlier attempts; nothing that the Job API forbids to go back does:
 * counters never decrease, startTime stays the first one (except a resume, which restarts
 * it as the built-in controller does), completionTime never changes once set, and terminal
 * conditions are never removed. The result is still validated before it is written.
 */
export function translateMirrorStatus(
  origin: V1Job,
  mirror: V1Job,
  carried: CarriedProgress,
  now: Date = new Date(),
): V1JobStatus {
  const was = origin.status ?? {};
  const from = mirror.status ?? {};
  const indexed = origin.spec?.completionMode === 'Indexed';

  const completedIndexes = indexed
    ? unionIndexIntervals(carried.completedIndexes, from.completedIndexes)
    : undefined;
  const failedIndexes =
    origin.spec?.backoffLimitPerIndex !== undefined && origin.spec?.backoffLimitPerIndex !== null
      ? unionIndexIntervals(carried.failedIndexes, from.failedIndexes)
      : undefined;
  const succeededNow = indexed
    ? parseIndexIntervals(completedIndexes).length
    : carried.succeeded + (from.succeeded ?? 0);
  const failedNow = carried.failed + (from.failed ?? 0);

  const conditions = mergeConditions(was.conditions ?? [], from.conditions ?? []);
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
      lastProbeTime: now,
      lastTransitionTime: now,
    };
  }
  const finished = conditions.some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  const complete = conditions.some((c) => c.type === 'Complete' && c.status === 'True');

  const resumedNow =
    conditionOf(was, 'Suspended')?.status === 'True' &&
    (conditionOf(from, 'Suspended')?.status === 'False' || resumedBeforePlacement);
  // While suspended the origin may drop startTime (the API allows it then); on resume it
  // takes the mirror's new one, which restarts activeDeadlineSeconds as on one cluster.
  const startTime = resumedNow || !was.startTime ? (from.startTime ?? was.startTime) : was.startTime;
  const completionTime = complete
    ? (was.completionTime ?? laterOf(from.completionTime, startTime))
    : undefined;

  const status: V1JobStatus = {
    active: finished ? 0 : (from.active ?? 0),
    ready: finished ? 0 : Math.min(from.ready ?? 0, from.active ?? 0),
    terminating: finished ? 0 : (from.terminating ?? 0),
    succeeded: Math.max(was.succeeded ?? 0, succeededNow),
    failed: Math.max(was.failed ?? 0, failedNow),
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
 * SuccessCriteriaMet before Complete).
 */
function mergeConditions(origin: V1JobCondition[], mirror: V1JobCondition[]): V1JobCondition[] {
  const merged = origin.map((c) => ({ ...c }));
  for (const incoming of mirror) {
    if (!(mirroredConditionTypes as readonly string[]).includes(incoming.type)) continue;
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
