import type { Configuration, KubeConfig, Watch } from '@kubernetes/client-node';

/** What an informer needs of an object: its identity and version. */
export interface InformableObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { statusCodeOf } from './api-errors.ts';
import { sharedPoolConfiguration } from './cluster-api-clients.ts';
import { getPlainJson } from './plain-json-get.ts';
import { StringInterner } from './string-interner.ts';
import { UndiciWatch } from './undici-watch.ts';

export type InformerEvent<T> =
  | { type: 'upsert'; object: T; previous: T | undefined }
  | { type: 'delete'; object: T };

export interface ResilientInformerOptions<T extends InformableObject> {
  /** For logs: what this informer watches, e.g. `worker-1 mirror Jobs`. */
  name: string;
  kubeConfig: KubeConfig;
  /**
   * The kind listed, e.g. `batch/v1` `Job`: set on each listed object, which a list's items
   * carry no more than a watch's objects lack, so both read alike.
   */
  apiVersion: string;
  kind: string;
  /**
   * The collection's URL path, listed and watched, e.g. `/apis/batch/v1/jobs` (every
   * namespace) or `/apis/batch/v1/namespaces/team-a/jobs`. Objects stay plain JSON, times as
   * RFC 3339 strings (`PlainJson`), whatever the kind.
   */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Objects for which this returns false are not kept (memory stays proportional to what
   * we manage); one that stops matching is reported as deleted.
   */
  keep?: (object: T) => boolean;
  /**
   * What the cache keeps of each object it keeps (decided on the whole object): the fields its
   * readers use, so memory goes to those alone. Every reader, `onEvent` included, sees only
   * this view. It may change the object in place.
   */
  view?: (object: T) => T;
  /** Called for every change. Must not throw and should only enqueue work. */
  onEvent: (event: InformerEvent<T>) => void;
  log: Logger;
  /** Server-side watch timeout; shorter than the client's 30 s inactivity abort. */
  watchTimeoutSeconds?: number;
  /** Objects per list request (default 500, as client-go's pager). */
  listPageSize?: number;
  /** Test seam; defaults to UndiciWatch (client-node's Watch contract, lighter). */
  watchFactory?: (kubeConfig: KubeConfig) => Pick<Watch, 'watch'>;
  /** The first retry's delay after a failure, doubling to 30 s (default 500 ms). */
  initialBackoffMs?: number;
  /** Test seam: one page of the list; defaults to a GET through a shared connection pool. */
  listPage?: (path: string, query: Record<string, string | number | undefined>) => Promise<ListPage<T>>;
}

/**
 * Why an informer listed its whole collection: its first list; its watch's version expired
 * (410 Gone, or newer than the apiserver has: etcd restored); or its watch could not resume
 * from where it was (`failedWatchesBeforeRelist` failures in a row).
 */
export type RelistReason = 'initial' | 'expired' | 'unresumable';

const relistTally = new Map<string, { informer: string; reason: RelistReason; count: number }>();

/**
 * Every informer's lists in this process, by informer name and reason (a process's metrics
 * expose them as `jobrelay_informer_relists_total`).
 */
export function informerRelists(): Array<{ informer: string; reason: RelistReason; count: number }> {
  return [...relistTally.values()].map((tally) => ({ ...tally }));
}

/**
 * `jobrelay_informer_relists_total{informer, reason}` in `registers`: read from the process's
 * tally at each scrape. Zero beyond the `initial` ones on a healthy fleet.
 */
export function informerRelistsCounter(registers: Registry[]): Counter<'informer' | 'reason'> {
  return new Counter({
    name: 'jobrelay_informer_relists_total',
    help:
      'Full lists of a collection by an informer, by informer and reason (initial; expired: 410 Gone or a ' +
      'version newer than the apiserver has; unresumable: its watch failed again and again). ' +
      'Nothing but initial on a healthy fleet: watches resume from the last version seen.',
    labelNames: ['informer', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const { informer, reason, count } of informerRelists()) this.inc({ informer, reason }, count);
    },
  });
}

/** A watch that fails this many times in a row from one version lists afresh. */
export const failedWatchesBeforeRelist = 5;

class WatchExpiredError extends Error {}

/** One table for every informer of the process: a namespace's name is shared by its origins and mirrors alike. */
const cachedStrings = new StringInterner();

const initialBackoffMs = 500;
const maxBackoffMs = 30_000;
/** Objects per list request (client-go's pager uses 500 too). */
const defaultListPageSize = 500;
/** A page of 500 Jobs is a few MB: generous, but not the minutes undici would wait. */
const listRequestTimeoutMs = 60_000;

/** A page of a list, as the apiserver sends it. */
export interface ListPage<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/**
 * Drops metadata.managedFields, in place. Nothing that reads a cache needs them, and they are
 * half of a cached Job's memory (about 7 KiB a Job with them, 3.5 without), so informers drop
 * them as client-go's TransformStripManagedFields does. A write built from a cached object
 * then carries none, which the apiserver reads as "leave them as they are".
 */
export function stripManagedFields<T extends InformableObject>(object: T): T {
  const metadata = object.metadata as { managedFields?: unknown } | undefined;
  if (metadata && 'managedFields' in metadata) delete metadata.managedFields;
  return object;
}

export function objectKey(object: InformableObject): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/**
 * A list+watch cache that never gives up: client-node's own informer stops on most errors
 * and watches can go quiet without an error (client-node #364, #596, #958). This one watches
 * with a server timeout and bookmarks, and resumes each watch from the last version seen, so
 * no event is missed and none replayed; it retries a failed watch with capped exponential
 * backoff from the same version, and lists the collection again only when that version
 * expired (410 Gone) or the watch cannot resume, as client-go's reflector does: never on a
 * timer (a relist of 100,000 Jobs every few minutes is load the apiserver and etcd feel; a
 * controller's periodic resync replays its cache instead). A relist reports what changed
 * meanwhile as events.
 */
export class ResilientInformer<T extends InformableObject> {
  private readonly options: ResilientInformerOptions<T>;
  private readonly cache = new Map<string, T>();
  private resourceVersion: string | undefined;
  private stopped = false;
  /** Lists and watches that failed since a watch was last accepted. */
  private failuresInARow = 0;
  private abortWatch: AbortController | undefined;
  private running: Promise<void> | undefined;
  private synced = false;
  private readonly syncWaiters: Array<() => void> = [];
  /** Why the next list is made (when `resourceVersion` is undefined). */
  private relistReason: RelistReason = 'initial';
  /** Requests over one reused connection pool and undici's `request`. */
  private lister: Configuration | undefined;
  /** One for the informer's life, so its watches reuse one connection pool. */
  private readonly watcher: Pick<Watch, 'watch'>;

  constructor(options: ResilientInformerOptions<T>) {
    this.options = options;
    this.watcher = options.watchFactory?.(options.kubeConfig) ?? new UndiciWatch(options.kubeConfig);
  }

  start(): void {
    if (!this.running) this.running = this.run();
  }

  /** Resolves once the first list has been stored. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Synced, and its last list or watch did not fail: the watch runs, so the permission to list
   * and watch holds right now. A health check may lean on it instead of listing again.
   */
  get watching(): boolean {
    return this.synced && !this.stopped && this.failuresInARow === 0;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abortWatch?.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const firstBackoffMs = this.options.initialBackoffMs ?? initialBackoffMs;
    let backoffMs = firstBackoffMs;
    let failedWatches = 0;
    while (!this.stopped) {
      const listing = this.resourceVersion === undefined;
      try {
        if (listing) await this.relist();
        await this.watchOnce();
        backoffMs = firstBackoffMs;
        failedWatches = 0;
      } catch (err) {
        if (this.stopped) break;
        this.failuresInARow += 1;
        if (err instanceof WatchExpiredError || statusCodeOf(err) === 410) {
          // Too old (compacted away, or newer than a restored etcd has): list at once.
          this.resourceVersion = undefined;
          this.relistReason = 'expired';
          failedWatches = 0;
          continue;
        }
        this.options.log.warn(
          { informer: this.options.name, err, retryInMs: backoffMs },
          listing ? 'list failed; retrying' : 'watch failed; resuming from the last version seen',
        );
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
        if (!listing) failedWatches += 1;
        // Again and again from one version: something else is wrong with it; list afresh.
        if (failedWatches >= failedWatchesBeforeRelist) {
          this.resourceVersion = undefined;
          this.relistReason = 'unresumable';
          failedWatches = 0;
        }
      }
    }
  }

  private async relist(): Promise<void> {
    const { apiVersion, kind, path, labelSelector, fieldSelector } = this.options;
    const listPage =
      this.options.listPage ??
      ((path: string, query: Record<string, string | number | undefined>) => {
        this.lister ??= sharedPoolConfiguration(this.options.kubeConfig, {
          requestTimeoutMs: listRequestTimeoutMs,
        });
        return getPlainJson<ListPage<T>>(this.lister, path, query);
      });
    const seen = new Set<string>();
    let resourceVersion: string | undefined;
    let continueToken: string | undefined;
    // In pages, as client-go's reflector lists: one response of every Job (10,000 of them are
    // tens of MB of JSON) would be parsed whole at once, and the process would keep the peak
    // as resident memory. The pages are one consistent snapshot; an expired continue token is
    // a 410, and the caller lists again from the start.
    do {
      const page = await listPage(path, {
        labelSelector,
        fieldSelector,
        limit: this.options.listPageSize ?? defaultListPageSize,
        continue: continueToken,
      });
      for (const object of (page.items ?? []) as Array<T & { apiVersion?: string; kind?: string }>) {
        object.apiVersion ??= apiVersion;
        object.kind ??= kind;
        seen.add(objectKey(object));
        this.store(object);
      }
      resourceVersion ??= page.metadata?.resourceVersion;
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken && !this.stopped);
    for (const [key, object] of this.cache) {
      if (!seen.has(key)) {
        this.cache.delete(key);
        this.emit({ type: 'delete', object });
      }
    }
    this.resourceVersion = resourceVersion;
    const tallyKey = `${this.options.name}\u0000${this.relistReason}`;
    const tally = relistTally.get(tallyKey);
    if (tally) tally.count += 1;
    else relistTally.set(tallyKey, { informer: this.options.name, reason: this.relistReason, count: 1 });
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  private store(object: T): void {
    stripManagedFields(object);
    const key = objectKey(object);
    const previous = this.cache.get(key);
    if (this.options.keep && !this.options.keep(object)) {
      if (previous) {
        this.cache.delete(key);
        this.emit({ type: 'delete', object: previous });
      }
      return;
    }
    if (previous?.metadata?.resourceVersion === object.metadata?.resourceVersion && previous) return;
    // Equal strings shared among every cache of the process (see StringInterner).
    const kept = cachedStrings.internWithin(this.options.view ? this.options.view(object) : object);
    this.cache.set(key, kept);
    this.emit({ type: 'upsert', object: kept, previous });
  }

  private emit(event: InformerEvent<T>): void {
    try {
      this.options.onEvent(event);
    } catch (err) {
      this.options.log.error({ informer: this.options.name, err }, 'informer event handler threw');
    }
  }

  private watchOnce(): Promise<void> {
    const watch = this.watcher;
    return new Promise<void>((resolve, reject) => {
      let failed: unknown;
      watch
        .watch(
          this.options.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            labelSelector: this.options.labelSelector,
            fieldSelector: this.options.fieldSelector,
            timeoutSeconds: this.options.watchTimeoutSeconds ?? 25,
          },
          (phase, apiObject) => {
            if (phase === 'ERROR') {
              const status = apiObject as {
                code?: number;
                details?: { causes?: Array<{ reason?: string }> };
              };
              // 410: compacted away. "Too large resource version": newer than the apiserver has
              // (an etcd restored from a backup); client-go lists again for both.
              const tooLarge = status.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge');
              failed =
                status.code === 410 || tooLarge
                  ? new WatchExpiredError('watch expired')
                  : new Error(JSON.stringify(apiObject));
              return;
            }
            const version = (apiObject as InformableObject).metadata?.resourceVersion;
            if (version) this.resourceVersion = version;
            if (phase === 'BOOKMARK') return;
            const object = apiObject as T;
            if (phase === 'DELETED') {
              const key = objectKey(object);
              const previous = this.cache.get(key);
              this.cache.delete(key);
              if (previous) this.emit({ type: 'delete', object });
            } else {
              this.store(object);
            }
          },
          (err) => {
            this.abortWatch = undefined;
            if (failed) reject(failed);
            else if (err && !this.stopped && (err as { name?: string }).name !== 'AbortError') {
              // The client's inactivity abort is a normal end: watch again from where we are.
              if ((err as { name?: string }).name === 'TimeoutError') resolve();
              else reject(err);
            } else resolve();
          },
        )
        .then((controller) => {
          // The apiserver accepted the watch: it may list and watch this collection now.
          this.failuresInARow = 0;
          this.abortWatch = controller;
          if (this.stopped) controller.abort();
        }, reject);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
