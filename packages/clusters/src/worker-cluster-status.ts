// The registry's writes of WorkerCluster status: the Active condition, the heartbeat,
// activeWorkloads, the served kinds and the capacity published for the other replicas and the
// API; and how a registry that does not write reads the Active condition the leader wrote
// (withLeaderCondition). Its own module because it is the registry's one writer to the
// management cluster, with its own pacing (heartbeat, capacity writes spaced and coalesced, one
// write in flight per cluster): connecting (worker-connections.ts) and watching
// (worker-watches.ts) only ask for a write.
import { isNotFound, mergePatch, type ResilientInformer } from '@jobrelay/kube';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { type CapacityStatus, capacityMergePatch, capacityStatusOf } from './capacity-summary.ts';
import {
  type ActiveReason,
  activeReasons,
  type WorkerCluster,
  type WorkerClusterCondition,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from './worker-cluster.ts';
import type { WorkerClusterRegistryOptions } from './worker-cluster-registry-options.ts';
import {
  type ConnectionEntry,
  isConnected,
  type RegistryMode,
  type WorkerConnectionState,
} from './worker-connection-entry.ts';

/** Rewrite lastHeartbeatTime at most this often: every write costs the management apiserver. */
const heartbeatWriteIntervalMs = 30_000;
/**
 * Publish a cluster's capacity at most this often (issue 31). Pods come and go by the hundred a
 * second in a burst, and every write reaches each replica and API watching WorkerClusters;
 * changes in between are coalesced into the next write, never dropped.
 */
const capacityWriteIntervalMs = 2_000;

/** Writes the status of each WorkerCluster from its connection entry, while the registry writes. */
export class WorkerClusterStatusWriter {
  private readonly options: Pick<WorkerClusterRegistryOptions, 'log' | 'assumedRequests'>;
  private readonly clock: { now(): number };
  private readonly mode: RegistryMode;
  /** The registry's entries: a write is for an entry still there (not one removed meanwhile). */
  private readonly entries: ReadonlyMap<string, ConnectionEntry>;
  /** The WorkerCluster informer: each write starts from the object as it is then. */
  private readonly workerClusters: Pick<ResilientInformer<WorkerCluster>, 'get'>;
  private readonly customObjects: CustomObjectsApi;

  constructor(parts: {
    options: Pick<WorkerClusterRegistryOptions, 'log' | 'assumedRequests'>;
    clock: { now(): number };
    mode: RegistryMode;
    entries: ReadonlyMap<string, ConnectionEntry>;
    workerClusters: Pick<ResilientInformer<WorkerCluster>, 'get'>;
    customObjects: CustomObjectsApi;
  }) {
    this.options = parts.options;
    this.clock = parts.clock;
    this.mode = parts.mode;
    this.entries = parts.entries;
    this.workerClusters = parts.workerClusters;
    this.customObjects = parts.customObjects;
  }

  /**
   * A capacity change is published at most every capacityWriteIntervalMs per cluster: the first
   * after a quiet spell at once, the rest coalesced into one write when the interval is up.
   */
  scheduleCapacityWrite(entry: ConnectionEntry): void {
    if (this.mode.stopped || entry.capacityWriteTimer || !this.mode.writes()) return;
    const sinceLast = this.clock.now() - (entry.lastCapacityWrite?.at ?? Number.NEGATIVE_INFINITY);
    entry.capacityWriteTimer = setTimeout(
      () => {
        entry.capacityWriteTimer = undefined;
        const workerCluster = this.workerClusters.get(entry.name);
        if (workerCluster && this.entries.get(entry.name) === entry)
          void this.writeStatus(entry, workerCluster, this.options.log.child({ cluster: entry.name }));
      },
      Math.max(0, capacityWriteIntervalMs - sinceLast),
    );
    // A pending write must not keep a stopping process alive.
    entry.capacityWriteTimer.unref?.();
  }

  /** Drops every capacity write waiting for its turn (the registry stops). */
  cancelCapacityWrites(): void {
    for (const entry of this.entries.values()) clearTimeout(entry.capacityWriteTimer);
  }

  /**
   * One status write per cluster at a time; asked for while one is in flight, a single write
   * follows it, from the state as it is then. Without this the spacing of capacity writes did
   * not hold under load: it counts from the last write answered, so every capacity change while
   * a write waited on a busy apiserver started another, and more writes made it busier (42 a
   * second over 10 workers in the 100,000-workload fleet run, not the 5 the spacing allows).
   */
  writeStatus(entry: ConnectionEntry, workerCluster: WorkerCluster, log: Logger): Promise<void> {
    if (entry.statusWriting) {
      entry.statusWriteAgain = true;
      return entry.statusWriting;
    }
    const writing = this.writeStatusOnce(entry, workerCluster, log).finally(() => {
      entry.statusWriting = undefined;
      if (!entry.statusWriteAgain) return;
      entry.statusWriteAgain = false;
      const latest = this.workerClusters.get(entry.name);
      if (latest && !this.mode.stopped && this.entries.get(entry.name) === entry)
        void this.writeStatus(entry, latest, log);
    });
    entry.statusWriting = writing;
    return writing;
  }

  private async writeStatusOnce(
    entry: ConnectionEntry,
    workerCluster: WorkerCluster,
    log: Logger,
  ): Promise<void> {
    // The one place the registry writes to the management cluster.
    if (!this.mode.writes()) return;
    const { state } = entry;
    const previous = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
    const status = state.active ? 'True' : 'False';
    const activeWorkloads = this.activeWorkloads(entry);
    const now = this.clock.now();
    const capacity = this.capacityToWrite(entry, now);
    // Kept as last found while not connected, like the version.
    const servedKinds = entry.servedKinds ? [...entry.servedKinds] : undefined;
    const signature = JSON.stringify([
      status,
      state.reason,
      state.message,
      activeWorkloads,
      capacity.key,
      servedKinds,
      state.attempts,
      workerCluster.metadata.generation,
    ]);
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
              activeWorkloads,
              kubernetesVersion: entry.kubernetesVersion ?? workerCluster.status?.kubernetesVersion,
              ...(servedKinds ? { servedKinds } : {}),
              lastHeartbeatTime: state.active
                ? new Date(now).toISOString()
                : workerCluster.status?.lastHeartbeatTime,
              connectionAttempts: state.attempts,
              nextAttemptTime: state.active ? null : new Date(state.nextAttemptAt).toISOString(),
              ...(capacity.write === undefined
                ? {}
                : {
                    capacity: capacity.write
                      ? capacityMergePatch(workerCluster.status?.capacity, capacity.write)
                      : null,
                  }),
              conditions: [...others, condition],
            },
          },
        },
        mergePatch,
      );
      entry.lastStatusWrite = { at: now, signature };
      if (capacity.write) entry.lastCapacityWrite = { at: now, key: capacity.key };
    } catch (err) {
      if (!isNotFound(err)) log.warn({ err }, 'could not write WorkerCluster status');
    }
  }

  /** Activity for the printer column: unfinished mirrors of every kind, from the caches (no API call). */
  private activeWorkloads(entry: ConnectionEntry): number {
    let unfinished = 0;
    for (const { count } of entry.unfinishedMirrors?.values() ?? []) unfinished += count;
    return unfinished;
  }

  /**
   * What to write as the capacity: the summary of this registry's own watches; nothing (leave
   * the published one, its observedTime tells its age) while connected and not synced yet, or
   * when a different one was published less than capacityWriteIntervalMs ago (a write is then
   * scheduled); null once not connected.
   */
  private capacityToWrite(
    entry: ConnectionEntry,
    now: number,
  ): { write?: CapacityStatus | null; key: string } {
    if (!isConnected(entry)) return { write: null, key: 'null' };
    // Left out of the signature too: nothing to write until it has synced.
    if (!entry.capacity?.hasSynced) return { key: 'not synced' };
    const mirrors = [...entry.mirrors.values()];
    const status = capacityStatusOf(entry.capacity.snapshot(), {
      // Only the pods of our mirrors (by their namespace/name), never another tenant's.
      isMirror: (owner) => mirrors.some((informer) => informer.get(owner) !== undefined),
      assumed: this.options.assumedRequests?.(entry.name) ?? {},
      observedAt: now,
    });
    const { observedTime: _, ...comparable } = status;
    const key = JSON.stringify(comparable);
    const last = entry.lastCapacityWrite;
    if (last && last.key !== key && now - last.at < capacityWriteIntervalMs) {
      this.scheduleCapacityWrite(entry);
      // As published: other changes to the status need not wait, and do not count as this one.
      return { key: last.key };
    }
    return { write: status, key };
  }
}

/** A capacity write waiting for its turn is dropped (the pod and node watches it came from stopped). */
export function cancelCapacityWrite(entry: ConnectionEntry): void {
  clearTimeout(entry.capacityWriteTimer);
  entry.capacityWriteTimer = undefined;
}

/**
 * A non-writing registry's view of a cluster it reaches itself: not Active when the Active
 * condition the leader wrote says otherwise (with the leader's reason). Without a written
 * condition (no leader has written yet), its own view stands.
 */
export function withLeaderCondition(
  local: WorkerConnectionState,
  workerCluster: Pick<WorkerCluster, 'status'>,
): WorkerConnectionState {
  const written = workerCluster.status?.conditions?.find((c) => c.type === 'Active');
  if (!local.active || !written || written.status === 'True') return local;
  const known = Object.values(activeReasons) as string[];
  return {
    active: false,
    reason: known.includes(written.reason ?? '')
      ? (written.reason as ActiveReason)
      : activeReasons.unreachable,
    message: `${written.message ?? 'not Active'} (as the leader found it; this replica reaches it)`,
  };
}
