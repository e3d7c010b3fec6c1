import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import {
  describeApiError,
  isNotFound,
  mergePatch,
  type RecordedEvent,
  type ResilientInformer,
} from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  type ClusterCandidate,
  type ClusterLoad,
  chooseWorkerCluster,
  clusterCandidates,
  clusterLoad,
  jobPodRequests,
  noProgress,
  type PlacementOutcome,
  type PlacementQueue,
  type PlacementRecord,
  type PlacementTask,
  parsePlacementRecord,
  placementRequestFor,
  type Resources,
  waitingSince,
} from '@jobrelay/placement';
import { writeOriginStatus } from '@jobrelay/status';
import type { BatchV1Api, V1Job, V1JobCondition } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import { isFinished, isSuspended, jobKey } from './job-facts.ts';
import { patchPlacement } from './patch-placement.ts';

/** Records an Event regarding an origin Job. */
export type RecordOriginEvent = (
  origin: V1Job,
  type: RecordedEvent['type'],
  reason: string,
  action: string,
  note: string,
) => Promise<void>;

export interface OriginPlacerOptions {
  /** The management cluster's origin Jobs (managed ones only): the load on each cluster is counted from them. */
  origins: Pick<ResilientInformer<V1Job>, 'list'>;
  /** The WorkerClusters, their state and capacity: the candidates. */
  registry: Pick<WorkerClusterRegistry, 'clusters'>;
  /** Waiting placements are promoted through it when capacity frees up. */
  queue: Pick<PlacementQueue, 'retryWaitingNow'>;
  /** The management cluster: origins are re-read, annotated and failed through it. */
  batch: BatchV1Api;
  recordEvent: RecordOriginEvent;
  config: Pick<ControllerConfig, 'managedBy' | 'placementPolicy' | 'placementTimeoutSeconds'>;
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
  private readonly podRequestsCache = new Map<string, Resources>();
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
    this.podRequestsCache.delete(originUid);
  }

  async place(task: PlacementTask, attemptsMade: number): Promise<PlacementOutcome> {
    const { batch, config } = this.options;
    const key = `${task.namespace}/${task.name}`;
    let origin: V1Job;
    try {
      origin = await batch.readNamespacedJob({ name: task.name, namespace: task.namespace });
    } catch (err) {
      if (isNotFound(err)) return 'not-needed';
      throw err;
    }
    if (
      origin.metadata?.uid !== task.uid ||
      origin.spec?.managedBy !== config.managedBy ||
      origin.metadata?.deletionTimestamp ||
      isFinished(origin) ||
      isSuspended(origin)
    ) {
      return 'not-needed';
    }
    const parsed = parsePlacementRecord(origin.metadata?.annotations?.[placementAnnotation]);
    if (parsed.kind === 'unreadable') return 'not-needed';
    const previous = parsed.kind === 'ok' ? parsed.record : undefined;
    if (previous?.cluster) return 'not-needed';
    const request = placementRequestFor(origin, previous, this.options.config.placementPolicy, (job) =>
      this.podRequestsOf(job),
    );
    const decision =
      request.kind === 'invalid'
        ? { kind: 'unschedulable' as const, message: request.message }
        : chooseWorkerCluster(this.candidates(), request.request);
    if (decision.kind === 'unschedulable') {
      this.log.info({ job: key, attemptsMade, why: decision.message }, 'no cluster fits yet');
      await this.options.recordEvent(origin, 'Warning', 'FailedPlacement', 'Place', decision.message);
      if (await this.giveUpIfWaitedTooLong(origin, previous, decision.message)) return 'not-needed';
      await this.noteUnschedulable(origin, decision.message);
      return 'unschedulable';
    }
    const record: PlacementRecord = {
      ...(previous ?? { attempt: 1, carried: noProgress, excludedClusters: [] }),
      cluster: decision.cluster,
      placedAt: new Date().toISOString(),
    };
    delete record.mirrorUid;
    delete record.waitingSince;
    // Assumed at once, before any await: placements running concurrently must count it.
    this.assumedPlacements.set(task.uid, decision.cluster);
    try {
      // The decision is recorded on the origin before anything is created anywhere.
      await patchPlacement(batch, origin, record);
    } catch (err) {
      this.assumedPlacements.delete(task.uid);
      throw err;
    }
    this.log.info({ job: key, cluster: decision.cluster, attempt: record.attempt }, decision.message);
    await this.options.recordEvent(origin, 'Normal', 'Placed', 'Place', decision.message);
    this.options.enqueueReconcile(key);
    return 'placed';
  }

  /**
   * Per cluster: unfinished jobrelay Jobs placed there (placements not yet seen in the cache
   * included) and the requests of those whose pods do not exist yet, so a burst of
   * placements does not all land on the cluster that looked emptiest a moment ago.
   */
  loadByCluster(): ClusterLoad {
    const capacities = new Map(this.options.registry.clusters().map((c) => [c.name, c.capacity]));
    return clusterLoad(this.options.origins.list(), capacities, this.assumedPlacements, (job) =>
      this.podRequestsOf(job),
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

  /** One pod's requests; the template is immutable, so computed once per origin. */
  private podRequestsOf(origin: V1Job): Resources {
    const uid = origin.metadata!.uid!;
    let requests = this.podRequestsCache.get(uid);
    if (!requests) {
      requests = jobPodRequests(origin);
      this.podRequestsCache.set(uid, requests);
    }
    return requests;
  }

  private candidates(): ClusterCandidate[] {
    return clusterCandidates(this.options.registry.clusters(), this.loadByCluster());
  }

  /** The Job says why it waits (annotation), written only when the reason changes. */
  private async noteUnschedulable(origin: V1Job, message: string): Promise<void> {
    if (origin.metadata?.annotations?.[unschedulableAnnotation] === message) return;
    await this.options.batch
      .patchNamespacedJob(
        {
          name: origin.metadata!.name!,
          namespace: origin.metadata!.namespace!,
          body: { metadata: { annotations: { [unschedulableAnnotation]: message } } },
        },
        mergePatch,
      )
      .catch((err: unknown) =>
        this.log.warn({ err: describeApiError(err) }, 'could not annotate the waiting Job'),
      );
  }

  /**
   * The optional give-up: a Job that fits nowhere for --placement-timeout-seconds fails with
   * reason PlacementTimeout (FailureTarget and Failed, in one valid update).
   */
  private async giveUpIfWaitedTooLong(
    origin: V1Job,
    previous: PlacementRecord | undefined,
    why: string,
  ): Promise<boolean> {
    const timeoutMs = this.options.config.placementTimeoutSeconds * 1000;
    if (timeoutMs <= 0) return false;
    const since = waitingSince(origin, previous)?.getTime() ?? Date.now();
    if (Date.now() - since < timeoutMs) return false;
    // Whole seconds: the apiserver stores no more, and a finer startTime would not compare equal.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const message = `no cluster fit for ${this.options.config.placementTimeoutSeconds}s: ${why}`;
    const failure = (type: string): V1JobCondition => ({
      type,
      status: 'True',
      reason: 'PlacementTimeout',
      message,
      lastProbeTime: now,
      lastTransitionTime: now,
    });
    const status = origin.status ?? {};
    const result = await writeOriginStatus(this.options.batch, origin, {
      ...status,
      startTime: status.startTime ?? now,
      active: 0,
      ready: 0,
      terminating: 0,
      conditions: [...(status.conditions ?? []), failure('FailureTarget'), failure('Failed')],
    });
    if (result.kind !== 'written') {
      this.log.warn(
        { job: jobKey(origin), result: result.kind },
        'could not fail the Job after the placement timeout',
      );
      return false;
    }
    await this.options.recordEvent(origin, 'Warning', 'PlacementTimeout', 'Place', message);
    return true;
  }
}
