// The watches of one connected worker: one label-selected watch of our mirrors per served kind
// (with its count of unfinished mirrors), the watch of its namespaces, and, in the registry that
// writes only (the leader), the pod and node watches of capacity; and how many streams they hold
// (`jobrelay_worker_watch_streams`). Its own module because which watches run changes for its
// own reasons (the kinds a worker serves, the lead turning), apart from whether the worker
// answers (worker-connections.ts) and from what is written about it (worker-cluster-status.ts).
import { apiVersionOf, collectionPath, type KubeObject } from '@jobrelay/kinds';
import { ResilientInformer } from '@jobrelay/kube';
import type { Logger } from 'pino';
import { mirrorSelectorFor } from './probe-worker.ts';
import { WorkerCapacity } from './worker-capacity.ts';
import type { WorkerClusterRegistryOptions } from './worker-cluster-registry-options.ts';
import { cancelCapacityWrite, type WorkerClusterStatusWriter } from './worker-cluster-status.ts';
import type { ConnectionEntry, RegistryMode } from './worker-connection-entry.ts';
import { namespaceInformer } from './worker-namespaces.ts';

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

type WatchOptions = Pick<
  WorkerClusterRegistryOptions,
  'kinds' | 'originId' | 'onMirrorEvent' | 'onNamespaceEvent' | 'onCapacityChange'
>;

/** Starts and aligns the watches of each connection entry (detachWatches takes them off a closing one). */
export class WorkerWatches {
  private readonly options: WatchOptions;
  private readonly mode: RegistryMode;
  /** Publishes what the pod and node watches report (the leader's, spaced writes). */
  private readonly status: WorkerClusterStatusWriter;

  constructor(parts: { options: WatchOptions; mode: RegistryMode; status: WorkerClusterStatusWriter }) {
    this.options = parts.options;
    this.mode = parts.mode;
    this.status = parts.status;
  }

  /** One mirror watch per served kind (a kind no longer served loses its watch), and the capacity watches. */
  startWatches(entry: ConnectionEntry, log: Logger): void {
    // Closed while the checks ran (the registry stopped, or the Secret changed): nothing to
    // watch with, and watches started now would outlive the connection.
    if (this.mode.stopped || !entry.kubeConfig) return;
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
        labelSelector: mirrorSelectorFor(this.options.originId),
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
  alignCapacityWatch(entry: ConnectionEntry, log: Logger): void {
    const cluster = entry.name;
    if (this.mode.watchesCapacity() && !this.mode.stopped && entry.kubeConfig && !entry.capacity) {
      entry.capacity = new WorkerCapacity({
        cluster,
        kubeConfig: entry.kubeConfig,
        log,
        onChange: () => {
          this.options.onCapacityChange?.(cluster);
          this.status.scheduleCapacityWrite(entry);
        },
      });
      entry.capacity.start();
      log.info('watching pods and nodes for capacity');
    } else if (!this.mode.watchesCapacity() && entry.capacity) {
      const capacity = entry.capacity;
      entry.capacity = undefined;
      cancelCapacityWrite(entry);
      void capacity.stop();
      log.info('not leading: pod and node watches stopped (capacity is read from the WorkerCluster status)');
    }
  }
}

/**
 * Takes the watches off a connection being closed, with what was counted through them, and
 * gives back how to stop them: the caller finishes closing the entry first, then awaits that.
 */
export function detachWatches(entry: ConnectionEntry): () => Promise<unknown> {
  const { mirrors, capacity, namespaces } = entry;
  entry.mirrors = undefined;
  entry.unfinishedMirrors = undefined;
  entry.capacity = undefined;
  cancelCapacityWrite(entry);
  entry.namespaces = undefined;
  return () =>
    Promise.all(
      [...(mirrors?.values() ?? [])]
        .map((informer) => informer.stop())
        .concat(capacity?.stop() ?? [], namespaces?.stop() ?? []),
    );
}

/** Watch streams the entries hold now, by resource. */
export function watchStreamsOf(entries: Iterable<ConnectionEntry>): WorkerWatchStreams {
  const streams: WorkerWatchStreams = { pods: 0, nodes: 0, mirrors: 0, namespaces: 0 };
  for (const entry of entries) {
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
