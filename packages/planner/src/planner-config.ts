// The planner's settings and its fixed delays, at the bottom of the package: every planning
// module reads them and none of them owns them, and the executor (apps/controller) reads the
// delays it waits out itself (deletionRetryMs, conflictRetryMs). Nothing here imports.

export interface PlannerConfig {
  /** This installation's `jobrelay.dev/origin` value. */
  originId: string;
  /** A placed workload whose cluster has not been Active this long moves elsewhere. */
  workerLostTimeoutMs: number;
  /** A finished workload's mirror is kept this long (for logs), then deleted. */
  mirrorRetentionMs: number;
  /** Record a Normal Event for every mirror created (off: one write less per dispatch). */
  recordDispatchEvents?: boolean;
  /** Refusals of a workload's mirror by worker apiservers before jobrelay gives up on it (default 3). */
  mirrorRefusalLimit?: number;
}

export const defaultMirrorRefusalLimit = 3;

/** While a placed workload's cluster is unreachable, look again this often. */
export const unavailableClusterRetryMs = 5_000;
/** A deleted origin whose mirrors could not all be deleted yet is looked at again after this. */
export const deletionRetryMs = 2_000;
/** A conflicting write re-reads the origin and plans again after this. */
export const conflictRetryMs = 200;
