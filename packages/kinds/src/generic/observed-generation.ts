import type { KubeObject } from '../workload-kind-adapter.ts';

/**
 * `status.observedGeneration` for an origin, from its mirror's. The two numbers count
 * different things: the mirror's counts the mirror's own spec writes (it starts at 1 when
 * created, whatever generation the origin had reached, and changes only by what jobrelay
 * patches down), the origin's counts the user's edits. Copying the mirror's number verbatim
 * would tell a reader "generation 1 observed" of an origin at generation 4, or claim a
 * generation the origin never had. So the origin reports its own generation, once it is
 * observed: when the mirror's controller has observed the mirror's current generation
 * (`mirror.status.observedGeneration >= mirror.metadata.generation`) and the mirror's spec
 * already agrees with the origin's (`specInLine`: no spec patch is pending). Until then it
 * keeps what it had (never going back, never claiming a generation not yet seen). A mirror
 * whose controller writes no observedGeneration gives the origin none either (KubeRay's
 * RayJob controller never writes one).
 */
export function originObservedGeneration(
  origin: KubeObject & { status?: { observedGeneration?: number } },
  mirror: KubeObject & { status?: { observedGeneration?: number } },
  specInLine: boolean,
): number | undefined {
  const mirrorObserved = mirror.status?.observedGeneration;
  if (typeof mirrorObserved !== 'number') return undefined;
  const kept = origin.status?.observedGeneration;
  const originGeneration = origin.metadata?.generation;
  const mirrorGeneration = mirror.metadata?.generation;
  const caughtUp = mirrorGeneration === undefined || mirrorObserved >= mirrorGeneration;
  if (specInLine && caughtUp && typeof originGeneration === 'number') {
    return typeof kept === 'number' ? Math.max(kept, originGeneration) : originGeneration;
  }
  return typeof kept === 'number' ? kept : undefined;
}

/** `status` with its observedGeneration set to `observed`, or without one when undefined. */
export function withObservedGeneration<S extends { observedGeneration?: number }>(
  status: S,
  observed: number | undefined,
): S {
  const { observedGeneration: _dropped, ...rest } = status;
  return (observed === undefined ? rest : { ...rest, observedGeneration: observed }) as S;
}
