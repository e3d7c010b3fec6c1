export { comparePendingOrder, decideAdmission } from './decide-admission.ts';
export * from './dispatch-queue.ts';
export * from './queue-model.ts';
