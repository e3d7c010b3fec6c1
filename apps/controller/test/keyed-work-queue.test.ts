import fc from 'fast-check';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  KeyedWorkQueue,
  KeyLane,
  type ReconcileLane,
  type ReconcileResult,
  TurnTakingLane,
} from '../src/keyed-work-queue.ts';

// Fake timers are the injected clock: the queue reads Date.now() and setTimeout, both faked, so
// backoff and requeue delays are stepped through exactly and nothing really sleeps.

interface HeldCall {
  key: string;
  finish: () => void;
}

/**
 * A scripted reconcile: records every call, how many run at once (per key and overall), and
 * can hold calls open until the test releases them, fail a key a number of times, or ask for
 * a requeue.
 */
class ScriptedReconciler {
  readonly calls: string[] = [];
  /** Each call as `key@lane`, the lane the queue says the key ran from. */
  readonly lanes: string[] = [];
  maxInFlight = 0;
  readonly maxInFlightPerKey = new Map<string, number>();
  private inFlight = 0;
  private readonly inFlightPerKey = new Map<string, number>();
  private holding = false;
  private readonly held: HeldCall[] = [];
  private readonly failuresLeft = new Map<string, number>();
  private readonly results = new Map<string, ReconcileResult>();

  holdingCalls(): this {
    this.holding = true;
    return this;
  }

  failing(key: string, times = Number.POSITIVE_INFINITY): this {
    this.failuresLeft.set(key, times);
    return this;
  }

  requeueing(key: string, requeueAfterMs: number): this {
    this.results.set(key, { requeueAfterMs });
    return this;
  }

  get heldKeys(): string[] {
    return this.held.map((call) => call.key);
  }

  /** Lets the oldest held call for `key` return. */
  release(key: string): void {
    const index = this.held.findIndex((call) => call.key === key);
    if (index < 0) throw new Error(`no held call for ${key}; held: ${this.heldKeys.join(',')}`);
    const [call] = this.held.splice(index, 1);
    call!.finish();
  }

  readonly reconcile = async (key: string, lane?: ReconcileLane): Promise<ReconcileResult> => {
    this.calls.push(key);
    this.lanes.push(`${key}@${lane}`);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const forKey = (this.inFlightPerKey.get(key) ?? 0) + 1;
    this.inFlightPerKey.set(key, forKey);
    this.maxInFlightPerKey.set(key, Math.max(this.maxInFlightPerKey.get(key) ?? 0, forKey));
    try {
      if (this.holding) await new Promise<void>((finish) => this.held.push({ key, finish }));
      const failuresLeft = this.failuresLeft.get(key) ?? 0;
      if (failuresLeft > 0) {
        this.failuresLeft.set(key, failuresLeft - 1);
        throw new Error(`reconcile of ${key} failed`);
      }
      return this.results.get(key);
    } finally {
      this.inFlight -= 1;
      this.inFlightPerKey.set(key, (this.inFlightPerKey.get(key) ?? 1) - 1);
    }
  };

  count(key: string): number {
    return this.calls.filter((k) => k === key).length;
  }
}

function queueFor(reconciler: ScriptedReconciler, concurrency = 1) {
  const log = pino({ level: 'silent' });
  const warn = vi.spyOn(log, 'warn');
  const queue = new KeyedWorkQueue({ name: 'test', concurrency, log, reconcile: reconciler.reconcile });
  /** The retry delays the queue announced, in order. */
  const retryDelays = () => warn.mock.calls.map(([fields]) => (fields as { retryInMs: number }).retryInMs);
  return { queue, retryDelays };
}

/** Runs every microtask and every timer due at the current fake time. */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2025-03-01T10:00:00Z') });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('KeyedWorkQueue', () => {
  it('runs a key queued twice only once', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    queue.add('blocker');
    queue.add('ns/job');
    queue.add('ns/job');
    expect(queue.length).toBe(1);

    reconciler.release('blocker');
    await settle();
    reconciler.release('ns/job');
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(['blocker', 'ns/job']);
  });

  it('runs urgent keys first while nothing else waits, and two other keys for each urgent one when both wait', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    queue.add('blocker');
    for (const key of ['sync-1', 'sync-2', 'sync-3', 'sync-4']) queue.add(key);
    for (const key of ['new-1', 'new-2', 'new-3', 'new-4', 'new-5', 'new-6']) queue.add(key, true);
    expect(queue.length).toBe(10);

    // Two status syncs for each new key while both lanes hold keys; once the syncs are done,
    // the urgent keys back to back.
    const order = [
      'blocker',
      'sync-1',
      'new-1',
      'sync-2',
      'sync-3',
      'new-2',
      'sync-4',
      'new-3',
      'new-4',
      'new-5',
      'new-6',
    ];
    for (const key of order) {
      await settle();
      reconciler.release(key);
    }
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(order);
  });

  it('runs a key queued in both lanes once, from the lane that reaches it first', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    queue.add('blocker');
    queue.add('ns/sync-1');
    queue.add('ns/sync-2');
    queue.add('ns/sync-3');
    queue.add('ns/sync-3', true);
    expect(queue.length).toBe(3);

    // ns/sync-3 runs on the urgent lane's turn, ahead of its place in the other lane, and only there.
    const order = ['blocker', 'ns/sync-1', 'ns/sync-3', 'ns/sync-2'];
    for (const key of order) {
      await settle();
      reconciler.release(key);
    }
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(order);
    expect(reconciler.lanes).toEqual([
      'blocker@changes',
      'ns/sync-1@changes',
      'ns/sync-3@urgent',
      'ns/sync-2@changes',
    ]);
  });

  it('runs the resync lane after the others, yet every sixteenth key so the backstop moves', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    queue.add('blocker');
    for (const key of ['resync-1', 'resync-2']) queue.addInBackground(key);
    const events = Array.from({ length: 20 }, (_, i) => `event-${i + 1}`);
    for (const key of events) queue.add(key);
    expect(queue.length).toBe(22);

    // Picks 2..: the sixteenth is the resync's; the events' lane otherwise, then the rest of the resync.
    const order = ['blocker', ...events.slice(0, 14), 'resync-1', ...events.slice(14), 'resync-2'];
    for (const key of order) {
      await settle();
      reconciler.release(key);
    }
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(order);
  });

  it('moves a key the resync queued up when an event asks for it, and runs it once', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    queue.add('blocker');
    for (const key of ['resync-1', 'resync-2', 'resync-3']) queue.addInBackground(key);
    queue.add('event-1');
    queue.add('resync-3');
    queue.addInBackground('event-1');
    expect(queue.length).toBe(4);

    const order = ['blocker', 'event-1', 'resync-3', 'resync-1', 'resync-2'];
    for (const key of order) {
      await settle();
      reconciler.release(key);
    }
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(order);
    // Moved up: run from the events' lane, and said so.
    expect(reconciler.lanes).toEqual([
      'blocker@changes',
      'event-1@changes',
      'resync-3@changes',
      'resync-1@resync',
      'resync-2@resync',
    ]);
  });

  it('never runs one key twice at once, even with spare concurrency', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 4);
    queue.add('ns/job');
    await settle();
    queue.add('ns/job');
    queue.add('ns/job');
    await settle();

    expect(reconciler.heldKeys).toEqual(['ns/job']);
    reconciler.release('ns/job');
    await settle();
    reconciler.release('ns/job');
    await queue.whenIdle();

    expect(reconciler.maxInFlightPerKey.get('ns/job')).toBe(1);
  });

  it('runs a key again after the run during which it was added', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 2);
    queue.add('ns/job');
    await settle();
    queue.add('ns/job');
    expect(reconciler.calls).toEqual(['ns/job']);

    reconciler.release('ns/job');
    await settle();
    expect(reconciler.calls).toEqual(['ns/job', 'ns/job']);
    reconciler.release('ns/job');
    await queue.whenIdle();
    expect(reconciler.count('ns/job')).toBe(2);
  });

  it('runs at most `concurrency` reconciles across keys and starts the next as one ends', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 2);
    for (const key of ['a', 'b', 'c', 'd']) queue.add(key);
    await settle();
    expect(reconciler.heldKeys).toEqual(['a', 'b']);
    expect(queue.length).toBe(2);

    reconciler.release('b');
    await settle();
    expect(reconciler.heldKeys).toEqual(['a', 'c']);

    reconciler.release('a');
    reconciler.release('c');
    await settle();
    reconciler.release('d');
    await queue.whenIdle();

    expect(reconciler.calls).toEqual(['a', 'b', 'c', 'd']);
    expect(reconciler.maxInFlight).toBe(2);
  });

  it('retries a failing key with exponential backoff, capped at a minute', async () => {
    const reconciler = new ScriptedReconciler().failing('ns/job', 9);
    const { queue, retryDelays } = queueFor(reconciler);
    queue.add('ns/job');
    await settle();

    const expected = [500, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000];
    for (const [attempt, delay] of expected.entries()) {
      expect(retryDelays()[attempt]).toBe(delay);
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(reconciler.count('ns/job')).toBe(attempt + 1);
      await vi.advanceTimersByTimeAsync(1);
      expect(reconciler.count('ns/job')).toBe(attempt + 2);
    }

    // The tenth call succeeded: no further retry is scheduled.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(reconciler.count('ns/job')).toBe(10);
    expect(retryDelays()).toEqual(expected);
  });

  it('starts the backoff over once a key has succeeded', async () => {
    const reconciler = new ScriptedReconciler().failing('ns/job', 2);
    const { queue, retryDelays } = queueFor(reconciler);
    queue.add('ns/job');
    await vi.advanceTimersByTimeAsync(500 + 1000);
    expect(reconciler.count('ns/job')).toBe(3);

    reconciler.failing('ns/job', 1);
    queue.add('ns/job');
    await settle();
    expect(retryDelays()).toEqual([500, 1000, 500]);
  });

  it('keeps the backoff of one key apart from another', async () => {
    const reconciler = new ScriptedReconciler().failing('bad', 3);
    const { queue, retryDelays } = queueFor(reconciler, 2);
    queue.add('bad');
    queue.add('good');
    await vi.advanceTimersByTimeAsync(500 + 1000);
    expect(retryDelays()).toEqual([500, 1000, 2000]);
    expect(reconciler.count('good')).toBe(1);
  });

  it('honours requeueAfterMs', async () => {
    const reconciler = new ScriptedReconciler().requeueing('ns/job', 5000);
    const { queue } = queueFor(reconciler);
    queue.add('ns/job');
    await settle();
    expect(reconciler.count('ns/job')).toBe(1);

    await vi.advanceTimersByTimeAsync(4999);
    expect(reconciler.count('ns/job')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(reconciler.count('ns/job')).toBe(2);
    await vi.advanceTimersByTimeAsync(5000);
    expect(reconciler.count('ns/job')).toBe(3);
  });

  it.each([
    { first: 1000, second: 5000 },
    { first: 5000, second: 1000 },
  ])(
    'addAfter($first) then addAfter($second) runs once, at the earlier deadline',
    async ({ first, second }) => {
      const reconciler = new ScriptedReconciler();
      const { queue } = queueFor(reconciler);
      queue.addAfter('ns/job', first);
      queue.addAfter('ns/job', second);

      await vi.advanceTimersByTimeAsync(999);
      expect(reconciler.count('ns/job')).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(reconciler.count('ns/job')).toBe(1);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(reconciler.count('ns/job')).toBe(1);
    },
  );

  it('compares addAfter deadlines, not delays', async () => {
    const reconciler = new ScriptedReconciler();
    const { queue } = queueFor(reconciler);
    queue.addAfter('ns/job', 3000);
    await vi.advanceTimersByTimeAsync(2000);
    // A shorter delay, but a later deadline (+3500 against the pending +3000): the pending one stays.
    queue.addAfter('ns/job', 1500);

    await vi.advanceTimersByTimeAsync(999);
    expect(reconciler.count('ns/job')).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(reconciler.count('ns/job')).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reconciler.count('ns/job')).toBe(1);
  });

  it('stop() drops queued keys, cancels timers and schedules nothing more', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls().failing('running');
    const { queue } = queueFor(reconciler, 1);
    queue.add('running');
    queue.add('queued');
    queue.addAfter('delayed', 1000);
    await settle();

    expect(vi.getTimerCount()).toBe(1);
    queue.stop();
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    queue.add('after-stop');
    queue.addAfter('after-stop-delayed', 10);
    queue.add('running'); // would normally run again once the current run ends

    reconciler.release('running'); // fails: would normally be retried after 500 ms
    await queue.whenIdle();
    await vi.advanceTimersByTimeAsync(10 * 60_000);

    expect(reconciler.calls).toEqual(['running']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('whenIdle resolves at once when idle, and otherwise once the last reconcile ends', async () => {
    const reconciler = new ScriptedReconciler().holdingCalls();
    const { queue } = queueFor(reconciler, 1);
    await expect(queue.whenIdle()).resolves.toBeUndefined();

    queue.add('a');
    queue.add('b');
    let idle = false;
    void queue.whenIdle().then(() => {
      idle = true;
    });

    reconciler.release('a');
    await settle();
    expect(idle).toBe(false);
    expect(reconciler.heldKeys).toEqual(['b']);

    reconciler.release('b');
    await settle();
    expect(idle).toBe(true);
  });
});

describe('a queue started paused', () => {
  it('collects keys but reconciles nothing until resumed, then each key once', async () => {
    const seen: string[] = [];
    const queue = new KeyedWorkQueue({
      name: 'paused',
      concurrency: 4,
      startPaused: true,
      log: pino({ level: 'silent' }),
      reconcile: async (key) => {
        seen.push(key);
        return undefined;
      },
    });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    await vi.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual([]);
    expect(queue.length).toBe(2);
    queue.resume();
    await vi.advanceTimersByTimeAsync(0);
    await queue.whenIdle();
    expect(seen.sort()).toEqual(['a', 'b']);
  });
});

describe('KeyLane', () => {
  it('hands keys out first in, first out, across its compactions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 1, max: 3000 }), fc.constant(-1)), { maxLength: 60 }),
        (steps) => {
          const lane = new KeyLane();
          // The model: keys pushed are k0, k1, ...; those from `taken` to `next` are in the lane.
          let next = 0;
          let taken = 0;
          for (const step of steps) {
            // A positive step pushes that many keys; -1 shifts up to 2,000.
            if (step > 0) for (let i = 0; i < step; i++) lane.push(`k${next++}`);
            else
              for (let i = 0; i < 2000; i++) {
                // A plain comparison: millions of expect() calls made this test slow under load.
                const key = lane.shift();
                const want = taken === next ? undefined : `k${taken++}`;
                if (key !== want) return false;
              }
            if (lane.size !== next - taken) return false;
          }
          return true;
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('TurnTakingLane', () => {
  const ownerOf = (key: string) => key.split('/')[0]!;

  it('hands out one key of each owner in turn, first in, first out within each', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            { arbitrary: fc.constantFrom('team-a', 'team-b', 'team-c'), weight: 3 },
            { arbitrary: fc.constant(null), weight: 2 },
          ),
          { maxLength: 200, size: 'max' },
        ),
        (steps) => {
          const lane = new TurnTakingLane('urgent', ownerOf);
          // The model: each owner's keys in order, and the owners in the order their turns come.
          const keys = new Map<string, string[]>();
          const rotation: string[] = [];
          let n = 0;
          for (const owner of steps) {
            if (owner !== null) {
              const key = `${owner}/k${n++}`;
              lane.push(key);
              if (!keys.get(owner)?.length) rotation.push(owner);
              keys.set(owner, [...(keys.get(owner) ?? []), key]);
            } else {
              const turn = rotation.shift();
              const want = turn === undefined ? undefined : keys.get(turn)!.shift();
              if (turn !== undefined && keys.get(turn)!.length > 0) rotation.push(turn);
              expect(lane.shift()).toBe(want);
            }
            expect(lane.size).toBe([...keys.values()].reduce((sum, k) => sum + k.length, 0));
          }
        },
      ),
    );
  });

  it('runs another namespace’s key within a turn of a backlog queued before it', async () => {
    const order: string[] = [];
    const queue = new KeyedWorkQueue({
      name: 'test',
      concurrency: 1,
      startPaused: true,
      log: pino({ level: 'silent' }),
      turnOf: ownerOf,
      reconcile: async (key) => {
        order.push(key);
        return undefined;
      },
    });
    for (let i = 0; i < 100; i++) queue.add(`busy/k${i}`, true);
    queue.add('late/k0', true);
    queue.resume();
    await queue.whenIdle();
    expect(order.indexOf('late/k0')).toBe(1);
    expect(order.filter((k) => k.startsWith('busy/'))).toEqual(
      Array.from({ length: 100 }, (_, i) => `busy/k${i}`),
    );
  });
});
