export * from './queue-model.ts';
