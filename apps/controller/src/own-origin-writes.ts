/**
 * Origin versions this process wrote (a placement, a status), by origin key, so that the watch
 * event bringing each write back (its echo) is not reconciled when a reconcile has already
 * planned from that very version and found nothing left to do. Without this, every origin write
 * costs one more reconcile that reads the same snapshot and plans nothing: two of the four
 * reconciles of a dispatched Job.
 *
 * Sound because a reconcile depends on nothing but its snapshot and the clock: the echo carries
 * exactly the version written, a plan from it was made (by the reconcile that wrote it, or the
 * one its placement asked for) at least as late as the write, every later mirror or cluster
 * change enqueues the key by itself, and a plan waiting on the clock ends in a requeue, which
 * the queue honours. The rules:
 *
 * - `wrote`: a reconcile of the key will (or does) plan from this version.
 * - The echo, before that reconcile has planned from it: held back, not enqueued.
 * - `planned`: the reconcile ended at this version. Settled (nothing left to do, or a requeue
 *   asked for): a held echo is dropped, and a later one will be. Not settled: the key needs
 *   another reconcile, from the cache once it shows the write; so a held echo is enqueued now,
 *   and a later one is reconciled as any other event.
 * - Any other version of the key, a deletion, or a failed reconcile forgets the entry: the
 *   key is reconciled as usual (a deletion enqueues it, a failure retries it).
 */
export class OwnOriginWrites {
  private readonly byKey = new Map<string, { version: string; planned: boolean; echoHeld: boolean }>();

  get size(): number {
    return this.byKey.size;
  }

  /** The key's origin was written; `version` is the apiserver's answer. */
  wrote(key: string, version: string | undefined): void {
    if (version === undefined) this.byKey.delete(key);
    else this.byKey.set(key, { version, planned: false, echoHeld: false });
  }

  /** Whether a reconcile that ended at `version` should report back through `planned`. */
  awaits(key: string, version: string | undefined): boolean {
    return version !== undefined && this.byKey.get(key)?.version === version;
  }

  /**
   * A watch event brought `version` of the key: true when it must be reconciled, false when it
   * is the echo of a write a reconcile covers (or, not having planned yet, will cover).
   */
  needsReconcile(key: string, version: string | undefined): boolean {
    const entry = this.byKey.get(key);
    if (!entry) return true;
    if (entry.version !== version) {
      this.byKey.delete(key);
      return true;
    }
    if (entry.planned) {
      this.byKey.delete(key);
      return false;
    }
    entry.echoHeld = true;
    return false;
  }

  /**
   * A reconcile ended at the version written and planned from it again: `settled` when that plan
   * was empty (or a requeue was asked for). True when the key must be enqueued now: its echo was
   * held back and there is still work to do.
   */
  planned(key: string, version: string, settled: boolean): boolean {
    const entry = this.byKey.get(key);
    if (!entry || entry.version !== version) return false;
    if (settled && !entry.echoHeld) {
      entry.planned = true;
      return false;
    }
    this.byKey.delete(key);
    return !settled && entry.echoHeld;
  }

  /** Forget the key: it was deleted, or its reconcile failed (and is retried). */
  forget(key: string): void {
    this.byKey.delete(key);
  }
}
