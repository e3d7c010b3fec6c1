export * from './cluster.ts';
export * from './dispatch-queue.ts';
export * from './identity.ts';
export * from './problem.ts';
export * from './queue.ts';
export * from './workload.ts';
