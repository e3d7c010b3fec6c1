import type { V1Job, V1JobSpec } from '@kubernetes/client-node';

/** Spec fields the apiserver lets change on a running Job, so we propagate them. */
const mutableFields = [
  'suspend',
  'parallelism',
  'activeDeadlineSeconds',
  'backoffLimit',
  'maxFailedIndexes',
] as const;

/**
 * The merge patch that brings a mirror's mutable spec in line with its origin, or undefined
 * when they agree. Immutable fields are never sent: they cannot differ from creation.
 */
export function mirrorSpecUpdate(origin: V1Job, mirror: V1Job): Partial<V1JobSpec> | undefined {
  const patch: Record<string, unknown> = {};
  const want = origin.spec;
  const have = mirror.spec;
  if (!want || !have) return undefined;
  if ((want.suspend ?? false) !== (have.suspend ?? false)) patch.suspend = want.suspend ?? false;
  for (const field of mutableFields) {
    // Both objects come from apiservers with defaults applied; an absent field has no opinion.
    if (field === 'suspend' || want[field] === undefined) continue;
    if (want[field] !== have[field]) patch[field] = want[field];
  }
  // Indexed Jobs may change completions, but only together with parallelism, kept equal.
  if (
    want.completionMode === 'Indexed' &&
    want.completions !== have.completions &&
    want.completions === want.parallelism
  ) {
    patch.completions = want.completions;
    patch.parallelism = want.parallelism;
  }
  return Object.keys(patch).length > 0 ? (patch as Partial<V1JobSpec>) : undefined;
}
