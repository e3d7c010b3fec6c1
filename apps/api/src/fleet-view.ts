import {
  CachedPriorityClasses,
  type ParsedQueue,
  parseDispatchQueue,
  workloadPriority,
} from '@jobrelay/admission';
import {
  type KubeconfigPolicy,
  type Namespace,
  namespaceInformer,
  type WorkerCluster,
  WorkerClusterRegistry,
  type WorkerConnection,
  type WorkerWatchStreams,
} from '@jobrelay/clusters';
import {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  collectionPath,
  type KindChoice,
  type KubeObject,
} from '@jobrelay/kinds';
import {
  type InformerEvent,
  objectKey,
  ResilientInformer,
  sharedPoolConfiguration,
  withTimeout,
} from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import {
  type ClusterVerdict,
  chooseWorkerCluster,
  clusterCandidates,
  clusterLoad,
  clusterVerdicts,
  type PlacementClusterInput,
  parseRedisUrl,
  placementRequestFor,
  queuePrefix,
  type ScoringPolicy,
} from '@jobrelay/placement';
import { connectRedis } from '@jobrelay/placement/queue';
import { formatResourceAmount } from '@jobrelay/resources';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, VersionApi } from '@kubernetes/client-node';
import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { activeCondition, type ClusterView, clusterView } from './cluster-views.ts';
import { sortKeys } from './pagination.ts';
import { historyWindowMinutes, PlacementLog } from './placement-log.ts';
import { loadRecordKeys, placementOf, recordKeys } from './placement-trust.ts';
import { type QueueMemberInput, type QueuePlace, queuePlaces, selectedQueue } from './queue-views.ts';
import { dispatchQueueResource } from './routes/permissions.ts';
import {
  type PlacementHistory,
  placementHistory,
  QueueDepthHistory,
  type QueueDepthSample,
} from './stats-history.ts';
import { WorkloadKinds } from './workload-kinds.ts';
import { podCount, waitingReason, waitingSince, workloadKey } from './workload-views.ts';

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

/** A dispatched object and the adapter of its kind. */
export interface DispatchedWorkload {
  adapter: AnyWorkloadKindAdapter;
  object: KubeObject;
}

export type FleetChange =
  | {
      kind: 'workload';
      type: 'added' | 'modified' | 'deleted';
      adapter: AnyWorkloadKindAdapter;
      object: KubeObject;
    }
  | { kind: 'cluster'; type: 'added' | 'modified' | 'deleted'; cluster: WorkerCluster };

export type QueueState = 'waiting' | 'delayed' | 'active' | 'unknown';

export interface PendingEntry extends DispatchedWorkload {
  waitingSince: string | null;
}

export interface PreviewResult {
  decision: 'placed' | 'unschedulable';
  cluster: string | null;
  message: string;
  clusters: ClusterVerdict[];
}

export type MirrorLookup =
  | { kind: 'found'; cluster: string; connection: WorkerConnection; mirror: KubeObject }
  | { kind: 'unplaced' | 'disconnected' | 'absent'; cluster: string | undefined; message: string };

/** What the API's connection to a workload's cluster shows of it: undefined when not connected at all. */
export interface ClusterSight {
  active: boolean;
  /** The cluster serves the workload's kind (its mirrors are watched there). */
  serves: boolean;
  /** The cached object of the workload's name and kind there, whoever's it is. */
  mirror: KubeObject | undefined;
  connection: WorkerConnection;
}

/**
 * Pure: the workload's current mirror as the API sees it, or why there is none to show. Only an
 * object carrying this origin's UID counts: another origin's object of the same name (a
 * collision, or an older incarnation) is no mirror of this one.
 */
export function lookUpMirror(
  adapter: Pick<AnyWorkloadKindAdapter, 'resource'>,
  origin: KubeObject,
  cluster: string | undefined,
  sight: ClusterSight | undefined,
): MirrorLookup {
  const what = adapter.resource.kind;
  if (!cluster) return { kind: 'unplaced', cluster, message: `the ${what} is not placed on a cluster yet` };
  if (!sight?.active)
    return { kind: 'disconnected', cluster, message: `cluster ${cluster} is not reachable from the API now` };
  const mirror = sight.mirror;
  if (!mirror || mirror.metadata?.labels?.[originUidLabel] !== origin.metadata?.uid)
    return {
      kind: 'absent',
      cluster,
      message: sight.serves
        ? `no mirror on ${cluster} (not created yet, or removed after the ${what} finished)`
        : `${cluster} does not serve ${apiVersionOf(adapter.resource)} ${what}: no mirror there`,
    };
  return { kind: 'found', cluster, connection: sight.connection, mirror };
}

/** One dispatched kind: its adapter, the value it claims, the management cluster's objects carrying it. */
interface ViewedKind {
  adapter: AnyWorkloadKindAdapter;
  managedBy: string;
  origins: ResilientInformer<KubeObject>;
  /** Its objects' `namespace/name` keys, sorted; dropped when one is added or removed (not on updates). */
  sortedKeys: readonly string[] | undefined;
}

/** A DispatchQueue from the cache, and its spec as the controller reads it. */
export interface CachedQueue {
  object: KubeObject;
  parsed: ParsedQueue;
}

/** How often the queue depth is sampled for the charts: 240 samples cover their hour. */
const queueDepthSampleSeconds = 15;

/** The sort key of a workload in the list of every kind: by namespace, name, then kind. */
function listKey(kind: string, objectKey: string): string {
  return `${objectKey}/${kind}`;
}

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
  private readonly viewed = new Map<string, ViewedKind>();
  private started = false;
  private stopped = false;
  readonly registry: WorkerClusterRegistry;
  /** The management cluster's namespaces (their labels): the Pod Security level a preview compares. */
  private readonly namespaces: ResilientInformer<Namespace>;
  /**
   * The DispatchQueues. Not awaited at start: an API in front of a management cluster without the
   * CRD (or before it is installed) serves everything else, and the queue routes say they wait.
   */
  private readonly queueObjects: ResilientInformer<KubeObject>;
  /** Every queue parsed, once per change of any (their specs are small, their count too). */
  private parsedQueues: CachedQueue[] | undefined;
  /** PriorityClasses: a queue's pending workloads are shown in the controller's order (priority, then age). */
  private readonly priorityClassObjects: ResilientInformer<KubeObject>;
  private readonly priorityClasses: CachedPriorityClasses;
  private readonly queue: Queue;
  private readonly redis: Redis | Cluster;
  private readonly listeners = new Set<(change: FleetChange) => void>();
  private readonly placements = new PlacementLog();
  private readonly queueDepths = new QueueDepthHistory(
    Math.ceil((historyWindowMinutes * 60) / queueDepthSampleSeconds),
  );
  private queueDepthTimer: NodeJS.Timeout | undefined;
  private readonly startedAt: number;
  private readonly version: VersionApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  /** Every workload's list key (namespace/name/kind), sorted; dropped when a workload is added or removed. */
  private sortedWorkloadKeys: readonly string[] | undefined;
  private assumedMemo: { at: number; value: Map<string, Record<string, string>> } | undefined;
  private queueStatesMemo: { at: number; states: Promise<Map<string, QueueState>> } | undefined;
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
    this.startedAt = this.now();
    this.workloadKinds = new WorkloadKinds(options.kinds);
    this.kinds = this.workloadKinds.adapters;
    this.kubeconfigPolicy = options.kubeconfigPolicy;
    const { management, log } = options;
    // One kept connection pool, not client-node's TLS connection per request.
    const pool = sharedPoolConfiguration(management);
    this.core = new CoreV1Api(pool);
    this.custom = new CustomObjectsApi(pool);
    this.version = new VersionApi(pool);
    for (const { adapter, managedBy } of options.kinds) {
      const { resource } = adapter;
      const origins = new ResilientInformer<KubeObject>({
        name: `dispatched ${resource.kind}s`,
        kubeConfig: management,
        apiVersion: apiVersionOf(resource),
        kind: resource.kind,
        path: collectionPath(resource),
        // No field selector exists for managedBy: everyone else's objects are dropped on arrival.
        keep: (object) => adapter.isManagedBy(object, managedBy),
        log,
        onEvent: (event) => this.onOriginEvent(adapter, event),
      });
      this.viewed.set(adapter.name, { adapter, managedBy, origins, sortedKeys: undefined });
    }
    this.namespaces = namespaceInformer({
      name: 'management namespaces',
      kubeConfig: management,
      log,
      onEvent: () => {},
    });
    this.queueObjects = new ResilientInformer<KubeObject>({
      name: 'DispatchQueues',
      kubeConfig: management,
      apiVersion: `${dispatchQueueResource.group}/${dispatchQueueResource.version}`,
      kind: dispatchQueueResource.kind,
      path: `/apis/${dispatchQueueResource.group}/${dispatchQueueResource.version}/${dispatchQueueResource.plural}`,
      log,
      onEvent: () => {
        this.parsedQueues = undefined;
      },
    });
    this.priorityClassObjects = new ResilientInformer<KubeObject>({
      name: 'PriorityClasses',
      kubeConfig: management,
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      path: '/apis/scheduling.k8s.io/v1/priorityclasses',
      log,
      onEvent: () => this.priorityClasses.changed(),
    });
    this.priorityClasses = new CachedPriorityClasses(() => this.priorityClassObjects.list());
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
    const redis = parseRedisUrl(options.redisUrl);
    this.redis = connectRedis(redis, { maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', () => {}); // readiness reports it
    // The controller's queue, read only: same name, same Redis, same key prefix.
    this.queue = new Queue(`jobrelay-placement-${options.originId}`, {
      connection: this.redis,
      prefix: queuePrefix(redis),
    });
    this.queue.on('error', () => {});
  }

  async start(): Promise<void> {
    for (const kind of this.viewed.values()) kind.origins.start();
    this.namespaces.start();
    this.queueObjects.start();
    this.priorityClassObjects.start();
    // Views show no placement until the keys are read (see placement-trust.ts); retried in the
    // background while the Secret is missing.
    await loadRecordKeys(this.core, this.options.systemNamespace, this.options.log, {
      retryMs: 2_000,
      stopped: () => this.stopped,
      loaded: () => {
        this.assumedMemo = undefined;
      },
    });
    // The registry's start returns once its WorkerCluster cache is synced.
    await Promise.all([
      ...[...this.viewed.values()].map((kind) => kind.origins.waitForSync()),
      this.namespaces.waitForSync(),
      this.registry.start(),
    ]);
    this.started = true;
    void this.sampleQueueDepth();
    this.queueDepthTimer = setInterval(() => void this.sampleQueueDepth(), queueDepthSampleSeconds * 1000);
    this.queueDepthTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.queueDepthTimer);
    await Promise.all([
      ...[...this.viewed.values()].map((kind) => kind.origins.stop()),
      this.namespaces.stop(),
      this.queueObjects.stop(),
      this.priorityClassObjects.stop(),
      this.registry.stop(),
    ]);
    await this.queue.close().catch(() => {});
    this.redis.disconnect();
  }

  get synced(): boolean {
    return this.started && [...this.viewed.values()].every((kind) => kind.origins.hasSynced);
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

  // --- workloads of every dispatched kind ---

  /** The dispatched object of that kind (adapter name), if any. */
  workload(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.viewed.get(kind)?.origins.get(`${namespace}/${name}`);
  }

  /** Every dispatched workload of these kinds (every kind without). */
  workloads(adapters: readonly AnyWorkloadKindAdapter[] = this.kinds): DispatchedWorkload[] {
    return adapters.flatMap((adapter) =>
      (this.viewed.get(adapter.name)?.origins.list() ?? []).map((object) => ({ adapter, object })),
    );
  }

  /**
   * Every dispatched workload's list key (`namespace/name/kind`) in pagination order, sorted
   * once per added or removed workload; workloadByListKey() gives each one's current version.
   */
  workloadListKeys(): readonly string[] {
    this.sortedWorkloadKeys ??= sortKeys(
      [...this.viewed.values()].flatMap((kind) =>
        kind.origins.list().map((object) => listKey(kind.adapter.name, objectKey(object))),
      ),
    );
    return this.sortedWorkloadKeys;
  }

  workloadByListKey(key: string): DispatchedWorkload | undefined {
    const [namespace = '', name = '', kind = ''] = key.split('/');
    const viewed = this.viewed.get(kind);
    const object = viewed?.origins.get(`${namespace}/${name}`);
    return viewed && object ? { adapter: viewed.adapter, object } : undefined;
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
    return this.queueObjects.hasSynced;
  }

  /** Every DispatchQueue, by name, with its spec parsed as the controller parses it. */
  dispatchQueues(): readonly CachedQueue[] {
    this.parsedQueues ??= this.queueObjects
      .list()
      .map((object) => ({ object, parsed: parseDispatchQueue(object) }))
      .sort((a, b) => (a.object.metadata?.name ?? '').localeCompare(b.object.metadata?.name ?? ''));
    return this.parsedQueues;
  }

  /** Every dispatched workload as queue membership reads it, from the caches. */
  queueMemberInputs(now: number = Date.now()): QueueMemberInput[] {
    return this.workloads().map(({ adapter, object }) => {
      const record = placementOf(object);
      const finished = adapter.isFinished(object);
      const placed = Boolean(record?.cluster);
      const priority = workloadPriority(adapter.podTemplates(object), this.priorityClasses);
      return {
        kind: adapter.name,
        object,
        record,
        reason: placed ? null : waitingReason(object, now),
        waitingSince: placed ? null : waitingSince(object),
        pods: podCount(adapter, object),
        // Placed and unfinished holds quota; unplaced waits unless suspended or being deleted.
        live: placed
          ? !finished
          : !finished && !adapter.isSuspended(object) && !object.metadata?.deletionTimestamp,
        priority: priority.kind === 'ok' ? priority.priority : 0,
      };
    });
  }

  /** Every pending workload's place in its queue, by UID (none without DispatchQueues). */
  queuePlaces(): Map<string, QueuePlace> {
    if (this.dispatchQueues().length === 0) return new Map();
    return queuePlaces(this.queueMemberInputs(), (input) => this.selectQueue(input.object));
  }

  dispatchQueue(name: string): CachedQueue | undefined {
    return this.dispatchQueues().find((queue) => queue.object.metadata?.name === name);
  }

  /**
   * The queue that takes this workload now, as the controller selects it (queueFor: its
   * namespace's labels against the queues' namespaceSelectors, its jobrelay.dev/queue-name label
   * among them), from the caches; undefined when none does or the choice is refused.
   */
  selectQueue(object: KubeObject): string | undefined {
    const queues = this.dispatchQueues();
    if (queues.length === 0) return undefined;
    const namespace = object.metadata?.namespace ?? '';
    return selectedQueue(
      { namespace, labels: object.metadata?.labels },
      this.namespaces.get(namespace)?.metadata?.labels,
      queues.map((queue) => queue.parsed),
    );
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
    const cluster = placementOf(origin)?.cluster;
    const connection = cluster ? this.registry.get(cluster) : undefined;
    return lookUpMirror(
      adapter,
      origin,
      cluster,
      connection && {
        active: connection.state.active,
        serves: connection.servedKinds.has(adapter.name),
        mirror: connection.mirrors(adapter.name)?.get(objectKey(origin)),
        connection,
      },
    );
  }

  /** Whether the API sees the workload's mirror on its cluster (its phase is running rather than placed). */
  mirrorSeen(adapter: AnyWorkloadKindAdapter, origin: KubeObject): boolean {
    return this.mirrorOf(adapter, origin).kind === 'found';
  }

  /** Unfinished dispatched workloads of every kind placed on each cluster. */
  workloadsByCluster(): Map<string, DispatchedWorkload[]> {
    const byCluster = new Map<string, DispatchedWorkload[]>();
    for (const entry of this.workloads()) {
      if (entry.adapter.isFinished(entry.object)) continue;
      const cluster = placementOf(entry.object)?.cluster;
      if (!cluster) continue;
      const list = byCluster.get(cluster);
      if (list) list.push(entry);
      else byCluster.set(cluster, [entry]);
    }
    return byCluster;
  }

  clusterViews(): ClusterView[] {
    const byCluster = this.workloadsByCluster();
    const rates = this.placements.rate(this.now());
    const assumed = this.assumedByCluster();
    return this.registry.workerClusters().map((wc) =>
      clusterView(wc, {
        placed: byCluster.get(wc.metadata.name) ?? [],
        placementsPerMinute: rates.get(wc.metadata.name) ?? 0,
        assumed: assumed.get(wc.metadata.name) ?? {},
      }),
    );
  }

  clusterViewOf(wc: WorkerCluster): ClusterView {
    return clusterView(wc, {
      placed: this.workloadsByCluster().get(wc.metadata.name) ?? [],
      placementsPerMinute: this.placements.rate(this.now()).get(wc.metadata.name) ?? 0,
      assumed: this.assumedByCluster().get(wc.metadata.name) ?? {},
    });
  }

  /**
   * Per cluster, the requests of placed workloads whose pods do not exist yet, as placement
   * assumes them (clusterLoad, as previews compute it). It walks every workload, so it is
   * reused for a second: a cluster event fanned out to many watchers costs one walk.
   */
  private assumedByCluster(): Map<string, Record<string, string>> {
    const now = this.now();
    if (this.assumedMemo && now - this.assumedMemo.at < 1_000) return this.assumedMemo.value;
    const capacities = new Map(this.registry.clusters().map((view) => [view.name, view.capacity]));
    const load = clusterLoad(
      this.workloads().map(({ adapter, object }) => ({ workload: object, facts: adapter })),
      capacities,
      new Map(),
      recordKeys(),
    );
    const value = new Map(
      [...load].map(([cluster, { assumed }]) => [
        cluster,
        Object.fromEntries(
          Object.entries(assumed)
            .filter(
              ([name, amount]) => amount > 0 && (name === 'cpu' || name === 'memory' || name.includes('/')),
            )
            .map(([name, amount]) => [name, formatResourceAmount(name, amount)]),
        ),
      ]),
    );
    this.assumedMemo = { at: now, value };
    return value;
  }

  placementsPerMinute(): Map<string, number[]> {
    return this.placements.perMinute(this.now());
  }

  /**
   * The charts' last hour: placements per cluster per minute and dispatch latency (from the
   * placement log), and the queue depth samples. Both live in this process's memory.
   */
  statsHistory(): PlacementHistory & {
    now: number;
    since: number;
    minutes: number;
    queueDepth: QueueDepthSample[];
    sampleSeconds: number;
  } {
    const now = this.now();
    const since = now - historyWindowMinutes * 60_000;
    return {
      now,
      since: Math.max(since, this.startedAt),
      minutes: historyWindowMinutes,
      ...placementHistory(
        this.placements.placements(now),
        this.workerClusters().map((wc) => wc.metadata.name),
        now,
        historyWindowMinutes,
      ),
      queueDepth: this.queueDepths.samples(since),
      sampleSeconds: queueDepthSampleSeconds,
    };
  }

  /** One queue depth sample: the pending workloads from the caches, the tasks from Redis (if it answers). */
  private async sampleQueueDepth(): Promise<void> {
    const at = this.now();
    const pending = this.pending().length;
    const queued = await withTimeout(this.queueCounts(), 2_000, 'redis').then(
      (counts) => Object.values(counts).reduce((sum, n) => sum + n, 0) - (counts.failed ?? 0),
      () => null,
    );
    this.queueDepths.record({ at, pending, queued });
  }

  /**
   * Dispatched workloads of these kinds (every kind without) waiting for a cluster, in the
   * order they started waiting (then by kind, namespace and name): the placement queue is one
   * queue for every kind.
   */
  pending(adapters: readonly AnyWorkloadKindAdapter[] = this.kinds): PendingEntry[] {
    return this.workloads(adapters)
      .filter(
        ({ adapter, object }) =>
          !adapter.isFinished(object) &&
          !adapter.isSuspended(object) &&
          !object.metadata?.deletionTimestamp &&
          !placementOf(object)?.cluster,
      )
      .map((entry) => ({ ...entry, waitingSince: waitingSince(entry.object) }))
      .sort(
        (a, b) =>
          (a.waitingSince ?? '').localeCompare(b.waitingSince ?? '') ||
          workloadKey(a.adapter, a.object).localeCompare(workloadKey(b.adapter, b.object)),
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
   * Where the controller would place this workload now, and every cluster's verdict: the same
   * inputs (placementRequestFor with the kind's adapter, clusterLoad over every kind,
   * clusterCandidates with the kinds each cluster serves) and the same chooser. Clusters count
   * as Active as the controller reports them (their Active condition). Throws when the adapter
   * cannot read the object (a manifest it does not understand): the route says so.
   */
  preview(adapter: AnyWorkloadKindAdapter, object: KubeObject): PreviewResult {
    const settings = {
      defaultPolicy: this.options.placementPolicy,
      systemNamespace: this.options.systemNamespace,
      namespaces: this.namespaces,
    };
    const request = placementRequestFor(object, placementOf(object), settings, adapter);
    if (request.kind === 'invalid') {
      return { decision: 'unschedulable', cluster: null, message: request.message, clusters: [] };
    }
    const views = new Map(this.registry.clusters().map((view) => [view.name, view]));
    const inputs: PlacementClusterInput[] = this.registry.workerClusters().map((wc) => {
      const condition = activeCondition(wc);
      const view = views.get(wc.metadata.name);
      // The kinds the controller found served there (its status), else what the API found.
      const servedKinds = wc.status?.servedKinds ?? view?.servedKinds;
      return {
        name: wc.metadata.name,
        labels: wc.metadata.labels ?? {},
        spec: wc.spec,
        state: { active: condition?.status === 'True', reason: condition?.reason ?? 'Unknown' },
        ...(servedKinds ? { servedKinds } : {}),
        capacity: view?.capacity,
        ...(view?.namespaces ? { namespaces: view.namespaces } : {}),
      };
    });
    const capacities = new Map([...views.values()].map((view) => [view.name, view.capacity]));
    // Another workload's own placement does not count against itself.
    const others = this.workloads()
      .filter((other) => other.object.metadata?.uid !== object.metadata?.uid)
      .map(({ adapter: facts, object: workload }) => ({ workload, facts }));
    const candidates = clusterCandidates(inputs, clusterLoad(others, capacities, new Map(), recordKeys()));
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

  private onOriginEvent(adapter: AnyWorkloadKindAdapter, event: InformerEvent<KubeObject>): void {
    const object = event.object;
    // The informer's cache already holds the change: a new or removed key re-sorts on next use.
    if (event.type === 'delete' || !event.previous) {
      const viewed = this.viewed.get(adapter.name);
      if (viewed) viewed.sortedKeys = undefined;
      this.sortedWorkloadKeys = undefined;
    }
    if (event.type === 'upsert') {
      const record = placementOf(object);
      if (record?.cluster && object.metadata?.uid)
        this.placements.add(
          object.metadata.uid,
          record.attempt,
          record.cluster,
          record.placedAt,
          this.now(),
          object.metadata.creationTimestamp,
        );
    }
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
