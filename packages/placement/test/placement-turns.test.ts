import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HIGHEST_TURN, PlacementTurns } from '../src/placement-turns.ts';

/** Redis's side of the order, as BullMQ keeps it: lowest priority number first, then first added. */
class PriorityModel {
  private added = 0;
  private readonly queued: Array<{ uid: string; namespace: string; turn: number; seq: number }> = [];
  add(uid: string, namespace: string, turn: number): void {
    if (this.queued.some((t) => t.uid === uid)) return; // the job id is the UID
    this.queued.push({ uid, namespace, turn, seq: this.added++ });
  }
  next() {
    if (this.queued.length === 0) return undefined;
    let best = 0;
    for (let i = 1; i < this.queued.length; i++) {
      const a = this.queued[i]!;
      const b = this.queued[best]!;
      if (a.turn < b.turn || (a.turn === b.turn && a.seq < b.seq)) best = i;
    }
    return this.queued.splice(best, 1)[0];
  }
  get length(): number {
    return this.queued.length;
  }
  namespaces(): Set<string> {
    return new Set(this.queued.map((t) => t.namespace));
  }
}

const namespaceOf = fc.constantFrom('team-a', 'team-b', 'team-c', 'team-d');

describe('PlacementTurns', () => {
  it('keeps a pending task’s turn when it is queued again', () => {
    const turns = new PlacementTurns();
    const first = turns.take('uid-1', 'team-a', 0);
    turns.take('uid-2', 'team-a', 0);
    expect(turns.take('uid-1', 'team-a', 5)).toBe(first);
    expect(turns.size).toBe(2);
  });

  it('places a backlog queued at once round robin across namespaces', () => {
    fc.assert(
      fc.property(fc.array(namespaceOf, { minLength: 1, maxLength: 200, size: 'max' }), (arrivals) => {
        const turns = new PlacementTurns();
        const redis = new PriorityModel();
        arrivals.forEach((namespace, i) => {
          redis.add(`uid-${i}`, namespace, turns.take(`uid-${i}`, namespace, 0));
        });
        const left = new Map<string, number>();
        for (const namespace of arrivals) left.set(namespace, (left.get(namespace) ?? 0) + 1);
        const placed = new Map<string, number>();
        for (let task = redis.next(); task; task = redis.next()) {
          turns.started(task.uid);
          turns.ended(task.uid);
          placed.set(task.namespace, (placed.get(task.namespace) ?? 0) + 1);
          left.set(task.namespace, left.get(task.namespace)! - 1);
          // Every namespace that still waits has had as many placements as any other, or one fewer.
          const waiting = [...left].filter(([, n]) => n > 0).map(([ns]) => placed.get(ns) ?? 0);
          const most = Math.max(...placed.values());
          for (const count of waiting) expect(most - count).toBeLessThanOrEqual(1);
        }
        expect(turns.size).toBe(0);
      }),
    );
  });

  it('never passes over a namespace’s next task with more than two tasks of any other namespace', () => {
    // Any mix of arrivals and placements, one at a time (a worker of concurrency 1): each
    // namespace's oldest queued task counts the other namespaces' placements since it became so.
    // More arrivals than placements, so backlogs build up and namespaces join them mid-way.
    const step = fc.oneof(
      { arbitrary: fc.record({ op: fc.constant('arrive' as const), namespace: namespaceOf }), weight: 3 },
      { arbitrary: fc.record({ op: fc.constant('place' as const) }), weight: 2 },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 20, maxLength: 300, size: 'max' }), (steps) => {
        const turns = new PlacementTurns();
        const redis = new PriorityModel();
        const queuedByNamespace = new Map<string, string[]>();
        const passedOver = new Map<string, Map<string, number>>(); // by namespace: its head's count
        let n = 0;
        for (const s of steps) {
          if (s.op === 'arrive') {
            const uid = `uid-${n++}`;
            const queue = queuedByNamespace.get(s.namespace) ?? [];
            if (queue.length === 0) passedOver.set(s.namespace, new Map());
            queue.push(uid);
            queuedByNamespace.set(s.namespace, queue);
            redis.add(uid, s.namespace, turns.take(uid, s.namespace, 0));
            continue;
          }
          const task = redis.next();
          if (!task) continue;
          turns.started(task.uid);
          turns.ended(task.uid);
          const queue = queuedByNamespace.get(task.namespace)!;
          expect(queue.shift()).toBe(task.uid); // first come, first served within a namespace
          passedOver.set(task.namespace, new Map());
          for (const [namespace, counts] of passedOver) {
            if (namespace === task.namespace || queuedByNamespace.get(namespace)?.length === 0) continue;
            const count = (counts.get(task.namespace) ?? 0) + 1;
            counts.set(task.namespace, count);
            expect(count).toBeLessThanOrEqual(2);
          }
        }
      }),
    );
  });

  it('keeps every turn within BullMQ’s priorities and starts again from 1 when nothing waits', () => {
    fc.assert(
      fc.property(fc.array(namespaceOf, { minLength: 1, maxLength: 50 }), (arrivals) => {
        const turns = new PlacementTurns();
        const uids = arrivals.map((namespace, i) => {
          const turn = turns.take(`uid-${i}`, namespace, 0);
          expect(turn).toBeGreaterThanOrEqual(1);
          expect(turn).toBeLessThanOrEqual(HIGHEST_TURN);
          return `uid-${i}`;
        });
        for (const uid of uids) turns.started(uid);
        // Nothing waits for a first attempt: the next task, of any namespace, has turn 1.
        expect(turns.take('later', 'team-a', 0)).toBe(1);
      }),
    );
  });

  it('a retry keeps its turn and does not move the turn being served', () => {
    const turns = new PlacementTurns();
    for (let i = 0; i < 5; i++) turns.take(`a-${i}`, 'team-a', 0);
    turns.started('a-0'); // unschedulable: stays pending for a retry
    turns.started('a-1');
    turns.ended('a-1');
    turns.started('a-0'); // the retry
    expect(turns.take('a-0', 'team-a', 0)).toBe(1);
    // team-b arrives while turn 2 is served: it goes next.
    expect(turns.take('b-0', 'team-b', 0)).toBe(3);
  });

  it('says how long the oldest task not yet attempted has waited', () => {
    const turns = new PlacementTurns();
    expect(turns.oldestWaitingMs(1000)).toBe(0);
    turns.take('first', 'team-a', 100);
    turns.take('second', 'team-b', 400);
    expect(turns.oldestWaitingMs(1000)).toBe(900);
    turns.started('first'); // a retry from here on waits for room, not for a worker
    expect(turns.oldestWaitingMs(1000)).toBe(600);
    turns.ended('second');
    expect(turns.oldestWaitingMs(1000)).toBe(0);
    expect([...turns.waitingOldestFirst()]).toEqual([]);
    turns.take('fourth', 'team-b', 950);
    turns.take('fifth', 'team-a', 960);
    expect([...turns.waitingOldestFirst()]).toEqual([
      { uid: 'fourth', enqueuedAt: 950 },
      { uid: 'fifth', enqueuedAt: 960 },
    ]);
    turns.ended('fourth');
    turns.ended('fifth');
    // A gone workload's task frees its place.
    turns.take('third', 'team-a', 900);
    turns.ended('third');
    expect(turns.oldestWaitingMs(1000)).toBe(0);
  });
});
