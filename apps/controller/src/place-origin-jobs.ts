import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import type { Clock } from '@jobrelay/kube';
import { isNotFound } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  type ClusterCandidate,
  type ClusterLoad,
  chooseWorkerCluster,
  clusterCandidates,
  clusterLoad,
  type KindedWorkload,
  noProgress,
  type PlacementOutcome,
  type PlacementQueue,
  type PlacementRecord,
  type PlacementTask,
  type PodGroup,
  parsePlacementRecord,
  placementRequestFor,
  waitingSince,
} from '@jobrelay/placement';
import { eventReasons, statusWrite } from '@jobrelay/planner';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';
import { originKey } from './dispatched-kinds.ts';
import { patchPlacement } from './patch-placement.ts';

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
  config: Pick<ControllerConfig, 'placementPolicy' | 'placementTimeoutSeconds'>;
  clock: Clock;
  log: Logger;
  /** A placement was written: the origin's reconcile creates the mirror. */
  enqueueReconcile: (key: string) => void;
}

/**
 * Placement: runs from the BullMQ worker, re-reading the origin from the apiserver, and
 * records the chosen cluster on the origin before anything is created anywhere. Holds the
 * placements written but not yet seen in the origin cache, so concurrent placements count them.
 */
export class OriginPlacer {
  private readonly options: OriginPlacerOptions;
  private readonly log: Logger;
  /** Placements written but not yet seen in the origin cache (cf. kube-scheduler's assume cache). */
  private readonly assumedPlacements = new Map<string, string>();
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

  /** The origin cache shows this placement: it need not be assumed any longer. */
  placementSeen(originUid: string, cluster: string): void {
    if (this.assumedPlacements.get(originUid) === cluster) this.assumedPlacements.delete(originUid);
  }

  /** The origin is gone: nothing of it is assumed or cached any longer. */
  forgetOrigin(originUid: string): void {
    this.assumedPlacements.delete(originUid);
    this.demandCache.delete(originUid);
  }

  async place(task: PlacementTask, attemptsMade: number): Promise<PlacementOutcome> {
    // Tasks queued before kinds existed carry none: they were Jobs.
    const kind = this.options.kinds.get(task.kind ?? batchJobAdapter.name);
    if (!kind) return 'not-needed';
    const { adapter } = kind;
    const key = `${task.namespace}/${task.name}`;
    let origin: KubeObject;
    try {
      origin = await kind.management.read(task.namespace, task.name);
    } catch (err) {
      if (isNotFound(err)) return 'not-needed';
      throw err;
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
    const parsed = parsePlacementRecord(origin.metadata?.annotations?.[placementAnnotation]);
    if (parsed.kind === 'unreadable') return 'not-needed';
    const previous = parsed.kind === 'ok' ? parsed.record : undefined;
    if (previous?.cluster) return 'not-needed';
    const request = placementRequestFor(origin, previous, this.options.config.placementPolicy, adapter, (o) =>
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
    };
    delete record.mirrorUid;
    delete record.waitingSince;
    // Assumed at once, before any await: placements running concurrently must count it.
    this.assumedPlacements.set(task.uid, decision.cluster);
    let written: Awaited<ReturnType<typeof patchPlacement>>;
    try {
      // The decision is recorded on the origin before anything is created anywhere.
      written = await patchPlacement(kind.management, origin, record);
    } catch (err) {
      this.assumedPlacements.delete(task.uid);
      throw err;
    }
    if (written.kind === 'conflict') {
      this.assumedPlacements.delete(task.uid);
      // BullMQ retries the task, which re-reads the origin.
      throw new Error(`origin ${key} changed while placing it; retrying`);
    }
    this.log.info(
      { kind: adapter.name, job: key, cluster: decision.cluster, attempt: record.attempt },
      decision.message,
    );
    await this.options.recordEvent(kind, origin, 'Normal', eventReasons.placed, decision.message);
    this.options.enqueueReconcile(originKey(adapter.name, key));
    return 'placed';
  }

  /**
   * Per cluster: unfinished jobrelay workloads of every kind placed there (placements not
   * yet seen in the cache included) and the requests of those whose pods do not exist yet,
   * so a burst of placements does not all land on the cluster that looked emptiest a moment ago.
   */
  loadByCluster(): ClusterLoad {
    const capacities = new Map(this.options.registry.clusters().map((c) => [c.name, c.capacity]));
    return clusterLoad(this.managedWorkloads(), capacities, this.assumedPlacements, (entry) =>
      this.demandOf(entry),
    );
  }

  /** Capacity freed or a cluster changed: waiting placements are retried now, at most twice a second. */
  retryWaitingPlacementsSoon(): void {
    if (this.retryWaitingTimer) return;
    this.retryWaitingTimer = setTimeout(() => {
      this.retryWaitingTimer = undefined;
      void this.options.queue.retryWaitingNow().catch(() => {});
    }, 500);
  }

  private *managedWorkloads(): Iterable<KindedWorkload> {
    for (const kind of this.options.kinds.values()) {
      for (const workload of kind.origins.list()) yield { workload, facts: kind.adapter };
    }
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
    const failed = kind.adapter.placementTimeoutStatus?.(origin, new Date(now), message);
    if (!failed) return false;
    const [write] = statusWrite(kind.adapter, origin, failed, 'timeout');
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
