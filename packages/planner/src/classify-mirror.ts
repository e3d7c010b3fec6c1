import type { KubeObject } from '@jobrelay/kinds';
import { mirrorOwnership } from '@jobrelay/mirror';
import type { ParsedPlacement } from '@jobrelay/placement';

/**
 * What an object with an origin's namespace/name on a worker is to that origin.
 * - current: ours, for this origin, on the cluster and attempt its placement record names.
 * - stale: ours, for this origin, but not its current placement (moved, re-placed, or the
 *   record was removed to place it again): delete it.
 * - orphan: ours, but its origin no longer exists (deleted, or replaced by a new object of
 *   the same name): delete it.
 * - foreign: not created by this installation: never modified, adopted or deleted.
 * - undecided: ours, but the origin's placement record is sealed with a key jobrelay does not
 *   hold, so which mirror is current cannot be known: kept until the key or the record is fixed.
 *
 * A record jobrelay did not write (untrusted) names nothing: every mirror of its origin is stale.
 */
export type MirrorClass =
  | { kind: 'current' }
  | { kind: 'stale'; why: string }
  | { kind: 'orphan' }
  | { kind: 'foreign'; owner: string }
  | { kind: 'undecided' };

export interface MirrorContext {
  /** This installation's `jobrelay.dev/origin` value. */
  originId: string;
  /** The cluster the mirror was found on. */
  cluster: string;
  /** The origin of that namespace/name as the origin cache holds it; undefined when there is none. */
  origin: { uid: string; placement: ParsedPlacement } | undefined;
}

/**
 * The one rule, used alike by reconcile (phase 2), garbage collection and the cleanup of a
 * returning worker, so that no two of them can disagree about a mirror.
 */
export function classifyMirror(mirror: KubeObject, context: MirrorContext): MirrorClass {
  const { origin } = context;
  const ownership = mirrorOwnership(mirror, context.originId, origin?.uid ?? '');
  if (ownership.kind === 'foreign') return { kind: 'foreign', owner: ownership.owner };
  if (!origin || ownership.kind === 'other-origin') return { kind: 'orphan' };
  const { placement } = origin;
  if (placement.kind === 'unverifiable') return { kind: 'undecided' };
  if (placement.kind === 'untrusted') {
    return { kind: 'stale', why: 'its origin’s placement record was not written by jobrelay' };
  }
  const record = placement.kind === 'ok' ? placement.record : undefined;
  if (!record?.cluster) return { kind: 'stale', why: 'its origin is not placed anywhere now' };
  if (record.cluster !== context.cluster) {
    return { kind: 'stale', why: `its origin is placed on ${record.cluster} now` };
  }
  if (ownership.attempt !== record.attempt) {
    return {
      kind: 'stale',
      why: `it belongs to placement attempt ${ownership.attempt ?? 'unknown'}, the current one is ${record.attempt}`,
    };
  }
  return { kind: 'current' };
}

/** Whether garbage collection and a returning worker's cleanup delete a mirror of this class. */
export function isDeletable(mirrorClass: MirrorClass): boolean {
  return mirrorClass.kind === 'stale' || mirrorClass.kind === 'orphan';
}
