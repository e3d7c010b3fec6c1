// WorkerClusterRegistry, the package's face to the controller and the API: it routes the
// WorkerCluster informer's events, owns the one entry per cluster, and answers what the rest of
// the controller asks of the workers (views, mirror caches, capacity, watch counts). Kept to
// that because the work behind it has three owners of its own, each with its own reasons to
// change: connecting to a worker and its backoff (worker-connections.ts), the watches a
// connection runs (worker-watches.ts) and the WorkerCluster status writes
// (worker-cluster-status.ts); what they share is in worker-connection-entry.ts and
// worker-cluster-registry-options.ts.
import type { KubeObject } from '@jobrelay/kinds';
import { makeClusterApiClients, ResilientInformer } from '@jobrelay/kube';
import type { NamespaceLookup } from '@jobrelay/placement';
import { type CapacityStatus, capacitySnapshotOf } from './capacity-summary.ts';
import { initialConnectionState } from './connection-state.ts';
import { mirrorSelectorFor } from './probe-worker.ts';
import type { CapacitySnapshot } from './worker-capacity.ts';
import {
  activeReasons,
  type WorkerCluster,
  type WorkerClusterSpec,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from './worker-cluster.ts';
import type { WorkerClusterRegistryOptions } from './worker-cluster-registry-options.ts';
import { WorkerClusterStatusWriter, withLeaderCondition } from './worker-cluster-status.ts';
import {
  type ConnectionEntry,
  conditionOf,
  connectionView,
  isConnected,
  RegistryMode,
  type WorkerConnection,
  type WorkerConnectionState,
} from './worker-connection-entry.ts';
import { WorkerConnections } from './worker-connections.ts';
import { WorkerWatches, type WorkerWatchStreams, watchStreamsOf } from './worker-watches.ts';

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

/**
 * Keeps one connection per WorkerCluster, kept apart from workload logic (as MultiKueue's
 * multikueuecluster.go does): it loads the kubeconfig Secret, probes the cluster with capped
 * exponential backoff while it fails, keeps the Active condition and capacity in the
 * WorkerCluster's status, finds which kinds the worker serves, and runs one label-selected
 * watch of our mirrors per served kind. The node and pod watches capacity needs run only in
 * the registry that writes (the leader), which publishes a summary on each WorkerCluster's
 * status that every other registry reads instead (issue 31: one pod watch per worker, not one
 * per replica and API). A
 * connection's state changes only through nextConnectionState (connection-state.ts); the
 * registry does the I/O (worker-connections.ts). A broken cluster never stops the others.
 */
export class WorkerClusterRegistry {
  private readonly options: WorkerClusterRegistryOptions;
  private readonly clock: { now(): number };
  private readonly entries = new Map<string, ConnectionEntry>();
  private readonly workerClusterInformer: ResilientInformer<WorkerCluster>;
  /** Running or stopped, writing or not: read by every part at each step. */
  private readonly mode: RegistryMode;
  private readonly status: WorkerClusterStatusWriter;
  private readonly watches: WorkerWatches;
  private readonly workerConnections: WorkerConnections;
  private healthTimer: NodeJS.Timeout | undefined;
  /** Snapshots rebuilt from published capacity, by the status object they came from (replaced on each change). */
  private readonly publishedSnapshots = new WeakMap<CapacityStatus, CapacitySnapshot>();

  constructor(options: WorkerClusterRegistryOptions) {
    const names = options.kinds.map((kind) => kind.name);
    const twice = names.find((name, index) => names.indexOf(name) !== index);
    if (twice !== undefined)
      throw new Error(`WorkerClusterRegistry: two kinds are named ${JSON.stringify(twice)}`);
    this.options = options;
    this.clock = options.clock ?? { now: () => Date.now() };
    this.mode = new RegistryMode(options);
    const management = makeClusterApiClients(options.management, { qps: 50, burst: 100 });
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
          !this.mode.watchesCapacity() &&
          // Every heartbeat rewrites the status: only a new capacity is news.
          JSON.stringify(event.object.status?.capacity) !== JSON.stringify(event.previous?.status?.capacity)
        )
          this.options.onCapacityChange?.(name);
        if (event.type === 'delete') void this.workerConnections.remove(name);
        else if (event.object.metadata.generation !== event.previous?.metadata.generation) {
          void this.workerConnections
            .sync(name)
            .then(() =>
              this.options.onAvailabilityChange?.(name, this.entries.get(name)?.state.active ?? false),
            );
        } else if (
          JSON.stringify(event.object.metadata.labels) !== JSON.stringify(event.previous?.metadata.labels)
        ) {
          this.options.onAvailabilityChange?.(name, this.entries.get(name)?.state.active ?? false);
        }
      },
    });
    this.status = new WorkerClusterStatusWriter({
      options,
      clock: this.clock,
      mode: this.mode,
      entries: this.entries,
      workerClusters: this.workerClusterInformer,
      // One connection pool for every status write (client-node's own clients open one per request).
      customObjects: management.custom,
    });
    this.watches = new WorkerWatches({ options, mode: this.mode, status: this.status });
    this.workerConnections = new WorkerConnections({
      options,
      clock: this.clock,
      mode: this.mode,
      entries: this.entries,
      workerClusters: this.workerClusterInformer,
      managementCore: management.core,
      watches: this.watches,
      status: this.status,
    });
  }

  async start(): Promise<void> {
    this.workerClusterInformer.start();
    await this.workerClusterInformer.waitForSync();
    await Promise.all(
      this.workerClusterInformer.list().map((wc) => this.workerConnections.sync(wc.metadata.name)),
    );
    this.healthTimer = setInterval(() => {
      for (const wc of this.workerClusterInformer.list()) void this.workerConnections.sync(wc.metadata.name);
    }, this.options.healthIntervalMs ?? 10_000);
  }

  async stop(): Promise<void> {
    this.mode.stopped = true;
    clearInterval(this.healthTimer);
    this.status.cancelCapacityWrites();
    await this.workerClusterInformer.stop();
    await Promise.all([...this.entries.values()].map((entry) => this.workerConnections.disconnect(entry)));
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
          await this.status.writeStatus(
            entry,
            workerCluster,
            this.options.log.child({ cluster: entry.name }),
          );
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
        this.workerConnections.transition(entry, { type: 'took-the-lead' }, now);
        await this.workerConnections.sync(entry.name);
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
      if (isConnected(entry))
        this.watches.alignCapacityWatch(entry, this.options.log.child({ cluster: entry.name }));
    }
  }

  /**
   * The Active clusters whose capacity this registry should know from its own watches and does
   * not yet (their pods and nodes are still being listed). Empty in a registry that does not
   * watch capacity. A new leader places nothing while it is not empty: the published capacity
   * may be stale, and "capacity not known" would steer every workload to the clusters synced first.
   */
  capacityNotSynced(): string[] {
    if (!this.mode.watchesCapacity()) return [];
    return [...this.entries.values()]
      .filter((entry) => entry.state.active && isConnected(entry) && !entry.capacity?.hasSynced)
      .map((entry) => entry.name);
  }

  /** Watch streams to workers this process holds now, by resource (`jobrelay_worker_watch_streams`). */
  watchStreams(): WorkerWatchStreams {
    return watchStreamsOf(this.entries.values());
  }

  /** Every cluster with clients and mirror watches, Active or not. */
  connections(): WorkerConnection[] {
    return [...this.entries.values()].filter(isConnected).map((e) => connectionView(e));
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
    const writes = this.mode.writes();
    const watchesCapacity = this.mode.watchesCapacity();
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
    return wc ? this.clusterView(wc, this.mode.writes(), 'left out') : undefined;
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
    return entry && isConnected(entry) ? connectionView(entry) : undefined;
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
}
