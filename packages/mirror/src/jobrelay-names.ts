/** Stable, user-facing names (../../shared/design.md, "Names"). */

/** The default `spec.managedBy` value jobrelay claims. */
export const defaultManagedBy = 'jobrelay.dev/dispatcher';

/** On every mirror: which jobrelay installation (management cluster) owns it. */
export const originLabel = 'jobrelay.dev/origin';
/** On every mirror: the UID of its origin Job. Every watch and deletion on a worker selects on it. */
export const originUidLabel = 'jobrelay.dev/origin-uid';
/** On every mirror: which placement attempt created it; a mirror of an older attempt is stale. */
export const placementAttemptAnnotation = 'jobrelay.dev/placement-attempt';
/** On a re-placed Job's mirror: the progress of earlier attempts (JSON), seeded into its status. */
export const continuesFromAnnotation = 'jobrelay.dev/continues-from';
/** On a re-placed Job's mirror: seconds of activeDeadlineSeconds earlier attempts used. */
export const deadlineUsedAnnotation = 'jobrelay.dev/deadline-used-seconds';

/**
 * On a mirror: the suspend value jobrelay last sent it (`true`/`false`), set when the mirror is
 * built and on every suspend jobrelay propagates. Only the origin's transitions go down: a
 * mirror suspended while this says `false` is held by its worker's own admission (a Kueue
 * there), and jobrelay leaves it held instead of resuming it over that worker's quota.
 */
export const suspendSentAnnotation = 'jobrelay.dev/suspend-sent';

/** On the origin: where the Job lives (JSON, see PlacementRecord). Written before any mirror exists. */
export const placementAnnotation = 'jobrelay.dev/placement';
/** On the origin, set by users: a label selector over WorkerClusters. */
export const clusterSelectorAnnotation = 'jobrelay.dev/cluster-selector';
/** On the origin, set by users: the one WorkerCluster it must run on. */
export const clusterPinAnnotation = 'jobrelay.dev/cluster';

/** On the origin, set by users: `spread` (default) or `binpack`, overriding the controller's policy. */
export const placementPolicyAnnotation = 'jobrelay.dev/placement-policy';
/** On the origin, set by jobrelay while no cluster fits: why, kube-scheduler style. */
export const unschedulableAnnotation = 'jobrelay.dev/unschedulable';

/** The reporting controller name on Events, and the field manager of our writes. */
export const controllerName = 'jobrelay.dev/dispatcher';

/**
 * Bookkeeping only the controller writes (design invariant 8): a Job author who set or changed
 * one would choose the cluster or the progress jobrelay believes. The admission policy in
 * deploy/ (deploy/controller/bookkeeping-policy.yaml and the chart's) refuses anyone else's
 * create or update that sets or changes them; a unit test keeps its lists equal to these.
 * Where it is not installed, the controller never carries one from an origin to its mirror,
 * and believes a placement record only when it sealed it for that workload.
 */
export const controllerOwnedAnnotations = [
  placementAnnotation,
  unschedulableAnnotation,
  continuesFromAnnotation,
  deadlineUsedAnnotation,
  placementAttemptAnnotation,
  suspendSentAnnotation,
] as const;

/** Labels only the controller writes (see controllerOwnedAnnotations). */
export const controllerOwnedLabels = [originLabel, originUidLabel] as const;
