// What WorkerClusterRegistry is built with. Its own module because the connections, the
// watches and the status writes each take the few options they use (a Pick of this interface)
// while the facade that is built with them imports those modules: declared in the facade, the
// interface would tie each of them back into it (an import cycle, which the repository's
// structure test refuses).
import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import type { ClusterClientOptions, InformerEvent } from '@jobrelay/kube';
import type { Resources } from '@jobrelay/resources';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeconfigPolicy } from './load-worker-kubeconfig.ts';
import type { WorkerCluster } from './worker-cluster.ts';
import type { WorkerConnection } from './worker-connection-entry.ts';
import type { Namespace } from './worker-namespaces.ts';

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
