// The admission functions the controller runs: @jobrelay/admission's pure decisions and the
// planner's eviction, in one place (QueueAdmission takes them as one value, so its tests run
// the very same ones).
import {
  decideAdmission,
  type PriorityClassLookup,
  parseDispatchQueue,
  queueStatusColumns,
} from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import { planEviction } from '@jobrelay/planner';
import { priorityClassLookup, queueFor, workloadPriority } from './interim-queue-selection.ts';
import type { AdmissionFunctions } from './queue-admission.ts';

export const admissionFunctions: AdmissionFunctions = {
  decideAdmission,
  parseDispatchQueue,
  queueFor,
  workloadPriority,
  planEviction,
  queueStatusColumns,
};

/** The PriorityClasses of a cache, looked up as they are now (the cache changes under it). */
export function cachedPriorityClasses(list: () => KubeObject[]): PriorityClassLookup {
  return {
    get: (name) => priorityClassLookup(list() as never).get(name),
    globalDefault: () => priorityClassLookup(list() as never).globalDefault(),
  };
}
