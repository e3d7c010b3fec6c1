export { comparePendingOrder, decideAdmission } from './decide-admission.ts';
export * from './queue-model.ts';
