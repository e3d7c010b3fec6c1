import type { ClusterMirrorCache } from '@jobrelay/clusters';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock, InformerEvent } from '@jobrelay/kube';
import {
  type ParsedPlacement,
  type PlacementRecord,
  placementRecordOf,
  type RecordKeyring,
} from '@jobrelay/placement';
import { type ClusterSnapshot, type OriginSnapshot, type PlannerConfig, planOrigin } from '@jobrelay/planner';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';
import { originKey, splitOriginKey } from './dispatched-kinds.ts';
import type { ReconcileLane, ReconcileResult } from './keyed-work-queue.ts';
import type { OriginExecutor, WorkerTarget } from './origin-executor.ts';
import { OwnOriginWrites } from './own-origin-writes.ts';
import type { WorkerAdmissionReasons } from './worker-admission-reasons.ts';
import { WrittenOrigins } from './written-origins.ts';

/** How long a created mirror is taken as existing while its cluster's cache does not show it. */
export const expectedMirrorMs = 30_000;

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
  /** Ask for a reconcile of `key`: `first` ahead of status syncs, `afterMs` a while later. */
  enqueue: (key: string, options?: { first?: boolean; afterMs?: number }) => void;
  /** Only the leader measures the status lag (it is the one writing status back). */
  leading: () => boolean;
  /** A mirror's changes seen within this long cost one origin status write (0: at once). */
  statusCoalesceMs: number;
  /** A mirror change reached its origin's status this many seconds after it was seen. */
  statusLag?: (seconds: number) => void;
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
 * One origin's reconcile, snapshot -> planOrigin -> executor, and the bookkeeping of the
 * controller's own writes around it, so that what it wrote does not cost reconciles that find
 * nothing to do, and what it created is not created twice while the caches catch up:
 *
 * - origin writes (a placement, a status, a waiting note) whose watch echo is not reconciled
 *   once a plan from that very version found nothing to do (`OwnOriginWrites`);
 * - origin writes that the origin cache does not show yet, planned from at once: a placement's
 *   mirror created, a status written over the version the last write produced
 *   (`WrittenOrigins`);
 * - mirrors created but not yet in their cluster's cache, taken as there for 30 s, and their
 *   echo not reconciled when a plan with them found nothing to do (cf. client-go's
 *   ControllerExpectations);
 * - the UIDs of origins deleted from the cache, until their mirrors are gone.
 *
 * Every watch event, from any cluster, reaches it as `originEvent` or `mirrorEvent` and only
 * enqueues the origin's key (or does not, for an echo).
 */
export class OriginReconciler {
  private readonly options: OriginReconcilerOptions;
  /**
   * Mirrors created (or adopted) but not yet seen in their cluster's cache, by origin key, so
   * a reconcile in between does not try to create them again (one wasted POST and a GET per
   * occurrence). Dropped when the cache shows the mirror, or after expectedMirrorMs, when the
   * create-or-adopt path settles it anyway. `planned`: a plan with this very mirror found
   * nothing to do, so its arrival in the cache (the create's echo, same version) need not be
   * reconciled.
   */
  private readonly expectedMirrors = new Map<
    string,
    { cluster: string; mirror: KubeObject; until: number; planned?: boolean; echoed?: boolean }
  >();
  /**
   * Mirror creates in flight, by origin key. Under load the watch often brings the new mirror
   * before the create's answer is read; taken then for someone else's change, it cost a
   * reconcile that found nothing to do, in the lane status changes wait in (docs/scale.md). An
   * upsert of it that comes meanwhile is held here and judged on the answer (as client-go raises
   * its expectations before the request).
   */
  private readonly creatingMirrors = new Map<string, { cluster: string; held: number; echo?: KubeObject }>();
  /** Origin writes that the origin cache does not show yet (see WrittenOrigins). */
  private readonly writtenOrigins = new WrittenOrigins();
  /** Origin writes whose watch echo need not be reconciled (see OwnOriginWrites). */
  private readonly ownWrites = new OwnOriginWrites();
  /** Per origin key: when a mirror change not yet written back to the origin was first seen. */
  private readonly mirrorChangeSeenAt = new Map<string, number>();
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
    return {
      expectedMirrors: this.expectedMirrors.size,
      writtenOrigins: this.writtenOrigins.size,
      ownWrites: this.ownWrites.size,
      deletedOrigins: this.deletedOrigins.size,
    };
  }

  /** The origin cache changed: the key is reconciled, unless it is the echo of our own write. */
  originEvent(key: string, event: InformerEvent<KubeObject>): void {
    if (event.type === 'delete') {
      this.deletedOrigins.set(key, event.object.metadata!.uid!);
      this.ownWrites.forget(key);
      this.writtenOrigins.forget(key);
    } else {
      // The cache moved on: a write it shows now is dropped (a version written over keeps it).
      this.writtenOrigins.newest(key, event.object);
    }
    // Our own write coming back, which a reconcile has planned from (or will): nothing new.
    if (
      event.type === 'upsert' &&
      !this.ownWrites.needsReconcile(key, event.object.metadata?.resourceVersion)
    )
      return;
    // A workload seen for the first time goes ahead of status syncs: it needs a placement.
    this.options.enqueue(key, { first: event.type === 'upsert' && event.previous === undefined });
  }

  /** A mirror changed in `cluster`'s cache: its origin is reconciled, unless it is our create's echo. */
  mirrorEvent(cluster: string, kind: string, event: InformerEvent<KubeObject>, objectName: string): void {
    const key = originKey(kind, objectName);
    const creating = this.creatingMirrors.get(key);
    if (creating?.cluster === cluster && event.type === 'upsert') {
      creating.held += 1;
      creating.echo = event.object;
      return;
    }
    const expected = this.expectedMirrors.get(key);
    if (expected?.cluster === cluster) {
      this.expectedMirrors.delete(key);
      // The mirror as created, already planned with: nothing changed.
      if (
        expected.planned &&
        event.type === 'upsert' &&
        event.object.metadata?.resourceVersion === expected.mirror.metadata?.resourceVersion
      )
        return;
    }
    this.mirrorChanged(key);
  }

  /** A mirror of the key changed (not our create's echo): its origin is reconciled soon. */
  private mirrorChanged(key: string): void {
    // The first change not yet written back: the status lag is measured from it (by the
    // leader, which writes it back).
    if (this.options.leading() && !this.mirrorChangeSeenAt.has(key))
      this.mirrorChangeSeenAt.set(key, this.options.clock.now());
    // A mirror's status changes come in bursts (a pod created, then ready; it succeeds, then
    // the Job completes): waiting a moment lets one origin status write carry a burst.
    const { statusCoalesceMs } = this.options;
    this.options.enqueue(key, statusCoalesceMs > 0 ? { afterMs: statusCoalesceMs } : {});
  }

  /** The executor is about to create a mirror on `cluster`: its echo may come before the answer. */
  mirrorCreating(kind: string, cluster: string, objectName: string): void {
    this.creatingMirrors.set(originKey(kind, objectName), { cluster, held: 0 });
  }

  /** The executor created or adopted a mirror: until its cluster's cache shows it, take it as there. */
  mirrorCreated(kind: string, cluster: string, mirror: KubeObject, objectName: string): void {
    const key = originKey(kind, objectName);
    const creating = this.creatingMirrors.get(key);
    this.creatingMirrors.delete(key);
    // Exactly one upsert came while the create was in flight, and it is the mirror as created:
    // its echo, already in the cache. Anything else was a change of its own.
    const echoed =
      creating?.cluster === cluster &&
      creating.held === 1 &&
      creating.echo?.metadata?.uid === mirror.metadata?.uid &&
      creating.echo?.metadata?.resourceVersion === mirror.metadata?.resourceVersion;
    this.expectedMirrors.set(key, {
      cluster,
      mirror,
      until: this.options.clock.now() + expectedMirrorMs,
      ...(echoed ? { echoed: true } : {}),
    });
    if (creating && creating.held > 0 && !echoed) this.mirrorChanged(key);
  }

  /** The executor is about to write the origin: its echo may come before the answer. */
  originWriting(kind: string, objectName: string): void {
    this.ownWrites.writing(originKey(kind, objectName));
  }

  /** That write got no answer to note: what the watch brought meanwhile is reconciled. */
  originUnwritten(kind: string, objectName: string): void {
    const key = originKey(kind, objectName);
    if (this.ownWrites.unanswered(key)) this.options.enqueue(key);
  }

  /**
   * The executor wrote the origin over version `over`; `origin` is the apiserver's answer, which
   * reconciles plan from until the cache shows it (WrittenOrigins).
   */
  originWritten(kind: string, origin: KubeObject, objectName: string, over?: string): void {
    const key = originKey(kind, objectName);
    if (over !== undefined && over !== origin.metadata?.resourceVersion) {
      this.writtenOrigins.record(key, over, origin);
      // Its echo may have come first (under load it often does): then the cache rules already.
      this.writtenOrigins.newest(key, this.options.kinds.get(kind)?.origins.get(objectName));
    }
    // Something the watch brought while the write was in flight was not its echo.
    if (this.ownWrites.wrote(key, origin.metadata?.resourceVersion)) this.options.enqueue(key);
  }

  /** The executor wrote the origin's status: the status lag of the change that asked for it. */
  statusWritten(kind: string, objectName: string): void {
    const seenAt = this.mirrorChangeSeenAt.get(originKey(kind, objectName));
    if (seenAt !== undefined) this.options.statusLag?.((this.options.clock.now() - seenAt) / 1000);
  }

  /**
   * A placement task wrote the origin: its reconcile runs ahead of status syncs and plans from
   * the answer at once (the executor noted it in `originWritten`), so a placement's mirror is
   * created without waiting for the watch to bring the write back.
   */
  placerWrote(key: string): void {
    this.options.enqueue(key, { first: true });
  }

  /** The newest version of an origin known: our last write's answer, while the cache shows a version it went over. */
  newestOrigin(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    return this.writtenOrigins.newest(key, cached);
  }

  /** Expectations of mirrors whose origin was never reconciled again (deleted meanwhile) expire. */
  expireExpectations(): void {
    const now = this.options.clock.now();
    for (const [key, expected] of this.expectedMirrors)
      if (expected.until <= now) this.expectedMirrors.delete(key);
  }

  /** Reconciles one origin: snapshot -> plan -> execute. A failure is retried by the queue, from the cache. */
  async reconcile(key: string, lane?: ReconcileLane): Promise<ReconcileResult> {
    try {
      const changeSeenAt = this.mirrorChangeSeenAt.get(key);
      const result = await this.reconcileOnce(key, lane).finally(() => this.settleCreates(key));
      // Synced (written, or nothing to write): a later change starts its own measurement.
      if (changeSeenAt !== undefined && this.mirrorChangeSeenAt.get(key) === changeSeenAt)
        this.mirrorChangeSeenAt.delete(key);
      return result;
    } catch (err) {
      // Retried with backoff, from the cache: an echo held back for it is not needed.
      this.ownWrites.forget(key);
      throw err;
    }
  }

  /**
   * After a reconcile: a create that got no answer (it failed, or met another object) leaves
   * what came meanwhile to be reconciled as any change; a mirror whose echo came before its
   * answer is settled: nothing more if the reconcile planned with it and found nothing left,
   * else reconciled as its echo would have been.
   */
  private settleCreates(key: string): void {
    const creating = this.creatingMirrors.get(key);
    if (creating) {
      this.creatingMirrors.delete(key);
      if (creating.held > 0) this.mirrorChanged(key);
    }
    const expected = this.expectedMirrors.get(key);
    if (expected?.echoed) {
      this.expectedMirrors.delete(key);
      if (!expected.planned) this.mirrorChanged(key);
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
      if (this.expectedMirrors.has(key) || this.writtenOrigins.newest(key, origin) !== origin) return false;
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
    if (snapshot.kind === 'present' && endedAt !== undefined && this.ownWrites.awaits(key, endedAt)) {
      let settled = result.requeueAfterMs !== undefined;
      if (!settled) {
        const ended = this.snapshotOf(kind, key, objectName, result.origin);
        // (Not noted for the resync: it plans from the write's answer, an object the origin
        // cache never holds, so a note keyed by it could never be matched.)
        settled = planOrigin(ended, kind.adapter, plannerConfig, clock.now()).length === 0;
        // A mirror created in this run was part of that plan: its own echo is covered too.
        const expected = this.expectedMirrors.get(key);
        // (The cache may hold its echo already, a copy of the very version created.)
        if (
          settled &&
          expected &&
          ended.clusters.some(
            (c) =>
              c.name === expected.cluster &&
              c.mirror?.metadata?.uid === expected.mirror.metadata?.uid &&
              c.mirror?.metadata?.resourceVersion === expected.mirror.metadata?.resourceVersion,
          )
        )
          expected.planned = true;
      }
      if (this.ownWrites.planned(key, endedAt, settled)) this.options.enqueue(key);
    }
    return result.requeueAfterMs === undefined ? undefined : { requeueAfterMs: result.requeueAfterMs };
  }

  /** What one reconcile decides from, read from the caches at one instant. */
  private snapshot(kind: ReconciledKind, key: string, objectName: string): OriginSnapshot<KubeObject> {
    return this.snapshotOf(kind, key, objectName, this.newestOrigin(key, kind.origins.get(objectName)));
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

  /** A mirror this process created on `cluster` that its cache does not show yet. */
  private expectedMirror(key: string, cluster: string): KubeObject | undefined {
    const expected = this.expectedMirrors.get(key);
    if (!expected || expected.cluster !== cluster) return undefined;
    if (expected.until <= this.options.clock.now()) {
      this.expectedMirrors.delete(key);
      return undefined;
    }
    return expected.mirror;
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
          this.expectedMirror(originKey(kindName, objectName), cluster.name))
        : undefined,
    }));
  }
}
