import { hostname } from 'node:os';
import { WorkerClusterRegistry, type WorkerConnection } from '@jobrelay/clusters';
import {
  describeApiError,
  EventRecorder,
  isNotFound,
  mergePatch,
  type RecordedEvent,
  ResilientInformer,
} from '@jobrelay/kube';
import {
  continuationFor,
  controllerName,
  isSeedApplied,
  mirrorOwnership,
  mirrorSpecUpdate,
  mirrorStatusSeed,
  originUidLabel,
  placementAnnotation,
  seededProgress,
} from '@jobrelay/mirror';
import { noProgress, PlacementQueue, type PlacementRecord, parsePlacementRecord } from '@jobrelay/placement';
import {
  finishDecidedJob,
  translateMirrorStatus,
  usesBackoffLimitPerIndex,
  writeOriginStatus,
} from '@jobrelay/status';
import { BatchV1Api, type KubeConfig, type V1Job, type V1JobCondition } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import { ControllerMetrics } from './controller-metrics.ts';
import { startHealthServer } from './health-server.ts';
import { finishedAt, isFinished, isSuspended, jobKey, splitKey } from './job-facts.ts';
import { KeyedWorkQueue, type ReconcileResult } from './keyed-work-queue.ts';
import { createOrAdoptMirror, deleteMirror } from './mirror-operations.ts';
import { patchPlacement } from './patch-placement.ts';
import { OriginPlacer } from './place-origin-jobs.ts';

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
  private readonly placer: OriginPlacer;
  /** Origins deleted from the cache, by key, until their mirrors are gone. */
  private readonly deletedOrigins = new Map<string, string>();
  private timers: NodeJS.Timeout[] = [];
  readonly metrics: ControllerMetrics;
  private ready = false;
  private closeHealthServer: (() => Promise<void>) | undefined;

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
      // Nothing is reconciled until start() has synced every cache: a reconcile that ran
      // before the WorkerClusters were listed would take every placement for a cluster
      // that "no longer exists" and move the Job.
      startPaused: true,
      log,
      reconcile: async (key) => {
        try {
          const result = await this.reconcile(key);
          this.metrics.reconciles.inc({ result: 'ok' });
          return result;
        } catch (err) {
          this.metrics.reconciles.inc({ result: 'error' });
          throw err;
        }
      },
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
        this.placer.retryWaitingPlacementsSoon();
        for (const job of this.origins.list()) this.reconciles.add(jobKey(job));
      },
      onCapacityChange: () => this.placer.retryWaitingPlacementsSoon(),
      beforeActive: (connection) => this.deleteStaleMirrorsOn(connection),
      assumedRequests: (cluster) => this.placer.loadByCluster().get(cluster)?.assumed ?? {},
    });
    this.queue = new PlacementQueue({
      redisUrl: config.redisUrl,
      queueName: `jobrelay-placement-${options.originId}`,
      log,
    });
    this.placer = new OriginPlacer({
      origins: this.origins,
      registry: this.registry,
      queue: this.queue,
      batch: this.batch,
      recordEvent: (origin, type, reason, action, note) =>
        this.recordEvent(origin, type, reason, action, note),
      config,
      log,
      enqueueReconcile: (key) => this.reconciles.add(key),
    });
    this.metrics = new ControllerMetrics({
      managedJobs: () => this.origins.list().length,
      reconcileQueueLength: () => this.reconciles.length,
      placementQueueDepth: () => this.queue.depth(),
      clusters: () => this.registry.clusters().map((c) => ({ name: c.name, active: c.state.active })),
      workerApiRequests: () => this.registry.requestCounts(),
    });
  }

  async start(): Promise<void> {
    const { config } = this.options;
    // Up first, so a liveness probe sees the process while caches sync; ready only at the end.
    const health = await startHealthServer({
      address: config.healthAddress,
      ready: () => this.ready,
      metrics: this.metrics.registry,
    });
    this.closeHealthServer = health.close;
    this.log.info({ url: health.url }, 'serving /healthz, /readyz and /metrics');
    await this.queue.waitUntilReady();
    // Origins first: a worker is only activated after its stale mirrors, judged against
    // the origins, are gone.
    this.origins.start();
    await this.registry.start();
    await this.origins.waitForSync();
    // Mirror caches must be complete before anything is created or collected.
    await Promise.all(this.registry.connections().map((c) => c.mirrors.waitForSync()));
    this.queue.startWorker(async (task, attempts) => {
      const outcome = await this.placer.place(task, attempts);
      this.metrics.placements.inc({ outcome });
      return outcome;
    });
    for (const job of this.origins.list()) this.reconciles.add(jobKey(job));
    this.reconciles.resume();
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
    this.ready = true;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.placer.stop();
    this.reconciles.stop();
    await this.queue.close();
    await this.origins.stop();
    await this.registry.stop();
    await this.closeHealthServer?.();
  }

  // ---------------------------------------------------------------------------------------
  // Reconcile one origin Job.

  private async reconcile(key: string): Promise<ReconcileResult> {
    const origin = this.origins.get(key);
    // 1. Gone or going: its mirrors go too, on every cluster.
    if (!origin || origin.metadata?.deletionTimestamp) {
      const uid = origin?.metadata?.uid ?? this.deletedOrigins.get(key);
      if (!uid) return undefined;
      this.placer.forgetOrigin(uid);
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
    if (record?.cluster) this.placer.placementSeen(origin.metadata!.uid!, record.cluster);

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
    if (record.mirrorUid !== mirror.metadata!.uid) {
      // Created (or adopted) but not recorded: the process died in between. Record it now,
      // so that if it vanishes later it is seen as vanished and its Job placed again.
      if (!record.mirrorUid) return this.recordMirror(connection, origin, record, mirror, 'adopted', log);
      // The recorded mirror is gone and another of the same attempt stands in its place: its
      // counts did not continue the recorded one's, so the attempt ends here.
      return this.replace(
        origin,
        record,
        `its mirror on ${connection.name} was replaced by another object`,
        [],
        log,
      );
    }

    // 6. Sync: progress of earlier attempts into a re-placed mirror (before it may run),
    //    spec changes down, status up.
    const seed = mirrorStatusSeed(mirror);
    if (seed) {
      await connection.batch.patchNamespacedJobStatus(
        { name: mirror.metadata!.name!, namespace: mirror.metadata!.namespace!, body: { status: seed } },
        mergePatch,
      );
      log.info({ cluster: connection.name, seed }, 'seeded the mirror with the progress of earlier attempts');
      // The mirror's watch event brings the seeded status; resume and sync from there.
      return { requeueAfterMs: 1_000 };
    }
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
    if (!isSeedApplied(mirror)) return undefined;
    // A seeded mirror's status is already the whole Job's; a fresh one's adds to the carried.
    const carried = seededProgress(mirror) ? noProgress : record.carried;
    const desired = translateMirrorStatus(origin, mirror, carried);
    const result = await writeOriginStatus(this.batch, origin, desired);
    this.metrics.statusWrites.inc({ result: result.kind });
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
      continuation: continuationFor(origin, record.attempt, record.carried, new Date()),
    });
    this.metrics.mirrorOperations.inc({ operation: result.kind });
    switch (result.kind) {
      case 'created':
      case 'adopted':
        return this.recordMirror(connection, origin, record, result.mirror, result.kind, log);
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

  /** Records the mirror's UID in the placement record: from now on its absence means it vanished. */
  private async recordMirror(
    connection: WorkerConnection,
    origin: V1Job,
    record: PlacementRecord,
    mirror: V1Job,
    how: 'created' | 'adopted',
    log: Logger,
  ): Promise<ReconcileResult> {
    await patchPlacement(this.batch, origin, { ...record, mirrorUid: mirror.metadata!.uid! });
    const verb = how === 'created' ? 'created' : 'adopted existing';
    log.info({ cluster: connection.name, attempt: record.attempt }, `${verb} mirror`);
    await this.recordEvent(
      origin,
      'Normal',
      how === 'created' ? 'MirrorCreated' : 'MirrorAdopted',
      'Create',
      `${verb} mirror Job on cluster ${connection.name} (attempt ${record.attempt})`,
    );
    return undefined;
  }

  /** Back to the queue for another cluster, carrying the counts reached so far. */
  private async replace(
    origin: V1Job,
    record: PlacementRecord,
    because: string,
    exclude: string[],
    log: Logger,
  ): Promise<ReconcileResult> {
    // An outcome already decided (FailureTarget or SuccessCriteriaMet) is final: the Job
    // finishes that way rather than running again elsewhere.
    const finished = finishDecidedJob(origin, new Date());
    if (finished) {
      const result = await writeOriginStatus(this.batch, origin, finished);
      if (result.kind === 'conflict') return { requeueAfterMs: 200 };
      if (result.kind === 'refused') {
        log.error({ violations: result.violations }, 'could not finish a decided Job');
        return undefined;
      }
      log.info(
        { cluster: record.cluster, because },
        'finished a Job whose outcome was decided before its mirror was lost',
      );
      await this.recordEvent(
        origin,
        'Normal',
        'FinishedWithoutMirror',
        'Sync',
        `finished as decided before: ${because}`,
      );
      return undefined;
    }
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
    await patchPlacement(this.batch, origin, next);
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
    // An unreachable cluster's mirror is retired when it is back (its return re-queues every Job).
    if (!connection || !mirror || !connection.state.active) return undefined;
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
      // An unreachable cluster must never hold up work on the reachable ones: its stale
      // mirrors are deleted when it comes back, before it is Active (deleteStaleMirrorsOn).
      if (!connection.state.active) continue;
      const mirror = connection.mirrors.get(key);
      if (!mirror) continue;
      const ownership = mirrorOwnership(mirror, this.options.originId, origin.metadata!.uid!);
      const current =
        ownership.kind === 'this-origin' &&
        connection.name === record?.cluster &&
        ownership.attempt === record.attempt;
      if (ownership.kind === 'foreign' || current) continue;
      log.info({ cluster: connection.name, ownership }, 'deleting a stale mirror');
      try {
        await deleteMirror(connection, mirror);
      } catch (err) {
        // Left for the next reconcile (or the cluster's return); the rest goes on.
        log.warn(
          { cluster: connection.name, err: describeApiError(err) },
          'could not delete a stale mirror yet',
        );
      }
    }
  }

  /** Deletes this origin's mirrors everywhere; returns how many could not be deleted yet. */
  private async deleteMirrorsOf(key: string, originUid: string, because: string): Promise<number> {
    let remaining = 0;
    for (const connection of this.registry.connections()) {
      // Not counted as remaining: an unreachable cluster's mirrors of deleted origins are
      // removed on its return (deleteStaleMirrorsOn) and by garbage collection.
      if (!connection.state.active) continue;
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
    // What the built-in controller writes for a Job created suspended, field for field.
    const result = await writeOriginStatus(this.batch, origin, {
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
      ...(usesBackoffLimitPerIndex(origin.spec) ? { failedIndexes: '' } : {}),
      ...origin.status,
      conditions: [...conditions.filter((c) => c.type !== 'Suspended'), suspended],
    });
    if (result.kind === 'refused')
      log.error({ violations: result.violations }, 'could not mark the Job suspended');
  }

  // ---------------------------------------------------------------------------------------
  // Workers (re)connecting.

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

  // ---------------------------------------------------------------------------------------
  // Garbage collection: mirrors whose origin no longer exists (only objects with our labels).

  private async collectGarbage(): Promise<void> {
    if (!this.origins.hasSynced) return;
    const liveOrigins = new Set(this.origins.list().map((job) => job.metadata!.uid!));
    for (const connection of this.registry.connections()) {
      if (!connection.state.active || !connection.mirrors.hasSynced) continue;
      for (const mirror of connection.mirrors.list()) {
        const originUid = mirror.metadata?.labels?.[originUidLabel];
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
