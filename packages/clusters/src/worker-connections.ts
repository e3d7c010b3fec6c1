// The connection to each worker: one sync at a time per cluster, the attempt itself (read the
// kubeconfig Secret, vet and load it, the checks, the rule between two registrations of one
// cluster), its backoff through nextConnectionState, `beforeActive`, and closing (disconnect,
// remove). Its own module because it is the I/O behind connection-state.ts's transitions, the
// one part that decides whether a worker is Active: the facade (worker-cluster-registry.ts)
// routes WorkerCluster events here, and an attempt starts the watches (worker-watches.ts) and
// ends with a status write (worker-cluster-status.ts).
import { apiVersionOf } from '@jobrelay/kinds';
import {
  describeApiError,
  isNotFound,
  makeClusterApiClients,
  type ResilientInformer,
  withTimeout,
} from '@jobrelay/kube';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  attemptDue,
  type BackoffConfig,
  type ConnectionEvent,
  initialConnectionState,
  nextConnectionState,
  olderRegistration,
  type RemovedEvent,
} from './connection-state.ts';
import { loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
import { checkWorker, defaultProbeTimeoutMs, mirrorSelectorFor } from './probe-worker.ts';
import { type ActiveReason, activeReasons, type WorkerCluster } from './worker-cluster.ts';
import type { WorkerClusterRegistryOptions } from './worker-cluster-registry-options.ts';
import type { WorkerClusterStatusWriter } from './worker-cluster-status.ts';
import { type ConnectionEntry, connectionView, type RegistryMode } from './worker-connection-entry.ts';
import { detachWatches, type WorkerWatches } from './worker-watches.ts';

/** A health check that takes longer than this marks the cluster Unreachable. */
const probeTimeoutMs = defaultProbeTimeoutMs;
/** First retry of a failed connection; doubles per attempt up to reconnectMaxBackoffMs. */
const reconnectInitialBackoffMs = 1_000;
/** A worker that does not answer is checked again at least this often (connection-state.ts says why). */
const unreachableMaxBackoffMs = 4_000;

type ProbeOutcome = { ok: true; message: string } | { ok: false; reason: ActiveReason; message: string };

type ConnectionOptions = Pick<
  WorkerClusterRegistryOptions,
  | 'kinds'
  | 'systemNamespace'
  | 'originId'
  | 'log'
  | 'reconnectMaxBackoffMs'
  | 'clientRateLimit'
  | 'kubeconfigPolicy'
  | 'onAvailabilityChange'
  | 'onWorkerApiResponse'
  | 'beforeActive'
>;

/** Connects, checks, backs off and closes the registry's entries, one cluster at a time each. */
export class WorkerConnections {
  private readonly options: ConnectionOptions;
  private readonly clock: { now(): number };
  private readonly backoff: BackoffConfig;
  private readonly mode: RegistryMode;
  /** The registry's entries: a sync makes a cluster's, a removal drops it, and the twin rule reads them all. */
  private readonly entries: Map<string, ConnectionEntry>;
  /** The WorkerCluster informer: each attempt starts from the object as it is then. */
  private readonly workerClusters: Pick<ResilientInformer<WorkerCluster>, 'get'>;
  /** The management cluster's core API, where the kubeconfig Secrets are read. */
  private readonly managementCore: CoreV1Api;
  private readonly watches: WorkerWatches;
  private readonly status: WorkerClusterStatusWriter;

  constructor(parts: {
    options: ConnectionOptions;
    clock: { now(): number };
    mode: RegistryMode;
    entries: Map<string, ConnectionEntry>;
    workerClusters: Pick<ResilientInformer<WorkerCluster>, 'get'>;
    managementCore: CoreV1Api;
    watches: WorkerWatches;
    status: WorkerClusterStatusWriter;
  }) {
    this.options = parts.options;
    this.clock = parts.clock;
    this.backoff = {
      initialMs: reconnectInitialBackoffMs,
      maxMs: parts.options.reconnectMaxBackoffMs ?? 5 * 60_000,
      unreachableMaxMs: unreachableMaxBackoffMs,
    };
    this.mode = parts.mode;
    this.entries = parts.entries;
    this.workerClusters = parts.workerClusters;
    this.managementCore = parts.managementCore;
    this.watches = parts.watches;
    this.status = parts.status;
  }

  /** The one way a connection's state changes. */
  transition(
    entry: ConnectionEntry,
    event: Exclude<ConnectionEvent, RemovedEvent>,
    now = this.clock.now(),
  ): void {
    entry.state = nextConnectionState(entry.state, event, now, this.backoff);
  }

  /** One sync per cluster at a time; a request during a sync is served by that sync. */
  sync(name: string): Promise<void> {
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
    if (this.mode.stopped) return;
    const log = this.options.log.child({ cluster: entry.name });
    const workerCluster = this.workerClusters.get(entry.name);
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
    if (outcome.ok && !wasActive && this.options.beforeActive && this.mode.writes()) {
      try {
        // Stale mirrors go before anything new happens there.
        await withTimeout(connectionView(entry).waitForMirrors(), 30_000, `${entry.name} mirror list`);
        await this.options.beforeActive(connectionView(entry));
      } catch (err) {
        log.warn({ err }, 'cleanup before activation failed; will retry');
        this.transition(entry, { type: 'cleanup-failed' });
        return this.status.writeStatus(entry, workerCluster, log);
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
    await this.status.writeStatus(entry, workerCluster, log);
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
      mirrorSelector: mirrorSelectorFor(this.options.originId),
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
    this.watches.startWatches(entry, log);
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

  /** Closes the connection: clients, watches, and what was learned through them. */
  async disconnect(entry: ConnectionEntry): Promise<void> {
    const stopWatches = detachWatches(entry);
    entry.clients = undefined;
    entry.kubeConfig = undefined;
    entry.secretVersion = undefined;
    entry.kubernetesVersion = undefined;
    entry.clusterUid = undefined;
    entry.servedKinds = undefined;
    entry.permissionsChecked = undefined;
    this.transition(entry, { type: 'closed' });
    await stopWatches();
  }

  async remove(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    await entry.syncing;
    await this.disconnect(entry);
    if (nextConnectionState(entry.state, { type: 'removed' }, this.clock.now(), this.backoff) === undefined)
      this.entries.delete(name);
    this.options.onAvailabilityChange?.(name, false);
  }
}

function failed(reason: ActiveReason, message: string): ProbeOutcome {
  return { ok: false, reason, message };
}

/** Comparable form of a served-kinds set (undefined: not discovered). */
function servedKindsKey(kinds: ReadonlySet<string> | undefined): string | undefined {
  return kinds ? [...kinds].join(',') : undefined;
}
