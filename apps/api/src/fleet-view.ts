// FleetView, the API's read model of the fleet and its one face to the routes, the server and
// the streams: it builds the parts, runs their lifecycle (start, stop, readiness), tells its
// subscribers of every change and answers every read, handing most of them to the module that
// owns the answer: the management cluster's caches (fleet-caches.ts), the queues read over them
// (fleet-queues.ts), the per-cluster views (fleet-clusters.ts), what placement says of the fleet
// (fleet-placement.ts), a workload's mirror on its worker (mirror-lookup.ts), the placement
// queue in Redis (placement-queue-reader.ts) and the charts' memory (fleet-stats.ts). The types
// the rest of the API names are exported from here, whichever of those modules declares them.
import {
  type KubeconfigPolicy,
  type WorkerCluster,
  WorkerClusterRegistry,
  type WorkerWatchStreams,
} from '@jobrelay/clusters';
import type { AnyWorkloadKindAdapter, KindChoice, KubeObject } from '@jobrelay/kinds';
import { type InformerEvent, sharedPoolConfiguration, withTimeout } from '@jobrelay/kube';
import type { ScoringPolicy } from '@jobrelay/placement';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ClusterView } from './cluster-views.ts';
import { type CachedQueue, type DispatchedWorkload, FleetCaches } from './fleet-caches.ts';
import { FleetClusterViews, workloadsOnClusters } from './fleet-clusters.ts';
import { type PreviewResult, previewPlacement } from './fleet-placement.ts';
import {
  dispatchQueueNamed,
  type PendingEntry,
  pendingWorkloads,
  placesInQueues,
  queueMemberInputsOf,
  queueSelectedFor,
} from './fleet-queues.ts';
import { FleetStats, type StatsHistory } from './fleet-stats.ts';
import { type MirrorLookup, mirrorInRegistry } from './mirror-lookup.ts';
import { PlacementQueueReader, type QueueState } from './placement-queue-reader.ts';
import { loadRecordKeys } from './placement-trust.ts';
import type { QueueMemberInput, QueuePlace } from './queue-views.ts';
import { WorkloadKinds } from './workload-kinds.ts';

export type { CachedQueue, DispatchedWorkload } from './fleet-caches.ts';
export type { PreviewResult } from './fleet-placement.ts';
export type { PendingEntry } from './fleet-queues.ts';
export { type ClusterSight, lookUpMirror, type MirrorLookup } from './mirror-lookup.ts';
export type { QueueState } from './placement-queue-reader.ts';

export interface FleetViewOptions {
  management: KubeConfig;
  /**
   * The kinds the controller dispatches, each with the managedBy value it claims (chosenKinds
   * and servedKinds in workload-kinds.ts, from the controller's flags): one origin informer per
   * kind, and workers are checked for these.
   */
  kinds: readonly KindChoice[];
  originId: string;
  systemNamespace: string;
  redisUrl: string;
  /** The controller's default scoring policy, for previews. */
  placementPolicy: ScoringPolicy;
  /** What a registered kubeconfig may hold beyond the allow-list: the controller's policy (kubeconfigPolicyOf). */
  kubeconfigPolicy: KubeconfigPolicy;
  log: Logger;
  now?: () => number;
}

export type FleetChange =
  | {
      kind: 'workload';
      type: 'added' | 'modified' | 'deleted';
      adapter: AnyWorkloadKindAdapter;
      object: KubeObject;
    }
  | { kind: 'cluster'; type: 'added' | 'modified' | 'deleted'; cluster: WorkerCluster };

/**
 * Everything the API reads, from caches: the dispatched workloads of every kind the controller
 * dispatches (one origin informer per kind, like the controller) and the WorkerClusters of the
 * management cluster, each worker's mirrors of every kind (an observe-only registry: it connects
 * like the controller but never writes), each worker's capacity as the leader publishes it on
 * its WorkerCluster (the API watches no worker's pods or nodes: issue 31), and the placement
 * queue in Redis. Listing 10,000 workloads costs no apiserver call.
 */
export class FleetView {
  private readonly options: FleetViewOptions;
  private started = false;
  private stopped = false;
  readonly registry: WorkerClusterRegistry;
  /** The management cluster's origins of every kind, namespaces, DispatchQueues and PriorityClasses. */
  private readonly caches: FleetCaches;
  /** The controller's placement queue in Redis, read only. */
  private readonly placementQueue: PlacementQueueReader;
  private readonly listeners = new Set<(change: FleetChange) => void>();
  /** The placement log and the queue depth samples: the charts' last hour. */
  private readonly stats: FleetStats;
  /** Each WorkerCluster with what is placed there. */
  private readonly perCluster: FleetClusterViews;
  private readonly version: VersionApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  private readonly now: () => number;
  /** The dispatched kinds, and how requests name them. */
  readonly workloadKinds: WorkloadKinds;
  /** Their adapters: workers are checked for these, here and by registration's probe. */
  readonly kinds: readonly AnyWorkloadKindAdapter[];
  /** How kubeconfigs are vetted, here and by registration's probe. */
  readonly kubeconfigPolicy: KubeconfigPolicy;

  constructor(options: FleetViewOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.stats = new FleetStats(this.now);
    this.workloadKinds = new WorkloadKinds(options.kinds);
    this.kinds = this.workloadKinds.adapters;
    this.kubeconfigPolicy = options.kubeconfigPolicy;
    const { management, log } = options;
    // One kept connection pool, not client-node's TLS connection per request.
    const pool = sharedPoolConfiguration(management);
    this.core = new CoreV1Api(pool);
    this.custom = new CustomObjectsApi(pool);
    this.version = new VersionApi(pool);
    this.caches = new FleetCaches({
      management,
      kinds: options.kinds,
      log,
      onOriginEvent: (adapter, event) => this.onOriginEvent(adapter, event),
    });
    this.registry = new WorkerClusterRegistry({
      management,
      systemNamespace: options.systemNamespace,
      originId: options.originId,
      kinds: this.kinds,
      clock: { now: this.now },
      log: log.child({ component: 'worker-observer' }),
      kubeconfigPolicy: options.kubeconfigPolicy,
      observeOnly: true,
      // The registry's WorkerCluster informer is the API's too: one watch, one cache.
      onWorkerClusterEvent: (event) =>
        this.emit({
          kind: 'cluster',
          type: event.type === 'delete' ? 'deleted' : event.previous ? 'modified' : 'added',
          cluster: event.object,
        }),
    });
    this.perCluster = new FleetClusterViews({
      registry: this.registry,
      stats: this.stats,
      workloads: () => this.workloads(),
      now: this.now,
    });
    this.placementQueue = new PlacementQueueReader({
      redisUrl: options.redisUrl,
      originId: options.originId,
      now: this.now,
    });
  }

  async start(): Promise<void> {
    this.caches.start();
    // Views show no placement until the keys are read (see placement-trust.ts); retried in the
    // background while the Secret is missing.
    await loadRecordKeys(this.core, this.options.systemNamespace, this.options.log, {
      retryMs: 2_000,
      stopped: () => this.stopped,
      loaded: () => {
        this.perCluster.forgetAssumed();
      },
    });
    // The registry's start returns once its WorkerCluster cache is synced.
    await Promise.all([this.caches.waitForSync(), this.registry.start()]);
    this.started = true;
    this.stats.startSampling({
      pending: () => this.pending().length,
      queueCounts: () => this.queueCounts(),
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stats.stopSampling();
    await Promise.all([this.caches.stop(), this.registry.stop()]);
    await this.placementQueue.close();
  }

  get synced(): boolean {
    return this.started && this.caches.originsSynced;
  }

  /** Redis and the management apiserver answer. */
  async readiness(): Promise<{ redis: boolean; apiserver: boolean; caches: boolean }> {
    const [redis, apiserver] = await Promise.all([
      this.placementQueue.redisAnswers(),
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

  // --- workloads of every dispatched kind ---

  /** The dispatched object of that kind (adapter name), if any. */
  workload(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.caches.workload(kind, namespace, name);
  }

  /** Every dispatched workload of these kinds (every kind without). */
  workloads(adapters: readonly AnyWorkloadKindAdapter[] = this.kinds): DispatchedWorkload[] {
    return this.caches.workloads(adapters);
  }

  /**
   * Every dispatched workload's list key (`namespace/name/kind`) in pagination order, sorted
   * once per added or removed workload; workloadByListKey() gives each one's current version.
   */
  workloadListKeys(): readonly string[] {
    return this.caches.workloadListKeys();
  }

  workloadByListKey(key: string): DispatchedWorkload | undefined {
    return this.caches.workloadByListKey(key);
  }

  workerClusters(): readonly WorkerCluster[] {
    return this.registry.workerClusters();
  }

  /** Watch streams to workers this process holds (`jobrelay_worker_watch_streams`): none of pods or nodes. */
  workerWatchStreams(): WorkerWatchStreams {
    return this.registry.watchStreams();
  }

  // --- DispatchQueues ---

  /** Whether the DispatchQueues were listed (false while the CRD is not served, or not yet synced). */
  get queuesSynced(): boolean {
    return this.caches.queuesSynced;
  }

  /** Every DispatchQueue, by name, with its spec parsed as the controller parses it. */
  dispatchQueues(): readonly CachedQueue[] {
    return this.caches.dispatchQueues();
  }

  /** Every dispatched workload as queue membership reads it, from the caches. */
  queueMemberInputs(now: number = Date.now()): QueueMemberInput[] {
    return queueMemberInputsOf(this.caches, this.kinds, now);
  }

  /** Every pending workload's place in its queue, by UID (none without DispatchQueues). */
  queuePlaces(): Map<string, QueuePlace> {
    return placesInQueues(this.caches, this.kinds);
  }

  dispatchQueue(name: string): CachedQueue | undefined {
    return dispatchQueueNamed(this.caches, name);
  }

  /**
   * The queue that takes this workload now, as the controller selects it (queueFor: its
   * namespace's labels against the queues' namespaceSelectors, its jobrelay.dev/queue-name label
   * among them), from the caches; undefined when none does or the choice is refused.
   */
  selectQueue(object: KubeObject): string | undefined {
    return queueSelectedFor(this.caches, object);
  }

  workerCluster(name: string): WorkerCluster | undefined {
    return this.registry.workerCluster(name);
  }

  /** The registered cluster with this kube-system UID (the same physical cluster), if any. */
  registeredClusterNamed(clusterUid: string): string | undefined {
    return this.registry.connections().find((connection) => connection.clusterUid === clusterUid)?.name;
  }

  /**
   * The workload's current mirror, from the API's watch of its worker (no API call), or why
   * there is none to show. Only a mirror carrying this origin's UID counts.
   */
  mirrorOf(adapter: AnyWorkloadKindAdapter, origin: KubeObject): MirrorLookup {
    return mirrorInRegistry(this.registry, adapter, origin);
  }

  /** Whether the API sees the workload's mirror on its cluster (its phase is running rather than placed). */
  mirrorSeen(adapter: AnyWorkloadKindAdapter, origin: KubeObject): boolean {
    return this.mirrorOf(adapter, origin).kind === 'found';
  }

  /** Unfinished dispatched workloads of every kind placed on each cluster. */
  workloadsByCluster(): Map<string, DispatchedWorkload[]> {
    return workloadsOnClusters(this.workloads());
  }

  clusterViews(): ClusterView[] {
    return this.perCluster.views();
  }

  clusterViewOf(wc: WorkerCluster): ClusterView {
    return this.perCluster.viewOf(wc);
  }

  placementsPerMinute(): Map<string, number[]> {
    return this.stats.placementsPerMinute();
  }

  /**
   * The charts' last hour: placements per cluster per minute and dispatch latency (from the
   * placement log), and the queue depth samples. Both live in this process's memory.
   */
  statsHistory(): StatsHistory {
    return this.stats.history(() => this.workerClusters().map((wc) => wc.metadata.name));
  }

  /**
   * Dispatched workloads of these kinds (every kind without) waiting for a cluster, in the
   * order they started waiting (then by kind, namespace and name): the placement queue is one
   * queue for every kind.
   */
  pending(adapters: readonly AnyWorkloadKindAdapter[] = this.kinds): PendingEntry[] {
    return pendingWorkloads(this.workloads(adapters));
  }

  async queueCounts(): Promise<Record<string, number>> {
    return this.placementQueue.queueCounts();
  }

  /** Each queued placement's state, by origin UID (the task id); read from Redis at most once a second. */
  queueStates(): Promise<Map<string, QueueState>> {
    return this.placementQueue.queueStates();
  }

  /**
   * Where the controller would place this workload now, and every cluster's verdict
   * (previewPlacement: the controller's own inputs and chooser). Throws when the adapter cannot
   * read the object (a manifest it does not understand): the route says so.
   */
  preview(adapter: AnyWorkloadKindAdapter, object: KubeObject): PreviewResult {
    return previewPlacement(adapter, object, {
      settings: {
        defaultPolicy: this.options.placementPolicy,
        systemNamespace: this.options.systemNamespace,
        namespaces: this.caches.namespaces,
      },
      registry: this.registry,
      workloads: () => this.workloads(),
    });
  }

  async managementVersion(): Promise<string | undefined> {
    return (await this.version.getCode()).gitVersion;
  }

  private onOriginEvent(adapter: AnyWorkloadKindAdapter, event: InformerEvent<KubeObject>): void {
    const object = event.object;
    // The caches already dropped their sorted keys if the event added or removed one (fleet-caches.ts).
    if (event.type === 'upsert') this.stats.notePlacement(object);
    this.emit({
      kind: 'workload',
      type: event.type === 'delete' ? 'deleted' : event.previous ? 'modified' : 'added',
      adapter,
      object,
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
