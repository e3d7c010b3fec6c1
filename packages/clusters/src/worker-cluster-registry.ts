import {
  type ClusterApiClients,
  type ClusterClientOptions,
  describeApiError,
  type InformerEvent,
  isNotFound,
  makeClusterApiClients,
  mergePatch,
  ResilientInformer,
  withTimeout,
} from '@jobrelay/kube';
import { isJobFinished } from '@jobrelay/mirror';
import { formatResourceAmount, type Resources } from '@jobrelay/placement';
import {
  type BatchV1Api,
  type CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Job,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
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

export interface WorkerConnectionState {
  active: boolean;
  reason: ActiveReason;
  message: string;
}

/** One worker cluster: its clients and its label-selected cache of our mirrors. */
export interface WorkerConnection {
  readonly name: string;
  readonly state: WorkerConnectionState;
  readonly batch: BatchV1Api;
  readonly core: CoreV1Api;
  readonly mirrors: ResilientInformer<V1Job>;
  readonly kubernetesVersion: string | undefined;
  /** UID of the worker's kube-system namespace (undefined when the identity may not read it). */
  readonly clusterUid: string | undefined;
  /** The vetted worker kubeconfig, for client-node helpers that take one (Log, Watch). Holds credentials: never log it. */
  readonly kubeConfig: KubeConfig;
}

/** Everything placement and the controller need to know about one registered cluster. */
export interface WorkerClusterView {
  name: string;
  labels: Record<string, string>;
  spec: WorkerClusterSpec;
  state: WorkerConnectionState;
  /** When it stopped being Active (undefined while Active or never connected). */
  inactiveSince: number | undefined;
  /** Undefined until its nodes and pods are listed. */
  capacity: CapacitySnapshot | undefined;
}

interface ConnectionEntry {
  name: string;
  state: WorkerConnectionState;
  secretVersion?: string;
  kubeConfig?: KubeConfig;
  server?: string;
  clients?: ClusterApiClients;
  mirrors?: ResilientInformer<V1Job>;
  capacity?: WorkerCapacity;
  kubernetesVersion?: string;
  /** UID of the worker's kube-system namespace: two registrations of one cluster share it. */
  clusterUid?: string;
  /** The identity was found to hold every required permission (checked once per connection). */
  permissionsChecked?: boolean;
  /** When this registration was first seen Active; the older of two twins is kept. */
  activeSince?: number;
  inactiveSince?: number;
  /** Failed connection attempts in a row, and when the next may run. */
  attempts: number;
  nextAttemptAt: number;
  /** WorkerCluster generation last synced: a spec change retries at once. */
  generation?: number;
  lastStatusWrite?: { at: number; signature: string };
  syncing?: Promise<void>;
}

export interface WorkerClusterRegistryOptions {
  management: KubeConfig;
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
  /** Accept exec credential plugins in worker kubeconfigs (off by default). */
  allowExecPlugins?: boolean;
  /**
   * Watch and connect, never write: no WorkerCluster status is written to the management
   * cluster and `beforeActive` never runs. For processes beside the controller (the admin
   * API) that read what it maintains: the controller alone writes the Active condition,
   * so two writers never fight over it.
   */
  observeOnly?: boolean;
  /** A mirror changed on a worker. Must only enqueue. */
  onMirrorEvent?: (cluster: string, event: InformerEvent<V1Job>) => void;
  /** A WorkerCluster object changed on the management cluster (after the registry has seen it). */
  onWorkerClusterEvent?: (event: InformerEvent<WorkerCluster>) => void;
  /** A cluster became Active or stopped being Active (or was removed), or its spec changed. */
  onAvailabilityChange?: (cluster: string, active: boolean) => void;
  /** Pods or nodes changed on a worker (capacity may have freed). Must only enqueue. */
  onCapacityChange?: (cluster: string) => void;
  /**
   * Runs when a cluster connects (again), with its mirror cache synced, before it is marked
   * Active: the place to delete mirrors that went stale while it was away.
   */
  beforeActive?: (connection: WorkerConnection) => Promise<void>;
  /** Requests of Jobs placed on a cluster whose pods do not exist yet, for the status's free capacity. */
  assumedRequests?: (cluster: string) => Resources;
}

/**
 * Keeps one connection per WorkerCluster, kept apart from workload logic (as MultiKueue's
 * multikueuecluster.go does): it loads the kubeconfig Secret, probes the cluster with capped
 * exponential backoff while it fails, keeps the Active condition and capacity in the
 * WorkerCluster's status, and runs label-selected watches of our mirrors plus the node and
 * pod watches capacity needs. A broken cluster never stops the others.
 */
export class WorkerClusterRegistry {
  private readonly options: WorkerClusterRegistryOptions;
  private readonly entries = new Map<string, ConnectionEntry>();
  private readonly workerClusterInformer: ResilientInformer<WorkerCluster>;
  private readonly managementCore: CoreV1Api;
  private readonly customObjects: CustomObjectsApi;
  private healthTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(options: WorkerClusterRegistryOptions) {
    this.options = options;
    const management = makeClusterApiClients(options.management, { qps: 50, burst: 100 });
    this.managementCore = management.core;
    this.customObjects = options.management.makeApiClient(CustomObjectsApi);
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
    await this.workerClusterInformer.stop();
    await Promise.all([...this.entries.values()].map((entry) => this.disconnect(entry)));
  }

  /** Every cluster with clients, Active or not. */
  connections(): WorkerConnection[] {
    return [...this.entries.values()]
      .filter((e) => e.clients && e.mirrors && e.kubeConfig)
      .map((e) => this.view(e));
  }

  /** Every registered WorkerCluster, including those that never connected. */
  clusters(): WorkerClusterView[] {
    return this.workerClusterInformer.list().map((wc) => {
      const entry = this.entries.get(wc.metadata.name);
      return {
        name: wc.metadata.name,
        labels: wc.metadata.labels ?? {},
        spec: wc.spec,
        state: entry?.state ?? {
          active: false,
          reason: activeReasons.connecting,
          message: 'not checked yet',
        },
        inactiveSince: entry?.inactiveSince,
        capacity: entry?.capacity?.hasSynced ? entry.capacity.snapshot() : undefined,
      };
    });
  }

  get(name: string): WorkerConnection | undefined {
    const entry = this.entries.get(name);
    return entry?.clients && entry.mirrors && entry.kubeConfig ? this.view(entry) : undefined;
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

  private view(entry: ConnectionEntry): WorkerConnection {
    return {
      name: entry.name,
      state: entry.state,
      batch: entry.clients!.batch,
      core: entry.clients!.core,
      mirrors: entry.mirrors!,
      kubernetesVersion: entry.kubernetesVersion,
      clusterUid: entry.clusterUid,
      kubeConfig: entry.kubeConfig!,
    };
  }

  /** One sync per cluster at a time; a request during a sync is served by that sync. */
  private sync(name: string): Promise<void> {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = {
        name,
        state: { active: false, reason: activeReasons.connecting, message: 'connecting' },
        attempts: 0,
        nextAttemptAt: 0,
      };
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
    const specChanged = entry.generation !== workerCluster.metadata.generation;
    entry.generation = workerCluster.metadata.generation;
    const now = Date.now();
    // A failing cluster is retried with backoff, not on every tick; a spec change retries now.
    if (!entry.state.active && entry.attempts > 0 && now < entry.nextAttemptAt && !specChanged) return;
    const wasActive = entry.state.active;
    const next = await this.probe(entry, workerCluster, log);
    if (next.active && !wasActive && this.options.beforeActive && !this.options.observeOnly) {
      try {
        // Stale mirrors go before anything new happens there.
        await withTimeout(entry.mirrors!.waitForSync(), 30_000, `${entry.name} mirror list`);
        await this.options.beforeActive(this.view(entry));
      } catch (err) {
        log.warn({ err: describeApiError(err) }, 'cleanup before activation failed; will retry');
        entry.attempts += 1;
        entry.nextAttemptAt = now + this.backoffMs(entry.attempts);
        return this.writeStatus(entry, workerCluster, log);
      }
    }
    entry.state = next;
    if (next.active) {
      entry.attempts = 0;
      entry.nextAttemptAt = 0;
      entry.inactiveSince = undefined;
    } else {
      entry.attempts += 1;
      entry.nextAttemptAt = now + this.backoffMs(entry.attempts);
      entry.inactiveSince ??= now;
    }
    if (next.active !== wasActive) {
      log.info(
        { active: next.active, reason: next.reason, detail: next.message },
        'cluster availability changed',
      );
      this.options.onAvailabilityChange?.(entry.name, next.active);
    }
    await this.writeStatus(entry, workerCluster, log);
  }

  private backoffMs(attempts: number): number {
    const cap = this.options.reconnectMaxBackoffMs ?? 5 * 60_000;
    return Math.min(reconnectInitialBackoffMs * 2 ** Math.max(0, attempts - 1), cap);
  }

  private async probe(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<WorkerConnectionState> {
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
        return inactive(
          activeReasons.secretNotFound,
          `Secret ${secretRef} not found: create it with the kubeconfig under key ${key}`,
        );
      }
      return inactive(activeReasons.connecting, `cannot read Secret ${secretRef}: ${describeApiError(err)}`);
    }
    if (secret.metadata?.resourceVersion !== entry.secretVersion) {
      await this.disconnect(entry);
      const data = secret.data?.[key];
      if (!data) {
        return inactive(
          activeReasons.kubeconfigKeyMissing,
          `Secret ${secretRef} has no key ${JSON.stringify(key)}`,
        );
      }
      const loaded = loadWorkerKubeconfig(Buffer.from(data, 'base64').toString('utf8'), {
        allowExecPlugins: this.options.allowExecPlugins ?? false,
      });
      if (!loaded.ok) return inactive(loaded.reason, `Secret ${secretRef}: ${loaded.message}`);
      entry.secretVersion = secret.metadata?.resourceVersion;
      entry.kubeConfig = loaded.kubeConfig;
      entry.server = loaded.server;
      entry.clients = makeClusterApiClients(
        loaded.kubeConfig,
        this.options.clientRateLimit ?? { qps: 50, burst: 100 },
      );
      log.info({ server: loaded.server }, 'loaded kubeconfig');
    }
    const server = entry.server!;
    const check = await checkWorker(entry.clients!, server, {
      mirrorSelector: this.mirrorSelector(),
      timeoutMs: probeTimeoutMs,
      ...(entry.kubernetesVersion
        ? { known: { kubernetesVersion: entry.kubernetesVersion, clusterUid: entry.clusterUid } }
        : {}),
      permissionsChecked: entry.permissionsChecked ?? false,
      log,
    });
    entry.kubernetesVersion = check.kubernetesVersion;
    entry.clusterUid = check.clusterUid;
    entry.permissionsChecked = check.permissionsChecked;
    if (check.failure) return inactive(check.failure.reason, check.failure.message);
    // Two WorkerClusters for one physical cluster would each see the other's mirrors as
    // stale and delete them: the registration that was Active first is kept.
    const twin = [...this.entries.values()].find(
      (other) =>
        other !== entry &&
        other.clusterUid !== undefined &&
        other.clusterUid === entry.clusterUid &&
        other.activeSince !== undefined &&
        (entry.activeSince === undefined || other.activeSince < entry.activeSince),
    );
    if (twin) {
      await this.disconnect(entry);
      return inactive(
        activeReasons.duplicateCluster,
        `${server} is the same cluster as WorkerCluster ${twin.name}; delete one of the two registrations`,
      );
    }
    entry.activeSince ??= Date.now();
    if (!entry.mirrors) this.startWatches(entry, log);
    return {
      active: true,
      reason: activeReasons.connected,
      message: `connected to ${server} (${entry.kubernetesVersion})`,
    };
  }

  mirrorSelector(): string {
    return mirrorSelectorFor(this.options.originId);
  }

  private startWatches(entry: ConnectionEntry, log: Logger): void {
    const cluster = entry.name;
    entry.mirrors = new ResilientInformer<V1Job>({
      name: `${cluster} mirror Jobs`,
      kubeConfig: entry.kubeConfig!,
      apiVersion: 'batch/v1',
      kind: 'Job',
      path: '/apis/batch/v1/jobs',
      modelName: 'V1Job',
      labelSelector: this.mirrorSelector(),
      log,
      onEvent: (event) => this.options.onMirrorEvent?.(cluster, event),
    });
    entry.mirrors.start();
    entry.capacity = new WorkerCapacity({
      cluster,
      kubeConfig: entry.kubeConfig!,
      log,
      onChange: () => this.options.onCapacityChange?.(cluster),
    });
    entry.capacity.start();
  }

  private async disconnect(entry: ConnectionEntry): Promise<void> {
    const { mirrors, capacity } = entry;
    entry.mirrors = undefined;
    entry.capacity = undefined;
    entry.clients = undefined;
    entry.kubeConfig = undefined;
    entry.secretVersion = undefined;
    entry.kubernetesVersion = undefined;
    entry.clusterUid = undefined;
    entry.permissionsChecked = undefined;
    entry.activeSince = undefined;
    await Promise.all([mirrors?.stop(), capacity?.stop()]);
  }

  private async remove(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    await entry.syncing;
    await this.disconnect(entry);
    this.entries.delete(name);
    this.options.onAvailabilityChange?.(name, false);
  }

  /** Activity for the printer column; counted from the mirror cache, no API call. */
  private activeJobs(entry: ConnectionEntry): number {
    return (entry.mirrors?.list() ?? []).filter((job) => !isJobFinished(job)).length;
  }

  private capacityStatus(
    entry: ConnectionEntry,
  ): NonNullable<WorkerCluster['status']>['capacity'] | undefined {
    if (!entry.capacity?.hasSynced) return undefined;
    const snapshot = entry.capacity.snapshot();
    const assumed = this.options.assumedRequests?.(entry.name) ?? {};
    const format = (resources: Resources) =>
      Object.fromEntries(
        Object.entries(resources)
          .filter(([name]) => name === 'cpu' || name === 'memory' || name.includes('/'))
          .map(([name, amount]) => [name, formatResourceAmount(name, Math.max(0, amount))]),
      );
    const free: Resources = {};
    for (const node of snapshot.nodes) {
      for (const [name, amount] of Object.entries(node.free))
        free[name] = (free[name] ?? 0) + Math.max(0, amount);
    }
    for (const [name, amount] of Object.entries(assumed)) free[name] = (free[name] ?? 0) - amount;
    return { nodes: snapshot.nodes.length, allocatable: format(snapshot.allocatable), free: format(free) };
  }

  private async writeStatus(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<void> {
    // The one place the registry writes to the management cluster.
    if (this.options.observeOnly) return;
    const { state } = entry;
    const previous = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
    const status = state.active ? 'True' : 'False';
    const activeJobs = this.activeJobs(entry);
    const capacity = this.capacityStatus(entry);
    const signature = JSON.stringify([
      status,
      state.reason,
      state.message,
      activeJobs,
      capacity,
      entry.attempts,
      workerCluster.metadata.generation,
    ]);
    const now = Date.now();
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
              activeJobs,
              kubernetesVersion: entry.kubernetesVersion ?? workerCluster.status?.kubernetesVersion,
              lastHeartbeatTime: state.active
                ? new Date(now).toISOString()
                : workerCluster.status?.lastHeartbeatTime,
              connectionAttempts: entry.attempts,
              nextAttemptTime: state.active ? null : new Date(entry.nextAttemptAt).toISOString(),
              capacity: capacity ?? null,
              conditions: [...others, condition],
            },
          },
        },
        mergePatch,
      );
      entry.lastStatusWrite = { at: now, signature };
    } catch (err) {
      if (!isNotFound(err)) log.warn({ err: describeApiError(err) }, 'could not write WorkerCluster status');
    }
  }
}

function inactive(reason: ActiveReason, message: string): WorkerConnectionState {
  return { active: false, reason, message };
}
