// The admission functions the controller runs: @jobrelay/admission's pure decisions and the
// planner's eviction, in one place (QueueAdmission takes them as one value, so its tests run
// the very same ones).
import {
  decideAdmission,
  parseDispatchQueue,
  queueFor,
  queueStatusColumns,
  workloadPriority,
} from '@jobrelay/admission';
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
