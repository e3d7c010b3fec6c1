// What changed in the caches the controller watches, as one typed hub. The informers and the
// worker registry only emit here; each part of the controller (placement, admission, the
// reconcile, the namespace labels, the resync) declares what it watches and what it writes,
// and subscribes to exactly that in one method (`ControllerPart`). The wiring checks each
// declaration against the subscriptions it makes and logs the table at startup, so "what made
// this run" starts from one place, not from closures spread through a constructor (cf. Kueue's
// SetupWithManager, where each reconciler names its own watches).
import { EventEmitter } from 'node:events';
import type { KubeObject } from '@jobrelay/kinds';
import type { InformerEvent } from '@jobrelay/kube';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';

export interface ControllerEventMap {
  /** A claimed workload changed in the management cluster's cache. */
  origin: [kind: AnyDispatchedKind, event: InformerEvent<KubeObject>];
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
  'mirror',
  'managementNamespace',
  'workerNamespace',
  'workerAvailability',
  'workerCapacity',
  'queueRules',
];

/** What a part may do with the hub: subscribe, never emit (only the caches emit). */
export interface ControllerEventSubscriber {
  on<E extends ControllerEvent>(event: E, handler: (...args: ControllerEventMap[E]) => void): void;
}

/** One loop or reconciler of the controller: what it watches, what it writes, and its subscriptions. */
export interface ControllerPart {
  readonly name: string;
  /** The events it reacts to; `subscribe` subscribes to exactly these. */
  readonly watches: readonly ControllerEvent[];
  /** What it writes, in words an operator reads ("origins: placement records"). */
  readonly writes: readonly string[];
  subscribe(events: ControllerEventSubscriber): void;
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
}

/**
 * Subscribes each part, in order (the order every event reaches them in), and checks that it
 * subscribed to exactly what it declares it watches: a part that reacts to something it does
 * not declare, or declares what it never subscribes to, fails the controller's start.
 */
export function subscribeParts(
  events: ControllerEvents,
  parts: readonly ControllerPart[],
): PartDescription[] {
  return parts.map((part) => {
    const subscribed = new Set<ControllerEvent>();
    part.subscribe({
      on: (event, handler) => {
        subscribed.add(event);
        events.on(event, handler);
      },
    });
    const declared = new Set(part.watches);
    const undeclared = [...subscribed].filter((event) => !declared.has(event));
    const unsubscribed = [...declared].filter((event) => !subscribed.has(event));
    if (undeclared.length > 0 || unsubscribed.length > 0)
      throw new Error(
        `controller part "${part.name}" declares it watches [${[...declared].join(', ')}] but subscribes to [${[...subscribed].join(', ')}]: make its \`watches\` say what it subscribes to`,
      );
    return { name: part.name, watches: part.watches, writes: part.writes };
  });
}
