// One worker's connection as the registry's parts hold it (ConnectionEntry), what of it they
// hand out (WorkerConnection, its Active condition), and the registry's mode (running, writing).
// Its own module because the facade (worker-cluster-registry.ts), the connections, the watches
// and the status writes all read and change the same entry: kept below all four, none of them
// imports another only to reach it, and no two import each other.
import type { AnyWorkloadKindAdapter, KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import type { ClusterApiClients, ResilientInformer } from '@jobrelay/kube';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { ConnectionState } from './connection-state.ts';
import type { WorkerCapacity } from './worker-capacity.ts';
import type { ActiveReason } from './worker-cluster.ts';
import type { Namespace } from './worker-namespaces.ts';

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

export interface ConnectionEntry {
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

/**
 * Whether the registry still runs and whether it writes: both change while it runs (`stop()`,
 * the leader Lease turning), so each part asks at each step rather than keeping an answer.
 */
export class RegistryMode {
  /** Set by `stop()`: nothing is started or written for a cluster after it. */
  stopped = false;
  private readonly options: { observeOnly?: boolean; leading?: () => boolean };

  constructor(options: { observeOnly?: boolean; leading?: () => boolean }) {
    this.options = options;
  }

  writes(): boolean {
    return !this.options.observeOnly && (this.options.leading?.() ?? true);
  }

  /** Only the registry that writes watches pods and nodes: it alone places, and it publishes what it sees. */
  watchesCapacity(): boolean {
    return this.writes();
  }
}

/** Connected: its clients are made and its mirror and namespace watches run (the checks passed). */
export function isConnected(
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

export function conditionOf(state: ConnectionState): WorkerConnectionState {
  return { active: state.active, reason: state.reason, message: state.message };
}

/** What a connected entry is to the rest of the controller (`get()`, `connections()`, `beforeActive`). */
export function connectionView(entry: ConnectionEntry): WorkerConnection {
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
