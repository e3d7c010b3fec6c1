import { hostname } from 'node:os';
import { WorkerClusterRegistry, type WorkerConnection } from '@jobrelay/clusters';
import {
  describeApiError,
  EventRecorder,
  isConflict,
  isNotFound,
  mergePatch,
  type RecordedEvent,
  ResilientInformer,
} from '@jobrelay/kube';
import {
  clusterPinAnnotation,
  clusterSelectorAnnotation,
  controllerName,
  mirrorOwnership,
  mirrorSpecUpdate,
  originUidLabel,
  placementAnnotation,
  placementPolicyAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import {
  addResources,
  type ClusterCandidate,
  chooseWorkerCluster,
  formatPlacementRecord,
  jobPodsAtOnce,
  noProgress,
  type PlacementOutcome,
  PlacementQueue,
  type PlacementRecord,
  type PlacementRequest,
  type PlacementTask,
  parseLabelSelector,
  parsePlacementRecord,
  podRequests,
  type Resources,
  type ScoringPolicy,
  scoringPolicies,
} from '@jobrelay/placement';
import { translateMirrorStatus, writeOriginStatus } from '@jobrelay/status';
import { BatchV1Api, type KubeConfig, type V1Job, type V1JobCondition } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import { finishedAt, isFinished, isSuspended, jobKey, splitKey } from './job-facts.ts';
import { KeyedWorkQueue, type ReconcileResult } from './keyed-work-queue.ts';
import { createOrAdoptMirror, deleteMirror } from './mirror-operations.ts';

/** While a placed Job's cluster is unreachable, look again this often. */
const unavailableClusterRetryMs = 5_000;

export interface DispatchControllerOptions {
  config: ControllerConfig;
  management: KubeConfig;
  originId: string;
  log: Logger;
}

/**
 * Claims the Jobs whose spec.managedBy is ours, places them through the queue, keeps one
 * mirror per Job on its worker and writes the mirror's status back to the origin.
 * Level-triggered: every watch event, on any cluster, only enqueues the origin's key, and
 * one reconcile per key at a time recomputes what should be from what is.
 */
export class DispatchController {
  private readonly options: DispatchControllerOptions;
  private readonly log: Logger;
  private readonly batch: BatchV1Api;
  private readonly origins: ResilientInformer<V1Job>;
  private readonly registry: WorkerClusterRegistry;
  private readonly queue: PlacementQueue;
  private readonly reconciles: KeyedWorkQueue;
  private readonly events: EventRecorder;
  /** Origins deleted from the cache, by key, until their mirrors are gone. */
  private readonly deletedOrigins = new Map<string, string>();
  /** Placements written but not yet seen in the origin cache (cf. kube-scheduler's assume cache). */
  private readonly assumedPlacements = new Map<string, string>();
  private readonly podRequestsCache = new Map<string, Resources>();
  private timers: NodeJS.Timeout[] = [];
  private retryWaitingTimer: NodeJS.Timeout | undefined;

  constructor(options: DispatchControllerOptions) {
    this.options = options;
    const { config, management, log } = options;
    this.log = log;
    this.batch = management.makeApiClient(BatchV1Api);
    this.events = new EventRecorder(management, {
      controller: controllerName,
      instance: `${hostname()}-${process.pid}`,
      log,
    });
    this.reconciles = new KeyedWorkQueue({
      name: 'origin-jobs',
      concurrency: config.reconcileConcurrency,
      log,
      reconcile: (key) => this.reconcile(key),
    });
    const namespace = config.namespaces.length === 1 ? config.namespaces[0] : undefined;
    this.origins = new ResilientInformer<V1Job>({
      name: 'origin Jobs',
      kubeConfig: management,
      apiVersion: 'batch/v1',
      kind: 'Job',
      namespace,
      path: namespace ? `/apis/batch/v1/namespaces/${namespace}/jobs` : '/apis/batch/v1/jobs',
      modelName: 'V1Job',
      // There is no field selector for managedBy: drop everyone else's Jobs on arrival.
      keep: (job) =>
        job.spec?.managedBy === config.managedBy &&
        (config.namespaces.length === 0 || config.namespaces.includes(job.metadata?.namespace ?? '')),
      log,
      onEvent: (event) => {
        const key = jobKey(event.object);
        if (event.type === 'delete') this.deletedOrigins.set(key, event.object.metadata!.uid!);
        this.reconciles.add(key);
      },
    });
    this.registry = new WorkerClusterRegistry({
      management,
      systemNamespace: config.systemNamespace,
      originId: options.originId,
      log,
      healthIntervalMs: config.clusterHealthIntervalSeconds * 1000,
      reconnectMaxBackoffMs: config.clusterReconnectMaxSeconds * 1000,
      clientRateLimit: { qps: config.workerQps, burst: config.workerBurst },
      allowExecPlugins: config.allowExecPlugins,
      onMirrorEvent: (_cluster, event) => this.reconciles.add(jobKey(event.object)),
      onAvailabilityChange: () => {
        // A cluster joined, left, or was (un)cordoned: waiting Jobs get another look now.
        this.retryWaitingPlacementsSoon();
        for (const job of this.origins.list()) this.reconciles.add(jobKey(job));
      },
      onCapacityChange: () => this.retryWaitingPlacementsSoon(),
      beforeActive: (connection) => this.deleteStaleMirrorsOn(connection),
      assumedRequests: (cluster) => this.loadByCluster().get(cluster)?.assumed ?? {},
    });
    this.queue = new PlacementQueue({
      redisUrl: config.redisUrl,
      queueName: `jobrelay-placement-${options.originId}`,
      log,
    });
  }

  async start(): Promise<void> {
    const { config } = this.options;
    await this.queue.waitUntilReady();
    // Origins first: a worker is only activated after its stale mirrors, judged against
    // the origins, are gone.
    this.origins.start();
    await this.registry.start();
    await this.origins.waitForSync();
    // Mirror caches must be complete before anything is created or collected.
    await Promise.all(this.registry.connections().map((c) => c.mirrors.waitForSync()));
    this.queue.startWorker((task, attempts) => this.place(task, attempts));
    for (const job of this.origins.list()) this.reconciles.add(jobKey(job));
    this.timers.push(
      // Level-triggered backstop: a lost Redis, a missed event or a dead placement task
      // is repaired within one resync.
      setInterval(() => {
        for (const job of this.origins.list()) this.reconciles.add(jobKey(job));
      }, config.resyncIntervalSeconds * 1000),
      setInterval(() => void this.collectGarbage(), config.garbageCollectionIntervalSeconds * 1000),
      // What an operator asks first: how much is managed, waiting, and what it costs the workers.
      setInterval(() => void this.logSummary(), 60_000),
    );
    this.log.info(
      { managedBy: config.managedBy, originId: this.options.originId, origins: this.origins.list().length },
      'controller started',
    );
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.retryWaitingTimer);
    this.reconciles.stop();
    await this.queue.close();
    await this.origins.stop();
    await this.registry.stop();
  }

  // ---------------------------------------------------------------------------------------
  // Reconcile one origin Job.

  private async reconcile(key: string): Promise<ReconcileResult> {
    const origin = this.origins.get(key);
    // 1. Gone or going: its mirrors go too, on every cluster.
    if (!origin || origin.metadata?.deletionTimestamp) {
      const uid = origin?.metadata?.uid ?? this.deletedOrigins.get(key);
      if (!uid) return undefined;
      this.assumedPlacements.delete(uid);
      this.podRequestsCache.delete(uid);
      const remaining = await this.deleteMirrorsOf(key, uid, 'its origin Job was deleted');
      if (remaining === 0) this.deletedOrigins.delete(key);
      return remaining > 0 ? { requeueAfterMs: 2_000 } : undefined;
    }
    this.deletedOrigins.delete(key);
    const log = this.log.child({ job: key });
    const placement = parsePlacementRecord(origin.metadata?.annotations?.[placementAnnotation]);
    if (placement.kind === 'unreadable') {
      await this.recordEvent(
        origin,
        'Warning',
        'PlacementUnreadable',
        'Sync',
        `annotation ${placementAnnotation} is damaged (${placement.problem}); remove it to let jobrelay place the Job again`,
      );
      return undefined;
    }
    const record = placement.kind === 'ok' ? placement.record : undefined;
    if (record && this.assumedPlacements.get(origin.metadata!.uid!) === record.cluster) {
      this.assumedPlacements.delete(origin.metadata!.uid!);
    }

    // 2. Mirrors that are not the current attempt's, anywhere, are stale.
    await this.deleteStaleMirrors(origin, record, log);

    // 3. Finished: keep the mirror for the retention time, then remove it.
    if (isFinished(origin)) return this.retireMirror(origin, record);

    // 4. Not placed: wait while suspended, else ask for a placement.
    if (!record?.cluster) {
      if (isSuspended(origin)) {
        await this.markSuspendedBeforePlacement(origin, log);
        return undefined;
      }
      await this.queue.enqueue({
        namespace: origin.metadata!.namespace!,
        name: origin.metadata!.name!,
        uid: origin.metadata!.uid!,
      });
      return undefined;
    }

    // 5. Placed: the mirror must exist on that cluster, unless the cluster is being drained
    //    or has been lost for longer than the timeout: then the Job moves.
    const cluster = this.registry.clusters().find((c) => c.name === record.cluster);
    if (cluster?.spec.drain) {
      return this.replace(origin, record, `cluster ${record.cluster} is being drained`, [], log);
    }
    const connection = this.registry.get(record.cluster);
    if (!connection?.state.active) {
      const lostForMs = cluster?.inactiveSince === undefined ? 0 : Date.now() - cluster.inactiveSince;
      const timeoutMs = this.options.config.workerLostTimeoutSeconds * 1000;
      if (!cluster || lostForMs >= timeoutMs) {
        const why = cluster
          ? `cluster ${record.cluster} has not been Active for ${Math.round(lostForMs / 1000)}s (${cluster.state.reason})`
          : `cluster ${record.cluster} is no longer registered`;
        return this.replace(origin, record, why, [], log);
      }
      return { requeueAfterMs: Math.min(unavailableClusterRetryMs, timeoutMs - lostForMs) };
    }
    const mirror = this.currentMirror(connection, origin, record);
    if (!mirror) return this.ensureMirror(connection, origin, record, log);

    // 6. Sync: spec changes down, status up.
    const specPatch = mirrorSpecUpdate(origin, mirror);
    if (specPatch) {
      await connection.batch.patchNamespacedJob(
        { name: mirror.metadata!.name!, namespace: mirror.metadata!.namespace!, body: { spec: specPatch } },
        mergePatch,
      );
      log.info({ cluster: connection.name, change: specPatch }, 'propagated spec change to the mirror');
    }
    return this.syncStatus(origin, mirror, record, log);
  }

  private currentMirror(
    connection: WorkerConnection,
    origin: V1Job,
    record: PlacementRecord,
  ): V1Job | undefined {
    const mirror = connection.mirrors.get(jobKey(origin));
    if (!mirror) return undefined;
    const ownership = mirrorOwnership(mirror, this.options.originId, origin.metadata!.uid!);
    return ownership.kind === 'this-origin' && ownership.attempt === record.attempt ? mirror : undefined;
  }

  private async syncStatus(
    origin: V1Job,
    mirror: V1Job,
    record: PlacementRecord,
    log: Logger,
  ): Promise<ReconcileResult> {
    const desired = translateMirrorStatus(origin, mirror, record.carried);
    const result = await writeOriginStatus(this.batch, origin, desired);
    if (result.kind === 'refused') {
      const summary = result.violations.map((v) => `${v.field}: ${v.message}`).join('; ');
      log.error({ violations: result.violations }, 'refused to write an invalid origin status');
      await this.recordEvent(
        origin,
        'Warning',
        'StatusRefused',
        'Sync',
        `not writing the mirror's status: ${summary}`,
      );
    } else if (result.kind === 'conflict') {
      return { requeueAfterMs: 200 };
    } else if (result.kind === 'written' && isFinished(result.job)) {
      log.info({ cluster: record.cluster }, 'origin finished');
    }
    return undefined;
  }

  private async ensureMirror(
    connection: WorkerConnection,
    origin: V1Job,
    record: PlacementRecord,
    log: Logger,
  ): Promise<ReconcileResult> {
    const key = jobKey(origin);
    if (record.mirrorUid) {
      // The cache may lag just after creation: ask the worker before concluding it vanished.
      const live = await connection.batch.readNamespacedJob(splitKey(key)).catch((err) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (live?.metadata?.uid === record.mirrorUid) return { requeueAfterMs: 500 };
      return this.replace(
        origin,
        record,
        `its mirror on ${connection.name} vanished before the Job finished`,
        [],
        log,
      );
    }
    const result = await createOrAdoptMirror(connection, origin, {
      originId: this.options.originId,
      attempt: record.attempt,
      createNamespaces: this.options.config.createNamespaces,
    });
    switch (result.kind) {
      case 'created':
      case 'adopted': {
        await this.patchPlacement(origin, { ...record, mirrorUid: result.mirror.metadata!.uid! });
        const verb = result.kind === 'created' ? 'created' : 'adopted existing';
        log.info({ cluster: connection.name, attempt: record.attempt }, `${verb} mirror`);
        await this.recordEvent(
          origin,
          'Normal',
          result.kind === 'created' ? 'MirrorCreated' : 'MirrorAdopted',
          'Create',
          `${verb} mirror Job on cluster ${connection.name} (attempt ${record.attempt})`,
        );
        return undefined;
      }
      case 'collision':
        await this.recordEvent(
          origin,
          'Warning',
          'NameCollision',
          'Create',
          `cluster ${connection.name} already has a Job ${key} (${result.owner}); it is left alone and this Job is placed elsewhere`,
        );
        return this.replace(origin, record, `name collision on ${connection.name}`, [connection.name], log);
      case 'stale':
        await deleteMirror(connection, result.mirror);
        return { requeueAfterMs: 1_000 };
      case 'namespace-missing':
        await this.recordEvent(
          origin,
          'Warning',
          'NamespaceMissing',
          'Create',
          `namespace ${origin.metadata!.namespace} does not exist on cluster ${connection.name} and namespace creation is off; create it there`,
        );
        return { requeueAfterMs: 30_000 };
    }
  }

  /** Back to the queue for another cluster, carrying the counts reached so far. */
  private async replace(
    origin: V1Job,
    record: PlacementRecord,
    because: string,
    exclude: string[],
    log: Logger,
  ): Promise<ReconcileResult> {
    const status = origin.status ?? {};
    const next: PlacementRecord = {
      attempt: record.attempt + 1,
      carried: {
        succeeded: status.succeeded ?? 0,
        failed: status.failed ?? 0,
        ...(status.completedIndexes ? { completedIndexes: status.completedIndexes } : {}),
        ...(status.failedIndexes ? { failedIndexes: status.failedIndexes } : {}),
      },
      excludedClusters: [...new Set([...record.excludedClusters, ...exclude])],
      lastReplacedBecause: because,
      waitingSince: new Date().toISOString(),
    };
    await this.patchPlacement(origin, next);
    log.warn({ cluster: record.cluster, because }, 'placing the Job again');
    await this.recordEvent(
      origin,
      'Warning',
      'Replacing',
      'Place',
      `placing the Job again: ${because} (attempt ${next.attempt})`,
    );
    await this.queue.enqueue({
      namespace: origin.metadata!.namespace!,
      name: origin.metadata!.name!,
      uid: origin.metadata!.uid!,
    });
    return undefined;
  }

  private async retireMirror(origin: V1Job, record: PlacementRecord | undefined): Promise<ReconcileResult> {
    const connection = record?.cluster ? this.registry.get(record.cluster) : undefined;
    const mirror = connection && record ? this.currentMirror(connection, origin, record) : undefined;
    if (!connection || !mirror) return undefined;
    const retireAt =
      (finishedAt(origin)?.getTime() ?? Date.now()) + this.options.config.mirrorRetentionSeconds * 1000;
    const wait = retireAt - Date.now();
    if (wait > 0) return { requeueAfterMs: wait };
    await deleteMirror(connection, mirror);
    return undefined;
  }

  private async deleteStaleMirrors(
    origin: V1Job,
    record: PlacementRecord | undefined,
    log: Logger,
  ): Promise<void> {
    const key = jobKey(origin);
    for (const connection of this.registry.connections()) {
      const mirror = connection.mirrors.get(key);
      if (!mirror) continue;
      const ownership = mirrorOwnership(mirror, this.options.originId, origin.metadata!.uid!);
      const current =
        ownership.kind === 'this-origin' &&
        connection.name === record?.cluster &&
        ownership.attempt === record.attempt;
      if (ownership.kind === 'foreign' || current) continue;
      log.info({ cluster: connection.name, ownership }, 'deleting a stale mirror');
      await deleteMirror(connection, mirror);
    }
  }

  /** Deletes this origin's mirrors everywhere; returns how many could not be deleted yet. */
  private async deleteMirrorsOf(key: string, originUid: string, because: string): Promise<number> {
    let remaining = 0;
    for (const connection of this.registry.connections()) {
      const mirror = connection.mirrors.get(key);
      if (!mirror) continue;
      const ownership = mirrorOwnership(mirror, this.options.originId, originUid);
      if (ownership.kind !== 'this-origin') continue;
      try {
        await deleteMirror(connection, mirror);
        this.log.info({ job: key, cluster: connection.name, because }, 'deleted mirror');
      } catch (err) {
        remaining += 1;
        this.log.warn(
          { job: key, cluster: connection.name, err: describeApiError(err) },
          'could not delete mirror yet',
        );
      }
    }
    return remaining;
  }

  /** A Job created suspended is not placed; like the built-in controller, it says so. */
  private async markSuspendedBeforePlacement(origin: V1Job, log: Logger): Promise<void> {
    const conditions = origin.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Suspended' && c.status === 'True')) return;
    const now = new Date();
    const suspended: V1JobCondition = {
      type: 'Suspended',
      status: 'True',
      reason: 'JobSuspended',
      message: 'Job suspended',
      lastProbeTime: now,
      lastTransitionTime: now,
    };
    const result = await writeOriginStatus(this.batch, origin, {
      ...origin.status,
      conditions: [...conditions.filter((c) => c.type !== 'Suspended'), suspended],
    });
    if (result.kind === 'refused')
      log.error({ violations: result.violations }, 'could not mark the Job suspended');
  }

  // ---------------------------------------------------------------------------------------
  // Placement: runs from the BullMQ worker, re-reading the origin from the apiserver.

  private async place(task: PlacementTask, attemptsMade: number): Promise<PlacementOutcome> {
    const key = `${task.namespace}/${task.name}`;
    let origin: V1Job;
    try {
      origin = await this.batch.readNamespacedJob({ name: task.name, namespace: task.namespace });
    } catch (err) {
      if (isNotFound(err)) return 'not-needed';
      throw err;
    }
    if (
      origin.metadata?.uid !== task.uid ||
      origin.spec?.managedBy !== this.options.config.managedBy ||
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
    const request = this.placementRequest(origin, previous);
    const decision =
      request.kind === 'invalid'
        ? { kind: 'unschedulable' as const, message: request.message }
        : chooseWorkerCluster(this.candidates(), request.request);
    if (decision.kind === 'unschedulable') {
      this.log.info({ job: key, attemptsMade, why: decision.message }, 'no cluster fits yet');
      await this.recordEvent(origin, 'Warning', 'FailedPlacement', 'Place', decision.message);
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
      await this.patchPlacement(origin, record);
    } catch (err) {
      this.assumedPlacements.delete(task.uid);
      throw err;
    }
    this.log.info({ job: key, cluster: decision.cluster, attempt: record.attempt }, decision.message);
    await this.recordEvent(origin, 'Normal', 'Placed', 'Place', decision.message);
    this.reconciles.add(key);
    return 'placed';
  }

  /** What the Job asks of a cluster, from its spec and its jobrelay.dev/* annotations. */
  private placementRequest(
    origin: V1Job,
    previous: PlacementRecord | undefined,
  ): { kind: 'ok'; request: PlacementRequest } | { kind: 'invalid'; message: string } {
    const annotations = origin.metadata?.annotations ?? {};
    const selectorText = annotations[clusterSelectorAnnotation];
    let clusterSelector: PlacementRequest['clusterSelector'];
    if (selectorText !== undefined && selectorText.trim() !== '') {
      const parsed = parseLabelSelector(selectorText);
      if (!parsed.ok) {
        return {
          kind: 'invalid',
          message: `annotation ${clusterSelectorAnnotation} is not a valid label selector: ${parsed.problem}`,
        };
      }
      clusterSelector = parsed.selector;
    }
    const policy = annotations[placementPolicyAnnotation] ?? this.options.config.placementPolicy;
    if (!(scoringPolicies as readonly string[]).includes(policy)) {
      return {
        kind: 'invalid',
        message: `annotation ${placementPolicyAnnotation} must be one of ${scoringPolicies.join(', ')}, got ${JSON.stringify(policy)}`,
      };
    }
    const pin = annotations[clusterPinAnnotation]?.trim();
    return {
      kind: 'ok',
      request: {
        namespace: origin.metadata!.namespace!,
        excludedClusters: previous?.excludedClusters ?? [],
        ...(clusterSelector ? { clusterSelector } : {}),
        ...(pin ? { pinnedCluster: pin } : {}),
        podRequests: this.podRequestsOf(origin),
        pods: jobPodsAtOnce(origin.spec!),
        policy: policy as ScoringPolicy,
      },
    };
  }

  /** One pod's requests; the template is immutable, so computed once per origin. */
  private podRequestsOf(origin: V1Job): Resources {
    const uid = origin.metadata!.uid!;
    let requests = this.podRequestsCache.get(uid);
    if (!requests) {
      requests = origin.spec?.template.spec ? podRequests(origin.spec.template.spec) : {};
      this.podRequestsCache.set(uid, requests);
    }
    return requests;
  }

  /**
   * Per cluster: unfinished jobrelay Jobs placed there (placements not yet seen in the cache
   * included) and the requests of those whose pods do not exist yet, so a burst of
   * placements does not all land on the cluster that looked emptiest a moment ago.
   */
  private loadByCluster(): Map<string, { jobs: number; assumed: Resources }> {
    const byCluster = new Map<string, { jobs: number; assumed: Resources }>();
    const capacities = new Map(this.registry.clusters().map((c) => [c.name, c.capacity]));
    for (const job of this.origins.list()) {
      if (isFinished(job)) continue;
      const parsed = parsePlacementRecord(job.metadata?.annotations?.[placementAnnotation]);
      const cluster =
        (parsed.kind === 'ok' ? parsed.record.cluster : undefined) ??
        this.assumedPlacements.get(job.metadata!.uid!);
      if (!cluster) continue;
      const entry = byCluster.get(cluster) ?? { jobs: 0, assumed: {} };
      entry.jobs += 1;
      if (!isSuspended(job)) {
        // Pods already counted by the worker's capacity (its pod watch) are not assumed again;
        // the mirror's status can run ahead of that watch, so it is not used here.
        const counted = capacities.get(cluster)?.podsByJob.get(jobKey(job)) ?? 0;
        const outstanding = Math.max(0, jobPodsAtOnce(job.spec!) - counted);
        if (outstanding > 0)
          entry.assumed = addResources(entry.assumed, times(this.podRequestsOf(job), outstanding));
      }
      byCluster.set(cluster, entry);
    }
    return byCluster;
  }

  private candidates(): ClusterCandidate[] {
    const load = this.loadByCluster();
    return this.registry.clusters().map((cluster) => {
      const here = load.get(cluster.name);
      return {
        name: cluster.name,
        labels: cluster.labels,
        active: cluster.state.active,
        inactiveReason: cluster.state.reason,
        cordoned: cluster.spec.unschedulable === true || cluster.spec.drain === true,
        weight: cluster.spec.weight ?? 1,
        allowedNamespaces: cluster.spec.allowedNamespaces ?? [],
        ...(cluster.spec.maxActiveJobs !== undefined ? { maxActiveJobs: cluster.spec.maxActiveJobs } : {}),
        activeJobs: here?.jobs ?? 0,
        ...(cluster.capacity
          ? {
              capacity: {
                nodes: cluster.capacity.nodes,
                allocatable: cluster.capacity.allocatable,
                assumed: here?.assumed ?? {},
              },
            }
          : {}),
      };
    });
  }

  /** The Job says why it waits (annotation), written only when the reason changes. */
  private async noteUnschedulable(origin: V1Job, message: string): Promise<void> {
    if (origin.metadata?.annotations?.[unschedulableAnnotation] === message) return;
    await this.batch
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
    const since = new Date(
      previous?.waitingSince ?? origin.metadata?.creationTimestamp ?? Date.now(),
    ).getTime();
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
    const result = await writeOriginStatus(this.batch, origin, {
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
    await this.recordEvent(origin, 'Warning', 'PlacementTimeout', 'Place', message);
    return true;
  }

  /** Capacity freed or a cluster changed: waiting placements are retried now, at most twice a second. */
  private retryWaitingPlacementsSoon(): void {
    if (this.retryWaitingTimer) return;
    this.retryWaitingTimer = setTimeout(() => {
      this.retryWaitingTimer = undefined;
      void this.queue.retryWaitingNow().catch(() => {});
    }, 500);
  }

  /**
   * Runs when a worker (re)connects, before it is Active: mirrors there that are not their
   * origin's current placement (moved while the worker was away, or deleted) go first.
   */
  private async deleteStaleMirrorsOn(connection: WorkerConnection): Promise<void> {
    if (!this.origins.hasSynced) await this.origins.waitForSync();
    let deleted = 0;
    for (const mirror of connection.mirrors.list()) {
      const origin = this.origins.get(jobKey(mirror));
      let stale = !origin || origin.metadata?.uid !== mirror.metadata?.labels?.[originUidLabel];
      if (!stale && origin) {
        const parsed = parsePlacementRecord(origin.metadata?.annotations?.[placementAnnotation]);
        const ownership = mirrorOwnership(mirror, this.options.originId, origin.metadata!.uid!);
        stale =
          parsed.kind === 'ok' &&
          ownership.kind === 'this-origin' &&
          (parsed.record.cluster !== connection.name || parsed.record.attempt !== ownership.attempt);
      }
      if (!stale) continue;
      await deleteMirror(connection, mirror);
      deleted += 1;
      this.log.info(
        { job: jobKey(mirror), cluster: connection.name },
        'deleted a stale mirror on a returning cluster',
      );
    }
    if (deleted > 0)
      this.log.info({ cluster: connection.name, deleted }, 'cleaned up before activating the cluster');
  }

  /** Writes the placement annotation over the version read: a concurrent change is a conflict, retried. */
  private async patchPlacement(origin: V1Job, record: PlacementRecord): Promise<void> {
    try {
      await this.batch.patchNamespacedJob(
        {
          name: origin.metadata!.name!,
          namespace: origin.metadata!.namespace!,
          body: {
            metadata: {
              resourceVersion: origin.metadata!.resourceVersion,
              annotations: {
                [placementAnnotation]: formatPlacementRecord(record),
                // Placed: the reason it waited no longer applies.
                ...(record.cluster ? { [unschedulableAnnotation]: null } : {}),
              },
            },
          },
        },
        mergePatch,
      );
    } catch (err) {
      if (isConflict(err)) throw new Error(`origin ${jobKey(origin)} changed while placing it; retrying`);
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Garbage collection: mirrors whose origin no longer exists (only objects with our labels).

  private async collectGarbage(): Promise<void> {
    if (!this.origins.hasSynced) return;
    const liveOrigins = new Set(this.origins.list().map((job) => job.metadata!.uid!));
    for (const connection of this.registry.connections()) {
      if (!connection.state.active || !connection.mirrors.hasSynced) continue;
      for (const mirror of connection.mirrors.list()) {
        const originUid = mirror.metadata?.labels?.['jobrelay.dev/origin-uid'];
        if (!originUid || liveOrigins.has(originUid)) continue;
        try {
          await deleteMirror(connection, mirror);
          this.log.info(
            { job: jobKey(mirror), cluster: connection.name },
            'garbage-collected a mirror without origin',
          );
        } catch (err) {
          this.log.warn(
            { job: jobKey(mirror), cluster: connection.name, err: describeApiError(err) },
            'garbage collection failed',
          );
        }
      }
    }
  }

  private async logSummary(): Promise<void> {
    const depth = await this.queue.depth().catch(() => undefined);
    this.log.info(
      {
        origins: this.origins.list().length,
        reconcileQueue: this.reconciles.length,
        placementQueue: depth,
        clusters: Object.fromEntries(this.registry.clusters().map((c) => [c.name, c.state.reason])),
        workerApiRequests: this.registry.requestCounts(),
      },
      'summary',
    );
  }

  private async recordEvent(
    origin: V1Job,
    type: RecordedEvent['type'],
    reason: string,
    action: string,
    note: string,
  ): Promise<void> {
    await this.events.record({
      regarding: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: origin.metadata!.name,
        namespace: origin.metadata!.namespace,
        uid: origin.metadata!.uid,
      },
      type,
      reason,
      action,
      note,
    });
  }
}

function times(resources: Resources, n: number): Resources {
  return Object.fromEntries(Object.entries(resources).map(([name, amount]) => [name, amount * n]));
}
