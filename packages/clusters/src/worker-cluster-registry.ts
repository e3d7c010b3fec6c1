import {
  describeApiError,
  type InformerEvent,
  isNotFound,
  mergePatch,
  ResilientInformer,
  withTimeout,
} from '@jobrelay/kube';
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Job,
  VersionApi,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { classifyConnectionError } from './classify-connection-error.ts';
import { loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
import {
  type ActiveReason,
  activeReasons,
  type WorkerCluster,
  type WorkerClusterCondition,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from './worker-cluster.ts';

/** A health check that takes longer than this marks the cluster Unreachable. */
const probeTimeoutMs = 5_000;
/** Rewrite lastHeartbeatTime at most this often: every write costs the management apiserver. */
const heartbeatWriteIntervalMs = 30_000;

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
}

interface ConnectionEntry {
  name: string;
  state: WorkerConnectionState;
  secretVersion?: string;
  kubeConfig?: KubeConfig;
  server?: string;
  batch?: BatchV1Api;
  core?: CoreV1Api;
  mirrors?: ResilientInformer<V1Job>;
  kubernetesVersion?: string;
  /** UID of the worker's kube-system namespace: two registrations of one cluster share it. */
  clusterUid?: string;
  /** When this registration was first seen Active; the older of two twins is kept. */
  activeSince?: number;
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
  /** A mirror changed on a worker. Must only enqueue. */
  onMirrorEvent: (cluster: string, event: InformerEvent<V1Job>) => void;
  /** A cluster became Active or stopped being Active (or was removed). */
  onAvailabilityChange?: (cluster: string, active: boolean) => void;
}

/**
 * Keeps one connection per WorkerCluster, kept apart from workload logic (as MultiKueue's
 * multikueuecluster.go does): it loads the kubeconfig Secret, probes the cluster, keeps the
 * Active condition true to what it sees, and runs a label-selected watch of our mirrors.
 * A broken cluster never stops the others.
 */
export class WorkerClusterRegistry {
  private readonly options: WorkerClusterRegistryOptions;
  private readonly entries = new Map<string, ConnectionEntry>();
  private readonly workerClusters: ResilientInformer<WorkerCluster>;
  private readonly managementCore: CoreV1Api;
  private readonly customObjects: CustomObjectsApi;
  private healthTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(options: WorkerClusterRegistryOptions) {
    this.options = options;
    this.managementCore = options.management.makeApiClient(CoreV1Api);
    this.customObjects = options.management.makeApiClient(CustomObjectsApi);
    this.workerClusters = new ResilientInformer({
      name: 'WorkerClusters',
      kubeConfig: options.management,
      apiVersion: `${workerClusterGroup}/${workerClusterVersion}`,
      kind: 'WorkerCluster',
      path: `/apis/${workerClusterGroup}/${workerClusterVersion}/${workerClusterPlural}`,
      log: options.log,
      onEvent: (event) => {
        const name = event.object.metadata.name;
        if (event.type === 'delete') void this.remove(name);
        else if (event.object.metadata.generation !== event.previous?.metadata.generation)
          void this.sync(name);
      },
    });
  }

  async start(): Promise<void> {
    this.workerClusters.start();
    await this.workerClusters.waitForSync();
    await Promise.all(this.workerClusters.list().map((wc) => this.sync(wc.metadata.name)));
    this.healthTimer = setInterval(() => {
      for (const wc of this.workerClusters.list()) void this.sync(wc.metadata.name);
    }, this.options.healthIntervalMs ?? 10_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.healthTimer);
    await this.workerClusters.stop();
    await Promise.all([...this.entries.values()].map((entry) => entry.mirrors?.stop()));
  }

  /** Every registered cluster, connected or not. */
  connections(): WorkerConnection[] {
    return [...this.entries.values()].filter((e) => e.batch).map((e) => this.view(e));
  }

  /** Names and states of every registered WorkerCluster, including those that never connected. */
  states(): Array<{ name: string; state: WorkerConnectionState }> {
    return this.workerClusters.list().map((wc) => ({
      name: wc.metadata.name,
      state: this.entries.get(wc.metadata.name)?.state ?? {
        active: false,
        reason: activeReasons.connecting,
        message: 'not checked yet',
      },
    }));
  }

  get(name: string): WorkerConnection | undefined {
    const entry = this.entries.get(name);
    return entry?.batch ? this.view(entry) : undefined;
  }

  private view(entry: ConnectionEntry): WorkerConnection {
    return {
      name: entry.name,
      state: entry.state,
      batch: entry.batch!,
      core: entry.core!,
      mirrors: entry.mirrors!,
      kubernetesVersion: entry.kubernetesVersion,
    };
  }

  /** One sync per cluster at a time; a request during a sync is served by that sync. */
  private sync(name: string): Promise<void> {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { name, state: { active: false, reason: activeReasons.connecting, message: 'connecting' } };
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
    const workerCluster = this.workerClusters.get(entry.name);
    if (!workerCluster) return;
    const wasActive = entry.state.active;
    entry.state = await this.probe(entry, workerCluster, log);
    if (entry.state.active !== wasActive) {
      log.info(
        { active: entry.state.active, reason: entry.state.reason, msg2: entry.state.message },
        'cluster availability changed',
      );
      this.options.onAvailabilityChange?.(entry.name, entry.state.active);
    }
    await this.writeStatus(entry, workerCluster, log);
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
      this.disconnect(entry);
      if (isNotFound(err)) {
        return inactive(
          activeReasons.secretNotFound,
          `Secret ${secretRef} not found: create it with the kubeconfig under key ${key}`,
        );
      }
      return inactive(activeReasons.connecting, `cannot read Secret ${secretRef}: ${describeApiError(err)}`);
    }
    if (secret.metadata?.resourceVersion !== entry.secretVersion) {
      this.disconnect(entry);
      const data = secret.data?.[key];
      if (!data) {
        return inactive(
          activeReasons.kubeconfigKeyMissing,
          `Secret ${secretRef} has no key ${JSON.stringify(key)}`,
        );
      }
      const loaded = loadWorkerKubeconfig(Buffer.from(data, 'base64').toString('utf8'));
      if (!loaded.ok) return inactive(loaded.reason, `Secret ${secretRef}: ${loaded.message}`);
      entry.secretVersion = secret.metadata?.resourceVersion;
      entry.kubeConfig = loaded.kubeConfig;
      entry.server = loaded.server;
      entry.batch = loaded.kubeConfig.makeApiClient(BatchV1Api);
      entry.core = loaded.kubeConfig.makeApiClient(CoreV1Api);
      entry.kubernetesVersion = undefined;
      log.info({ server: loaded.server }, 'loaded kubeconfig');
    }
    const server = entry.server!;
    try {
      // One call proves the address, TLS, credentials and the permission we need most.
      await withTimeout(
        entry.batch!.listJobForAllNamespaces({ labelSelector: this.mirrorSelector(), limit: 1 }),
        probeTimeoutMs,
        server,
      );
      if (!entry.kubernetesVersion) {
        const version = await withTimeout(
          entry.kubeConfig!.makeApiClient(VersionApi).getCode(),
          probeTimeoutMs,
          server,
        );
        entry.kubernetesVersion = version.gitVersion;
        const kubeSystem = await withTimeout(
          entry.core!.readNamespace({ name: 'kube-system' }),
          probeTimeoutMs,
          server,
        ).catch(
          () => undefined, // without permission to read it, duplicates cannot be detected: not fatal
        );
        entry.clusterUid = kubeSystem?.metadata?.uid;
      }
    } catch (err) {
      const { reason, message } = classifyConnectionError(err, server);
      return inactive(reason, message);
    }
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
      this.disconnect(entry);
      return inactive(
        activeReasons.duplicateCluster,
        `${server} is the same cluster as WorkerCluster ${twin.name}; delete one of the two registrations`,
      );
    }
    entry.activeSince ??= Date.now();
    if (!entry.mirrors) this.startMirrorInformer(entry, log);
    return {
      active: true,
      reason: activeReasons.connected,
      message: `connected to ${server} (${entry.kubernetesVersion})`,
    };
  }

  mirrorSelector(): string {
    return `jobrelay.dev/origin=${this.options.originId}`;
  }

  private startMirrorInformer(entry: ConnectionEntry, log: Logger): void {
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
      onEvent: (event) => this.options.onMirrorEvent(cluster, event),
    });
    entry.mirrors.start();
  }

  private disconnect(entry: ConnectionEntry): void {
    void entry.mirrors?.stop();
    entry.mirrors = undefined;
    entry.batch = undefined;
    entry.core = undefined;
    entry.kubeConfig = undefined;
    entry.secretVersion = undefined;
    entry.kubernetesVersion = undefined;
    entry.clusterUid = undefined;
    entry.activeSince = undefined;
  }

  private async remove(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    await entry.syncing;
    this.disconnect(entry);
    this.entries.delete(name);
    this.options.onAvailabilityChange?.(name, false);
  }

  /** Activity for the printer column; counted from the mirror cache, no API call. */
  private activeJobs(entry: ConnectionEntry): number {
    return (entry.mirrors?.list() ?? []).filter((job) => !isFinished(job)).length;
  }

  private async writeStatus(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<void> {
    const { state } = entry;
    const previous = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
    const status = state.active ? 'True' : 'False';
    const activeJobs = this.activeJobs(entry);
    const signature = JSON.stringify([
      status,
      state.reason,
      state.message,
      activeJobs,
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
              kubernetesVersion: entry.kubernetesVersion,
              lastHeartbeatTime: state.active
                ? new Date(now).toISOString()
                : workerCluster.status?.lastHeartbeatTime,
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

function isFinished(job: V1Job): boolean {
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}
