import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import type { Clock, InformerEvent } from '@jobrelay/kube';
import { isNotFound } from '@jobrelay/kube';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import {
  type ClusterCandidate,
  type ClusterLoad,
  chooseWorkerCluster,
  clusterCandidates,
  fenceRejection,
  type KindedWorkload,
  type NamespaceLookup,
  noProgress,
  PlacedLoadIndex,
  type PlacementOutcome,
  type PlacementQueue,
  type PlacementRecord,
  type PlacementTask,
  type PodGroup,
  patchPlacement,
  placedWorkload,
  placementRecordOf,
  placementRequestFor,
  type RecordKeyring,
  waitingSince,
} from '@jobrelay/placement';
import { eventReasons, statusWrite } from '@jobrelay/planner';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';
import { originKey } from './dispatched-kinds.ts';

/** Records an Event regarding an origin of some kind. */
export type RecordOriginEvent = (
  kind: AnyDispatchedKind,
  origin: KubeObject,
  type: 'Normal' | 'Warning',
  reason: (typeof eventReasons)[keyof typeof eventReasons],
  note: string,
) => Promise<void>;

export interface OriginPlacerOptions {
  /** The dispatched kinds by adapter name: their origins are re-read, annotated and failed through them. */
  kinds: ReadonlyMap<string, AnyDispatchedKind>;
  /** The WorkerClusters, their state and capacity: the candidates. */
  registry: Pick<WorkerClusterRegistry, 'clusters'>;
  /** Waiting placements are promoted through it when capacity frees up. */
  queue: Pick<PlacementQueue, 'retryWaitingNow'>;
  recordEvent: RecordOriginEvent;
  /** Seals the placement records it writes, and checks those it reads. */
  recordKeys: RecordKeyring;
  config: Pick<
    ControllerConfig,
    'placementPolicy' | 'placementTimeoutSeconds' | 'recordDispatchEvents' | 'systemNamespace'
  >;
  /** The management cluster's namespaces: a workload's namespace's Pod Security level. */
  namespaces: NamespaceLookup;
  clock: Clock;
  log: Logger;
  /**
   * A placement was written over version `over` of the origin; `written` is the apiserver's
   * answer. The origin's reconcile creates the mirror from it.
   */
  placed: (key: string, over: string, written: KubeObject, cluster: string) => void;
}

/**
 * Placement: runs from the BullMQ worker and records the chosen cluster on the origin before
 * anything is created anywhere. It decides from the origin cache and writes over the version
 * it read there, so a stale cache costs a conflict and a retry, never a wrong placement.
 * It keeps each placed workload's share of its cluster's load up to date as the cache changes
 * (so a decision costs the same with 10 or 10,000 workloads placed), and counts placements
 * written but not yet seen in the cache, so concurrent placements see them.
 */
export class OriginPlacer {
  private readonly options: OriginPlacerOptions;
  private readonly log: Logger;
  /** Placements written but not yet seen in the origin cache (cf. kube-scheduler's assume cache). */
  private readonly assumedPlacements = new Map<string, string>();
  /** By origin UID: every placed, unfinished workload's share of its cluster's load. */
  private readonly placed = new PlacedLoadIndex();
  /** Pod demand per origin UID, for the generation it was computed from (RayCluster replicas may change). */
  private readonly demandCache = new Map<string, { generation: number | undefined; demand: PodGroup[] }>();
  private retryWaitingTimer: NodeJS.Timeout | undefined;

  constructor(options: OriginPlacerOptions) {
    this.options = options;
    this.log = options.log;
  }

  stop(): void {
    clearTimeout(this.retryWaitingTimer);
  }

  /** An origin changed in the cache: its share of its cluster's load follows. */
  observe(kind: AnyDispatchedKind, event: InformerEvent<KubeObject>): void {
    const uid = event.object.metadata?.uid;
    if (!uid) return;
    if (event.type === 'delete') {
      this.forgetOrigin(uid);
      return;
    }
    const parsed = placementRecordOf(event.object, this.options.recordKeys);
    const recorded = parsed.kind === 'ok' ? parsed.record.cluster : undefined;
    // The cache shows this placement: it need not be assumed any longer.
    if (recorded !== undefined && this.assumedPlacements.get(uid) === recorded)
      this.assumedPlacements.delete(uid);
    this.updatePlaced(kind, event.object);
  }

  /** The origin is gone: nothing of it is assumed or cached any longer. */
  forgetOrigin(originUid: string): void {
    this.assumedPlacements.delete(originUid);
    this.demandCache.delete(originUid);
    this.placed.delete(originUid);
  }

  private updatePlaced(kind: AnyDispatchedKind, workload: KubeObject): void {
    const uid = workload.metadata!.uid!;
    const entry: KindedWorkload = { workload, facts: kind.adapter };
    const share = placedWorkload(entry, this.assumedPlacements.get(uid), this.options.recordKeys, (e) =>
      this.demandOf(e),
    );
    if (share) this.placed.set(uid, share);
    else this.placed.delete(uid);
  }

  async place(task: PlacementTask, attemptsMade: number): Promise<PlacementOutcome> {
    // Tasks queued before kinds existed carry none: they were Jobs.
    const kind = this.options.kinds.get(task.kind ?? batchJobAdapter.name);
    if (!kind) return 'not-needed';
    const { adapter } = kind;
    const key = `${task.namespace}/${task.name}`;
    // The cache, not a GET: the placement write below carries the version read here.
    let origin = kind.origins.get(key);
    if (!origin || origin.metadata?.uid !== task.uid) {
      // Not (or not yet) in the cache as the task knows it: ask the apiserver.
      try {
        origin = await kind.management.read(task.namespace, task.name);
      } catch (err) {
        if (isNotFound(err)) return 'not-needed';
        throw err;
      }
    }
    if (
      origin.metadata?.uid !== task.uid ||
      !adapter.isManagedBy(origin, kind.managedBy) ||
      origin.metadata?.deletionTimestamp ||
      adapter.isFinished(origin) ||
      adapter.isSuspended(origin)
    ) {
      return 'not-needed';
    }
    const parsed = placementRecordOf(origin, this.options.recordKeys);
    // A record jobrelay did not write is replaced by the origin's reconcile, which enqueues it again.
    if (parsed.kind === 'untrusted' || parsed.kind === 'unverifiable') return 'not-needed';
    const previous = parsed.kind === 'ok' ? parsed.record : undefined;
    if (previous?.cluster || previous?.gaveUp !== undefined) return 'not-needed';
    // Refused a moment ago: the reconcile enqueues it again once the delay is over.
    if (previous?.retryAfter && Date.parse(previous.retryAfter) > this.options.clock.now())
      return 'not-needed';
    // A namespace created a moment before its workload may not have reached the cache yet: a
    // retry, not a reason to write on the workload (placementRequestFor would say it waits).
    if (!this.options.namespaces.get(task.namespace))
      throw new Error(`namespace ${task.namespace} is not in the cache yet; retrying`);
    const request = placementRequestFor(origin, previous, this.placementSettings(), adapter, (o) =>
      this.demandOf({ workload: o, facts: adapter }),
    );
    const decision =
      request.kind === 'invalid'
        ? { kind: 'unschedulable' as const, message: request.message }
        : chooseWorkerCluster(this.candidates(), request.request);
    if (decision.kind === 'unschedulable') {
      this.log.info(
        { kind: adapter.name, job: key, attemptsMade, why: decision.message },
        'no cluster fits yet',
      );
      await this.options.recordEvent(kind, origin, 'Warning', eventReasons.failedPlacement, decision.message);
      if (await this.giveUpIfWaitedTooLong(kind, origin, previous, decision.message)) return 'not-needed';
      await this.noteUnschedulable(kind, origin, decision.message);
      return 'unschedulable';
    }
    const record: PlacementRecord = {
      ...(previous ?? { attempt: 1, carried: noProgress, excludedClusters: [] }),
      cluster: decision.cluster,
      placedAt: new Date(this.options.clock.now()).toISOString(),
      // The explanation travels with the record, in the same write: `kubectl describe` and
      // the admin API show why this cluster without an Event per placement.
      decision: decision.message,
    };
    delete record.mirrorUid;
    delete record.waitingSince;
    delete record.retryAfter;
    // Assumed at once, before any await: placements running concurrently must count it.
    this.assumedPlacements.set(task.uid, decision.cluster);
    this.updatePlaced(kind, origin);
    const unassume = () => {
      this.assumedPlacements.delete(task.uid);
      const cached = kind.origins.get(key);
      if (cached?.metadata?.uid === task.uid) this.updatePlaced(kind, cached);
      else this.placed.delete(task.uid);
    };
    let written: Awaited<ReturnType<typeof patchPlacement>>;
    try {
      // The decision is recorded on the origin before anything is created anywhere.
      written = await patchPlacement(kind.management, origin, record, this.options.recordKeys);
    } catch (err) {
      unassume();
      throw err;
    }
    if (written.kind === 'conflict') {
      unassume();
      // The cache was behind the apiserver: BullMQ retries the task, which reads it again.
      throw new Error(`origin ${key} changed while placing it; retrying`);
    }
    this.log.info(
      { kind: adapter.name, job: key, cluster: decision.cluster, attempt: record.attempt },
      decision.message,
    );
    if (this.options.config.recordDispatchEvents)
      await this.options.recordEvent(kind, origin, 'Normal', eventReasons.placed, decision.message);
    this.options.placed(
      originKey(adapter.name, key),
      origin.metadata!.resourceVersion!,
      written.value,
      decision.cluster,
    );
    return 'placed';
  }

  /**
   * Per cluster: unfinished jobrelay workloads of every kind placed there (placements not
   * yet seen in the cache included) and the requests of those whose pods do not exist yet,
   * so a burst of placements does not all land on the cluster that looked emptiest a moment ago.
   */
  loadByCluster(): ClusterLoad {
    const capacities = new Map(this.options.registry.clusters().map((c) => [c.name, c.capacity]));
    return this.placed.load(capacities);
  }

  /** What placement reads beside the workload: the default policy and the namespaces. */
  private placementSettings() {
    return {
      defaultPolicy: this.options.config.placementPolicy,
      systemNamespace: this.options.config.systemNamespace,
      namespaces: this.options.namespaces,
    };
  }

  /**
   * Why `cluster`'s fences would keep this placed workload out now (not its capacity: the
   * workload is already counted there), or undefined if they would not; checked just before its
   * mirror is created. Its own place in the cluster's load is not counted against its limits.
   */
  fencesAgainst(
    kind: AnyDispatchedKind,
    origin: KubeObject,
    record: PlacementRecord,
    cluster: string,
  ): string | undefined {
    const input = this.options.registry.clusters().find((c) => c.name === cluster);
    if (!input) return undefined;
    const request = placementRequestFor(origin, record, this.placementSettings(), kind.adapter, (o) =>
      this.demandOf({ workload: o, facts: kind.adapter }),
    );
    if (request.kind === 'invalid') return request.message;
    // Only the count of workloads matters to the fences, not the assumed requests (capacity).
    const self = this.placed.get(origin.metadata!.uid!);
    const others = this.placed.workloadsOn(cluster) - (self?.cluster === cluster ? 1 : 0);
    const [candidate] = clusterCandidates([input], new Map([[cluster, { jobs: others, assumed: {} }]]));
    return fenceRejection(candidate!, request.request);
  }

  /** Capacity freed or a cluster changed: waiting placements are retried now, at most twice a second. */
  retryWaitingPlacementsSoon(): void {
    if (this.retryWaitingTimer) return;
    this.retryWaitingTimer = setTimeout(() => {
      this.retryWaitingTimer = undefined;
      void this.options.queue.retryWaitingNow().catch(() => {});
    }, 500);
  }

  /** The pods a workload runs at once, computed once per origin and spec generation. */
  private demandOf({ workload, facts }: KindedWorkload): PodGroup[] {
    const uid = workload.metadata!.uid!;
    const generation = workload.metadata?.generation;
    const cached = this.demandCache.get(uid);
    if (cached && cached.generation === generation) return cached.demand;
    const demand = (facts as { podDemand(o: KubeObject): PodGroup[] }).podDemand(workload);
    this.demandCache.set(uid, { generation, demand });
    return demand;
  }

  private candidates(): ClusterCandidate[] {
    return clusterCandidates(this.options.registry.clusters(), this.loadByCluster());
  }

  /** The workload says why it waits (annotation), written only when the reason changes. */
  private async noteUnschedulable(
    kind: AnyDispatchedKind,
    origin: KubeObject,
    message: string,
  ): Promise<void> {
    if (origin.metadata?.annotations?.[unschedulableAnnotation] === message) return;
    await kind.management
      .patch(origin.metadata!.namespace!, origin.metadata!.name!, {
        metadata: { annotations: { [unschedulableAnnotation]: message } },
      })
      .catch((err: unknown) => this.log.warn({ err }, 'could not annotate the waiting workload'));
  }

  /**
   * The optional give-up: a workload that fits nowhere for --placement-timeout-seconds fails
   * with reason PlacementTimeout, for kinds that have a terminal failure to write (a Job:
   * FailureTarget and Failed, in one valid update). Other kinds keep waiting.
   */
  private async giveUpIfWaitedTooLong(
    kind: AnyDispatchedKind,
    origin: KubeObject,
    previous: PlacementRecord | undefined,
    why: string,
  ): Promise<boolean> {
    const timeoutMs = this.options.config.placementTimeoutSeconds * 1000;
    if (timeoutMs <= 0) return false;
    const now = this.options.clock.now();
    const since = waitingSince(origin, previous)?.getTime() ?? now;
    if (now - since < timeoutMs) return false;
    const message = `no cluster fit for ${this.options.config.placementTimeoutSeconds}s: ${why}`;
    const failed = kind.adapter.gaveUpStatus?.(origin, new Date(now), eventReasons.placementTimeout, message);
    if (!failed) return false;
    const [write] = statusWrite(kind.adapter, origin, failed, 'gave-up');
    if (write?.type !== 'write-status') {
      this.log.warn(
        { kind: kind.adapter.name, job: origin.metadata?.name, write },
        'could not fail the workload after the placement timeout',
      );
      return false;
    }
    try {
      await kind.management.replaceStatus({ ...origin, status: write.status });
    } catch (err) {
      this.log.warn(
        { kind: kind.adapter.name, job: origin.metadata?.name, err },
        'could not fail the workload after the placement timeout',
      );
      return false;
    }
    await this.options.recordEvent(kind, origin, 'Warning', eventReasons.placementTimeout, message);
    return true;
  }
}
