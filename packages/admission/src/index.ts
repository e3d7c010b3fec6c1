export * from './dispatch-queue.ts';
export * from './queue-model.ts';
