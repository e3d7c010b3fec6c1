import type { KubeObject, StatusViolation } from '@jobrelay/kinds';
import type { PlacementRecord } from '@jobrelay/placement';
import type { EventAction, EventReason } from './event-reasons.ts';

/** A worker's apiserver refusing a mirror: its HTTP status and its message, as it said them. */
export interface MirrorRefusal {
  code: number;
  message: string;
}

/**
 * What the executor does for one origin, in order. Branches that depend on an API answer
 * (a create that collides, a mirror that may have vanished) are planned here too, so the
 * executor decides nothing: it calls the API and picks the branch the answer names.
 */
export type OriginAction<T extends KubeObject = KubeObject> =
  /**
   * Delete one of our mirrors (UID precondition). Background propagation unless `Foreground`
   * is asked: then the object stays, being deleted, until its pods (its dependents) are gone.
   */
  | { type: 'delete-mirror'; cluster: string; mirror: T; why: string; propagation?: 'Foreground' }
  /** Ask the placement queue for a cluster (idempotent per origin UID). */
  | { type: 'enqueue-placement' }
  /** Write the placement record on the origin, over the version read. */
  | { type: 'patch-placement'; record: PlacementRecord }
  /**
   * Create `body` on `cluster`, or adopt ours of this attempt. Created or adopted: its UID is
   * recorded in `record` with an Event. Another object of that name: `onCollision`. Ours from
   * an older attempt or origin: deleted, then retried. No namespace: `onNamespaceMissing`.
   * Refused by the worker's apiserver (admission, quota, validation): `onRefused`.
   */
  | {
      type: 'create-mirror';
      cluster: string;
      body: T;
      record: PlacementRecord;
      onCollision: (owner: string) => OriginAction<T>[];
      onNamespaceMissing: OriginAction<T>[];
      /** The worker's apiserver refused the object itself (400, 403, 413, 422). */
      onRefused: (refusal: MirrorRefusal) => OriginAction<T>[];
    }
  /**
   * The origin shows progress of this attempt's mirror, which the cache does not hold: the
   * cache may lag, so the worker is asked. Still there (this origin's, this attempt): look
   * again soon. Gone: `ifVanished`.
   */
  | { type: 'confirm-mirror-vanished'; cluster: string; attempt: number; ifVanished: OriginAction<T>[] }
  /** Merge-patch the mirror's status (a re-placed mirror's progress seed). */
  | { type: 'seed-mirror-status'; cluster: string; mirror: T; seed: object }
  /**
   * Merge-patch the mirror's spec (changes that may flow down), with `annotations` (jobrelay's
   * record of what it sent) in the same write.
   */
  | {
      type: 'patch-mirror-spec';
      cluster: string;
      mirror: T;
      patch: object;
      annotations?: Record<string, string>;
    }
  /** Replace the origin's status over the version read; a conflict re-reads and re-plans. */
  | { type: 'write-status'; status: object; purpose: 'sync' | 'suspended' | 'decided' | 'gave-up' }
  /** A status that breaks the kind's rules: nothing is written, the refusal is logged and counted. */
  | { type: 'refuse-status'; violations: StatusViolation[] }
  | {
      type: 'record-event';
      eventType: 'Normal' | 'Warning';
      reason: EventReason;
      action: EventAction;
      note: string;
    }
  /**
   * Say on the origin why it waits, for a cluster or on its worker's own queue (annotation
   * `jobrelay.dev/unschedulable`); null removes the note once it no longer waits. Not over the
   * version read: only the annotation is written, and a failure is only logged.
   */
  | { type: 'note-waiting'; message: string | null }
  /** Placement bookkeeping: a removed origin is no longer assumed anywhere. */
  | { type: 'forget-origin'; uid: string }
  /** Look at this origin again after a while; ends the plan. */
  | { type: 'requeue'; afterMs: number };

/** A `record-event` action: every planning module records its Events through this one constructor. */
export function event(
  eventType: 'Normal' | 'Warning',
  reason: EventReason,
  action: EventAction,
  note: string,
): Extract<OriginAction, { type: 'record-event' }> {
  return { type: 'record-event', eventType, reason, action, note };
}
