// The state of one worker connection, changed only by named events (as MultiKueue's
// multikueuecluster.go changes its cluster only through markConnected / markDisconnected).
// Pure: the registry does the I/O (reading the Secret, the checks, the watches, the cleanup)
// and reports what happened here; everything it derives from that (the Active condition,
// the backoff, when the worker was lost, which of two registrations of one cluster is
// older) is decided in this file and tested as a table.
import { type ActiveReason, activeReasons } from './worker-cluster.ts';

export interface ConnectionState {
  /** The Active condition: connected, checked, cleaned up. */
  active: boolean;
  reason: ActiveReason;
  message: string;
  /**
   * Failed attempts in a row (a check or the cleanup before activation), counted afresh when
   * the reason of the failure changes.
   */
  attempts: number;
  /** While not Active: no attempt before this time (0: at once). */
  nextAttemptAt: number;
  /**
   * When it stopped being Active, kept across further failures and cleared on connecting:
   * the lost-worker timeout counts from it. Undefined while Active and before a first failure.
   */
  inactiveSince: number | undefined;
  /**
   * When this registration passed its checks on its current connection. Of two
   * registrations of one physical cluster the older is kept (see olderRegistration); kept
   * while the connection is (a failed check does not close it), cleared when it is closed.
   */
  activeSince: number | undefined;
}

/** Capped exponential backoff between attempts on a failing cluster. */
export interface BackoffConfig {
  /** Wait after the first failure; doubles with each further one. */
  initialMs: number;
  /** The cap. */
  maxMs: number;
  /**
   * The cap while the cluster only fails to answer (Unreachable), when given. A worker that is
   * away is usually coming back, and until a check passes its stale mirrors cannot be deleted:
   * under the plain cap, a worker back after a 20-second outage kept its old mirrors (their pods
   * running a second time) for up to 25 s in the chaos run. Configuration errors keep the plain
   * cap: no retry fixes those.
   */
  unreachableMaxMs?: number;
}

export type ConnectionEvent =
  /**
   * The WorkerCluster's spec changed (its generation): the next attempt runs at once, whatever
   * the backoff, since the change may be the fix (another Secret, a retry asked by an admin).
   */
  | { type: 'spec-changed' }
  /**
   * This replica has just taken the lead: a failing cluster is checked again at once. What it
   * found while following may be old (a failing cluster backs off), and a new leader that acted
   * on it moved the Jobs of a worker that had been answering for a minute (docs/reliability.md).
   */
  | { type: 'took-the-lead' }
  /**
   * Every check passed and no older registration of the same cluster is connected: this one
   * claims the cluster now (activeSince), before its cleanup, which may take a while, so a
   * twin probing meanwhile is refused.
   */
  | { type: 'checks-passed' }
  /** Checked and cleaned up: Active. */
  | { type: 'connected'; message: string }
  /** A check failed, or the Secret or kubeconfig could not be used, or it duplicates an older registration. */
  | { type: 'disconnected'; reason: ActiveReason; message: string }
  /**
   * The cleanup before activation (stale mirrors) failed: not Active yet, retried with
   * backoff; the condition keeps what it said.
   */
  | { type: 'cleanup-failed' }
  /** The registry closed the connection (clients, watches): its claim on the cluster goes with it. */
  | { type: 'closed' }
  /** The WorkerCluster was deleted: no state any more. */
  | { type: 'removed' };

export type RemovedEvent = Extract<ConnectionEvent, { type: 'removed' }>;

/** A registration not connected yet. */
export function initialConnectionState(): ConnectionState {
  return {
    active: false,
    reason: activeReasons.connecting,
    message: 'connecting',
    attempts: 0,
    nextAttemptAt: 0,
    inactiveSince: undefined,
    activeSince: undefined,
  };
}

/** The wait before attempt `attempts + 1`, after `attempts` failures in a row (>= 1). */
export function backoffMs(attempts: number, config: BackoffConfig): number {
  return Math.min(config.initialMs * 2 ** Math.max(0, attempts - 1), config.maxMs);
}

/**
 * Whether the registry should connect and check now. An Active cluster is checked on every
 * health tick; a failing one when its backoff has passed (a spec change ends the wait).
 */
export function attemptDue(state: ConnectionState, now: number): boolean {
  return state.active || state.attempts === 0 || now >= state.nextAttemptAt;
}

/** The state after `event` at `now`. */
export function nextConnectionState(
  current: ConnectionState,
  event: RemovedEvent,
  now: number,
  backoff: BackoffConfig,
): undefined;
export function nextConnectionState(
  current: ConnectionState,
  event: Exclude<ConnectionEvent, RemovedEvent>,
  now: number,
  backoff: BackoffConfig,
): ConnectionState;
export function nextConnectionState(
  current: ConnectionState,
  event: ConnectionEvent,
  now: number,
  backoff: BackoffConfig,
): ConnectionState | undefined;
export function nextConnectionState(
  current: ConnectionState,
  event: ConnectionEvent,
  now: number,
  backoff: BackoffConfig,
): ConnectionState | undefined {
  const failed = (reason?: ActiveReason): Pick<ConnectionState, 'attempts' | 'nextAttemptAt'> => {
    // Another reason is news, not more of the same: its backoff starts from the beginning. A
    // worker apiserver that comes back answers 403 until its authorizer has synced; counted
    // after a minute of Unreachable, that 403 waited out the long backoff of a configuration
    // error while the worker was fine (the chaos run, docs/reliability.md).
    const attempts = reason !== undefined && reason !== current.reason ? 1 : current.attempts + 1;
    const wait = backoffMs(attempts, backoff);
    const cap = reason === activeReasons.unreachable ? backoff.unreachableMaxMs : undefined;
    return { attempts, nextAttemptAt: now + Math.min(wait, cap ?? wait) };
  };
  switch (event.type) {
    case 'spec-changed':
    case 'took-the-lead':
      return { ...current, nextAttemptAt: Math.min(current.nextAttemptAt, now) };
    case 'checks-passed':
      return { ...current, activeSince: current.activeSince ?? now };
    case 'connected':
      return {
        active: true,
        reason: activeReasons.connected,
        message: event.message,
        attempts: 0,
        nextAttemptAt: 0,
        inactiveSince: undefined,
        activeSince: current.activeSince ?? now,
      };
    case 'disconnected':
      return {
        ...current,
        ...failed(event.reason),
        active: false,
        reason: event.reason,
        message: event.message,
        inactiveSince: current.inactiveSince ?? now,
      };
    case 'cleanup-failed':
      return { ...current, ...failed() };
    case 'closed':
      return { ...current, activeSince: undefined };
    case 'removed':
      return undefined;
  }
}

/** What the duplicate rule reads of a registration. */
export interface RegistrationClaim {
  name: string;
  /** UID of the cluster's kube-system namespace, when the identity may read it. */
  clusterUid: string | undefined;
  /** ConnectionState.activeSince. */
  activeSince: number | undefined;
}

/**
 * The registration of the same physical cluster (same kube-system UID) that claimed it
 * before `self`, if any. Two WorkerClusters for one cluster would each see the other's
 * mirrors as stale and delete them, so only the older is connected; the younger is refused
 * (DuplicateCluster) until one of the two is deleted.
 */
export function olderRegistration<T extends RegistrationClaim>(
  self: RegistrationClaim,
  others: Iterable<T>,
): T | undefined {
  if (self.clusterUid === undefined) return undefined;
  for (const other of others) {
    if (other.name === self.name || other.clusterUid !== self.clusterUid) continue;
    if (other.activeSince === undefined) continue;
    if (self.activeSince === undefined || other.activeSince < self.activeSince) return other;
  }
  return undefined;
}
