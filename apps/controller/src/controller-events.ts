// What changed in the caches the controller watches, as one typed hub. The informers and the
// worker registry only emit here; each part of the controller (placement, admission, the
// reconcile, the namespace labels, the resync) declares what it watches and what it writes,
// and subscribes to exactly that in one method (`ControllerPart`). The wiring checks each
// declaration against the subscriptions it makes and logs the table at startup, so "what made
// this run" starts from one place, not from closures spread through a constructor (cf. Kueue's
// SetupWithManager, where each reconciler names its own watches). A shared index of a cache (the
// claimed origins' placement records, read once: ClaimedOriginIndex) is a part too: it watches
// the cache's events and emits what it derives from them, declared (`emits`) like its watches.
import { EventEmitter } from 'node:events';
import type { KubeObject } from '@jobrelay/kinds';
import type { InformerEvent } from '@jobrelay/kube';
import type { ParsedPlacement } from '@jobrelay/placement';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';

/** A claimed origin as the shared index read it (ClaimedOriginIndex): once per version of it. */
export interface ClaimedOrigin<K = AnyDispatchedKind> {
  readonly kind: K;
  /** `namespace/name`. */
  readonly key: string;
  readonly uid: string;
  /** The version read, as cached. */
  readonly origin: KubeObject;
  /** Its placement record, read and its seal checked (`placementRecordOf`) for this version. */
  readonly placement: ParsedPlacement;
  /** Whether it is finished (its kind's rule), for this version. */
  readonly finished: boolean;
}

/** A claimed origin changed, as read by the shared index: every consumer gets this one reading. */
export type ClaimedOriginEvent<K = AnyDispatchedKind> =
  | { type: 'upsert'; claimed: ClaimedOrigin<K>; previous: KubeObject | undefined }
  | { type: 'delete'; kind: K; uid: string; object: KubeObject };

export interface ControllerEventMap {
  /** A claimed workload changed in the management cluster's cache. */
  origin: [kind: AnyDispatchedKind, event: InformerEvent<KubeObject>];
  /**
   * The same change with the origin's placement record read once (derived from `origin` by
   * ClaimedOriginIndex, within that event: before the parts after the index get `origin`).
   * Origins without a UID are not indexed.
   */
  claimedOrigin: [event: ClaimedOriginEvent];
  /** A mirror changed in a worker's cache. */
  mirror: [cluster: string, kind: string, event: InformerEvent<KubeObject>];
  /** A management namespace changed: its Pod Security level, the queues its labels select. */
  managementNamespace: [name: string];
  /** A namespace changed on a worker. */
  workerNamespace: [cluster: string, name: string];
  /** A worker joined, left, or was cordoned or uncordoned. */
  workerAvailability: [];
  /** A worker's free capacity changed (its pods and nodes, as the leader watches them). */
  workerCapacity: [];
  /** A DispatchQueue's spec or a PriorityClass changed: what admission decides by. */
  queueRules: [];
}

export type ControllerEvent = keyof ControllerEventMap;

export const controllerEvents: readonly ControllerEvent[] = [
  'origin',
  'claimedOrigin',
  'mirror',
  'managementNamespace',
  'workerNamespace',
  'workerAvailability',
  'workerCapacity',
  'queueRules',
];

/** The events no cache emits: each comes from a part that derives it (and declares it in `emits`). */
export const derivedControllerEvents: readonly ControllerEvent[] = ['claimedOrigin'];

/** What a part may do with the hub: subscribe (only the caches, and the parts that derive events, emit). */
export interface ControllerEventSubscriber {
  on<E extends ControllerEvent>(event: E, handler: (...args: ControllerEventMap[E]) => void): void;
}

/** What a part that derives events gets: it subscribes, and emits exactly what it declares it emits. */
export interface ControllerEventBus extends ControllerEventSubscriber {
  emit<E extends ControllerEvent>(event: E, ...args: ControllerEventMap[E]): void;
}

/** One loop or reconciler of the controller: what it watches, what it writes, and its subscriptions. */
export interface ControllerPart {
  readonly name: string;
  /** The events it reacts to; `subscribe` subscribes to exactly these. */
  readonly watches: readonly ControllerEvent[];
  /** What it writes, in words an operator reads ("origins: placement records"). */
  readonly writes: readonly string[];
  /**
   * The events it derives from what it watches and emits (a shared index's readings). A part
   * that watches one comes after the part that emits it.
   */
  readonly emits?: readonly ControllerEvent[];
  subscribe(events: ControllerEventBus): void;
}

export class ControllerEvents implements ControllerEventSubscriber {
  private readonly emitter = new EventEmitter();

  on<E extends ControllerEvent>(event: E, handler: (...args: ControllerEventMap[E]) => void): void {
    this.emitter.on(event, handler as (...args: unknown[]) => void);
  }

  /** Runs every subscriber now, in the order they subscribed (a throwing one stops the rest, as a direct call would). */
  emit<E extends ControllerEvent>(event: E, ...args: ControllerEventMap[E]): void {
    this.emitter.emit(event, ...args);
  }

  listenerCount(event: ControllerEvent): number {
    return this.emitter.listenerCount(event);
  }
}

/** A part as the startup log shows it. */
export interface PartDescription {
  name: string;
  watches: readonly ControllerEvent[];
  writes: readonly string[];
  emits?: readonly ControllerEvent[];
}

/**
 * Subscribes each part, in order (the order every event reaches them in), and checks that it
 * subscribed to exactly what it declares it watches: a part that reacts to something it does
 * not declare, or declares what it never subscribes to, fails the controller's start; so does
 * one that watches a derived event no part before it emits. A part emits only what it
 * declares in `emits` (anything else throws where it emits). A derived event is emitted inside
 * the event it derives from: its watchers get it before the parts after its emitter get that one.
 */
export function subscribeParts(
  events: ControllerEvents,
  parts: readonly ControllerPart[],
): PartDescription[] {
  const emitted = new Set<ControllerEvent>();
  return parts.map((part) => {
    const subscribed = new Set<ControllerEvent>();
    const emits = new Set(part.emits ?? []);
    part.subscribe({
      on: (event, handler) => {
        subscribed.add(event);
        events.on(event, handler);
      },
      emit: (event, ...args) => {
        if (!emits.has(event))
          throw new Error(`controller part "${part.name}" emits "${event}", which it does not declare`);
        events.emit(event, ...args);
      },
    });
    const undeclarable = [...emits].filter((e) => !derivedControllerEvents.includes(e));
    if (undeclarable.length > 0)
      throw new Error(
        `controller part "${part.name}" declares it emits [${undeclarable.join(', ')}]: only the caches emit those`,
      );
    const orphans = part.watches.filter((e) => derivedControllerEvents.includes(e) && !emitted.has(e));
    if (orphans.length > 0)
      throw new Error(
        `controller part "${part.name}" watches [${orphans.join(', ')}], which no part before it emits`,
      );
    for (const event of emits) emitted.add(event);
    const declared = new Set(part.watches);
    const undeclared = [...subscribed].filter((event) => !declared.has(event));
    const unsubscribed = [...declared].filter((event) => !subscribed.has(event));
    if (undeclared.length > 0 || unsubscribed.length > 0)
      throw new Error(
        `controller part "${part.name}" declares it watches [${[...declared].join(', ')}] but subscribes to [${[...subscribed].join(', ')}]: make its \`watches\` say what it subscribes to`,
      );
    return {
      name: part.name,
      watches: part.watches,
      writes: part.writes,
      ...(part.emits ? { emits: part.emits } : {}),
    };
  });
}
