/**
 * Every reason jobrelay puts on an Event about an origin, in one place (like the Active
 * condition's reasons): stable, so admins and alerts can match on them, and documented here
 * with when each is recorded.
 */
export const eventReasons = {
  /**
   * Normal: a cluster was chosen and recorded on the origin. Only with --record-dispatch-events:
   * the decision is in the placement record (`decision`) either way.
   */
  placed: 'Placed',
  /** Warning: no cluster fits yet; the note says why, kube-scheduler style. */
  failedPlacement: 'FailedPlacement',
  /** Warning: nothing fit for the placement timeout; the origin failed. */
  placementTimeout: 'PlacementTimeout',
  /**
   * Warning: the jobrelay.dev/placement annotation was not written by jobrelay for this workload
   * (damaged, unsealed, or sealed for another workload); it is ignored, the workload's mirrors
   * are deleted and it is placed from scratch, with the progress its status shows.
   */
  placementUntrusted: 'PlacementUntrusted',
  /**
   * Normal: the jobrelay.dev/placement annotation was removed from a workload that had run (an
   * admin placing it again, or its author); it is placed again from the progress its status shows.
   */
  placementRemoved: 'PlacementRemoved',
  /**
   * Warning: the jobrelay.dev/placement annotation is sealed with a key jobrelay does not hold
   * (its key Secret was lost or rotated out); nothing is done until the key is restored or the
   * annotation removed.
   */
  placementUnverifiable: 'PlacementUnverifiable',
  /** Normal: the mirror was created on its cluster. Only with --record-dispatch-events. */
  mirrorCreated: 'MirrorCreated',
  /**
   * Normal: a mirror of this attempt already existed when it was to be created (a restart
   * between create and cache, or a cache that lagged) and was adopted. Always recorded.
   */
  mirrorAdopted: 'MirrorAdopted',
  /** Warning: the cluster holds an object of that name that is not ours; it is left alone. */
  nameCollision: 'NameCollision',
  /** Warning: the namespace is missing on the cluster and namespace creation is off. */
  namespaceMissing: 'NamespaceMissing',
  /**
   * Warning: a worker's apiserver refused the mirror (an admission policy, a quota, a field it
   * does not know); the note quotes it. Placed again, preferring other clusters, a few times;
   * then jobrelay gives up (reason of the Failed condition, for kinds that can fail).
   */
  mirrorRefused: 'MirrorRefused',
  /**
   * Warning: a change of the workload's spec was not sent to its mirror: its pod templates would
   * ask for something its cluster's podRestrictions refuse that the mirror does not have yet.
   */
  specChangeRefused: 'SpecChangeRefused',
  /** Warning: the workload leaves its cluster (drain, lost worker, vanished mirror, collision, preemption). */
  replacing: 'Replacing',
  /**
   * Warning: its queue's admission evicted it (for a higher-priority workload of its queue, or to
   * reclaim nominal quota it borrowed); it goes back to its queue keeping its progress.
   */
  preempted: 'Preempted',
  /** Normal: an outcome decided before the mirror was lost was made final without it. */
  finishedWithoutMirror: 'FinishedWithoutMirror',
  /**
   * Warning: jobrelay's bookkeeping on a mirror (its continuation) was changed on the worker;
   * the mirror is deleted and made again.
   */
  mirrorTampered: 'MirrorTampered',
  /**
   * Normal: the worker's own admission (a Kueue there) holds the mirror suspended while the
   * origin is not; jobrelay leaves it held, and the note (also on the origin's
   * jobrelay.dev/unschedulable annotation) gives the worker's reason. Once per change of reason.
   */
  heldByWorker: 'HeldByWorker',
  /** Warning: the mirror's status would break the kind's API rules; nothing was written. */
  statusRefused: 'StatusRefused',
} as const;

export type EventReason = (typeof eventReasons)[keyof typeof eventReasons];

/** The `action` of an Event (events.k8s.io/v1): what jobrelay was doing. */
export type EventAction = 'Place' | 'Create' | 'Sync' | 'Preempt';
