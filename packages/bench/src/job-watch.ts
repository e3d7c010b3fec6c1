import { performance } from 'node:perf_hooks';
import { UndiciWatch } from '@jobrelay/kube';
import { BatchV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { BenchJob } from './bench-jobs.ts';

/** One Job as seen by a watch, and when (performance.now() of its arrival here). */
export interface SeenJob {
  at: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  job: BenchJob;
}

/**
 * Watches the Jobs of one namespace (optionally label-selected) from now on and hands every
 * event to `onJob` with its arrival time. Starts from a fresh list's resourceVersion, so
 * only what happens after start() is seen; a watch the apiserver closes is resumed.
 */
export class JobWatch {
  private stopped = false;
  private abort: { abort(): void } | undefined;
  private resourceVersion = '';
  /** The controller's own lean watch (one connection pool, kept across resumes): the benchmark's
   * observation costs the shared CPU as little as it can. */
  private readonly watcher: UndiciWatch;

  private readonly kubeConfig: KubeConfig;
  private readonly path: string;
  private readonly onJob: (seen: SeenJob) => void;
  private readonly labelSelector: string | undefined;

  constructor(kubeConfig: KubeConfig, path: string, onJob: (seen: SeenJob) => void, labelSelector?: string) {
    this.kubeConfig = kubeConfig;
    this.path = path;
    this.onJob = onJob;
    this.labelSelector = labelSelector;
    this.watcher = new UndiciWatch(kubeConfig);
  }

  async start(): Promise<void> {
    const namespace = /\/namespaces\/([^/]+)\/jobs$/.exec(this.path)?.[1];
    const api = this.kubeConfig.makeApiClient(BatchV1Api);
    const list = namespace
      ? await api.listNamespacedJob({ namespace, limit: 1, labelSelector: this.labelSelector })
      : await api.listJobForAllNamespaces({ limit: 1, labelSelector: this.labelSelector });
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    this.abort = await this.watcher.watch(
      this.path,
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        ...(this.labelSelector ? { labelSelector: this.labelSelector } : {}),
      },
      (type: string, job: BenchJob) => {
        if (job?.metadata?.resourceVersion) this.resourceVersion = job.metadata.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
          this.onJob({ at: performance.now(), type, job });
        }
      },
      () => {
        // Closed by the apiserver (timeout) or an error: resume where it stopped.
        if (!this.stopped) setTimeout(() => void this.watch().catch(() => {}), 100);
      },
    );
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}
