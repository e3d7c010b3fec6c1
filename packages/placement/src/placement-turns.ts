/** BullMQ's highest priority number (bullmq's PRIORITY_LIMIT): lower numbers run first. */
export const HIGHEST_TURN = 2 ** 21 - 1;

interface PendingTask {
  namespace: string;
  turn: number;
  enqueuedAt: number;
  /** Whether a placement worker has taken it once (a retry waits for room, not for a worker). */
  started: boolean;
}

/**
 * Turns by namespace for placement tasks: start-time fair queuing, with each namespace as one
 * flow. A namespace's next task takes the turn after its previous one, but never one before the
 * turn being served now, so a team that submits a burst of 100,000 Jobs places its next Job after
 * every other namespace's next one, not after its own backlog ahead of theirs. The turn is the
 * BullMQ priority of the task, so Redis keeps the order and the placement workers take tasks
 * lowest turn first (first come, first served within a turn).
 *
 * Each task takes one turn while it is pending: enqueueing it again (every reconcile of an
 * unplaced workload does) keeps its turn. When no pending task waits for its first attempt, the
 * turns start again from 1 (as fair queuing's clock does when the system is idle), so they stay
 * far below BullMQ's limit; a retry waiting for room keeps the turn it was queued with.
 *
 * In memory, in the leader: a new leader starts from 1, and the tasks the old one queued keep
 * their turns in Redis (the order after a failover is approximate for one backlog; nothing is lost).
 */
export class PlacementTurns {
  private served = 0;
  private readonly lastTurn = new Map<string, number>();
  private readonly pending = new Map<string, PendingTask>();
  private waitingForFirstAttempt = 0;

  /** The turn of the task for this workload: its own if already pending, else a new one. */
  take(uid: string, namespace: string, now: number): number {
    const known = this.pending.get(uid);
    if (known) return known.turn;
    const turn = Math.min(Math.max(this.lastTurn.get(namespace) ?? 0, this.served) + 1, HIGHEST_TURN);
    this.lastTurn.set(namespace, turn);
    this.pending.set(uid, { namespace, turn, enqueuedAt: now, started: false });
    this.waitingForFirstAttempt += 1;
    return turn;
  }

  /**
   * A placement worker took the task: on its first attempt, its turn is being served. A retry
   * moves nothing: it waited for room, not for its turn, and its turn may be from before the
   * turns started again.
   */
  started(uid: string): void {
    const task = this.pending.get(uid);
    if (!task || task.started) return; // queued by an earlier leader, or a retry
    task.started = true;
    this.served = Math.max(this.served, task.turn);
    this.waitingForFirstAttempt -= 1;
    this.restartWhenNoneWaits();
  }

  /** The task ended (placed, no longer needed, held by a queue) or its workload is gone. */
  ended(uid: string): void {
    const task = this.pending.get(uid);
    if (!task) return;
    this.pending.delete(uid);
    if (!task.started) {
      this.waitingForFirstAttempt -= 1;
      this.restartWhenNoneWaits();
    }
  }

  /** Milliseconds the oldest task still waiting for its first attempt has waited (0: none). */
  oldestWaitingMs(now: number): number {
    const [oldest] = this.waitingOldestFirst();
    return oldest ? Math.max(0, now - oldest.enqueuedAt) : 0;
  }

  /** The tasks waiting for their first attempt, oldest first (to check against Redis). */
  *waitingOldestFirst(): Generator<{ uid: string; enqueuedAt: number }> {
    if (this.waitingForFirstAttempt === 0) return;
    // A Map iterates in insertion order.
    for (const [uid, task] of this.pending) if (!task.started) yield { uid, enqueuedAt: task.enqueuedAt };
  }

  /** Tasks pending: waiting for a first attempt, being placed, or retried for room. */
  get size(): number {
    return this.pending.size;
  }

  private restartWhenNoneWaits(): void {
    if (this.waitingForFirstAttempt > 0) return;
    this.served = 0;
    this.lastTurn.clear();
  }
}
