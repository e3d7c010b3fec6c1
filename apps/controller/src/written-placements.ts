import type { KubeObject } from '@jobrelay/kinds';

/**
 * Placements this process wrote that the origin cache does not show yet, by origin key: the
 * version written over and the apiserver's answer. The reconcile a placement asks for plans
 * from the answer instead of the cached version, so it creates the mirror at once rather than
 * queueing the placement again and waiting for the watch to bring the write back.
 *
 * Exact, not a guess: a watch delivers an object's versions in order, so while the cache still
 * holds the very version the placement was written over, the answer is the newest there is;
 * once the cache holds any other version (or none), the entry is dropped and the cache rules.
 * Every entry is read, and so dropped once stale, by the reconciles of its key: the one the
 * placement asks for, and the one each later watch event brings.
 */
export class WrittenPlacements {
  private readonly byKey = new Map<string, { over: string; written: KubeObject }>();

  get size(): number {
    return this.byKey.size;
  }

  /** A placement was written over version `over`; `written` is what the apiserver answered. */
  record(key: string, over: string, written: KubeObject): void {
    this.byKey.set(key, { over, written });
  }

  /** The origin to plan from: the written answer while the cache holds the version it was written over. */
  newest(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    const entry = this.byKey.get(key);
    if (!entry) return cached;
    if (
      cached?.metadata?.resourceVersion === entry.over &&
      cached.metadata.uid !== undefined &&
      cached.metadata.uid === entry.written.metadata?.uid
    )
      return entry.written;
    this.byKey.delete(key);
    return cached;
  }
}
