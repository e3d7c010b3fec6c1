// The admission functions the controller runs: @jobrelay/admission's pure decisions and the
// planner's eviction, in one place (QueueAdmission takes them as one value, so its tests run
// the very same ones).
import {
  decideAdmission,
  type PriorityClassLookup,
  parseDispatchQueue,
  priorityClassLookup,
  queueFor,
  queueStatusColumns,
  workloadPriority,
} from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import { planEviction } from '@jobrelay/planner';
import type { AdmissionFunctions } from './queue-admission.ts';

export const admissionFunctions: AdmissionFunctions = {
  decideAdmission,
  parseDispatchQueue,
  queueFor,
  workloadPriority,
  planEviction,
  queueStatusColumns,
};

/**
 * The PriorityClasses of a cache, looked up as they are now: rebuilt at the first look-up after
 * the cache changed (`changed`, from its events), not at every one.
 */
export class CachedPriorityClasses implements PriorityClassLookup {
  private lookup: PriorityClassLookup | undefined;
  private readonly list: () => KubeObject[];

  constructor(list: () => KubeObject[]) {
    this.list = list;
  }

  changed(): void {
    this.lookup = undefined;
  }

  get(name: string): { value: number } | undefined {
    return this.current().get(name);
  }

  globalDefault(): { name: string; value: number } | undefined {
    return this.current().globalDefault();
  }

  private current(): PriorityClassLookup {
    this.lookup ??= priorityClassLookup(this.list() as Parameters<typeof priorityClassLookup>[0]);
    return this.lookup;
  }
}
