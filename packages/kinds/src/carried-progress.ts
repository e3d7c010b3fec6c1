// How a kind reads the progress the core hands back: the core holds it as opaque JSON (the
// placement record's `carried`), so each kind validates its own shape, with one schema.
import type { WorkloadProgress } from '@jobrelay/placement';
import type { z } from 'zod';

export interface CarriedProgressReader<P> {
  /** Why `value` is not this kind's progress (`null` is: nothing carried), naming the field, or undefined. */
  problem(value: WorkloadProgress): string | undefined;
  /**
   * The progress in `value` (`nothing` for `null`). Anything else throws, naming the field:
   * the core checks a record with `problem` before acting on it, so this is a bug, never a
   * reason to guess.
   */
  read(value: WorkloadProgress): P;
}

export function carriedProgressReader<P>(
  kind: string,
  schema: z.ZodType<P>,
  nothing: P,
): CarriedProgressReader<P> {
  const problem = (value: WorkloadProgress): string | undefined => {
    if (value === null) return undefined;
    const parsed = schema.safeParse(value);
    if (parsed.success) return undefined;
    return parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  };
  return {
    problem,
    read: (value) => {
      if (value === null) return nothing;
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      throw new Error(`the carried progress is not a ${kind}'s: ${problem(value)}`);
    },
  };
}
