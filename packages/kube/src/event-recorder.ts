import type { EventsV1Api, V1ObjectReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { type Clock, systemClock } from './clock.ts';
import { microTime } from './micro-time.ts';
import { mergePatch } from './patch.ts';

export interface RecordedEvent {
  regarding: V1ObjectReference;
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. `Placed`, `MirrorCreated`, `NameCollision`. */
  reason: string;
  /** What the controller did, e.g. `Create`, `Place`, `Sync`. */
  action: string;
  note: string;
}

interface SeriesState {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
}

/** Events repeating within this window become one Event with a growing series count. */
const dedupeWindowMs = 10 * 60_000;

const maxTrackedSeries = 5_000;

/**
 * Records events.k8s.io/v1 Events, deduplicated like client-go's EventRecorder: the same
 * (object, reason, note) within the window updates one Event's series instead of creating
 * another. Recording never throws: Events explain, they must not break reconciling.
 */
export class EventRecorder {
  private readonly api: EventsV1Api;
  private readonly series = new Map<string, SeriesState>();
  private readonly controller: string;
  private readonly instance: string;
  private readonly log: Logger;
  private readonly clock: Clock;
  private sequence = 0;

  /**
   * `api` should come from makeClusterApiClients: client-node's own clients open a new
   * connection pool (a TLS handshake) for every request, which at one Event per dispatched
   * workload cost more CPU than the dispatch itself.
   */
  constructor(
    api: EventsV1Api,
    options: { controller: string; instance: string; log: Logger; clock?: Clock },
  ) {
    this.api = api;
    this.controller = options.controller;
    this.instance = options.instance;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
  }

  async record(event: RecordedEvent): Promise<void> {
    const { regarding } = event;
    const namespace = regarding.namespace ?? 'default';
    const key = JSON.stringify([regarding.uid, event.reason, event.note]);
    const now = this.clock.now();
    const previous = this.series.get(key);
    try {
      if (previous && now - previous.firstAt < dedupeWindowMs) {
        previous.count += 1;
        await this.api.patchNamespacedEvent(
          {
            name: previous.name,
            namespace,
            body: { series: { count: previous.count, lastObservedTime: microTime(now) } },
          },
          mergePatch,
        );
        return;
      }
      const created = await this.api.createNamespacedEvent({
        namespace,
        body: {
          // As client-go names them: the object's name and a unique hex suffix.
          metadata: {
            name: `${regarding.name}.${(BigInt(now) * 1_000_000n + BigInt(this.sequence++ % 1_000_000)).toString(16)}`,
          },
          eventTime: microTime(now),
          reportingController: this.controller,
          reportingInstance: this.instance,
          action: event.action,
          reason: event.reason,
          note: event.note.slice(0, 1024),
          type: event.type,
          regarding,
        },
      });
      if (this.series.size >= maxTrackedSeries) this.series.delete(this.series.keys().next().value!);
      this.series.set(key, { name: created.metadata!.name!, namespace, count: 1, firstAt: now });
    } catch (err) {
      this.series.delete(key);
      this.log.warn({ err, reason: event.reason }, 'could not record an Event');
    }
  }
}
