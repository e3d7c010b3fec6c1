/**
 * Shares equal strings among the objects a cache keeps. JSON.parse makes a fresh string for
 * every value, so 20,000 cached Jobs held 40,000 copies each of their namespace, their
 * completion mode and their pod failure policy, 20,000 of their image, scheduler name, DNS
 * policy and termination message path, and each Job its own UID four times (metadata, selector,
 * two template labels): a heap snapshot of the controller tracking 20,000 Jobs found about a
 * fifth of its live heap in such copies (docs/scale.md).
 *
 * Bounded: strings are remembered in two generations of `generationSize` each; when the young
 * one fills it becomes the old one and the old one is dropped, and a string found in the old one
 * moves back to the young. A string that keeps recurring (a namespace, an image) stays shared;
 * one seen once (a resourceVersion) is forgotten within two generations, so the table never
 * holds more than twice `generationSize` strings however many objects pass through.
 */
export class StringInterner {
  private young = new Map<string, string>();
  private old = new Map<string, string>();
  private readonly generationSize: number;
  private readonly maxLength: number;

  constructor(options: { generationSize?: number; maxLength?: number } = {}) {
    this.generationSize = options.generationSize ?? 20_000;
    // Longer strings are rarely equal across objects (a placement record, a message), and
    // hashing them costs more than sharing saves.
    this.maxLength = options.maxLength ?? 256;
  }

  /** How many strings the table holds now (at most twice the generation size). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  /** Whether `value` would be shared now rather than remembered afresh. */
  remembers(value: string): boolean {
    return this.young.has(value) || this.old.has(value);
  }

  intern(value: string): string {
    if (value.length > this.maxLength) return value;
    const young = this.young.get(value);
    if (young !== undefined) return young;
    const kept = this.old.get(value) ?? value;
    this.young.set(kept, kept);
    if (this.young.size >= this.generationSize) {
      this.old = this.young;
      this.young = new Map();
    }
    return kept;
  }

  /** Replaces, in place, every string value within `value` (objects and arrays, any depth) by its shared copy. */
  internWithin<T>(value: T): T {
    this.walk(value);
    return value;
  }

  private walk(value: unknown): void {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string') value[i] = this.intern(item);
        else if (item !== null && typeof item === 'object') this.walk(item);
      }
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const item = record[key];
      if (typeof item === 'string') record[key] = this.intern(item);
      else if (item !== null && typeof item === 'object') this.walk(item);
    }
  }
}
