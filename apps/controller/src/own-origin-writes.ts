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
  /**
   * Writes in flight, by key, with the versions the watch brought meanwhile. Under load the echo
   * often comes before the write's answer is read; taken then for someone else's change, it cost
   * a reconcile that found nothing to do. Held here, and judged on the answer (`wrote`).
   */
  private readonly inFlight = new Map<string, { held: string[]; writers: number; shared: boolean }>();

  /** A write of the key is about to be sent: what the watch brings until its answer is held. */
  writing(key: string): void {
    const entry = this.inFlight.get(key);
    // Two writers at once (the placer and a reconcile): which echo is whose cannot be told, so
    // nothing held is taken for an echo; every held version is reconciled (safe, at worst one
    // reconcile more).
    if (entry) {
      entry.writers += 1;
      entry.shared = true;
    } else this.inFlight.set(key, { held: [], writers: 1, shared: false });
  }

  /** One writer's answer came (or will not): what it may judge, and the entry left for the others. */
  private answered(key: string): { held: string[]; shared: boolean } {
    const entry = this.inFlight.get(key);
    if (!entry) return { held: [], shared: false };
    const held = entry.held;
    entry.held = [];
    entry.writers -= 1;
    if (entry.writers <= 0) this.inFlight.delete(key);
    return { held, shared: entry.shared };
  }

  /**
   * The write in flight got no answer to note (it failed, or met a conflict): true when the
   * watch brought a version meanwhile, which must then be reconciled as any change.
   */
  unanswered(key: string): boolean {
    return this.answered(key).held.length > 0;
  }

  get size(): number {
    return this.byKey.size + this.inFlight.size;
  }

  /**
   * The key's origin was written; `version` is the apiserver's answer. True when something the
   * watch brought while it was in flight was not its echo, and must be reconciled now.
   */
  wrote(key: string, version: string | undefined): boolean {
    const { held, shared } = this.answered(key);
    if (version === undefined) {
      this.byKey.delete(key);
      return held.length > 0;
    }
    // Its echo came first: held, as an echo that comes before the reconcile has planned from it.
    const echoHeld = !shared && held.length === 1 && held[0] === version;
    this.byKey.set(key, { version, planned: false, echoHeld });
    return held.length > 0 && !echoHeld;
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
    if (entry && entry.version === version) {
      if (entry.planned) {
        this.byKey.delete(key);
        return false;
      }
      entry.echoHeld = true;
      return false;
    }
    // Not a write already answered: while one is in flight, it may be that write's echo.
    const inFlight = this.inFlight.get(key);
    if (inFlight !== undefined && version !== undefined) {
      inFlight.held.push(version);
      return false;
    }
    if (entry) this.byKey.delete(key);
    return true;
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
    this.inFlight.delete(key);
  }
}
