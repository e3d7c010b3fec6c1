// Mirrors that must go, by the one rule of classifyMirror: a mirror whose origin is gone, or
// that is not its origin's current placement (moved while its worker was away). Two loops ask
// it: a worker that (re)connects is cleaned before it is Active, and the leader's periodic
// garbage collection sweeps every Active worker. Apart from the controller's lifecycle because
// it is a part of its own: it reads the origin caches and the workers' mirror caches, and
// writes only mirror deletions.
import type { WorkerClusterRegistry, WorkerConnection } from '@jobrelay/clusters';
import type { KubeObject } from '@jobrelay/kinds';
import { objectKey } from '@jobrelay/kube';
import { placementRecordOf, type RecordKeyring } from '@jobrelay/placement';
import { classifyMirror, isDeletable } from '@jobrelay/planner';
import type { Logger } from 'pino';
import { type AnyDispatchedKind, originKey } from './dispatched-kinds.ts';
import { deleteMirror } from './mirror-operations.ts';
import type { OriginWriteExpectations } from './origin-write-expectations.ts';

export interface MirrorGarbageCollectorOptions {
  originId: string;
  kinds: ReadonlyMap<string, AnyDispatchedKind>;
  registry: Pick<WorkerClusterRegistry, 'connections'>;
  /** Mirrors are judged against the newest origin known, and expired expectations are dropped here. */
  ownWrites: Pick<OriginWriteExpectations, 'newestOrigin' | 'expireExpectations'>;
  recordKeys: RecordKeyring;
  log: Logger;
}

export class MirrorGarbageCollector {
  private readonly options: MirrorGarbageCollectorOptions;

  constructor(options: MirrorGarbageCollectorOptions) {
    this.options = options;
  }

  /**
   * Runs when a worker (re)connects, before it is Active: mirrors there that are not their
   * origin's current placement (moved while the worker was away, or deleted) go first.
   */
  async deleteStaleMirrorsOn(connection: WorkerConnection): Promise<void> {
    const { kinds, log } = this.options;
    await Promise.all([...kinds.values()].map((kind) => kind.origins.waitForSync()));
    let deleted = 0;
    for (const { kind, mirror, why } of [...this.deletableMirrors(connection)]) {
      await deleteMirror(kind.adapter.client(connection.clients), mirror);
      deleted += 1;
      log.info(
        { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, why },
        'deleted a stale mirror on a returning cluster',
      );
    }
    if (deleted > 0)
      log.info({ cluster: connection.name, deleted }, 'cleaned up before activating the cluster');
  }

  /** The leader's sweep of every Active worker; a deletion that fails is tried again next time. */
  async collectGarbage(): Promise<void> {
    const { kinds, registry, ownWrites, log } = this.options;
    ownWrites.expireExpectations();
    if (![...kinds.values()].every((kind) => kind.origins.hasSynced)) return;
    for (const connection of registry.connections()) {
      if (!connection.state.active) continue;
      for (const { kind, mirror, why } of [...this.deletableMirrors(connection)]) {
        try {
          await deleteMirror(kind.adapter.client(connection.clients), mirror);
          log.info(
            { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, why },
            'garbage-collected a mirror',
          );
        } catch (err) {
          log.warn(
            { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, err },
            'garbage collection failed',
          );
        }
      }
    }
  }

  /** Every mirror of every kind on a connection that the one rule says to delete. */
  private *deletableMirrors(
    connection: WorkerConnection,
  ): Iterable<{ kind: AnyDispatchedKind; mirror: KubeObject; why: string }> {
    const { kinds, ownWrites, originId, recordKeys } = this.options;
    for (const kind of kinds.values()) {
      for (const mirror of connection.mirrors(kind.adapter.name)?.list() ?? []) {
        // Judged against the newest origin known: a mirror created from a placement the cache
        // does not show yet (WrittenOrigins) is that placement's, not a stale one.
        const origin = ownWrites.newestOrigin(
          originKey(kind.adapter.name, objectKey(mirror)),
          kind.origins.get(objectKey(mirror)),
        );
        const mirrorClass = classifyMirror(mirror, {
          originId,
          cluster: connection.name,
          origin: origin
            ? { uid: origin.metadata!.uid!, placement: placementRecordOf(origin, recordKeys) }
            : undefined,
        });
        if (isDeletable(mirrorClass)) {
          yield {
            kind,
            mirror,
            why: mirrorClass.kind === 'stale' ? mirrorClass.why : 'its origin no longer exists',
          };
        }
      }
    }
  }
}
