// The controller's bookkeeping of its own writes, apart from the reconcile that reads it (cf.
// client-go's ControllerExpectations). The executor reports every write it makes here, for the
// reconcile's runs and the placement task's alike (`OriginWriteObserver`), and every watch event
// passes through here before it costs a reconcile, so that:
//
// - origin writes (a placement, a status, a waiting note) whose watch echo is not reconciled
//   once a plan from that very version found nothing to do (`OwnOriginWrites`);
// - origin writes that the origin cache does not show yet are planned from at once: a
//   placement's mirror created, a status written over the version the last write produced
//   (`WrittenOrigins`);
// - mirrors created but not yet in their cluster's cache are taken as there for 30 s, and their
//   echo is not reconciled when a plan with them found nothing to do;
// - a mirror change's status lag is measured until its origin's status is written.
//
// It is built before the executor and the reconcile, so neither needs the other to be built
// first: both hold this one object.
import type { KubeObject } from '@jobrelay/kinds';
import { type Clock, type InformerEvent, objectKey } from '@jobrelay/kube';
import type { ClusterSnapshot } from '@jobrelay/planner';
import { originKey } from './dispatched-kinds.ts';
import { OwnOriginWrites } from './own-origin-writes.ts';
import { WrittenOrigins } from './written-origins.ts';

/** How long a created mirror is taken as existing while its cluster's cache does not show it. */
export const expectedMirrorMs = 30_000;

/** What the executor tells about each write it makes, before and after it. */
export interface OriginWriteObserver {
  /** About to create a mirror (its watch echo may arrive before the answer). */
  mirrorCreating(kind: string, cluster: string, body: KubeObject): void;
  /** A mirror was created or adopted: until the cluster's cache shows it, take it as there. */
  mirrorCreated(kind: string, cluster: string, mirror: KubeObject): void;
  /** About to write the origin (its watch echo may arrive before the answer). */
  originWriting(kind: string, origin: KubeObject): void;
  /** That write got no answer to note: it failed or met a conflict. */
  originUnwritten(kind: string, origin: KubeObject): void;
  /** The origin was written (its placement or its status) over `over`: `origin` is the apiserver's answer. */
  originWritten(kind: string, origin: KubeObject, over: KubeObject): void;
  /** An origin's status was written (the status lag of the change that asked for it). */
  statusWritten(kind: string, origin: KubeObject): void;
}

export interface OriginWriteExpectationsOptions {
  /** The origin caches by kind name: a write's echo may already be there when its answer comes. */
  origins: (kind: string) => { get(objectName: string): KubeObject | undefined } | undefined;
  clock: Clock;
  /** Ask for a reconcile of `key`: `first` ahead of status syncs, `afterMs` a while later. */
  enqueue: (key: string, options?: { first?: boolean; afterMs?: number }) => void;
  /** Only the leader measures the status lag (it is the one writing status back). */
  leading: () => boolean;
  /** A mirror's changes seen within this long cost one origin status write (0: at once). */
  statusCoalesceMs: number;
  /** A mirror change reached its origin's status this many seconds after it was seen. */
  statusLag?: (seconds: number) => void;
}

interface ExpectedMirror {
  cluster: string;
  mirror: KubeObject;
  until: number;
  /** A plan with this very mirror found nothing to do: its echo (same version) needs no reconcile. */
  planned?: boolean;
  /** Its echo came before the create's answer, and is in the cache already. */
  echoed?: boolean;
}

export class OriginWriteExpectations implements OriginWriteObserver {
  private readonly options: OriginWriteExpectationsOptions;
  /**
   * Mirrors created (or adopted) but not yet seen in their cluster's cache, by origin key, so
   * a reconcile in between does not try to create them again (one wasted POST and a GET per
   * occurrence). Dropped when the cache shows the mirror, or after expectedMirrorMs, when the
   * create-or-adopt path settles it anyway.
   */
  private readonly expectedMirrors = new Map<string, ExpectedMirror>();
  /**
   * Mirror creates in flight, by origin key. Under load the watch often brings the new mirror
   * before the create's answer is read; taken then for someone else's change, it cost a
   * reconcile that found nothing to do, in the lane status changes wait in (docs/scale.md). An
   * upsert of it that comes meanwhile is held here and judged on the answer (as client-go raises
   * its expectations before the request).
   */
  private readonly creatingMirrors = new Map<string, { cluster: string; held: number; echo?: KubeObject }>();
  /** Origin writes that the origin cache does not show yet (see WrittenOrigins). */
  private readonly writtenOrigins = new WrittenOrigins();
  /** Origin writes whose watch echo need not be reconciled (see OwnOriginWrites). */
  private readonly ownWrites = new OwnOriginWrites();
  /** Per origin key: when a mirror change not yet written back to the origin was first seen. */
  private readonly mirrorChangeSeenAt = new Map<string, number>();

  constructor(options: OriginWriteExpectationsOptions) {
    this.options = options;
  }

  /** How many entries each piece of bookkeeping holds (every one of them must drain). */
  get sizes(): Record<'expectedMirrors' | 'writtenOrigins' | 'ownWrites', number> {
    return {
      expectedMirrors: this.expectedMirrors.size,
      writtenOrigins: this.writtenOrigins.size,
      ownWrites: this.ownWrites.size,
    };
  }

  // ---------------------------------------------------------------------------------------
  // Watch events: which of them cost a reconcile.

  /** The origin cache changed: whether the key needs a reconcile (not for the echo of our own write). */
  originChanged(key: string, event: InformerEvent<KubeObject>): boolean {
    if (event.type === 'delete') {
      this.ownWrites.forget(key);
      this.writtenOrigins.forget(key);
    } else {
      // The cache moved on: a write it shows now is dropped (a version written over keeps it).
      this.writtenOrigins.newest(key, event.object);
    }
    // Our own write coming back, which a reconcile has planned from (or will): nothing new.
    return !(
      event.type === 'upsert' && !this.ownWrites.needsReconcile(key, event.object.metadata?.resourceVersion)
    );
  }

  /** A mirror changed in `cluster`'s cache: its origin is reconciled, unless it is our create's echo. */
  mirrorEvent(cluster: string, kind: string, event: InformerEvent<KubeObject>): void {
    const key = originKey(kind, objectKey(event.object));
    const creating = this.creatingMirrors.get(key);
    if (creating?.cluster === cluster && event.type === 'upsert') {
      creating.held += 1;
      creating.echo = event.object;
      return;
    }
    const expected = this.expectedMirrors.get(key);
    if (expected?.cluster === cluster) {
      this.expectedMirrors.delete(key);
      // The mirror as created, already planned with: nothing changed.
      if (
        expected.planned &&
        event.type === 'upsert' &&
        event.object.metadata?.resourceVersion === expected.mirror.metadata?.resourceVersion
      )
        return;
    }
    this.mirrorChanged(key);
  }

  /** A mirror of the key changed (not our create's echo): its origin is reconciled soon. */
  private mirrorChanged(key: string): void {
    // The first change not yet written back: the status lag is measured from it (by the
    // leader, which writes it back).
    if (this.options.leading() && !this.mirrorChangeSeenAt.has(key))
      this.mirrorChangeSeenAt.set(key, this.options.clock.now());
    // A mirror's status changes come in bursts (a pod created, then ready; it succeeds, then
    // the Job completes): waiting a moment lets one origin status write carry a burst.
    const { statusCoalesceMs } = this.options;
    this.options.enqueue(key, statusCoalesceMs > 0 ? { afterMs: statusCoalesceMs } : {});
  }

  // ---------------------------------------------------------------------------------------
  // The executor's writes (OriginWriteObserver).

  mirrorCreating(kind: string, cluster: string, body: KubeObject): void {
    this.creatingMirrors.set(originKey(kind, objectKey(body)), { cluster, held: 0 });
  }

  mirrorCreated(kind: string, cluster: string, mirror: KubeObject): void {
    const key = originKey(kind, objectKey(mirror));
    const creating = this.creatingMirrors.get(key);
    this.creatingMirrors.delete(key);
    // Exactly one upsert came while the create was in flight, and it is the mirror as created:
    // its echo, already in the cache. Anything else was a change of its own.
    const echoed =
      creating?.cluster === cluster &&
      creating.held === 1 &&
      creating.echo?.metadata?.uid === mirror.metadata?.uid &&
      creating.echo?.metadata?.resourceVersion === mirror.metadata?.resourceVersion;
    this.expectedMirrors.set(key, {
      cluster,
      mirror,
      until: this.options.clock.now() + expectedMirrorMs,
      ...(echoed ? { echoed: true } : {}),
    });
    if (creating && creating.held > 0 && !echoed) this.mirrorChanged(key);
  }

  originWriting(kind: string, origin: KubeObject): void {
    this.ownWrites.writing(originKey(kind, objectKey(origin)));
  }

  /** That write got no answer to note: what the watch brought meanwhile is reconciled. */
  originUnwritten(kind: string, origin: KubeObject): void {
    const key = originKey(kind, objectKey(origin));
    if (this.ownWrites.unanswered(key)) this.options.enqueue(key);
  }

  /** Reconciles plan from the answer until the cache shows it (WrittenOrigins). */
  originWritten(kind: string, origin: KubeObject, over: KubeObject): void {
    const objectName = objectKey(origin);
    const key = originKey(kind, objectName);
    const overVersion = over.metadata?.resourceVersion;
    if (overVersion !== undefined && overVersion !== origin.metadata?.resourceVersion) {
      this.writtenOrigins.record(key, overVersion, origin);
      // Its echo may have come first (under load it often does): then the cache rules already.
      this.writtenOrigins.newest(key, this.options.origins(kind)?.get(objectName));
    }
    // Something the watch brought while the write was in flight was not its echo.
    if (this.ownWrites.wrote(key, origin.metadata?.resourceVersion)) this.options.enqueue(key);
  }

  statusWritten(kind: string, origin: KubeObject): void {
    const seenAt = this.mirrorChangeSeenAt.get(originKey(kind, objectKey(origin)));
    if (seenAt !== undefined) this.options.statusLag?.((this.options.clock.now() - seenAt) / 1000);
  }

  // ---------------------------------------------------------------------------------------
  // What a reconcile reads and settles.

  /** The newest version of an origin known: our last write's answer, while the cache shows a version it went over. */
  newestOrigin(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    return this.writtenOrigins.newest(key, cached);
  }

  /** A write or a create of the key that the caches do not show yet: a plan must see it, not skip it. */
  pendingFor(key: string, cachedOrigin: KubeObject): boolean {
    return this.expectedMirrors.has(key) || this.writtenOrigins.newest(key, cachedOrigin) !== cachedOrigin;
  }

  /** A mirror this process created on `cluster` that its cache does not show yet. */
  expectedMirror(key: string, cluster: string): KubeObject | undefined {
    const expected = this.expectedMirrors.get(key);
    if (!expected || expected.cluster !== cluster) return undefined;
    if (expected.until <= this.options.clock.now()) {
      this.expectedMirrors.delete(key);
      return undefined;
    }
    return expected.mirror;
  }

  /** Expectations of mirrors whose origin was never reconciled again (deleted meanwhile) expire. */
  expireExpectations(): void {
    const now = this.options.clock.now();
    for (const [key, expected] of this.expectedMirrors)
      if (expected.until <= now) this.expectedMirrors.delete(key);
  }

  /** When the key's oldest mirror change not yet written back was seen (a reconcile brackets it). */
  changeSeenAt(key: string): number | undefined {
    return this.mirrorChangeSeenAt.get(key);
  }

  /** The reconcile that started with the change seen at `seenAt` synced it: a later change starts its own measurement. */
  changeSynced(key: string, seenAt: number | undefined): void {
    if (seenAt !== undefined && this.mirrorChangeSeenAt.get(key) === seenAt)
      this.mirrorChangeSeenAt.delete(key);
  }

  /** The reconcile failed: it is retried with backoff, from the cache, so an echo held back for it is not needed. */
  reconcileFailed(key: string): void {
    this.ownWrites.forget(key);
  }

  /** Whether the reconcile ended at a version this process wrote whose echo is awaited. */
  awaitsEcho(key: string, version: string): boolean {
    return this.ownWrites.awaits(key, version);
  }

  /**
   * A plan from the version written at `version` found nothing to do (`settled`) or not: its
   * echo is passed over, or reconciled. A mirror created in that run and part of that plan
   * (`plannedMirror`: as created, seen by the plan) has its own echo covered too.
   */
  plannedFromWrite(
    key: string,
    version: string,
    settled: boolean,
    clusters: readonly Pick<ClusterSnapshot<KubeObject>, 'name' | 'mirror'>[],
  ): void {
    const expected = this.expectedMirrors.get(key);
    // (The cache may hold its echo already, a copy of the very version created.)
    if (
      settled &&
      expected &&
      clusters.some(
        (c) =>
          c.name === expected.cluster &&
          c.mirror?.metadata?.uid === expected.mirror.metadata?.uid &&
          c.mirror?.metadata?.resourceVersion === expected.mirror.metadata?.resourceVersion,
      )
    )
      expected.planned = true;
    if (this.ownWrites.planned(key, version, settled)) this.options.enqueue(key);
  }

  /**
   * After a reconcile: a create that got no answer (it failed, or met another object) leaves
   * what came meanwhile to be reconciled as any change; a mirror whose echo came before its
   * answer is settled: nothing more if the reconcile planned with it and found nothing left,
   * else reconciled as its echo would have been.
   */
  settleCreates(key: string): void {
    const creating = this.creatingMirrors.get(key);
    if (creating) {
      this.creatingMirrors.delete(key);
      if (creating.held > 0) this.mirrorChanged(key);
    }
    const expected = this.expectedMirrors.get(key);
    if (expected?.echoed) {
      this.expectedMirrors.delete(key);
      if (!expected.planned) this.mirrorChanged(key);
    }
  }
}
