import type { KubeObject } from '@jobrelay/kinds';

/** How many writes in a row one entry follows while the cache lags (a longer lag falls back to the cache). */
const maxChain = 8;

/**
 * Origin writes this process made (a placement, a status, a waiting note) that the origin cache
 * does not show yet, by origin key: the versions the writes went over and the apiserver's last
 * answer. A reconcile plans from the answer instead of the cached version: a placement's mirror
 * is created at once rather than the placement queued again, and a status write that follows an
 * earlier one goes over the version that one produced, not the one it replaced. Planned from the
 * cache, a status write soon after another met a conflict whenever the management watch lagged
 * (6-8 % of status writes in the bench guard once status changes ran ahead of new workloads).
 *
 * Exact, not a guess: a watch delivers an object's versions in order, and each write chained
 * here went over the previous one's answer, so while the cache still holds any version a write
 * went over, the last answer is the newest there is; once the cache holds any other version (or
 * none), the entry is dropped and the cache rules. Every entry is read, and so dropped once
 * stale, by the watch event that brings its echo (or any later version) and by the reconciles
 * of its key.
 */
export class WrittenOrigins {
  private readonly byKey = new Map<string, { over: string[]; written: KubeObject }>();

  get size(): number {
    return this.byKey.size;
  }

  /** A write of the origin went over version `over`; `written` is what the apiserver answered. */
  record(key: string, over: string, written: KubeObject): void {
    const entry = this.byKey.get(key);
    const version = written.metadata?.resourceVersion;
    if (entry && entry.written.metadata?.uid === written.metadata?.uid) {
      // The same answer noted again: nothing new (and the versions before it still hold).
      if (entry.written.metadata?.resourceVersion === version) return;
      // A write over the last answer: the versions before it are older still.
      if (entry.written.metadata?.resourceVersion === over) {
        entry.over.push(over);
        if (entry.over.length > maxChain) entry.over.shift();
        entry.written = written;
        return;
      }
    }
    this.byKey.set(key, { over: [over], written });
  }

  /** The origin to plan from: the last answer while the cache holds a version written over. */
  newest(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    const entry = this.byKey.get(key);
    if (!entry) return cached;
    const version = cached?.metadata?.resourceVersion;
    if (
      version !== undefined &&
      cached!.metadata!.uid !== undefined &&
      cached!.metadata!.uid === entry.written.metadata?.uid &&
      entry.over.includes(version)
    )
      return entry.written;
    this.byKey.delete(key);
    return cached;
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}
