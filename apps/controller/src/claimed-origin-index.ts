// One shared index of the claimed origins: every origin's placement record read and its seal
// checked once per version of it, for every part that keeps per-origin state from the origin
// caches. Placement's load index (OriginPlacer) and queue admission's index (QueueAdmission)
// each read the record again on every event before (three `placementRecordOf` calls an event;
// the seal was checked once only because that function remembers its reading per object): they
// now watch `claimedOrigin`, which this index emits within each `origin` event with the reading
// attached, and admission builds its index from this one when the first DispatchQueue appears.
// It holds what its caches hold (one reading per cached origin, by UID) and little else: at
// 100,000 origins every byte per origin is 0.1 MB, so a reading keeps four references and
// derives its key and UID (about 90 bytes per origin with the maps, measured at 100,000).
import type { KubeObject } from '@jobrelay/kinds';
import { type InformerEvent, objectKey } from '@jobrelay/kube';
import { type ParsedPlacement, placementRecordOf, type RecordKeyring } from '@jobrelay/placement';
import type {
  ClaimedOrigin,
  ClaimedOriginEvent,
  ControllerEventBus,
  ControllerPart,
} from './controller-events.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';

/** A kind as the index reads its origins: its name and whether one is finished. */
export type ReadKind = { adapter: Pick<AnyDispatchedKind['adapter'], 'name' | 'isFinished'> };

/** One version of an origin as read. */
class Reading<K extends ReadKind> implements ClaimedOrigin<K> {
  readonly kind: K;
  readonly origin: KubeObject;
  readonly placement: ParsedPlacement;
  readonly finished: boolean;

  constructor(kind: K, origin: KubeObject, placement: ParsedPlacement, finished: boolean) {
    this.kind = kind;
    this.origin = origin;
    this.placement = placement;
    this.finished = finished;
  }

  get key(): string {
    return objectKey(this.origin);
  }

  get uid(): string {
    return this.origin.metadata?.uid ?? '';
  }
}

/** One version of an origin read: its record parsed and its seal checked, whether it is finished. */
export function readClaimedOrigin<K extends ReadKind>(
  kind: K,
  origin: KubeObject,
  recordKeys: RecordKeyring,
): ClaimedOrigin<K> {
  return new Reading(kind, origin, placementRecordOf(origin, recordKeys), kind.adapter.isFinished(origin));
}

export class ClaimedOriginIndex implements ControllerPart {
  private readonly recordKeys: RecordKeyring;
  /** By kind name, then by UID: every origin its cache holds, read. */
  private readonly byKind = new Map<string, Map<string, ClaimedOrigin>>();

  constructor(options: { recordKeys: RecordKeyring }) {
    this.recordKeys = options.recordKeys;
  }

  readonly name = 'claimed origin index';
  readonly watches = ['origin'] as const;
  readonly emits = ['claimedOrigin'] as const;
  readonly writes = ['nothing: it reads each origin’s placement record once, for placement and admission'];

  subscribe(events: ControllerEventBus): void {
    events.on('origin', (kind, event) => {
      for (const read of this.observe(kind, event)) events.emit('claimedOrigin', read);
    });
  }

  /** An origin changed in its cache: the index follows, and says what changed, read (nothing without a UID). */
  observe(kind: AnyDispatchedKind, event: InformerEvent<KubeObject>): ClaimedOriginEvent[] {
    const uid = event.object.metadata?.uid;
    let origins = this.byKind.get(kind.adapter.name);
    if (event.type === 'delete') {
      if (uid) origins?.delete(uid);
      return uid ? [{ type: 'delete', kind, uid, object: event.object }] : [];
    }
    const changes: ClaimedOriginEvent[] = [];
    // Another object of that name (deleted and made again while the watch was down, so the cache
    // saw no delete): the old one is gone, for every reader too, or its load and quota would be
    // counted for good.
    const replaced = event.previous?.metadata?.uid;
    if (replaced && replaced !== uid) {
      origins?.delete(replaced);
      changes.push({ type: 'delete', kind, uid: replaced, object: event.previous! });
    }
    if (!uid) return changes;
    const claimed = readClaimedOrigin(kind, event.object, this.recordKeys);
    if (!origins) {
      origins = new Map();
      this.byKind.set(kind.adapter.name, origins);
    }
    origins.set(uid, claimed);
    changes.push({
      type: 'upsert',
      claimed,
      previous: replaced && replaced !== uid ? undefined : event.previous,
    });
    return changes;
  }

  /** The origins of a kind its cache holds now, each read. */
  list(kindName: string): IterableIterator<ClaimedOrigin> {
    return (this.byKind.get(kindName) ?? new Map<string, ClaimedOrigin>()).values();
  }

  /** One origin by kind and UID, as read. */
  get(kindName: string, uid: string): ClaimedOrigin | undefined {
    return this.byKind.get(kindName)?.get(uid);
  }
}
