import type { ClusterMirrorCache } from '@jobrelay/clusters';
import type { KubeObject } from '@jobrelay/kinds';
import { type Clock, type InformerEvent, objectKey } from '@jobrelay/kube';
import {
  type ParsedPlacement,
  type PlacementRecord,
  placementRecordOf,
  type RecordKeyring,
} from '@jobrelay/placement';
import { type ClusterSnapshot, type OriginSnapshot, type PlannerConfig, planOrigin } from '@jobrelay/planner';
import type { ControllerEventSubscriber, ControllerPart } from './controller-events.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';
import { originKey, splitOriginKey } from './dispatched-kinds.ts';
import type { ReconcileLane, ReconcileResult } from './keyed-work-queue.ts';
import type { OriginExecutor, WorkerTarget } from './origin-executor.ts';
import type { OriginWriteExpectations } from './origin-write-expectations.ts';
import type { WorkerAdmissionReasons } from './worker-admission-reasons.ts';

/** A dispatched kind as a reconcile uses it: its adapter, its origin cache, its client. */
export type ReconciledKind = Pick<AnyDispatchedKind, 'adapter' | 'management'> & {
  origins: Pick<AnyDispatchedKind['origins'], 'get'>;
};

/** One cluster's state and its cache of a kind's mirrors, as a reconcile reads them. */
export type ReconciledCluster = Omit<ClusterMirrorCache, 'mirrors'> & {
  mirrors: Pick<NonNullable<ClusterMirrorCache['mirrors']>, 'get'> | undefined;
};

/** How long a plan that found nothing to do is trusted by the resync (default of `replanUnchangedAfterMs`). */
export const defaultReplanUnchangedAfterMs = 300_000;

/**
 * What a plan that found nothing to do was planned from, besides the origin object it is kept
 * for: the one mirror of it (the object as cached, or none) and the clusters' state. While they
 * and the origin are the very objects the plan saw, a plan from the caches finds nothing to do
 * again (the planner is pure, and what it decides by the clock it asks to be requeued for,
 * which is not "nothing"). Small on purpose: one per tracked workload.
 */
interface NothingToDo {
  mirror: KubeObject | undefined;
  /** `clusterStateSignature`, interned: one string shared by every entry while no cluster changes. */
  clusters: string;
  /**
   * When it was planned, in seconds since the reconciler was made (a small integer, stored
   * inline), moved back by up to half the trust: plans made in one pass are not all planned
   * again in one later pass, which at 100,000 would be the cost of a full resync at once.
   */
  at: number;
}

/** What a reconcile reads of a cluster besides its mirror, as one comparable string. */
function clusterStateSignature(clusters: readonly Omit<ClusterSnapshot<KubeObject>, 'mirror'>[]): string {
  return JSON.stringify(
    clusters.map((c) => [
      c.name,
      c.registered,
      c.connected,
      c.active,
      c.reason,
      c.inactiveSince ?? null,
      c.drain,
      c.podRestrictions ?? null,
    ]),
  );
}

export interface OriginReconcilerOptions {
  kinds: ReadonlyMap<string, ReconciledKind>;
  /** Every registered cluster's state and mirror cache for a kind (`WorkerClusterRegistry.mirrorCaches`). */
  clusters: (kind: string) => ReconciledCluster[];
  /** The kind's client and the namespaces API on a connected worker. */
  worker: (cluster: string, kind: string) => WorkerTarget<KubeObject> | undefined;
  executor: Pick<OriginExecutor, 'execute'>;
  /** Why `cluster`'s fences keep this placed workload out now (`OriginPlacer.fencesAgainst`). */
  fencesAgainst: (
    kind: ReconciledKind,
    origin: KubeObject,
    record: PlacementRecord,
    cluster: string,
  ) => string | undefined;
  plannerConfig: PlannerConfig;
  recordKeys: RecordKeyring;
  clock: Clock;
  /** Ask for a reconcile of `key`: `first` ahead of status syncs. */
  enqueue: (key: string, options?: { first?: boolean }) => void;
  /**
   * The bookkeeping of this process's own writes, which the executor reports to: every event
   * passes through it before it costs a reconcile, and every plan reads what it holds.
   */
  ownWrites: OriginWriteExpectations;
  /**
   * What a worker's own admission (its Kueue) says of a mirror it holds suspended, read from
   * the worker while it is held, never awaited (`WorkerAdmissionReasons`); without it the
   * origin shows the mirror's own reason.
   */
  workerAdmission?: Pick<WorkerAdmissionReasons, 'reasonFor' | 'forget'>;
  /**
   * The resync skips an origin whose last plan found nothing to do while nothing it was planned
   * from changed, for at most this long (default 5 minutes), and at least half of it; after
   * that the origin is planned again whatever it shows.
   */
  replanUnchangedAfterMs?: number;
  /** The spread of those re-plans (`Math.random` unless a test fixes it). */
  random?: () => number;
  /** Each plan's action types (none: an empty plan), and the lane its key ran from. */
  planned?: (actionTypes: readonly string[], lane: ReconcileLane | undefined) => void;
}

/**
 * One origin's reconcile, snapshot -> planOrigin -> executor. What this process wrote and the
 * caches do not show yet is planned from (`OriginWriteExpectations`, which the executor reports
 * to), so what it wrote does not cost reconciles that find nothing to do, and what it created
 * is not created twice while the caches catch up. It keeps the UIDs of origins deleted from the
 * cache, until their mirrors are gone, and what each plan that found nothing to do was planned
 * from, so the periodic resync passes over settled workloads.
 *
 * Every watch event, from any cluster, reaches it as an `origin` or `mirror` event and only
 * enqueues the origin's key (or does not, for an echo).
 */
export class OriginReconciler implements ControllerPart {
  private readonly options: OriginReconcilerOptions;
  /** Origins deleted from the cache, by origin key, until their mirrors are gone. */
  private readonly deletedOrigins = new Map<string, string>();
  /**
   * Per cached origin object: what its last plan was planned from, when that plan found
   * nothing to do; what lets the periodic resync pass over 100,000 settled workloads without
   * planning each again. Keyed by the object, so a new version of the origin (a new object in
   * the cache) or its deletion drops the entry with it.
   */
  private readonly nothingToDo = new WeakMap<KubeObject, NothingToDo>();
  /** The last cluster state signature made, so that equal signatures are one string. */
  private clusterSignature = '';
  private readonly madeAt: number;

  constructor(options: OriginReconcilerOptions) {
    this.options = options;
    this.madeAt = options.clock.now();
  }

  /** How many entries each piece of bookkeeping holds (every one of them must drain). */
  get sizes(): Record<'expectedMirrors' | 'writtenOrigins' | 'ownWrites' | 'deletedOrigins', number> {
    return { ...this.options.ownWrites.sizes, deletedOrigins: this.deletedOrigins.size };
  }

  /** Watches the origins (its own writes' echoes passed over) and the mirrors (through the write bookkeeping). */
  readonly name = 'origin reconcile';
  readonly watches = ['origin', 'mirror'] as const;
  readonly writes = [
    'mirrors on workers (create, adopt, delete, spec changes)',
    'worker namespaces it creates',
    'origins: status, placement records, waiting notes',
    'Events',
  ];

  subscribe(events: ControllerEventSubscriber): void {
    events.on('origin', (kind, event) =>
      this.originEvent(originKey(kind.adapter.name, objectKey(event.object)), event),
    );
    events.on('mirror', (cluster, kind, event) => this.options.ownWrites.mirrorEvent(cluster, kind, event));
  }

  /** The origin cache changed: the key is reconciled, unless it is the echo of our own write. */
  originEvent(key: string, event: InformerEvent<KubeObject>): void {
    if (event.type === 'delete') this.deletedOrigins.set(key, event.object.metadata!.uid!);
    if (!this.options.ownWrites.originChanged(key, event)) return;
    // A workload seen for the first time goes ahead of status syncs: it needs a placement.
    this.options.enqueue(key, { first: event.type === 'upsert' && event.previous === undefined });
  }

  /** Reconciles one origin: snapshot -> plan -> execute. A failure is retried by the queue, from the cache. */
  async reconcile(key: string, lane?: ReconcileLane): Promise<ReconcileResult> {
    const { ownWrites: writes } = this.options;
    try {
      const changeSeenAt = writes.changeSeenAt(key);
      const result = await this.reconcileOnce(key, lane).finally(() => writes.settleCreates(key));
      // Synced (written, or nothing to write): a later change starts its own measurement.
      writes.changeSynced(key, changeSeenAt);
      return result;
    } catch (err) {
      writes.reconcileFailed(key);
      throw err;
    }
  }

  /**
   * For the periodic resync of `kind`: whether an origin can be passed over, because its last
   * plan found nothing to do and the origin, its mirrors and the clusters are still exactly as
   * that plan saw them (the very objects in the caches, which an informer replaces on every new
   * version, and the clusters' state), within `replanUnchangedAfterMs`. Reads the clusters
   * once; call it once per pass.
   */
  unchangedSincePlanned(kindName: string): (origin: KubeObject, objectName: string) => boolean {
    const clusters = this.options.clusters(kindName);
    const signature = clusterStateSignature(
      clusters.map((c) => ({ ...c, connected: c.mirrors !== undefined })),
    );
    const oldest = this.secondsSinceMade() - this.trustSeconds;
    return (origin, objectName) => {
      const plan = this.nothingToDo.get(origin);
      if (!plan || plan.at <= oldest || plan.clusters !== signature) return false;
      // Written origins and created mirrors not yet in the caches are planned from, not skipped.
      const key = originKey(kindName, objectName);
      if (this.options.ownWrites.pendingFor(key, origin)) return false;
      // Exactly the mirror the plan saw, as cached, and no other.
      let seen = plan.mirror === undefined;
      for (const cluster of clusters) {
        const mirror = cluster.mirrors?.get(objectName);
        if (mirror === undefined) continue;
        if (mirror !== plan.mirror) return false;
        seen = true;
      }
      return seen;
    };
  }

  /** How long a plan that found nothing to do is trusted by the resync, in seconds. */
  private get trustSeconds(): number {
    return (this.options.replanUnchangedAfterMs ?? defaultReplanUnchangedAfterMs) / 1000;
  }

  private secondsSinceMade(): number {
    return Math.floor((this.options.clock.now() - this.madeAt) / 1000);
  }

  /**
   * Remembers what a plan that found nothing to do was planned from, for the cached origin
   * object it was planned from; any other plan forgets it. Not kept when the plan read what the
   * caches do not hold: a worker's admission (read from the worker, not watched; nor while a
   * mirror is held by it and its reason is not known yet), a cluster's fences, or a second mirror.
   */
  private notePlan(kind: ReconciledKind, snapshot: OriginSnapshot<KubeObject>, nothing: boolean): void {
    if (snapshot.kind !== 'present') return;
    const mirrors = snapshot.clusters.filter((c) => c.mirror !== undefined);
    if (
      !nothing ||
      mirrors.length > 1 ||
      snapshot.clusters.some((c) => c.workerAdmission !== undefined || c.fenced !== undefined) ||
      (mirrors[0] && kind.adapter.mirrorHeldByWorker?.(snapshot.origin, mirrors[0].mirror!) !== undefined)
    ) {
      this.nothingToDo.delete(snapshot.origin);
      return;
    }
    let clusters = clusterStateSignature(snapshot.clusters);
    if (clusters === this.clusterSignature) clusters = this.clusterSignature;
    else this.clusterSignature = clusters;
    this.nothingToDo.set(snapshot.origin, {
      mirror: mirrors[0]?.mirror,
      clusters,
      at:
        this.secondsSinceMade() -
        Math.floor((this.options.random ?? Math.random)() * (this.trustSeconds / 2)),
    });
  }

  private async reconcileOnce(key: string, lane: ReconcileLane | undefined): Promise<ReconcileResult> {
    const { plannerConfig, clock } = this.options;
    const { kind: kindName, objectKey: objectName, namespace, name } = splitOriginKey(key);
    const kind = this.options.kinds.get(kindName);
    if (!kind) return undefined;
    const snapshot = this.snapshot(kind, key, objectName);
    const actions = planOrigin(snapshot, kind.adapter, plannerConfig, clock.now());
    this.options.planned?.(
      actions.map((a) => a.type),
      lane,
    );
    const origin = snapshot.kind === 'present' ? snapshot.origin : undefined;
    const uid = snapshot.kind === 'present' ? origin!.metadata!.uid! : snapshot.uid;
    if (!uid) return undefined;
    const result = await this.options.executor.execute(actions, {
      adapter: kind.adapter,
      namespace,
      name,
      uid,
      origin,
      management: kind.management,
      worker: (cluster) => this.options.worker(cluster, kindName),
    });
    if (snapshot.kind === 'gone' && result.failedDeletions === 0) this.deletedOrigins.delete(key);
    this.notePlan(kind, snapshot, actions.length === 0);
    // Ended at a version this process wrote: plan once more from it, as the write's echo would.
    const endedAt = result.origin?.metadata?.resourceVersion;
    if (
      snapshot.kind === 'present' &&
      endedAt !== undefined &&
      this.options.ownWrites.awaitsEcho(key, endedAt)
    ) {
      let settled = result.requeueAfterMs !== undefined;
      let plannedClusters: ClusterSnapshot<KubeObject>[] = [];
      if (!settled) {
        const ended = this.snapshotOf(kind, key, objectName, result.origin);
        // (Not noted for the resync: it plans from the write's answer, an object the origin
        // cache never holds, so a note keyed by it could never be matched.)
        settled = planOrigin(ended, kind.adapter, plannerConfig, clock.now()).length === 0;
        // A mirror created in this run was part of that plan: its own echo is covered too.
        plannedClusters = ended.clusters;
      }
      this.options.ownWrites.plannedFromWrite(key, endedAt, settled, plannedClusters);
    }
    return result.requeueAfterMs === undefined ? undefined : { requeueAfterMs: result.requeueAfterMs };
  }

  /** What one reconcile decides from, read from the caches at one instant. */
  private snapshot(kind: ReconciledKind, key: string, objectName: string): OriginSnapshot<KubeObject> {
    return this.snapshotOf(
      kind,
      key,
      objectName,
      this.options.ownWrites.newestOrigin(key, kind.origins.get(objectName)),
    );
  }

  /** The snapshot of `origin` as given, with the clusters as cached now. */
  private snapshotOf(
    kind: ReconciledKind,
    key: string,
    objectName: string,
    origin: KubeObject | undefined,
  ): OriginSnapshot<KubeObject> {
    const clusters = this.clusterSnapshots(kind.adapter.name, objectName);
    if (!origin || origin.metadata?.deletionTimestamp) {
      this.options.workerAdmission?.forget(key);
      return { kind: 'gone', key, uid: origin?.metadata?.uid ?? this.deletedOrigins.get(key), clusters };
    }
    this.deletedOrigins.delete(key);
    const placement = placementRecordOf(origin, this.options.recordKeys);
    this.checkFences(kind, origin, placement, clusters);
    this.readWorkerAdmission(kind, key, origin, placement, clusters);
    return { kind: 'present', key, origin, placement, clusters };
  }

  /**
   * While the mirror on the cluster the record names is held suspended by that worker's own
   * admission (the kind's rule, `mirrorHeldByWorker`), what that admission says of it, as known
   * now (a read of it is started when due, not awaited); forgotten once it is not held.
   */
  private readWorkerAdmission(
    kind: ReconciledKind,
    key: string,
    origin: KubeObject,
    placement: ParsedPlacement,
    clusters: ClusterSnapshot<KubeObject>[],
  ): void {
    const reasons = this.options.workerAdmission;
    if (!reasons) return;
    const cluster = placement.kind === 'ok' ? placement.record.cluster : undefined;
    const here = cluster === undefined ? undefined : clusters.find((c) => c.name === cluster);
    const mirror = here?.active ? here.mirror : undefined;
    if (!here || !mirror || kind.adapter.mirrorHeldByWorker?.(origin, mirror) === undefined) {
      reasons.forget(key);
      return;
    }
    const said = reasons.reasonFor(key, here.name, mirror);
    if (said !== undefined) here.workerAdmission = said;
  }

  /**
   * The fences of the cluster a placed workload's record names, while its mirror is missing
   * there (the only time they matter again: just before the mirror is created).
   */
  private checkFences(
    kind: ReconciledKind,
    origin: KubeObject,
    placement: ParsedPlacement,
    clusters: ClusterSnapshot<KubeObject>[],
  ): void {
    if (placement.kind !== 'ok' || !placement.record.cluster || kind.adapter.isFinished(origin)) return;
    const here = clusters.find((c) => c.name === placement.record.cluster);
    if (!here?.active || here.mirror !== undefined) return;
    const fenced = this.options.fencesAgainst(kind, origin, placement.record, here.name);
    if (fenced !== undefined) here.fenced = fenced;
  }

  private clusterSnapshots(kindName: string, objectName: string): ClusterSnapshot<KubeObject>[] {
    return this.options.clusters(kindName).map((cluster) => ({
      name: cluster.name,
      registered: cluster.registered,
      connected: cluster.mirrors !== undefined,
      active: cluster.active,
      reason: cluster.reason,
      inactiveSince: cluster.inactiveSince,
      drain: cluster.drain,
      podRestrictions: cluster.podRestrictions,
      mirror: cluster.mirrors
        ? (cluster.mirrors.get(objectName) ??
          this.options.ownWrites.expectedMirror(originKey(kindName, objectName), cluster.name))
        : undefined,
    }));
  }
}
