// What a placement task is and how long an unschedulable one waits: pure, so that the code that
// plans and places needs no BullMQ (placement-queue.ts is the queue itself).

/** One placement task per origin workload. Only keys: the worker re-reads the workload from Kubernetes. */
export interface PlacementTask {
  namespace: string;
  name: string;
  uid: string;
  /**
   * The workload kind's adapter name. Redis holds whatever was queued: a task naming no kind
   * the controller dispatches is dropped (the workload's reconcile queues it again).
   */
  kind: string;
}

/** `queued`: its queue's admission places it (the task ends, as for `not-needed`). */
export type PlacementOutcome = 'placed' | 'not-needed' | 'unschedulable' | 'queued';

/** Retry delays for a workload that fits nowhere yet: 1 s doubling to at most 30 s. */
export function unschedulableRetryDelayMs(attemptsMade: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), 30_000);
}
