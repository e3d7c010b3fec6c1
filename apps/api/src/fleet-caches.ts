// The management cluster's caches the API reads, and their lifecycle: one origin informer per
// dispatched kind (like the controller), the namespaces (their labels), the DispatchQueues and
// the PriorityClasses; and what is kept sorted or parsed over them until they change (every
// workload's list key, every queue's spec). Its own module because it is the API's one watch of
// the management cluster's objects (the WorkerClusters are the registry's): the views read it,
// and FleetView is told of each origin event, after these caches took it in, to log placements
// and tell its subscribers.
import { CachedPriorityClasses, type ParsedQueue, parseDispatchQueue } from '@jobrelay/admission';
import { type Namespace, namespaceInformer } from '@jobrelay/clusters';
import {
  type AnyWorkloadKindAdapter,
  claimedOriginInformer,
  type KindChoice,
  type KubeObject,
} from '@jobrelay/kinds';
import { type InformerEvent, objectKey, ResilientInformer } from '@jobrelay/kube';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sortKeys } from './pagination.ts';
import { dispatchQueueResource } from './routes/permissions.ts';

/** A dispatched object and the adapter of its kind. */
export interface DispatchedWorkload {
  adapter: AnyWorkloadKindAdapter;
  object: KubeObject;
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

/** The sort key of a workload in the list of every kind: by namespace, name, then kind. */
function listKey(kind: string, objectKey: string): string {
  return `${objectKey}/${kind}`;
}

export interface FleetCachesOptions {
  management: KubeConfig;
  /** The dispatched kinds, each with the managedBy value it claims: one origin informer per kind. */
  kinds: readonly KindChoice[];
  log: Logger;
  /** Told of every event of an origin informer, once the caches here hold the change. */
  onOriginEvent: (adapter: AnyWorkloadKindAdapter, event: InformerEvent<KubeObject>) => void;
}

export class FleetCaches {
  private readonly viewed = new Map<string, ViewedKind>();
  private readonly onOriginEvent: FleetCachesOptions['onOriginEvent'];
  /** The management cluster's namespaces (their labels): the Pod Security level a preview compares. */
  readonly namespaces: ResilientInformer<Namespace>;
  /**
   * The DispatchQueues. Not awaited at start: an API in front of a management cluster without the
   * CRD (or before it is installed) serves everything else, and the queue routes say they wait.
   */
  private readonly queueObjects: ResilientInformer<KubeObject>;
  /** Every queue parsed, once per change of any (their specs are small, their count too). */
  private parsedQueues: CachedQueue[] | undefined;
  /** PriorityClasses: a queue's pending workloads are shown in the controller's order (priority, then age). */
  private readonly priorityClassObjects: ResilientInformer<KubeObject>;
  readonly priorityClasses: CachedPriorityClasses;
  /** Every workload's list key (namespace/name/kind), sorted; dropped when a workload is added or removed. */
  private sortedWorkloadKeys: readonly string[] | undefined;

  constructor(options: FleetCachesOptions) {
    const { management, log } = options;
    this.onOriginEvent = options.onOriginEvent;
    for (const { adapter, managedBy } of options.kinds) {
      const origins = claimedOriginInformer({
        adapter,
        managedBy,
        kubeConfig: management,
        name: `dispatched ${adapter.resource.kind}s`,
        log,
        onEvent: (event) => this.originChanged(adapter, event),
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
  }

  /** Starts every informer: the origins first, then namespaces, DispatchQueues and PriorityClasses. */
  start(): void {
    for (const kind of this.viewed.values()) kind.origins.start();
    this.namespaces.start();
    this.queueObjects.start();
    this.priorityClassObjects.start();
  }

  /** The origins of every kind and the namespaces listed (not the DispatchQueues: see queueObjects). */
  async waitForSync(): Promise<void> {
    await Promise.all([
      ...[...this.viewed.values()].map((kind) => kind.origins.waitForSync()),
      this.namespaces.waitForSync(),
    ]);
  }

  async stop(): Promise<void> {
    await Promise.all([
      ...[...this.viewed.values()].map((kind) => kind.origins.stop()),
      this.namespaces.stop(),
      this.queueObjects.stop(),
      this.priorityClassObjects.stop(),
    ]);
  }

  /** Whether the origins of every kind were listed. */
  get originsSynced(): boolean {
    return [...this.viewed.values()].every((kind) => kind.origins.hasSynced);
  }

  // --- workloads of every dispatched kind ---

  /** The dispatched object of that kind (adapter name), if any. */
  workload(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.viewed.get(kind)?.origins.get(`${namespace}/${name}`);
  }

  /** Every dispatched workload of these kinds. */
  workloads(adapters: readonly AnyWorkloadKindAdapter[]): DispatchedWorkload[] {
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

  private originChanged(adapter: AnyWorkloadKindAdapter, event: InformerEvent<KubeObject>): void {
    // The informer's cache already holds the change: a new or removed key re-sorts on next use.
    if (event.type === 'delete' || !event.previous) {
      const viewed = this.viewed.get(adapter.name);
      if (viewed) viewed.sortedKeys = undefined;
      this.sortedWorkloadKeys = undefined;
    }
    this.onOriginEvent(adapter, event);
  }
}
