// The seam between the kind-agnostic core (planner, executor, registry, placement, GC, the
// admin API) and one workload kind. Everything that knows what an object of a kind looks
// like lives behind this interface, in the kind's own folder; the core only calls it. Each
// adapter is declared `satisfies WorkloadKindAdapter<ItsType>` so a missing or mistyped
// member fails the type check, not a test run.
import type { ClusterApiClients, ObjectMeta } from '@jobrelay/kube';
import type { PodGroup, WorkloadPodTemplate, WorkloadProgress } from '@jobrelay/placement';

/** Any namespaced Kubernetes object: the core reads only metadata; spec and status belong to the adapter. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** Where a kind lives in the API: group/version/kind and its collection's plural. */
export interface WorkloadResource {
  /** API group, '' never (jobrelay dispatches no core-group kind). */
  group: string;
  version: string;
  kind: string;
  /** The collection path segment: `/apis/<group>/<version>/namespaces/<ns>/<plural>`. */
  plural: string;
}

/** The claimed `spec.managedBy` value of a kind. */
export interface ManagedByPolicy {
  /** Claimed when the configuration names none for this kind. */
  default: string;
  /**
   * The only values the kind's API accepts (a CRD's CEL rule), when it restricts them; the
   * configuration is checked against this list at start-up.
   */
  accepted?: readonly string[];
  /**
   * The kind claims the installation's own value (--managed-by, `default` unless set) rather
   * than `default`, when --kind-managed-by names none for it.
   */
  followsInstallationValue?: boolean;
}

/** How trustworthy a kind's support is; shown in the docs and by the API. */
export type KindVerification =
  /** e2e-tested against the kind's real controller on real clusters. */
  | 'real-controller'
  /** Dispatched by the generic adapter; its own controller was not run here. */
  | 'generic-untested';

/** What a kind's mirror carries over from its placement, for the adapter to build it. */
export interface MirrorBuildContext {
  /** This installation's `jobrelay.dev/origin` value. */
  originId: string;
  /** The placement attempt that creates this mirror. */
  attempt: number;
  /** What earlier attempts did, as the kind's `progress` rules took it (`null`: nothing). */
  carried: WorkloadProgress;
  /** The injected clock's now: deadlines already used are computed from it. */
  now: Date;
}

/**
 * One group of the pods a workload runs on its cluster, found by label in its namespace there
 * (how the admin API finds the pods whose logs it streams).
 */
export interface WorkloadPods {
  /** A label selector over pods in the workload's namespace, e.g. `ray.io/cluster=train`. */
  labelSelector: string;
  /** What these pods are, for messages: `the Job's pods`, `RayCluster train`, `submitter Job train`. */
  description: string;
}

/** One rule broken by a status about to be written; nothing is sent while any remains. */
export interface StatusViolation {
  field: string;
  message: string;
}

/**
 * The API calls the core makes on objects of one kind on one cluster. Implementations map
 * errors unchanged (the core tests them with @jobrelay/kube's isNotFound, isConflict ...).
 */
export interface WorkloadClient<T extends KubeObject> {
  create(namespace: string, body: T): Promise<T>;
  read(namespace: string, name: string): Promise<T>;
  /** Merge patch of the main resource (metadata, spec). */
  patch(namespace: string, name: string, body: object): Promise<T>;
  /** Merge patch of the status subresource. */
  patchStatus(namespace: string, name: string, body: object): Promise<T>;
  /** Replaces the status subresource over `object.metadata.resourceVersion` (optimistic concurrency). */
  replaceStatus(object: T): Promise<T>;
  /**
   * Deletes with a UID precondition, so an object that replaced it meanwhile is never deleted.
   * Its pods and children go too: with background propagation (the default) the object goes at
   * once and they are deleted after it, still running a while; with foreground propagation the
   * object stays (its deletionTimestamp set) until the garbage collector has deleted every
   * dependent that blocks its owner's deletion (a Job's pods, a RayCluster's), so its absence
   * means they are gone.
   */
  delete(
    namespace: string,
    name: string,
    uid: string,
    propagation?: 'Background' | 'Foreground',
  ): Promise<void>;
}

/**
 * What a kind's workloads keep when they move to another cluster (counters of pods that
 * already succeeded or failed, work already done), for kinds whose workloads continue across
 * attempts rather than start over. The value is the kind's own JSON: the core stores it in
 * the placement record (`carried`, sealed with the rest), hands it back to the kind (building
 * the mirror, translating its status) and asks these questions about it; it never reads
 * inside. `null` always means nothing carried.
 */
export interface WorkloadProgressRules<T extends KubeObject> {
  /** The workload's progress so far, read from its origin: carried into its next attempt. */
  of(origin: T): WorkloadProgress;
  /**
   * Whether `progress` holds any work done. A workload placed afresh with some starts at
   * attempt 2 at least: only a later attempt's mirror continues from carried progress.
   */
  holdsAny(progress: WorkloadProgress): boolean;
  /**
   * Whether the origin shows progress that `carried` does not hold: only the current attempt's
   * mirror can have made it. Its mirror missing then means it vanished after running, and the
   * workload moves on with that progress rather than starting again from `carried`.
   */
  movedPast(origin: T, carried: WorkloadProgress): boolean;
  /**
   * Why `value` is not progress of this kind, naming the field at fault, or undefined. The
   * core asks before acting on a record: a record whose `carried` the kind refuses is not
   * believed (jobrelay seals what it writes, so only a bug or a downgrade could make one).
   */
  problem(value: WorkloadProgress): string | undefined;
}

/**
 * Everything the core needs to dispatch one workload kind. Pure members take objects and
 * return values; `client` is the only door to the API. Optional members are capabilities
 * only some kinds have (progress carried across attempts, a status for a workload jobrelay
 * gives up on); the core checks for them, never for a kind.
 */
export interface WorkloadKindAdapter<T extends KubeObject = KubeObject> {
  /** Short, stable, lower-case: used in flags, metrics, logs and the REST API (`job`, `raycluster`). */
  readonly name: string;
  readonly resource: WorkloadResource;
  readonly managedBy: ManagedByPolicy;
  readonly verification: KindVerification;

  /** Whether `object` is claimed by a dispatcher whose value for this kind is `managedBy`. */
  isManagedBy(object: T, managedBy: string): boolean;
  /** The client for objects of this kind through one cluster's shared, rate-limited clients. */
  client(apis: ClusterApiClients): WorkloadClient<T>;

  /**
   * The mirror for a worker: same namespace and name, the origin's spec minus what must stay
   * on the management cluster (its managedBy above all, so the worker's own controller runs
   * it), and the identity labels from @jobrelay/mirror's `mirrorIdentityMetadata`.
   */
  buildMirror(origin: T, context: MirrorBuildContext): T;
  /**
   * The merge patch bringing a mirror's mutable spec in line with its origin, or undefined. A
   * kind with a suspend field sends only the origin's suspend transitions, never a standing
   * value over a worker's own admission (see mirrorHeldByWorker).
   */
  mirrorSpecUpdate(origin: T, mirror: T): object | undefined;
  /**
   * Annotations jobrelay keeps on the mirror about what it sent (the suspend value last
   * propagated), to write together with the spec patch; undefined when they are current.
   */
  mirrorRecordUpdate?(origin: T, mirror: T): Record<string, string> | undefined;
  /**
   * Why the worker's own admission (a Kueue there, or any controller that suspends workloads
   * for its quota) holds the mirror suspended while its origin is not suspended: the worker's
   * reason as the mirror shows it; undefined when it is not held. The origin then says it waits
   * on that worker's queue, and jobrelay leaves the hold alone. While it is held the controller
   * also reads the worker's Kueue Workload for the mirror, whatever its kind, and says Kueue's
   * reason instead when it can (apps/controller/src/worker-admission-reasons.ts).
   */
  mirrorHeldByWorker?(origin: T, mirror: T): string | undefined;
  /**
   * The origin status that reflects `mirror`'s, together with the progress `carried` from
   * earlier attempts (a kind whose mirror already started from it does not add it again).
   * `now` is the injected clock's, for any time the translation must stamp.
   */
  originStatus(origin: T, mirror: T, carried: WorkloadProgress, now: Date): object;
  /** Equal as far as the kind's API is concerned (so an equal status is not rewritten). */
  sameStatus(a: object | undefined, b: object | undefined): boolean;
  /** Rules the kind's apiserver would enforce on this status update; empty when it is valid. */
  statusViolations(origin: T, desired: object): StatusViolation[];
  /** The object's current status (undefined before its controller wrote one). */
  statusOf(object: T): object | undefined;

  /** Terminal: the workload ended and will not run again. */
  isFinished(object: T): boolean;
  /** When it finished (undefined while running, or when the kind does not say). */
  finishedAt(object: T): Date | undefined;
  /** Suspended by its author: not placed, and its mirror (if any) is suspended too. */
  isSuspended(object: T): boolean;
  /** The pods it runs at once, as groups of identical pods: placement fits and assumes these. */
  podDemand(origin: T): PodGroup[];
  /**
   * Every pod template its pods are made from, whether or not they run at once (a worker
   * group scaled to zero too), with the service account its controller gives them when the
   * template names none: placement checks what they ask (privileges, host access, identity)
   * against each WorkerCluster's podRestrictions. Undefined when the kind does not say where
   * its templates are (a generic kind configured without podSets): a cluster that restricts
   * anything then refuses it.
   */
  podTemplates(origin: T): WorkloadPodTemplate[] | undefined;

  /** Progress kept across attempts: absent for kinds whose workloads start over when they move. */
  readonly progress?: WorkloadProgressRules<T>;
  /**
   * Why bookkeeping jobrelay put on the mirror (what it continues from) is not what this
   * placement could have given it (it was edited on the worker), or undefined. Such a mirror
   * is deleted and made again: nothing read from it is believed. `placement`: the sealed
   * record's attempt and carried progress.
   */
  mirrorBookkeepingProblem?(
    origin: T,
    mirror: T,
    placement: { attempt: number; carried: WorkloadProgress },
  ): string | undefined;
  /**
   * The status to write into a mirror before it may run, so it continues from the progress it
   * was built with; undefined once its status holds it (or it has none to take over). While
   * one is due, the mirror's status is not synced to the origin.
   */
  mirrorStatusSeed?(mirror: T): object | undefined;
  /** The status the kind's own controller writes on an object created suspended, if it writes one. */
  suspendedBeforePlacementStatus?(origin: T, now: Date): object | undefined;
  /**
   * A final status for a workload whose outcome was already decided when it would move (its
   * controller had decided it fails or succeeds, but had not finished): it finishes that way
   * rather than running again elsewhere. Undefined when nothing was decided.
   */
  decidedOutcomeStatus?(origin: T, now: Date): object | undefined;
  /**
   * A terminal failed status for a workload jobrelay gives up on (kinds that can fail): it fit
   * no cluster for the placement timeout (reason PlacementTimeout), or its mirror was refused
   * too often (MirrorRefused). Kinds without one are left waiting, with an Event saying why.
   */
  gaveUpStatus?(origin: T, now: Date, reason: string, message: string): object | undefined;

  /**
   * What the caches of mirrors keep of each mirror (the controller's and the API's), when less
   * than the whole object: the fields this adapter, the planner and the API read of a mirror.
   * May change the mirror in place. Absent: the whole mirror is kept.
   */
  mirrorCacheView?(mirror: T): T;

  /**
   * How to find the pods a mirror runs on its cluster: label selectors in its namespace there,
   * one per group (a RayJob's RayCluster and its submitter Job). Empty when they cannot be
   * found yet (a RayJob before its operator named its RayCluster) or the kind does not say.
   * Read by the admin API for pod logs; dispatch never needs it.
   */
  podsOf?(mirror: T): WorkloadPods[];
}

/** An adapter of any kind, as the core holds them in one list. */
// biome-ignore lint/suspicious/noExplicitAny: the list holds adapters of different object types.
export type AnyWorkloadKindAdapter = WorkloadKindAdapter<any>;

/** `group/version`, the apiVersion of objects of this kind. */
export function apiVersionOf(resource: WorkloadResource): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** The cluster-wide collection path, or one namespace's. */
export function collectionPath(resource: WorkloadResource, namespace?: string): string {
  const base = `/apis/${apiVersionOf(resource)}`;
  return namespace ? `${base}/namespaces/${namespace}/${resource.plural}` : `${base}/${resource.plural}`;
}
