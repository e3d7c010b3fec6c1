export * from './apiserver-requests.ts';
export * from './bench-fleet.ts';
export * from './bench-jobs.ts';
export * from './job-watch.ts';
export * from './process-usage.ts';
export * from './scenarios.ts';
export * from './soak.ts';
export * from './statistics.ts';
