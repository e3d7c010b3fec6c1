import {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  collectionPath,
  type KubeObject,
  type WorkloadKindAdapter,
} from '@jobrelay/kinds';
import {
  type ClusterApiClients,
  type ClusterClientOptions,
  describeApiError,
  type InformerEvent,
  isNotFound,
  makeClusterApiClients,
  mergePatch,
  type PlainJson,
  ResilientInformer,
  withTimeout,
} from '@jobrelay/kube';
import type { NamespaceLookup } from '@jobrelay/placement';
import type { Resources } from '@jobrelay/resources';
import type { CoreV1Api, CustomObjectsApi, KubeConfig, V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  type CapacityStatus,
  capacityMergePatch,
  capacitySnapshotOf,
  capacityStatusOf,
} from './capacity-summary.ts';
import {
  attemptDue,
  type BackoffConfig,
  type ConnectionEvent,
  type ConnectionState,
  initialConnectionState,
  nextConnectionState,
  olderRegistration,
  type RemovedEvent,
} from './connection-state.ts';
import { type KubeconfigPolicy, loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
import { checkWorker, defaultProbeTimeoutMs, mirrorSelectorFor } from './probe-worker.ts';
import { type CapacitySnapshot, WorkerCapacity } from './worker-capacity.ts';
import {
  type ActiveReason,
  activeReasons,
  type WorkerCluster,
  type WorkerClusterCondition,
  type WorkerClusterSpec,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from './worker-cluster.ts';

/** A health check that takes longer than this marks the cluster Unreachable. */
const probeTimeoutMs = defaultProbeTimeoutMs;
/** Rewrite lastHeartbeatTime at most this often: every write costs the management apiserver. */
const heartbeatWriteIntervalMs = 30_000;
/** First retry of a failed connection; doubles per attempt up to reconnectMaxBackoffMs. */
const reconnectInitialBackoffMs = 1_000;
/** A worker that does not answer is checked again at least this often (connection-state.ts says why). */
const unreachableMaxBackoffMs = 4_000;
/**
 * Publish a cluster's capacity at most this often (issue 31). Pods come and go by the hundred a
 * second in a burst, and every write reaches each replica and API watching WorkerClusters;
 * changes in between are coalesced into the next write, never dropped.
 */
const capacityWriteIntervalMs = 2_000;

/** Watch streams to worker clusters this process holds, by what they watch. */
export interface WorkerWatchStreams {
  pods: number;
  nodes: number;
  mirrors: number;
  namespaces: number;
}

/** Help of `jobrelay_worker_watch_streams`, the same in the controller and the API. */
export const workerWatchStreamsHelp =
  'Watch streams this process keeps open to worker clusters, by resource (pods, nodes, mirrors, namespaces): ' +
  'one per running watch, a stream being re-established included. Only the leader watches pods and nodes ' +
  '(capacity); followers and the API read the capacity it publishes on each WorkerCluster.';

/** The Active condition of a connection. */
export interface WorkerConnectionState {
  active: boolean;
  reason: ActiveReason;
  message: string;
}

/** One worker cluster: its clients and one label-selected cache of our mirrors per kind it serves. */
export interface WorkerConnection {
  readonly name: string;
  readonly state: WorkerConnectionState;
  /** The worker's clients, sharing one rate limit and one connection pool: what an adapter's `client(apis)` takes. */
  readonly clients: ClusterApiClients;
  readonly core: CoreV1Api;
  /** The kinds (adapter names) the worker serves and whose mirrors are watched; others are not placed there. */
  readonly servedKinds: ReadonlySet<string>;
  /** The cache of our mirrors of that kind; undefined when the worker does not serve it. */
  mirrors<T extends KubeObject>(kind: WorkloadKindAdapter<T>): ResilientInformer<T> | undefined;
  mirrors(kind: string): ResilientInformer<KubeObject> | undefined;
  /** The worker's namespaces (name, UID and labels only): Pod Security levels, and which ones jobrelay created. */
  readonly namespaces: ResilientInformer<Namespace>;
  /** Every served kind's mirror cache has been listed. */
  mirrorsSynced(): boolean;
  /** Resolves once every served kind's mirror cache has been listed. */
  waitForMirrors(): Promise<void>;
  readonly kubernetesVersion: string | undefined;
  /** UID of the worker's kube-system namespace (undefined when the identity may not read it). */
  readonly clusterUid: string | undefined;
  /** The vetted worker kubeconfig, for client-node helpers that take one (Log, Watch). Holds credentials: never log it. */
  readonly kubeConfig: KubeConfig;
}

/** What a reconcile reads of one cluster (`WorkerClusterRegistry.mirrorCaches`). */
export interface ClusterMirrorCache {
  name: string;
  /** A WorkerCluster of this name exists (a connection may outlive its WorkerCluster briefly). */
  registered: boolean;
  /** Connected and Active; false while not connected. */
  active: boolean;
  /** The condition's reason: the connection's, or "connecting" for one not checked yet. */
  reason: string;
  /** When it stopped being Active (undefined while Active, never connected, or not registered). */
  inactiveSince: number | undefined;
  /** `spec.drain` of its WorkerCluster. */
  drain: boolean;
  /** `spec.podRestrictions` of its WorkerCluster, as stored (not read yet). */
  podRestrictions: unknown;
  /** The cache of our mirrors of the kind asked for; undefined while not connected or not served. */
  mirrors: ResilientInformer<KubeObject> | undefined;
}

/** Everything placement and the controller need to know about one registered cluster. */
export interface WorkerClusterView {
  name: string;
  labels: Record<string, string>;
  spec: WorkerClusterSpec;
  state: WorkerConnectionState;
  /** When it stopped being Active (undefined while Active or never connected). */
  inactiveSince: number | undefined;
  /**
   * The kinds (adapter names) it serves, as discovery last found them; undefined until it
   * answered. Placement does not place a kind elsewhere ("does not serve RayCluster").
   */
  servedKinds: readonly string[] | undefined;
  /** Undefined until its nodes and pods are listed. */
  capacity: CapacitySnapshot | undefined;
  /** Its namespaces with their labels; undefined until they are listed. */
  namespaces: NamespaceLookup | undefined;
}

interface ConnectionEntry {
  name: string;
  /** Changed only through nextConnectionState (transition). */
  state: ConnectionState;
  secretVersion?: string;
  kubeConfig?: KubeConfig;
  server?: string;
  clients?: ClusterApiClients;
  /** One label-selected cache of our mirrors per served kind (by adapter name), once the checks passed. */
  mirrors?: Map<string, ResilientInformer<KubeObject>>;
  /**
   * Per served kind, its unfinished mirrors, counted as the mirror watch's events arrive: the
   * status's activeWorkloads, written every few seconds, was a walk over every cached mirror,
   * and with 100,000 tracked that walk was a third of the leader's CPU.
   */
  unfinishedMirrors?: Map<string, { count: number }>;
  capacity?: WorkerCapacity;
  /** Every namespace of the worker, with its labels (namespaceView), once the checks passed. */
  namespaces?: ResilientInformer<Namespace>;
  kubernetesVersion?: string;
  /** UID of the worker's kube-system namespace: two registrations of one cluster share it. */
  clusterUid?: string;
  /** The kinds discovery found served on this connection (asked again while one is missing). */
  servedKinds?: ReadonlySet<string>;
  /** The identity was found to hold every required permission of the served kinds (checked once per connection and kind). */
  permissionsChecked?: boolean;
  /** WorkerCluster generation last synced: a spec change retries at once. */
  generation?: number;
  lastStatusWrite?: { at: number; signature: string };
  /** The capacity last published, without its observedTime, and when: writes are spaced (capacityWriteIntervalMs). */
  lastCapacityWrite?: { at: number; key: string };
  /** A capacity write waiting for its turn (capacityWriteIntervalMs). */
  capacityWriteTimer?: NodeJS.Timeout;
  /** The status write in flight: one at a time per cluster (writeStatus). */
  statusWriting?: Promise<void>;
  /** Asked for while one was in flight: one more write follows it, from the state then. */
  statusWriteAgain?: boolean;
  syncing?: Promise<void>;
}

type ProbeOutcome = { ok: true; message: string } | { ok: false; reason: ActiveReason; message: string };

export interface WorkerClusterRegistryOptions {
  management: KubeConfig;
  /**
   * The kinds dispatched: each worker is asked which of them it serves (discovery), and
   * gets one label-selected mirror watch and the permission checks of each served one.
   */
  kinds: readonly AnyWorkloadKindAdapter[];
  /** Where kubeconfig Secrets live (jobrelay-system). */
  systemNamespace: string;
  /** This installation's `jobrelay.dev/origin` value: the mirror watches select on it. */
  originId: string;
  log: Logger;
  healthIntervalMs?: number;
  /** Cap of the exponential backoff between connection attempts to a failing cluster. */
  reconnectMaxBackoffMs?: number;
  /** Client-side rate limit per worker cluster. */
  clientRateLimit?: ClusterClientOptions;
  /** What a worker kubeconfig may hold beyond the allow-list (exec plugins, proxies, denied server addresses); nothing by default. */
  kubeconfigPolicy?: KubeconfigPolicy;
  /** Where time comes from (backoff, heartbeats, certificate validity); default Date.now. */
  clock?: { now(): number };
  /**
   * Watch and connect, never write: no WorkerCluster status is written to the management
   * cluster and `beforeActive` never runs. For processes beside the controller (the admin
   * API) that read what it maintains: the controller alone writes the Active condition,
   * so two writers never fight over it.
   */
  observeOnly?: boolean;
  /**
   * When given, the registry writes (WorkerCluster status, `beforeActive`) and watches the
   * workers' pods and nodes (capacity) only while this returns true: the controller's replicas
   * all connect and watch their mirrors and namespaces, the one holding the leader Lease writes
   * and watches capacity. Call `leadershipChanged()` when it turns.
   */
  leading?: () => boolean;
  /** A mirror of `kind` (the adapter's name) changed on a worker. Must only enqueue. */
  onMirrorEvent?: (cluster: string, kind: string, event: InformerEvent<KubeObject>) => void;
  /** A WorkerCluster object changed on the management cluster (after the registry has seen it). */
  onWorkerClusterEvent?: (event: InformerEvent<WorkerCluster>) => void;
  /** A cluster became Active or stopped being Active (or was removed), or its spec or served kinds changed. */
  onAvailabilityChange?: (cluster: string, active: boolean) => void;
  /** Every answered request to a worker's apiserver (watches aside): its verb and status code (0: no answer). */
  onWorkerApiResponse?: (cluster: string, verb: string, code: number) => void;
  /**
   * Pods or nodes changed on a worker (capacity may have freed), as this process's own watches
   * saw it (the leader), or as a newly published capacity shows it (a registry that does not
   * watch capacity). Must only enqueue.
   */
  onCapacityChange?: (cluster: string) => void;
  /** A namespace changed on a worker (its Pod Security labels, or it was created). Must only enqueue. */
  onNamespaceEvent?: (cluster: string, event: InformerEvent<Namespace>) => void;
  /**
   * Runs when a cluster connects (again), with the mirror cache of every served kind synced,
   * before it is marked Active: the place to delete mirrors that went stale while it was away.
   */
  beforeActive?: (connection: WorkerConnection) => Promise<void>;
  /** Requests of workloads placed on a cluster whose pods do not exist yet, for the status's free capacity. */
  assumedRequests?: (cluster: string) => Resources;
}

/**
 * Keeps one connection per WorkerCluster, kept apart from workload logic (as MultiKueue's
 * multikueuecluster.go does): it loads the kubeconfig Secret, probes the cluster with capped
 * exponential backoff while it fails, keeps the Active condition and capacity in the
 * WorkerCluster's status, finds which kinds the worker serves, and runs one label-selected
 * watch of our mirrors per served kind. The node and pod watches capacity needs run only in
 * the registry that writes (the leader), which publishes a summary on each WorkerCluster's
 * status that every other registry reads instead (issue 31: one pod watch per worker, not one
 * per replica and API). A
 * connection's state changes only through nextConnectionState (connection-state.ts); this
 * class does the I/O. A broken cluster never stops the others.
 */
export class WorkerClusterRegistry {
  private readonly options: WorkerClusterRegistryOptions;
  private readonly clock: { now(): number };
  private readonly backoff: BackoffConfig;
  private readonly entries = new Map<string, ConnectionEntry>();
  private readonly workerClusterInformer: ResilientInformer<WorkerCluster>;
  private readonly managementCore: CoreV1Api;
  private readonly customObjects: CustomObjectsApi;
  private healthTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Snapshots rebuilt from published capacity, by the status object they came from (replaced on each change). */
  private readonly publishedSnapshots = new WeakMap<CapacityStatus, CapacitySnapshot>();

  constructor(options: WorkerClusterRegistryOptions) {
    const names = options.kinds.map((kind) => kind.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined)
      throw new Error(`WorkerClusterRegistry: two kinds are named ${JSON.stringify(twice)}`);
    this.options = options;
    this.clock = options.clock ?? { now: () => Date.now() };
    this.backoff = {
      initialMs: reconnectInitialBackoffMs,
      maxMs: options.reconnectMaxBackoffMs ?? 5 * 60_000,
      unreachableMaxMs: unreachableMaxBackoffMs,
    };
    const management = makeClusterApiClients(options.management, { qps: 50, burst: 100 });
    this.managementCore = management.core;
    // One connection pool for every status write (client-node's own clients open one per request).
    this.customObjects = management.custom;
    this.workerClusterInformer = new ResilientInformer({
      name: 'WorkerClusters',
      kubeConfig: options.management,
      apiVersion: `${workerClusterGroup}/${workerClusterVersion}`,
      kind: 'WorkerCluster',
      path: `/apis/${workerClusterGroup}/${workerClusterVersion}/${workerClusterPlural}`,
      log: options.log,
      onEvent: (event) => {
        const name = event.object.metadata.name;
        this.options.onWorkerClusterEvent?.(event);
        // A registry that does not watch capacity learns of it here: the leader published anew.
        if (
          event.type === 'upsert' &&
          !this.watchesCapacity() &&
          // Every heartbeat rewrites the status: only a new capacity is news.
          JSON.stringify(event.object.status?.capacity) !== JSON.stringify(event.previous?.status?.capacity)
        )
          this.options.onCapacityChange?.(name);
        if (event.type === 'delete') void this.remove(name);
        else if (event.object.metadata.generation !== event.previous?.metadata.generation) {
          void this.sync(name).then(() =>
            this.options.onAvailabilityChange?.(name, this.entries.get(name)?.state.active ?? false),
          );
        } else if (
          JSON.stringify(event.object.metadata.labels) !== JSON.stringify(event.previous?.metadata.labels)
        ) {
          this.options.onAvailabilityChange?.(name, this.entries.get(name)?.state.active ?? false);
        }
      },
    });
  }

  async start(): Promise<void> {
    this.workerClusterInformer.start();
    await this.workerClusterInformer.waitForSync();
    await Promise.all(this.workerClusterInformer.list().map((wc) => this.sync(wc.metadata.name)));
    this.healthTimer = setInterval(() => {
      for (const wc of this.workerClusterInformer.list()) void this.sync(wc.metadata.name);
    }, this.options.healthIntervalMs ?? 10_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.healthTimer);
    for (const entry of this.entries.values()) clearTimeout(entry.capacityWriteTimer);
    await this.workerClusterInformer.stop();
    await Promise.all([...this.entries.values()].map((entry) => this.disconnect(entry)));
  }

  /**
   * Writes every WorkerCluster's status now, as this process sees it. For a process that has
   * just started writing (`leading` turned true): what it found while it only watched would
   * otherwise reach the status at the next health check, or, with nothing changed, at the next
   * heartbeat.
   */
  async writeEveryStatus(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map(async (entry) => {
        const workerCluster = this.workerClusterInformer.get(entry.name);
        if (workerCluster)
          await this.writeStatus(entry, workerCluster, this.options.log.child({ cluster: entry.name }));
      }),
    );
  }

  /**
   * Checks every cluster that is not Active now, whatever its backoff, and resolves when those
   * checks are done. For a replica that has just taken the lead, before it acts on what it saw
   * while following (see the `took-the-lead` event).
   */
  async recheckInactive(): Promise<void> {
    const now = this.clock.now();
    const inactive = [...this.entries.values()].filter((entry) => !entry.state.active);
    await Promise.all(
      inactive.map(async (entry) => {
        // A check already running was started before the lead was taken: wait for it, then look again.
        await entry.syncing;
        this.transition(entry, { type: 'took-the-lead' }, now);
        await this.sync(entry.name);
      }),
    );
  }

  /**
   * Starts or stops the pod and node watches of every connected worker as `leading` now says:
   * call it when this process takes or loses the lead. Each health check does the same (a
   * backstop), but a new leader should not wait for it: it places nothing until these have
   * synced (`capacityNotSynced`).
   */
  leadershipChanged(): void {
    for (const entry of this.entries.values()) {
      if (isConnected(entry)) this.alignCapacityWatch(entry, this.options.log.child({ cluster: entry.name }));
    }
  }

  /**
   * The Active clusters whose capacity this registry should know from its own watches and does
   * not yet (their pods and nodes are still being listed). Empty in a registry that does not
   * watch capacity. A new leader places nothing while it is not empty: the published capacity
   * may be stale, and "capacity not known" would steer every workload to the clusters synced first.
   */
  capacityNotSynced(): string[] {
    if (!this.watchesCapacity()) return [];
    return [...this.entries.values()]
      .filter((entry) => entry.state.active && isConnected(entry) && !entry.capacity?.hasSynced)
      .map((entry) => entry.name);
  }

  /** Watch streams to workers this process holds now, by resource (`jobrelay_worker_watch_streams`). */
  watchStreams(): WorkerWatchStreams {
    const streams: WorkerWatchStreams = { pods: 0, nodes: 0, mirrors: 0, namespaces: 0 };
    for (const entry of this.entries.values()) {
      streams.mirrors += entry.mirrors?.size ?? 0;
      if (entry.namespaces) streams.namespaces += 1;
      // One WorkerCapacity holds one pod watch and one node watch.
      if (entry.capacity) {
        streams.pods += 1;
        streams.nodes += 1;
      }
    }
    return streams;
  }

  /** Every cluster with clients and mirror watches, Active or not. */
  connections(): WorkerConnection[] {
    return [...this.entries.values()].filter(isConnected).map((e) => this.view(e));
  }

  /**
   * Every registered WorkerCluster, including those that never connected. A registry that does
   * not write (a follower replica, the admin API) counts a cluster as Active only when the
   * leader's written Active condition agrees: a view that disagrees with the leader's (the admin
   * API's placement preview; replicas once all placed) would put Jobs back on a cluster the
   * leader declared lost, which the leader moves away again: eight times in one second in the
   * chaos run (docs/reliability.md).
   */
  clusters(): WorkerClusterView[] {
    const writes = this.writes();
    const watchesCapacity = this.watchesCapacity();
    return this.workerClusterInformer
      .list()
      .map((wc) => this.clusterView(wc, writes, watchesCapacity ? 'watched' : 'published'));
  }

  /**
   * One registered cluster as `clusters()` gives it, but without its capacity: what its fences
   * read, checked again before each mirror is created (building every cluster's view, capacity
   * included, for that was about a sixth of a reconcile's profile samples with 10 workers).
   */
  fencesView(name: string): WorkerClusterView | undefined {
    const wc = this.workerClusterInformer.get(name);
    return wc ? this.clusterView(wc, this.writes(), 'left out') : undefined;
  }

  private clusterView(
    wc: WorkerCluster,
    writes: boolean,
    capacity: 'watched' | 'published' | 'left out',
  ): WorkerClusterView {
    const entry = this.entries.get(wc.metadata.name);
    const state = entry?.state ?? initialConnectionState();
    const local: WorkerConnectionState = entry
      ? conditionOf(state)
      : { active: false, reason: activeReasons.connecting, message: 'not checked yet' };
    return {
      name: wc.metadata.name,
      labels: wc.metadata.labels ?? {},
      spec: wc.spec,
      state: writes ? local : withLeaderCondition(local, wc),
      inactiveSince: state.inactiveSince,
      servedKinds: entry?.servedKinds ? [...entry.servedKinds] : undefined,
      // The leader's own watches; any other registry reads what the leader published. A new
      // leader's watches not synced yet: unknown (it places nothing meanwhile), never the
      // published one, which may be old.
      capacity:
        capacity === 'watched'
          ? entry?.capacity?.hasSynced
            ? entry.capacity.snapshot()
            : undefined
          : capacity === 'published'
            ? this.publishedSnapshot(wc)
            : undefined,
      namespaces: entry?.namespaces?.hasSynced ? entry.namespaces : undefined,
    };
  }

  /**
   * Every registered or connected cluster as one reconcile reads it: the same facts as
   * `clusters()` and `get()` give, without their capacity snapshots and connection views (a
   * reconcile runs a few times per Job, and those were a tenth of its cost).
   */
  mirrorCaches(kind: string): ClusterMirrorCache[] {
    const out: ClusterMirrorCache[] = [];
    const registered = new Set<string>();
    for (const wc of this.workerClusterInformer.list()) {
      const name = wc.metadata.name;
      registered.add(name);
      const entry = this.entries.get(name);
      const connected = entry && isConnected(entry) ? entry : undefined;
      out.push({
        name,
        registered: true,
        active: connected ? conditionOf(connected.state).active : false,
        reason: entry ? conditionOf(entry.state).reason : activeReasons.connecting,
        inactiveSince: (entry?.state ?? initialConnectionState()).inactiveSince,
        drain: wc.spec.drain === true,
        podRestrictions: wc.spec.podRestrictions,
        mirrors: connected?.mirrors?.get(kind),
      });
    }
    for (const entry of this.entries.values()) {
      if (registered.has(entry.name) || !isConnected(entry)) continue;
      const state = conditionOf(entry.state);
      out.push({
        name: entry.name,
        registered: false,
        active: state.active,
        reason: state.reason,
        inactiveSince: undefined,
        drain: false,
        podRestrictions: undefined,
        mirrors: entry.mirrors.get(kind),
      });
    }
    return out;
  }

  get(name: string): WorkerConnection | undefined {
    const entry = this.entries.get(name);
    return entry && isConnected(entry) ? this.view(entry) : undefined;
  }

  spec(name: string): WorkerClusterSpec | undefined {
    return this.workerClusterInformer.get(name)?.spec;
  }

  /** The WorkerCluster object as the informer holds it (status as the controller wrote it). Read-only. */
  workerCluster(name: string): Readonly<WorkerCluster> | undefined {
    return this.workerClusterInformer.get(name);
  }

  /** Every WorkerCluster object as the informer holds it. Read-only: do not modify. */
  workerClusters(): ReadonlyArray<Readonly<WorkerCluster>> {
    return this.workerClusterInformer.list();
  }

  /** API requests sent to each worker so far (rate-limited clients only). */
  requestCounts(): Record<string, number> {
    return Object.fromEntries([...this.entries.values()].map((e) => [e.name, e.clients?.requestCount ?? 0]));
  }

  mirrorSelector(): string {
    return mirrorSelectorFor(this.options.originId);
  }

  private view(entry: ConnectionEntry): WorkerConnection {
    // A snapshot of the watches now: a connection closed later leaves these stopped, not swapped.
    const informers = new Map(entry.mirrors);
    const mirrors = (kind: string | AnyWorkloadKindAdapter) =>
      informers.get(typeof kind === 'string' ? kind : kind.name);
    return {
      name: entry.name,
      state: conditionOf(entry.state),
      clients: entry.clients!,
      core: entry.clients!.core,
      namespaces: entry.namespaces!,
      servedKinds: new Set(informers.keys()),
      mirrors: mirrors as WorkerConnection['mirrors'],
      mirrorsSynced: () => [...informers.values()].every((informer) => informer.hasSynced),
      waitForMirrors: async () => {
        await Promise.all([...informers.values()].map((informer) => informer.waitForSync()));
      },
      kubernetesVersion: entry.kubernetesVersion,
      clusterUid: entry.clusterUid,
      kubeConfig: entry.kubeConfig!,
    };
  }

  /** The one way a connection's state changes. */
  private transition(
    entry: ConnectionEntry,
    event: Exclude<ConnectionEvent, RemovedEvent>,
    now = this.clock.now(),
  ): void {
    entry.state = nextConnectionState(entry.state, event, now, this.backoff);
  }

  private writes(): boolean {
    return !this.options.observeOnly && (this.options.leading?.() ?? true);
  }

  /** Only the registry that writes watches pods and nodes: it alone places, and it publishes what it sees. */
  private watchesCapacity(): boolean {
    return this.writes();
  }

  /** The snapshot the leader's published capacity stands for, rebuilt once per status written. */
  private publishedSnapshot(workerCluster: WorkerCluster): CapacitySnapshot | undefined {
    const published = workerCluster.status?.capacity;
    if (!published) return undefined;
    let snapshot = this.publishedSnapshots.get(published);
    if (!snapshot) {
      snapshot = capacitySnapshotOf(published);
      if (snapshot) this.publishedSnapshots.set(published, snapshot);
    }
    return snapshot;
  }

  /** One sync per cluster at a time; a request during a sync is served by that sync. */
  private sync(name: string): Promise<void> {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { name, state: initialConnectionState() };
      this.entries.set(name, entry);
    }
    const current = entry;
    current.syncing ??= this.syncOnce(current).finally(() => {
      current.syncing = undefined;
    });
    return current.syncing;
  }

  private async syncOnce(entry: ConnectionEntry): Promise<void> {
    if (this.stopped) return;
    const log = this.options.log.child({ cluster: entry.name });
    const workerCluster = this.workerClusterInformer.get(entry.name);
    if (!workerCluster) return;
    const now = this.clock.now();
    if (entry.generation !== workerCluster.metadata.generation) {
      entry.generation = workerCluster.metadata.generation;
      this.transition(entry, { type: 'spec-changed' }, now);
    }
    // A failing cluster is retried with backoff, not on every tick; a spec change retries now.
    if (!attemptDue(entry.state, now)) return;
    const wasActive = entry.state.active;
    const servedBefore = servedKindsKey(entry.servedKinds);
    const outcome = await this.probe(entry, workerCluster, log);
    if (outcome.ok && !wasActive && this.options.beforeActive && this.writes()) {
      try {
        // Stale mirrors go before anything new happens there.
        await withTimeout(this.view(entry).waitForMirrors(), 30_000, `${entry.name} mirror list`);
        await this.options.beforeActive(this.view(entry));
      } catch (err) {
        log.warn({ err }, 'cleanup before activation failed; will retry');
        this.transition(entry, { type: 'cleanup-failed' });
        return this.writeStatus(entry, workerCluster, log);
      }
    }
    // Timed when the attempt ended, not when it began: an attempt can wait long on the management
    // cluster (its Secret read, during an etcd restart), and a failure stamped with its start made
    // a worker that had just stopped answering count as inactive for 15 s already, so a new
    // leader moved its Jobs at once (the chaos run, docs/reliability.md).
    this.transition(
      entry,
      outcome.ok
        ? { type: 'connected', message: outcome.message }
        : { type: 'disconnected', reason: outcome.reason, message: outcome.message },
    );
    const { active, reason, message } = entry.state;
    if (active !== wasActive) {
      log.info({ active, reason, detail: message }, 'cluster availability changed');
      this.options.onAvailabilityChange?.(entry.name, active);
    } else if (active && servedKindsKey(entry.servedKinds) !== servedBefore) {
      // Workloads of a kind it has just started serving may be placed there now.
      log.info({ servedKinds: [...(entry.servedKinds ?? [])] }, 'served kinds changed');
      this.options.onAvailabilityChange?.(entry.name, active);
    }
    await this.writeStatus(entry, workerCluster, log);
  }

  /** Connects (a new or changed Secret), runs the checks and starts the watches: the I/O of an attempt. */
  private async probe(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<ProbeOutcome> {
    const { name: secretName, key = 'kubeconfig' } = workerCluster.spec.kubeconfigSecretRef;
    const secretRef = `${this.options.systemNamespace}/${secretName}`;
    let secret: Awaited<ReturnType<CoreV1Api['readNamespacedSecret']>>;
    try {
      secret = await this.managementCore.readNamespacedSecret({
        name: secretName,
        namespace: this.options.systemNamespace,
      });
    } catch (err) {
      await this.disconnect(entry);
      if (isNotFound(err)) {
        return failed(
          activeReasons.secretNotFound,
          `Secret ${secretRef} not found: create it with the kubeconfig under key ${key}`,
        );
      }
      return failed(activeReasons.connecting, `cannot read Secret ${secretRef}: ${describeApiError(err)}`);
    }
    if (secret.metadata?.resourceVersion !== entry.secretVersion) {
      await this.disconnect(entry);
      const data = secret.data?.[key];
      if (!data) {
        return failed(
          activeReasons.kubeconfigKeyMissing,
          `Secret ${secretRef} has no key ${JSON.stringify(key)}`,
        );
      }
      const loaded = loadWorkerKubeconfig(Buffer.from(data, 'base64').toString('utf8'), {
        ...this.options.kubeconfigPolicy,
        now: new Date(this.clock.now()),
      });
      if (!loaded.ok) return failed(loaded.reason, `Secret ${secretRef}: ${loaded.message}`);
      entry.secretVersion = secret.metadata?.resourceVersion;
      entry.kubeConfig = loaded.kubeConfig;
      entry.server = loaded.server;
      const onWorkerApiResponse = this.options.onWorkerApiResponse;
      const name = entry.name;
      entry.clients = makeClusterApiClients(loaded.kubeConfig, {
        ...(this.options.clientRateLimit ?? { qps: 50, burst: 100 }),
        ...(onWorkerApiResponse
          ? { onResponse: (verb: string, code: number) => onWorkerApiResponse(name, verb, code) }
          : {}),
      });
      log.info({ server: loaded.server }, 'loaded kubeconfig');
    }
    const server = entry.server!;
    const check = await checkWorker(entry.clients!, server, {
      kinds: this.options.kinds,
      mirrorSelector: this.mirrorSelector(),
      timeoutMs: probeTimeoutMs,
      ...(entry.kubernetesVersion
        ? { known: { kubernetesVersion: entry.kubernetesVersion, clusterUid: entry.clusterUid } }
        : {}),
      ...(entry.servedKinds ? { servedKinds: entry.servedKinds } : {}),
      permissionsChecked: entry.permissionsChecked ?? false,
      watchedKinds: new Set(
        [...(entry.mirrors ?? [])].filter(([, informer]) => informer.watching).map(([kind]) => kind),
      ),
      log,
    });
    entry.kubernetesVersion = check.kubernetesVersion;
    entry.clusterUid = check.clusterUid;
    entry.permissionsChecked = check.permissionsChecked;
    if (check.servedKinds) entry.servedKinds = check.servedKinds;
    if (check.failure) return failed(check.failure.reason, check.failure.message);
    const twin = olderRegistration(
      { name: entry.name, clusterUid: entry.clusterUid, activeSince: entry.state.activeSince },
      [...this.entries.values()].map((other) => ({
        name: other.name,
        clusterUid: other.clusterUid,
        activeSince: other.state.activeSince,
      })),
    );
    if (twin) {
      await this.disconnect(entry);
      return failed(
        activeReasons.duplicateCluster,
        `${server} is the same cluster as WorkerCluster ${twin.name}; delete one of the two registrations`,
      );
    }
    // Claimed before the cleanup runs, so a twin checked meanwhile is the one refused.
    this.transition(entry, { type: 'checks-passed' });
    this.startWatches(entry, log);
    if (!entry.mirrors)
      return failed(activeReasons.connecting, 'the connection closed while it was checked; retrying');
    return { ok: true, message: this.connectedMessage(entry, server) };
  }

  /** `connected to <server> (<version>)`, naming the kinds it does not serve. */
  private connectedMessage(entry: ConnectionEntry, server: string): string {
    const missing = this.options.kinds.filter((kind) => !entry.servedKinds?.has(kind.name));
    const serves =
      missing.length > 0
        ? `; does not serve ${missing.map((kind) => `${kind.resource.kind} (${apiVersionOf(kind.resource)})`).join(', ')}`
        : '';
    return `connected to ${server} (${entry.kubernetesVersion})${serves}`;
  }

  /** One mirror watch per served kind (a kind no longer served loses its watch), and the capacity watches. */
  private startWatches(entry: ConnectionEntry, log: Logger): void {
    // Closed while the checks ran (the registry stopped, or the Secret changed): nothing to
    // watch with, and watches started now would outlive the connection.
    if (this.stopped || !entry.kubeConfig) return;
    const cluster = entry.name;
    const served = entry.servedKinds ?? new Set<string>();
    entry.mirrors ??= new Map();
    for (const [kind, informer] of entry.mirrors) {
      if (served.has(kind)) continue;
      entry.mirrors.delete(kind);
      entry.unfinishedMirrors?.delete(kind);
      void informer.stop();
      log.info({ kind }, 'kind no longer served: its mirror watch stopped');
    }
    for (const adapter of this.options.kinds) {
      if (!served.has(adapter.name) || entry.mirrors.has(adapter.name)) continue;
      const { resource } = adapter;
      const unfinished = { count: 0 };
      const informer = new ResilientInformer<KubeObject>({
        name: `${cluster} mirrors (${adapter.name})`,
        kubeConfig: entry.kubeConfig!,
        apiVersion: apiVersionOf(resource),
        kind: resource.kind,
        path: collectionPath(resource),
        labelSelector: this.mirrorSelector(),
        ...(adapter.mirrorCacheView
          ? { view: (mirror: KubeObject) => adapter.mirrorCacheView!(mirror) }
          : {}),
        log,
        onEvent: (event) => {
          const open = (mirror: KubeObject) => (adapter.isFinished(mirror) ? 0 : 1);
          unfinished.count +=
            event.type === 'upsert'
              ? open(event.object) - (event.previous ? open(event.previous) : 0)
              : -open(event.object);
          this.options.onMirrorEvent?.(cluster, adapter.name, event);
        },
      });
      entry.unfinishedMirrors ??= new Map();
      entry.unfinishedMirrors.set(adapter.name, unfinished);
      entry.mirrors.set(adapter.name, informer);
      informer.start();
    }
    if (!entry.namespaces) {
      entry.namespaces = namespaceInformer({
        name: `${cluster} namespaces`,
        kubeConfig: entry.kubeConfig!,
        log,
        onEvent: (event) => this.options.onNamespaceEvent?.(cluster, event),
      });
      entry.namespaces.start();
    }
    this.alignCapacityWatch(entry, log);
  }

  /** Pod and node watches while this registry watches capacity (it leads), none otherwise. */
  private alignCapacityWatch(entry: ConnectionEntry, log: Logger): void {
    const cluster = entry.name;
    if (this.watchesCapacity() && !this.stopped && entry.kubeConfig && !entry.capacity) {
      entry.capacity = new WorkerCapacity({
        cluster,
        kubeConfig: entry.kubeConfig,
        log,
        onChange: () => {
          this.options.onCapacityChange?.(cluster);
          this.scheduleCapacityWrite(entry);
        },
      });
      entry.capacity.start();
      log.info('watching pods and nodes for capacity');
    } else if (!this.watchesCapacity() && entry.capacity) {
      const capacity = entry.capacity;
      entry.capacity = undefined;
      clearTimeout(entry.capacityWriteTimer);
      entry.capacityWriteTimer = undefined;
      void capacity.stop();
      log.info('not leading: pod and node watches stopped (capacity is read from the WorkerCluster status)');
    }
  }

  /**
   * A capacity change is published at most every capacityWriteIntervalMs per cluster: the first
   * after a quiet spell at once, the rest coalesced into one write when the interval is up.
   */
  private scheduleCapacityWrite(entry: ConnectionEntry): void {
    if (this.stopped || entry.capacityWriteTimer || !this.writes()) return;
    const sinceLast = this.clock.now() - (entry.lastCapacityWrite?.at ?? Number.NEGATIVE_INFINITY);
    entry.capacityWriteTimer = setTimeout(
      () => {
        entry.capacityWriteTimer = undefined;
        const workerCluster = this.workerClusterInformer.get(entry.name);
        if (workerCluster && this.entries.get(entry.name) === entry)
          void this.writeStatus(entry, workerCluster, this.options.log.child({ cluster: entry.name }));
      },
      Math.max(0, capacityWriteIntervalMs - sinceLast),
    );
    // A pending write must not keep a stopping process alive.
    entry.capacityWriteTimer.unref?.();
  }

  /** Closes the connection: clients, watches, and what was learned through them. */
  private async disconnect(entry: ConnectionEntry): Promise<void> {
    const { mirrors, capacity, namespaces } = entry;
    entry.mirrors = undefined;
    entry.unfinishedMirrors = undefined;
    entry.capacity = undefined;
    clearTimeout(entry.capacityWriteTimer);
    entry.capacityWriteTimer = undefined;
    entry.namespaces = undefined;
    entry.clients = undefined;
    entry.kubeConfig = undefined;
    entry.secretVersion = undefined;
    entry.kubernetesVersion = undefined;
    entry.clusterUid = undefined;
    entry.servedKinds = undefined;
    entry.permissionsChecked = undefined;
    this.transition(entry, { type: 'closed' });
    await Promise.all(
      [...(mirrors?.values() ?? [])]
        .map((informer) => informer.stop())
        .concat(capacity?.stop() ?? [], namespaces?.stop() ?? []),
    );
  }

  private async remove(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    await entry.syncing;
    await this.disconnect(entry);
    if (nextConnectionState(entry.state, { type: 'removed' }, this.clock.now(), this.backoff) === undefined)
      this.entries.delete(name);
    this.options.onAvailabilityChange?.(name, false);
  }

  /** Activity for the printer column: unfinished mirrors of every kind, from the caches (no API call). */
  private activeWorkloads(entry: ConnectionEntry): number {
    let unfinished = 0;
    for (const { count } of entry.unfinishedMirrors?.values() ?? []) unfinished += count;
    return unfinished;
  }

  /**
   * What to write as the capacity: the summary of this registry's own watches; nothing (leave
   * the published one, its observedTime tells its age) while connected and not synced yet, or
   * when a different one was published less than capacityWriteIntervalMs ago (a write is then
   * scheduled); null once not connected.
   */
  private capacityToWrite(
    entry: ConnectionEntry,
    now: number,
  ): { write?: CapacityStatus | null; key: string } {
    if (!isConnected(entry)) return { write: null, key: 'null' };
    // Left out of the signature too: nothing to write until it has synced.
    if (!entry.capacity?.hasSynced) return { key: 'not synced' };
    const mirrors = [...entry.mirrors.values()];
    const status = capacityStatusOf(entry.capacity.snapshot(), {
      // Only the pods of our mirrors (by their namespace/name), never another tenant's.
      isMirror: (owner) => mirrors.some((informer) => informer.get(owner) !== undefined),
      assumed: this.options.assumedRequests?.(entry.name) ?? {},
      observedAt: now,
    });
    const { observedTime: _, ...comparable } = status;
    const key = JSON.stringify(comparable);
    const last = entry.lastCapacityWrite;
    if (last && last.key !== key && now - last.at < capacityWriteIntervalMs) {
      this.scheduleCapacityWrite(entry);
      // As published: other changes to the status need not wait, and do not count as this one.
      return { key: last.key };
    }
    return { write: status, key };
  }

  /**
   * One status write per cluster at a time; asked for while one is in flight, a single write
   * follows it, from the state as it is then. Without this the spacing of capacity writes did
   * not hold under load: it counts from the last write answered, so every capacity change while
   * a write waited on a busy apiserver started another, and more writes made it busier (42 a
   * second over 10 workers in the 100,000-workload fleet run, not the 5 the spacing allows).
   */
  private writeStatus(entry: ConnectionEntry, workerCluster: WorkerCluster, log: Logger): Promise<void> {
    if (entry.statusWriting) {
      entry.statusWriteAgain = true;
      return entry.statusWriting;
    }
    const writing = this.writeStatusOnce(entry, workerCluster, log).finally(() => {
      entry.statusWriting = undefined;
      if (!entry.statusWriteAgain) return;
      entry.statusWriteAgain = false;
      const latest = this.workerClusterInformer.get(entry.name);
      if (latest && !this.stopped && this.entries.get(entry.name) === entry)
        void this.writeStatus(entry, latest, log);
    });
    entry.statusWriting = writing;
    return writing;
  }

  private async writeStatusOnce(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<void> {
    // The one place the registry writes to the management cluster.
    if (!this.writes()) return;
    const { state } = entry;
    const previous = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
    const status = state.active ? 'True' : 'False';
    const activeWorkloads = this.activeWorkloads(entry);
    const now = this.clock.now();
    const capacity = this.capacityToWrite(entry, now);
    // Kept as last found while not connected, like the version.
    const servedKinds = entry.servedKinds ? [...entry.servedKinds] : undefined;
    const signature = JSON.stringify([
      status,
      state.reason,
      state.message,
      activeWorkloads,
      capacity.key,
      servedKinds,
      state.attempts,
      workerCluster.metadata.generation,
    ]);
    if (
      entry.lastStatusWrite?.signature === signature &&
      now - entry.lastStatusWrite.at < heartbeatWriteIntervalMs &&
      previous?.status === status
    ) {
      return;
    }
    const condition: WorkerClusterCondition = {
      type: 'Active',
      status,
      reason: state.reason,
      message: state.message,
      observedGeneration: workerCluster.metadata.generation,
      lastTransitionTime:
        previous?.status === status && previous.lastTransitionTime
          ? previous.lastTransitionTime
          : new Date(now).toISOString(),
    };
    const others = (workerCluster.status?.conditions ?? []).filter((c) => c.type !== 'Active');
    try {
      await this.customObjects.patchClusterCustomObjectStatus(
        {
          group: workerClusterGroup,
          version: workerClusterVersion,
          plural: workerClusterPlural,
          name: entry.name,
          body: {
            status: {
              observedGeneration: workerCluster.metadata.generation,
              activeWorkloads,
              kubernetesVersion: entry.kubernetesVersion ?? workerCluster.status?.kubernetesVersion,
              ...(servedKinds ? { servedKinds } : {}),
              lastHeartbeatTime: state.active
                ? new Date(now).toISOString()
                : workerCluster.status?.lastHeartbeatTime,
              connectionAttempts: state.attempts,
              nextAttemptTime: state.active ? null : new Date(state.nextAttemptAt).toISOString(),
              ...(capacity.write === undefined
                ? {}
                : {
                    capacity: capacity.write
                      ? capacityMergePatch(workerCluster.status?.capacity, capacity.write)
                      : null,
                  }),
              conditions: [...others, condition],
            },
          },
        },
        mergePatch,
      );
      entry.lastStatusWrite = { at: now, signature };
      if (capacity.write) entry.lastCapacityWrite = { at: now, key: capacity.key };
    } catch (err) {
      if (!isNotFound(err)) log.warn({ err }, 'could not write WorkerCluster status');
    }
  }
}

function failed(reason: ActiveReason, message: string): ProbeOutcome {
  return { ok: false, reason, message };
}

/**
 * A non-writing registry's view of a cluster it reaches itself: not Active when the Active
 * condition the leader wrote says otherwise (with the leader's reason). Without a written
 * condition (no leader has written yet), its own view stands.
 */
export function withLeaderCondition(
  local: WorkerConnectionState,
  workerCluster: Pick<WorkerCluster, 'status'>,
): WorkerConnectionState {
  const written = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
  if (!local.active || !written || written.status === 'True') return local;
  const known = Object.values(activeReasons) as string[];
  return {
    active: false,
    reason: known.includes(written.reason ?? '')
      ? (written.reason as ActiveReason)
      : activeReasons.unreachable,
    message: `${written.message ?? 'not Active'} (as the leader found it; this replica reaches it)`,
  };
}

/** Connected: its clients are made and its mirror and namespace watches run (the checks passed). */
function isConnected(
  entry: ConnectionEntry,
): entry is ConnectionEntry &
  Required<Pick<ConnectionEntry, 'clients' | 'mirrors' | 'namespaces' | 'kubeConfig'>> {
  return (
    entry.clients !== undefined &&
    entry.mirrors !== undefined &&
    entry.namespaces !== undefined &&
    entry.kubeConfig !== undefined
  );
}

/** A namespace as plain JSON, as the namespace caches read it. */
export type Namespace = PlainJson<V1Namespace>;

/**
 * What the namespace caches keep of a namespace: its identity and labels (Pod Security levels,
 * and the origin label of those jobrelay created). A few hundred per worker at most.
 */
export function namespaceView(namespace: Namespace): Namespace {
  const { name, uid, resourceVersion, labels } = namespace.metadata ?? {};
  return { metadata: { name, uid, resourceVersion, ...(labels ? { labels } : {}) } };
}

/**
 * A cache of one cluster's namespaces as `namespaceView` keeps them (the management cluster's
 * in the controller and the API, each worker's in the registry). Not started.
 */
export function namespaceInformer(options: {
  name: string;
  kubeConfig: KubeConfig;
  log: Logger;
  onEvent: (event: InformerEvent<Namespace>) => void;
}): ResilientInformer<Namespace> {
  return new ResilientInformer<Namespace>({
    ...options,
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    view: namespaceView,
  });
}

function conditionOf(state: ConnectionState): WorkerConnectionState {
  return { active: state.active, reason: state.reason, message: state.message };
}

/** Comparable form of a served-kinds set (undefined: not discovered). */
function servedKindsKey(kinds: ReadonlySet<string> | undefined): string | undefined {
  return kinds ? [...kinds].join(',') : undefined;
}
