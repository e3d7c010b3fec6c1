import { performance } from 'node:perf_hooks';
import { type PlainJson, UndiciWatch } from '@jobrelay/kube';
import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { BenchJob } from './bench-jobs.ts';

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One object as seen by a watch, and when (performance.now() of its arrival here). */
interface SeenObject<T> {
  at: number;
  type: WatchEventType;
  object: T;
}

/** One Job as seen by a watch, and when (performance.now() of its arrival here). */
export interface SeenJob {
  at: number;
  type: WatchEventType;
  job: BenchJob;
}

/**
 * Watches a collection from now on and hands every event to `onEvent` with its arrival time.
 * Starts from `firstVersion` (a fresh list's resourceVersion), so only what happens after
 * start() is seen; a watch the apiserver closes is resumed where it stopped. Each watch asks to
 * be closed after 25 s (as the controller's informers do): the apiserver sends a bookmark just
 * before, so even a quiet collection resumes from a recent version. A version the apiserver no
 * longer has (410) is not retried: `relist` lists the collection again and hands over each
 * object as ADDED (its arrival time is the list's), else the watch starts afresh.
 */
class ResourceWatch<T extends { metadata?: { resourceVersion?: string } }> {
  private stopped = false;
  private abort: { abort(): void } | undefined;
  private resourceVersion = '';
  /** The controller's own lean watch (one connection pool, kept across resumes): the benchmark's
   * observation costs the shared CPU as little as it can. */
  private readonly watcher: UndiciWatch;
  private readonly path: string;
  private readonly selectors: { labelSelector?: string; fieldSelector?: string };
  private readonly firstVersion: () => Promise<string>;
  private readonly relist: (() => Promise<{ resourceVersion: string; items: T[] }>) | undefined;
  private readonly onEvent: (seen: SeenObject<T>) => void;

  constructor(options: {
    kubeConfig: KubeConfig;
    path: string;
    selectors: { labelSelector?: string; fieldSelector?: string };
    firstVersion: () => Promise<string>;
    relist?: () => Promise<{ resourceVersion: string; items: T[] }>;
    onEvent: (seen: SeenObject<T>) => void;
  }) {
    this.watcher = new UndiciWatch(options.kubeConfig);
    this.path = options.path;
    this.selectors = options.selectors;
    this.firstVersion = options.firstVersion;
    this.relist = options.relist;
    this.onEvent = options.onEvent;
  }

  async start(): Promise<void> {
    this.resourceVersion = await this.firstVersion();
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    let expired = false;
    this.abort = await this.watcher.watch(
      this.path,
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 25,
        ...(this.selectors.labelSelector ? { labelSelector: this.selectors.labelSelector } : {}),
        ...(this.selectors.fieldSelector ? { fieldSelector: this.selectors.fieldSelector } : {}),
      },
      (type: string, object: T & { code?: number }) => {
        if (type === 'ERROR') {
          if (object?.code === 410) expired = true;
          return;
        }
        if (object?.metadata?.resourceVersion) this.resourceVersion = object.metadata.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
          this.onEvent({ at: performance.now(), type, object });
        }
      },
      () => {
        // Closed by the apiserver (timeout) or an error: resume where it stopped, or from a new
        // list when that version is gone (retrying it would fail again at once, ten times a second).
        if (this.stopped) return;
        setTimeout(() => void (expired ? this.restart() : this.watch()).catch(() => this.retryLater()), 100);
      },
    );
  }

  private async restart(): Promise<void> {
    if (this.relist) {
      const { resourceVersion, items } = await this.relist();
      const at = performance.now();
      for (const object of items) this.onEvent({ at, type: 'ADDED', object });
      this.resourceVersion = resourceVersion;
    } else {
      this.resourceVersion = await this.firstVersion();
    }
    await this.watch();
  }

  private retryLater(): void {
    if (!this.stopped) setTimeout(() => void this.watch().catch(() => this.retryLater()), 1000);
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}

/** Watches the Jobs of one namespace, or of all (optionally label-selected), from now on. */
export class JobWatch {
  private readonly inner: ResourceWatch<BenchJob>;

  constructor(kubeConfig: KubeConfig, path: string, onJob: (seen: SeenJob) => void, labelSelector?: string) {
    const namespace = /\/namespaces\/([^/]+)\/jobs$/.exec(path)?.[1];
    const api = kubeConfig.makeApiClient(BatchV1Api);
    const list = (limit?: number) =>
      namespace
        ? api.listNamespacedJob({ namespace, limit, labelSelector })
        : api.listJobForAllNamespaces({ limit, labelSelector });
    this.inner = new ResourceWatch<BenchJob>({
      kubeConfig,
      path,
      selectors: labelSelector ? { labelSelector } : {},
      firstVersion: async () => (await list(1)).metadata?.resourceVersion ?? '',
      relist: async () => {
        const all = await list();
        return { resourceVersion: all.metadata?.resourceVersion ?? '', items: all.items as BenchJob[] };
      },
      onEvent: ({ at, type, object }) => onJob({ at, type, job: object }),
    });
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  stop(): void {
    this.inner.stop();
  }
}

/**
 * Watches every pod of a cluster through `fieldSelector`, from now on: the benchmark counts the
 * events of the very stream the controller's capacity cache reads.
 */
export class PodWatch {
  private readonly inner: ResourceWatch<PlainJson<V1Pod>>;

  constructor(kubeConfig: KubeConfig, fieldSelector: string, onPod: (type: WatchEventType) => void) {
    const api = kubeConfig.makeApiClient(CoreV1Api);
    this.inner = new ResourceWatch<PlainJson<V1Pod>>({
      kubeConfig,
      path: '/api/v1/pods',
      selectors: { fieldSelector },
      firstVersion: async () =>
        (await api.listPodForAllNamespaces({ limit: 1, fieldSelector })).metadata?.resourceVersion ?? '',
      onEvent: ({ type }) => onPod(type),
    });
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  stop(): void {
    this.inner.stop();
  }
}
