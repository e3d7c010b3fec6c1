import { type Clock, systemClock } from '@jobrelay/kube';
import type { Logger } from 'pino';

export type ReconcileResult = { requeueAfterMs?: number } | undefined;

/** The lane a key ran from: `urgent` (new workloads, mirrors to create), `changes` (every other event, requeues), `resync`. */
export type ReconcileLane = 'urgent' | 'changes' | 'resync';

export interface KeyedWorkQueueOptions {
  name: string;
  concurrency: number;
  /**
   * Collect keys but run nothing until resume(): a controller must not reconcile before
   * every cache it reads from has synced.
   */
  startPaused?: boolean;
  log: Logger;
  reconcile: (key: string, lane: ReconcileLane) => Promise<ReconcileResult>;
  /** Where requeue times are read from; the system clock unless a test fixes it. */
  clock?: Clock;
  /**
   * Whose key this is (an origin's namespace): within the urgent and changes lanes, keys take
   * turns by it (TurnTakingLane), so one team's backlog does not hold another team's keys
   * behind it. Without it each lane is first in, first out.
   */
  turnOf?: (key: string) => string;
}

const initialErrorBackoffMs = 500;
const maxErrorBackoffMs = 60_000;

/**
 * A first-in first-out lane of keys. Not an array's shift(): with 100,000 keys queued the array
 * lives in V8's large-object space, where shift() moves every element, and a profile of the
 * controller tracking 100,000 workloads found a tenth of its CPU there.
 */
export class KeyLane implements Lane {
  private items: Array<string | undefined> = [];
  private head = 0;

  readonly name: ReconcileLane;

  constructor(name: ReconcileLane = 'changes') {
    this.name = name;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    // Drop the consumed front once it is most of the array (amortized O(1) per key).
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/** A lane of keys: first in, first out (KeyLane), or taking turns by whose keys they are (TurnTakingLane). */
export interface Lane {
  readonly name: ReconcileLane;
  readonly size: number;
  push(key: string): void;
  shift(): string | undefined;
  clear(): void;
}

/**
 * A lane where keys take turns by whose they are (`turnOf`: an origin's namespace), first in,
 * first out within each: one key of each in rotation. A team that queues 100,000 new workloads
 * at once leaves another team's next key one round away, not 100,000 keys away.
 */
export class TurnTakingLane implements Lane {
  readonly name: ReconcileLane;
  private readonly turnOf: (key: string) => string;
  private readonly byOwner = new Map<string, KeyLane>();
  /** Owners with keys, in the order their turns come. */
  private readonly rotation: KeyLane;
  private count = 0;

  constructor(name: ReconcileLane, turnOf: (key: string) => string) {
    this.name = name;
    this.turnOf = turnOf;
    this.rotation = new KeyLane(name);
  }

  get size(): number {
    return this.count;
  }

  push(key: string): void {
    const owner = this.turnOf(key);
    let keys = this.byOwner.get(owner);
    if (!keys) {
      keys = new KeyLane(this.name);
      this.byOwner.set(owner, keys);
      this.rotation.push(owner);
    }
    keys.push(key);
    this.count += 1;
  }

  shift(): string | undefined {
    const owner = this.rotation.shift();
    if (owner === undefined) return undefined;
    const keys = this.byOwner.get(owner)!;
    const key = keys.shift()!;
    this.count -= 1;
    if (keys.size > 0) this.rotation.push(owner);
    else this.byOwner.delete(owner);
    return key;
  }

  clear(): void {
    this.byOwner.clear();
    this.rotation.clear();
    this.count = 0;
  }
}

/**
 * A work queue of keys, as client-go's: a key is queued at most once, at most one
 * reconcile per key runs at a time, a key added while it runs runs again afterwards, and a
 * failing key is retried with per-key exponential backoff. Keys only: reconcilers re-read
 * the state, so many events for one Job coalesce into one reconcile.
 */
export class KeyedWorkQueue {
  private readonly options: KeyedWorkQueueOptions;
  private readonly queue: Lane;
  /** Keys asked for urgently (a new workload, a mirror to create): first, or taking turns (next()). */
  private readonly urgent: Lane;
  /** Keys of the periodic resync, a backstop: run after the others (see next()). */
  private readonly background = new KeyLane('resync');
  /** Queued keys that wait in the background lane alone (an event for one moves it up). */
  private readonly backgroundOnly = new Set<string>();
  private readonly queued = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirtyWhileRunning = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private active = 0;
  private picks = 0;
  private stopped = false;
  private paused: boolean;
  private idleWaiters: Array<() => void> = [];

  constructor(options: KeyedWorkQueueOptions) {
    this.options = options;
    this.paused = options.startPaused ?? false;
    const { turnOf } = options;
    this.queue = turnOf ? new TurnTakingLane('changes', turnOf) : new KeyLane('changes');
    this.urgent = turnOf ? new TurnTakingLane('urgent', turnOf) : new KeyLane('urgent');
  }

  /**
   * Queues the key. `urgent` keys (a new workload, a mirror to create) go first while nothing
   * else waits, and take turns with the others when both wait (next()): a status sync is
   * coalesced while it waits, but must not wait behind a whole backlog of new workloads.
   */
  add(key: string, urgent = false): void {
    if (this.stopped) return;
    if (this.running.has(key)) {
      this.dirtyWhileRunning.add(key);
      return;
    }
    if (this.queued.has(key)) {
      // Already waiting further back: also queue it in this lane; whichever comes first runs it.
      if (urgent) this.urgent.push(key);
      else if (this.backgroundOnly.has(key)) this.queue.push(key);
      this.backgroundOnly.delete(key);
      return;
    }
    this.queued.add(key);
    (urgent ? this.urgent : this.queue).push(key);
    this.pump();
  }

  /**
   * Queues the key behind every other, as a periodic resync does: with 100,000 workloads
   * tracked, a pass over all of them takes minutes, and in one lane with the watch events'
   * keys it held every mirror's status change back behind the whole pass (origin statuses
   * lagged their mirrors by 440 s on average in the fleet benchmark). A key already queued
   * stays where it is; an event for a key queued here moves it up.
   */
  addInBackground(key: string): void {
    if (this.stopped || this.running.has(key) || this.queued.has(key)) return;
    this.queued.add(key);
    this.backgroundOnly.add(key);
    this.background.push(key);
    this.pump();
  }

  /** Adds the key after a delay; an earlier pending delay for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    const at = (this.options.clock ?? systemClock).now() + delayMs;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  get length(): number {
    return this.queued.size;
  }

  /** Resolves when nothing is queued or running (for orderly shutdown). */
  whenIdle(): Promise<void> {
    if (this.active === 0 && this.queued.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.clear();
    this.urgent.clear();
    this.background.clear();
    this.backgroundOnly.clear();
    this.queued.clear();
  }

  /** Starts running the keys collected while paused. */
  resume(): void {
    this.paused = false;
    this.pump();
  }

  private next(): { key: string; lane: ReconcileLane } | undefined {
    // Urgent first while the other lane is empty; when both hold keys, the changes lane takes
    // two picks for each urgent one. A dispatch makes one status change to carry back, and a
    // workload whose pods run makes several, so under a backlog that never lets up the changes
    // lane fills at least as fast as the urgent one: with every fourth key for it (at first),
    // origin statuses lagged their mirrors by 434 s on average while 100,000 Jobs were
    // dispatched, and with one pick in two by 133 s, as short Jobs' pods added 0.12 status
    // changes per dispatch (docs/scale.md). With two in three the changes lane empties, and
    // the urgent one then has every pick until a change waits again. Waiting in a backlog is
    // what a new Job expects under load; a wrong status is not. The resync's lane last, yet
    // every sixteenth key, so the backstop still moves under a load that never lets up.
    this.picks += 1;
    const lanes =
      this.picks % 16 === 0
        ? [this.background, this.urgent, this.queue]
        : this.picks % 3 === 0
          ? [this.urgent, this.queue, this.background]
          : [this.queue, this.urgent, this.background];
    for (const lane of lanes) {
      for (let key = lane.shift(); key !== undefined; key = lane.shift()) {
        // A key queued in two lanes ran from the first one to reach it.
        if (this.queued.has(key)) {
          this.backgroundOnly.delete(key);
          return { key, lane: lane.name };
        }
      }
    }
    return undefined;
  }

  private pump(): void {
    while (!this.stopped && !this.paused && this.active < this.options.concurrency && this.queued.size > 0) {
      const picked = this.next();
      if (picked === undefined) return;
      const { key, lane } = picked;
      this.queued.delete(key);
      this.running.add(key);
      this.active += 1;
      void this.process(key, lane);
    }
  }

  private async process(key: string, lane: ReconcileLane): Promise<void> {
    try {
      const result = await this.options.reconcile(key, lane);
      this.failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const failures = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, failures);
      const delay = Math.min(initialErrorBackoffMs * 2 ** (failures - 1), maxErrorBackoffMs);
      this.options.log.warn(
        { queue: this.options.name, key, err, retryInMs: delay },
        'reconcile failed; will retry',
      );
      this.addAfter(key, delay);
    } finally {
      this.running.delete(key);
      this.active -= 1;
      if (this.dirtyWhileRunning.delete(key)) this.add(key);
      this.pump();
      if (this.active === 0 && this.queued.size === 0)
        for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
