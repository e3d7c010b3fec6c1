// Why a worker's own admission holds a mirror suspended, in its own words. A worker running
// Kueue keeps its reason on a Workload object (kueue.x-k8s.io) that Kueue makes for every job it
// manages, whatever its kind, in the job's namespace, controlled by the job and labelled
// `kueue.x-k8s.io/job-uid=<the job's UID>` (Kueue v0.17.0, jobframework's ConstructWorkload).
// The mirror's own Suspended condition says only that it is suspended; the Workload says which
// quota is short, and by how much.
//
// Read only for a mirror held so (the reconciler asks while the planner's rule says it is held),
// never on the reconcile's path: a read is started and the reconcile goes on with what is known
// (nothing at first, today's reason); its answer reconciles the origin again, and so does any
// reconcile of a held mirror that comes before the next read is due. One LIST per mirror
// version, at most one every `minIntervalMs`, and again every `refreshMs` while it stays held (the
// Workload changes without the mirror changing). A worker without Kueue (404: no Workload API)
// or whose identity may not read Workloads (403: the rule is optional) is remembered as such for
// `unavailableMs`: its held mirrors show the mirror's own reason, and it gets no request storm.
import { type Clock, describeApiError, statusCodeOf } from '@jobrelay/kube';
import type { Logger } from 'pino';

/** Kueue's label on a Workload naming the UID of the job it was made for. */
export const kueueJobUidLabel = 'kueue.x-k8s.io/job-uid';
export const kueueGroup = 'kueue.x-k8s.io';
/** Workload API versions tried, newest first: v1beta2 since Kueue v0.15, v1beta1 before (and still served). */
export const kueueWorkloadVersions = ['v1beta2', 'v1beta1'] as const;

/** A one-line reason is cut here: it goes into an annotation and an Event's note (at most 1 kB). */
const reasonLimit = 400;

interface WorkloadCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface KueueWorkload {
  metadata?: {
    labels?: Record<string, string>;
    ownerReferences?: Array<{ uid?: string }>;
    deletionTimestamp?: string;
  };
  status?: { conditions?: WorkloadCondition[] };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > reasonLimit ? `${line.slice(0, reasonLimit - 1)}…` : line;
}

function said(condition: WorkloadCondition | undefined): string | undefined {
  const text = condition?.message || condition?.reason;
  return text ? oneLine(text) : undefined;
}

/**
 * What one Kueue Workload says of why its job is not running, or undefined when nothing in it
 * explains a hold: QuotaReserved False (no quota yet: `couldn't assign flavors to pod set main:
 * insufficient unused quota ...`, or an inadmissible queue), else Admitted False while quota is
 * reserved (its admission checks), else Evicted True (preempted, deactivated, ...).
 */
export function workloadHoldReason(workload: KueueWorkload): string | undefined {
  const conditions = workload.status?.conditions ?? [];
  const find = (type: string) => conditions.find((c) => c.type === type);
  const quota = find('QuotaReserved');
  if (quota?.status === 'False') return said(quota);
  const admitted = find('Admitted');
  if (quota?.status === 'True' && admitted?.status === 'False') return said(admitted);
  const evicted = find('Evicted');
  if (evicted?.status === 'True') return said(evicted);
  return undefined;
}

/**
 * From a Workload list answer, the reason Kueue holds the job of UID `jobUid`, as the origin
 * shows it (`Kueue: <message>`), or undefined when its Workloads (made for that job: labelled or
 * owned by it, not being deleted) explain nothing (yet).
 */
export function kueueHoldReason(list: unknown, jobUid: string): string | undefined {
  const items = (list as { items?: unknown } | undefined)?.items;
  if (!Array.isArray(items)) return undefined;
  for (const workload of items as KueueWorkload[]) {
    const metadata = workload?.metadata;
    if (!metadata || metadata.deletionTimestamp) continue;
    const ofJob =
      metadata.labels?.[kueueJobUidLabel] === jobUid ||
      (metadata.ownerReferences ?? []).some((owner) => owner.uid === jobUid);
    if (!ofJob) continue;
    const reason = workloadHoldReason(workload);
    if (reason !== undefined) return `Kueue: ${reason}`;
  }
  return undefined;
}

/** One LIST of a worker's Kueue Workloads; undefined when the worker is not connected. */
export type ListWorkloads = (
  cluster: string,
  request: { version: string; namespace: string; labelSelector: string },
) => Promise<unknown> | undefined;

export interface WorkerAdmissionReasonsOptions {
  /** Through the worker's own (rate-limited) client in the cluster registry. */
  listWorkloads: ListWorkloads;
  clock: Clock;
  /** Reconcile the origin `key`, at once or after `afterMs`. */
  enqueue: (key: string, options?: { afterMs?: number }) => void;
  log: Logger;
  /** A held mirror's Workload is read again this often while it stays held (default 30 s). */
  refreshMs?: number;
  /** Never two reads for one mirror closer than this (default 2 s), whatever changes. */
  minIntervalMs?: number;
  /** A worker without Kueue's Workload API, or without the right to read it, is asked again after this (default 10 min). */
  unavailableMs?: number;
  /** Reads at once across every worker (default 4); more wait for a later reconcile. */
  maxInFlight?: number;
}

interface Entry {
  cluster: string;
  uid: string;
  /** The mirror version the last read was started for. */
  version: string | undefined;
  readAt: number | undefined;
  reason: string | undefined;
  /** Reads in a row that found nothing to say: the next waits longer. */
  misses: number;
  reading: boolean;
}

interface WorkerState {
  /** The Workload API version that answered. */
  version?: string;
  /** Not asked until then: no Kueue there, or not allowed to read its Workloads. */
  unavailableUntil?: number;
}

/** The worker's own admission's reasons for the mirrors it holds, by origin key (see the file's comment). */
export class WorkerAdmissionReasons {
  private readonly options: WorkerAdmissionReasonsOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly workers = new Map<string, WorkerState>();
  private inFlight = 0;

  constructor(options: WorkerAdmissionReasonsOptions) {
    this.options = options;
  }

  private get refreshMs(): number {
    return this.options.refreshMs ?? 30_000;
  }

  private get minIntervalMs(): number {
    return this.options.minIntervalMs ?? 2_000;
  }

  /** Mirrors whose reason is kept (held ones); each goes with `forget`. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * What the worker's admission says of `mirror`, held by it on `cluster`, as known now; a read
   * is started when one is due (never awaited: its answer reconciles `key` again).
   */
  reasonFor(
    key: string,
    cluster: string,
    mirror: { metadata?: { uid?: string; namespace?: string; resourceVersion?: string } },
  ): string | undefined {
    const uid = mirror.metadata?.uid;
    const namespace = mirror.metadata?.namespace;
    if (!uid || !namespace) return undefined;
    let entry = this.entries.get(key);
    if (!entry || entry.cluster !== cluster || entry.uid !== uid) {
      entry = {
        cluster,
        uid,
        version: undefined,
        readAt: undefined,
        reason: undefined,
        misses: 0,
        reading: false,
      };
      this.entries.set(key, entry);
    }
    const now = this.options.clock.now();
    const unavailableUntil = this.workers.get(cluster)?.unavailableUntil;
    if (unavailableUntil !== undefined && unavailableUntil > now) return entry.reason;
    if (!entry.reading) {
      const dueAt = this.dueAt(entry, mirror.metadata?.resourceVersion);
      if (dueAt <= now) this.read(key, entry, namespace, mirror.metadata?.resourceVersion, now);
      // Not due yet: this reconcile asks for the one that will read. A read's own request for
      // it may have been dropped: the queue keeps one timer per key, the earliest (a status
      // write's, say), and the reconcile that timer brings comes before the read is due.
      else this.options.enqueue(key, { afterMs: dueAt - now });
    }
    return entry.reason;
  }

  /** The mirror is no longer held (or gone): nothing is kept for it. */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /** How long until a read that found nothing may be tried again: 2 s, 4 s, 8 s ... at most `refreshMs`. */
  private retryMs(entry: Entry): number {
    return Math.min(this.refreshMs, this.minIntervalMs * 2 ** Math.max(0, entry.misses - 1));
  }

  /** When the next read for `entry` is due, the mirror being at `version`. */
  private dueAt(entry: Entry, version: string | undefined): number {
    if (entry.readAt === undefined) return Number.NEGATIVE_INFINITY;
    if (version !== entry.version) return entry.readAt + this.minIntervalMs;
    return (
      entry.readAt + Math.max(this.minIntervalMs, entry.misses > 0 ? this.retryMs(entry) : this.refreshMs)
    );
  }

  private read(key: string, entry: Entry, namespace: string, version: string | undefined, now: number): void {
    if (this.inFlight >= (this.options.maxInFlight ?? 4)) {
      this.options.enqueue(key, { afterMs: this.minIntervalMs });
      return;
    }
    entry.reading = true;
    entry.readAt = now;
    entry.version = version;
    this.inFlight += 1;
    void this.fetch(entry.cluster, namespace, entry.uid)
      .then((outcome) => this.settle(key, entry, outcome))
      .finally(() => {
        entry.reading = false;
        this.inFlight -= 1;
      });
  }

  private async fetch(
    cluster: string,
    namespace: string,
    uid: string,
  ): Promise<
    | { kind: 'read'; reason: string | undefined }
    | { kind: 'unavailable'; why: string }
    | { kind: 'failed'; why: string }
    | { kind: 'disconnected' }
  > {
    const state = this.workers.get(cluster) ?? {};
    this.workers.set(cluster, state);
    const versions = state.version ? [state.version] : kueueWorkloadVersions;
    for (const version of versions) {
      let pending: Promise<unknown> | undefined;
      try {
        pending = this.options.listWorkloads(cluster, {
          version,
          namespace,
          labelSelector: `${kueueJobUidLabel}=${uid}`,
        });
        if (!pending) return { kind: 'disconnected' };
        const list = await pending;
        state.version = version;
        return { kind: 'read', reason: kueueHoldReason(list, uid) };
      } catch (err) {
        const code = statusCodeOf(err);
        if (code === 404) continue;
        // Only the apiserver's own message: never the request or the client's configuration.
        if (code === 401 || code === 403) return { kind: 'unavailable', why: describeApiError(err) };
        return { kind: 'failed', why: describeApiError(err) };
      }
    }
    delete state.version;
    return { kind: 'unavailable', why: `no ${kueueGroup} Workload API (${versions.join(', ')})` };
  }

  private settle(
    key: string,
    entry: Entry,
    outcome: Awaited<ReturnType<WorkerAdmissionReasons['fetch']>>,
  ): void {
    const { log, clock, enqueue } = this.options;
    if (outcome.kind === 'disconnected') {
      entry.readAt = undefined;
      return;
    }
    if (outcome.kind === 'unavailable') {
      const state = this.workers.get(entry.cluster) ?? {};
      const fresh = state.unavailableUntil === undefined || state.unavailableUntil <= clock.now();
      state.unavailableUntil = clock.now() + (this.options.unavailableMs ?? 600_000);
      this.workers.set(entry.cluster, state);
      if (fresh)
        log.info(
          { cluster: entry.cluster, why: outcome.why },
          "the worker's Kueue Workloads cannot be read: mirrors held there show their own reason; asked again later",
        );
      return;
    }
    // Still the mirror asked about: one forgotten or replaced meanwhile takes nothing from it.
    if (this.entries.get(key) !== entry) return;
    if (outcome.kind === 'failed') {
      entry.misses += 1;
      log.debug(
        { cluster: entry.cluster, key, why: outcome.why },
        "reading the worker's Kueue Workload failed",
      );
      enqueue(key, { afterMs: this.retryMs(entry) });
      return;
    }
    if (outcome.reason === undefined) {
      // No Workload yet, or nothing in it explains the hold yet: the last reason stays, and
      // the next read comes a little later each time.
      entry.misses += 1;
      enqueue(key, { afterMs: this.retryMs(entry) });
      return;
    }
    entry.misses = 0;
    const changed = outcome.reason !== entry.reason;
    entry.reason = outcome.reason;
    if (changed) enqueue(key);
    // The Workload changes without its job changing: looked at again while the mirror is held.
    enqueue(key, { afterMs: this.refreshMs });
  }
}
