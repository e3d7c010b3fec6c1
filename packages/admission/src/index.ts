export { comparePendingOrder, decideAdmission } from './decide-admission.ts';
export * from './dispatch-queue.ts';
export * from './queue-model.ts';
export * from './queue-selection.ts';
export * from './workload-priority.ts';
