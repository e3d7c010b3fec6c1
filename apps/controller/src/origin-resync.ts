// The level-triggered backstop: every origin queued for its reconcile from the caches, on the
// resync interval and whenever a worker came, went or was (un)cordoned (every placement's
// ground changed). A lost Redis, a missed event or a dead placement task is repaired within one
// resync. A part of its own because it is a loop of its own: it reads the origin caches and
// the reconciler's notes, and writes nothing but the reconcile queue.
import { objectKey } from '@jobrelay/kube';
import type { Counter } from 'prom-client';
import type { ControllerEventSubscriber, ControllerPart } from './controller-events.ts';
import { type AnyDispatchedKind, originKey } from './dispatched-kinds.ts';
import type { KeyedWorkQueue } from './keyed-work-queue.ts';
import type { OriginReconciler } from './origin-reconciler.ts';

export interface OriginResyncOptions {
  kinds: ReadonlyMap<string, Pick<AnyDispatchedKind, 'adapter' | 'origins'>>;
  reconciler: Pick<OriginReconciler, 'unchangedSincePlanned'>;
  reconciles: Pick<KeyedWorkQueue, 'addInBackground'>;
  /** Origins queued and passed over, per pass. */
  counted: Pick<Counter<'outcome'>, 'inc'>;
}

export class OriginResync implements ControllerPart {
  private readonly options: OriginResyncOptions;
  readonly name = 'resync';
  readonly watches = ['workerAvailability'] as const;
  readonly writes = ['nothing: it queues origins for their reconcile (also every resync interval)'];

  constructor(options: OriginResyncOptions) {
    this.options = options;
  }

  subscribe(events: ControllerEventSubscriber): void {
    events.on('workerAvailability', () => this.reconcileEveryOrigin({ all: true }));
  }

  /**
   * Every origin is reconciled from the caches, except one whose last plan found nothing to do
   * while nothing it was planned from has changed (its plan would be the same; at 100,000
   * workloads planning each again cost a fifth of a core). Those are planned again at least
   * every ten resyncs, whatever they show. `all`: none is passed over (a cluster came or went,
   * or this replica just took the lead).
   */
  reconcileEveryOrigin({ all = false }: { all?: boolean } = {}): void {
    let queued = 0;
    let unchanged = 0;
    for (const kind of this.options.kinds.values()) {
      const unchangedSincePlanned = this.options.reconciler.unchangedSincePlanned(kind.adapter.name);
      for (const origin of kind.origins.list()) {
        const name = objectKey(origin);
        if (!all && unchangedSincePlanned(origin, name)) {
          unchanged++;
          continue;
        }
        queued++;
        this.options.reconciles.addInBackground(originKey(kind.adapter.name, name));
      }
    }
    this.options.counted.inc({ outcome: 'queued' }, queued);
    this.options.counted.inc({ outcome: 'unchanged' }, unchanged);
  }
}
