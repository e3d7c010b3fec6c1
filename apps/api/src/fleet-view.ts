import { type WorkerCluster, WorkerClusterRegistry, type WorkerConnection } from '@jobrelay/clusters';
import { type AnyJobKindAdapter, batchJobAdapter, builtInKinds } from '@jobrelay/kinds';
import { type InformerEvent, objectKey, ResilientInformer, withTimeout } from '@jobrelay/kube';
import { isJobFinished, originUidLabel } from '@jobrelay/mirror';
import {
  type ClusterVerdict,
  chooseWorkerCluster,
  clusterCandidates,
  clusterLoad,
  clusterVerdicts,
  type PlacementClusterInput,
  placementRequestFor,
  type ScoringPolicy,
} from '@jobrelay/placement';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Job,
  VersionApi,
} from '@kubernetes/client-node';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { activeCondition, type ClusterView, clusterView } from './cluster-views.ts';
import { jobKeyOf, placementOf, waitingSince } from './job-views.ts';
import { sortKeys } from './pagination.ts';
import { PlacementLog } from './placement-log.ts';

export interface FleetViewOptions {
  management: KubeConfig;
  managedBy: string;
  originId: string;
  systemNamespace: string;
  redisUrl: string;
  /** The controller's default scoring policy, for previews. */
  placementPolicy: ScoringPolicy;
  allowExecPlugins: boolean;
  /** The kinds the controller dispatches (its --kinds): workers are checked for these. Default: every built-in kind. */
  kinds?: readonly AnyJobKindAdapter[];
  log: Logger;
  now?: () => number;
}

export type FleetChange =
  | { kind: 'job'; type: 'added' | 'modified' | 'deleted'; job: V1Job }
  | { kind: 'cluster'; type: 'added' | 'modified' | 'deleted'; cluster: WorkerCluster };

export type QueueState = 'waiting' | 'delayed' | 'active' | 'unknown';

export interface PendingEntry {
  job: V1Job;
  waitingSince: string | null;
}

export interface PreviewResult {
  decision: 'placed' | 'unschedulable';
  cluster: string | null;
  message: string;
  clusters: ClusterVerdict[];
}

/**
 * Everything the API reads, from caches: the dispatched Jobs and WorkerClusters of the
 * management cluster (informers), each worker's mirrors and per-node capacity (an
 * observe-only registry: it connects like the controller but never writes), and the
 * placement queue in Redis. Listing 10,000 Jobs costs no apiserver call.
 */
export class FleetView {
  private readonly options: FleetViewOptions;
  private readonly origins: ResilientInformer<V1Job>;
  private started = false;
  readonly registry: WorkerClusterRegistry;
  private readonly queue: Queue;
  private readonly redis: Redis;
  private readonly listeners = new Set<(change: FleetChange) => void>();
  private readonly placements = new PlacementLog();
  private readonly version: VersionApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  /** Every dispatched Job's key, sorted; dropped when a Job is added or removed (not on updates). */
  private sortedJobKeys: readonly string[] | undefined;
  private queueStatesMemo: { at: number; states: Promise<Map<string, QueueState>> } | undefined;
  private readonly now: () => number;
  /** The kinds workers are checked for, here and by registration's probe. */
  readonly kinds: readonly AnyJobKindAdapter[];

  constructor(options: FleetViewOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.kinds = options.kinds ?? builtInKinds;
    const { management, log } = options;
    this.core = management.makeApiClient(CoreV1Api);
    this.custom = management.makeApiClient(CustomObjectsApi);
    this.version = management.makeApiClient(VersionApi);
    this.origins = new ResilientInformer<V1Job>({
      name: 'dispatched Jobs',
      kubeConfig: management,
      apiVersion: 'batch/v1',
      kind: 'Job',
      path: '/apis/batch/v1/jobs',
      modelName: 'V1Job',
      // No field selector exists for managedBy: everyone else's Jobs are dropped on arrival.
      keep: (job) => job.spec?.managedBy === options.managedBy,
      log,
      onEvent: (event) => this.onOriginEvent(event),
    });
    this.registry = new WorkerClusterRegistry({
      management,
      systemNamespace: options.systemNamespace,
      originId: options.originId,
      kinds: this.kinds,
      clock: { now: this.now },
      log: log.child({ component: 'worker-observer' }),
      allowExecPlugins: options.allowExecPlugins,
      observeOnly: true,
      // The registry's WorkerCluster informer is the API's too: one watch, one cache.
      onWorkerClusterEvent: (event) =>
        this.emit({
          kind: 'cluster',
          type: event.type === 'delete' ? 'deleted' : event.previous ? 'modified' : 'added',
          cluster: event.object,
        }),
    });
    this.redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', () => {}); // readiness reports it
    // The controller's queue, read only: same name, same Redis.
    this.queue = new Queue(`jobrelay-placement-${options.originId}`, { connection: this.redis });
    this.queue.on('error', () => {});
  }

  async start(): Promise<void> {
    this.origins.start();
    // The registry's start returns once its WorkerCluster cache is synced.
    await Promise.all([this.origins.waitForSync(), this.registry.start()]);
    this.started = true;
  }

  async stop(): Promise<void> {
    await Promise.all([this.origins.stop(), this.registry.stop()]);
    await this.queue.close().catch(() => {});
    this.redis.disconnect();
  }

  get synced(): boolean {
    return this.started && this.origins.hasSynced;
  }

  /** Redis and the management apiserver answer. */
  async readiness(): Promise<{ redis: boolean; apiserver: boolean; caches: boolean }> {
    const [redis, apiserver] = await Promise.all([
      withTimeout(this.redis.ping(), 2_000, 'redis').then(
        (answer) => answer === 'PONG',
        () => false,
      ),
      withTimeout(this.version.getCode(), 2_000, 'management apiserver').then(
        () => true,
        () => false,
      ),
    ]);
    return { redis, apiserver, caches: this.synced };
  }

  subscribe(listener: (change: FleetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  jobs(): V1Job[] {
    return this.origins.list();
  }

  job(namespace: string, name: string): V1Job | undefined {
    return this.origins.get(`${namespace}/${name}`);
  }

  /**
   * The keys (`namespace/name`) of every dispatched Job in pagination order, sorted once per
   * added or removed Job rather than per request; jobByKey() gives each one's current version.
   */
  jobKeys(): readonly string[] {
    this.sortedJobKeys ??= sortKeys(this.origins.list().map((job) => objectKey(job)));
    return this.sortedJobKeys;
  }

  jobByKey(key: string): V1Job | undefined {
    return this.origins.get(key);
  }

  workerClusters(): readonly WorkerCluster[] {
    return this.registry.workerClusters();
  }

  workerCluster(name: string): WorkerCluster | undefined {
    return this.registry.workerCluster(name);
  }

  /** The registered cluster with this kube-system UID (the same physical cluster), if any. */
  registeredClusterNamed(clusterUid: string): string | undefined {
    return this.registry.connections().find((connection) => connection.clusterUid === clusterUid)?.name;
  }

  /**
   * The Job's current mirror, from the API's watch of its worker (no API call), or why there
   * is none to show. Only a mirror carrying this origin's UID counts.
   */
  mirrorOf(
    job: V1Job,
  ):
    | { kind: 'found'; cluster: string; connection: WorkerConnection; mirror: V1Job }
    | { kind: 'unplaced' | 'disconnected' | 'absent'; cluster: string | undefined; message: string } {
    const cluster = placementOf(job)?.cluster;
    if (!cluster) return { kind: 'unplaced', cluster, message: 'the Job is not placed on a cluster yet' };
    const connection = this.registry.get(cluster);
    if (!connection?.state.active)
      return {
        kind: 'disconnected',
        cluster,
        message: `cluster ${cluster} is not reachable from the API now`,
      };
    const mirror = connection.mirrors(batchJobAdapter)?.get(jobKeyOf(job));
    if (!mirror || mirror.metadata?.labels?.[originUidLabel] !== job.metadata?.uid) {
      return {
        kind: 'absent',
        cluster,
        message: `no mirror on ${cluster} (not created yet, or removed after the Job finished)`,
      };
    }
    return { kind: 'found', cluster, connection, mirror };
  }

  /** Unfinished dispatched Jobs placed on each cluster. */
  jobsByCluster(): Map<string, V1Job[]> {
    const byCluster = new Map<string, V1Job[]>();
    for (const job of this.origins.list()) {
      if (isJobFinished(job)) continue;
      const cluster = placementOf(job)?.cluster;
      if (!cluster) continue;
      const list = byCluster.get(cluster);
      if (list) list.push(job);
      else byCluster.set(cluster, [job]);
    }
    return byCluster;
  }

  clusterViews(): ClusterView[] {
    const byCluster = this.jobsByCluster();
    const rates = this.placements.rate(this.now());
    return this.registry.workerClusters().map((wc) =>
      clusterView(wc, {
        jobsPlaced: byCluster.get(wc.metadata.name)?.length ?? 0,
        placementsPerMinute: rates.get(wc.metadata.name) ?? 0,
      }),
    );
  }

  clusterViewOf(wc: WorkerCluster): ClusterView {
    return clusterView(wc, {
      jobsPlaced: this.jobsByCluster().get(wc.metadata.name)?.length ?? 0,
      placementsPerMinute: this.placements.rate(this.now()).get(wc.metadata.name) ?? 0,
    });
  }

  placementsPerMinute(): Map<string, number[]> {
    return this.placements.perMinute(this.now());
  }

  /** Dispatched Jobs waiting for a cluster, in the order they started waiting (then by name). */
  pending(): PendingEntry[] {
    return this.origins
      .list()
      .filter(
        (job) =>
          !isJobFinished(job) &&
          job.spec?.suspend !== true &&
          !job.metadata?.deletionTimestamp &&
          !placementOf(job)?.cluster,
      )
      .map((job) => ({ job, waitingSince: waitingSince(job) }))
      .sort(
        (a, b) =>
          (a.waitingSince ?? '').localeCompare(b.waitingSince ?? '') ||
          jobKeyOf(a.job).localeCompare(jobKeyOf(b.job)),
      );
  }

  async queueCounts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'delayed', 'active', 'failed', 'prioritized');
  }

  /** Each queued placement's state, by origin UID (the task id); read from Redis at most once a second. */
  queueStates(): Promise<Map<string, QueueState>> {
    const now = this.now();
    if (this.queueStatesMemo && now - this.queueStatesMemo.at < 1_000) return this.queueStatesMemo.states;
    const states = (async () => {
      const byState = await Promise.all(
        (['waiting', 'prioritized', 'delayed', 'active'] as const).map(async (state) => ({
          state: state === 'prioritized' ? ('waiting' as const) : state,
          ids: await this.queue.getRanges([state], 0, -1, true),
        })),
      );
      const map = new Map<string, QueueState>();
      for (const { state, ids } of byState) for (const id of ids) map.set(id, state);
      return map;
    })();
    states.catch(() => {
      this.queueStatesMemo = undefined;
    });
    this.queueStatesMemo = { at: now, states };
    return states;
  }

  /**
   * Where the controller would place this Job now, and every cluster's verdict: the same
   * inputs (placementRequestFor, clusterLoad, clusterCandidates) and the same chooser.
   * Clusters count as Active as the controller reports them (their Active condition).
   */
  preview(job: V1Job): PreviewResult {
    const request = placementRequestFor(job, placementOf(job), this.options.placementPolicy, batchJobAdapter);
    if (request.kind === 'invalid') {
      return { decision: 'unschedulable', cluster: null, message: request.message, clusters: [] };
    }
    const views = new Map(this.registry.clusters().map((view) => [view.name, view]));
    const inputs: PlacementClusterInput[] = this.registry.workerClusters().map((wc) => {
      const condition = activeCondition(wc);
      const capacity = views.get(wc.metadata.name)?.capacity;
      return {
        name: wc.metadata.name,
        labels: wc.metadata.labels ?? {},
        spec: wc.spec,
        state: { active: condition?.status === 'True', reason: condition?.reason ?? 'Unknown' },
        capacity,
      };
    });
    const capacities = new Map([...views.values()].map((view) => [view.name, view.capacity]));
    // Another Job's own placement does not count against itself.
    const others = this.origins.list().filter((other) => other.metadata?.uid !== job.metadata?.uid);
    const candidates = clusterCandidates(
      inputs,
      clusterLoad(
        others.map((workload) => ({ workload, facts: batchJobAdapter })),
        capacities,
        new Map(),
      ),
    );
    const decision = chooseWorkerCluster(candidates, request.request);
    return {
      decision: decision.kind,
      cluster: decision.kind === 'placed' ? decision.cluster : null,
      message: decision.message,
      clusters: clusterVerdicts(candidates, request.request),
    };
  }

  async managementVersion(): Promise<string | undefined> {
    return (await this.version.getCode()).gitVersion;
  }

  private onOriginEvent(event: InformerEvent<V1Job>): void {
    const job = event.object;
    // The informer's cache already holds the change: a new or removed key re-sorts on next use.
    if (event.type === 'delete' || !event.previous) this.sortedJobKeys = undefined;
    if (event.type === 'upsert') {
      const record = placementOf(job);
      if (record?.cluster && job.metadata?.uid)
        this.placements.add(job.metadata.uid, record.attempt, record.cluster, record.placedAt, this.now());
    }
    this.emit({
      kind: 'job',
      type: event.type === 'delete' ? 'deleted' : event.previous ? 'modified' : 'added',
      job,
    });
  }

  private emit(change: FleetChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.options.log.warn({ err }, 'a change listener failed');
      }
    }
  }
}
