import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compatible,
  faultKinds,
  fullRunCounts,
  type PlannedFault,
  planFaults,
} from '../src/chaos-schedule.ts';

const workers = ['worker-1', 'worker-2', 'worker-3'];
const lostTimeoutMs = 15_000;
const fullRun = fullRunCounts(12);

const end = (f: PlannedFault) => f.atMs + f.durationMs;

describe('fullRunCounts', () => {
  it('kills a replica 12 times, a third of them the leader, and asks for every other kind', () => {
    expect(fullRun).toEqual({
      'kill-controller': 8,
      'kill-leader': 4,
      'redis-restart': 2,
      'redis-flushall': 2,
      'apiserver-hang-short': 3,
      'apiserver-hang-long': 2,
      'apiserver-down': 2,
      'etcd-restart': 2,
    });
    expect(Object.keys(fullRun).sort()).toEqual([...faultKinds].sort());
  });
});

describe('planFaults', () => {
  it('is the same schedule for the same seed, and another for another seed', () => {
    const plan = (seed: number) =>
      planFaults({ seed, windowMs: 600_000, workers, lostTimeoutMs, counts: fullRun });
    expect(plan(7)).toEqual(plan(7));
    expect(plan(7)).not.toEqual(plan(8));
  });

  it('gives every fault asked for, inside the window, with a duration fit for its kind (any seed)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const faults = planFaults({ seed, windowMs: 600_000, workers, lostTimeoutMs, counts: fullRun });
        for (const kind of faultKinds)
          expect(faults.filter((f) => f.kind === kind)).toHaveLength(fullRun[kind] ?? 0);
        for (const fault of faults) {
          expect(fault.atMs).toBeGreaterThanOrEqual(30_000);
          expect(fault.atMs).toBeLessThanOrEqual(480_000);
          if (fault.kind === 'apiserver-hang-short') expect(fault.durationMs).toBeLessThan(lostTimeoutMs);
          if (fault.kind === 'apiserver-hang-long' || fault.kind === 'apiserver-down')
            expect(fault.durationMs).toBeGreaterThan(lostTimeoutMs);
          if (fault.kind.startsWith('apiserver')) expect(workers).toContain(fault.worker);
          else expect(fault.worker).toBeUndefined();
          if (fault.kind === 'kill-controller') expect([0, 1]).toContain(fault.replica);
          else expect(fault.replica).toBeUndefined();
        }
        expect(faults.map((f) => f.atMs)).toEqual([...faults.map((f) => f.atMs)].sort((a, b) => a - b));
      }),
      { numRuns: 50 },
    );
  });

  it('never freezes one worker twice at once, nor loses two workers at once (any seed)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const faults = planFaults({ seed, windowMs: 600_000, workers, lostTimeoutMs, counts: fullRun });
        const onWorkers = faults.filter((f) => f.worker);
        for (const a of onWorkers)
          for (const b of onWorkers)
            if (a !== b && a.worker === b.worker) expect(end(a) <= b.atMs || end(b) <= a.atMs).toBe(true);
        const losses = faults.filter((f) => f.kind === 'apiserver-hang-long' || f.kind === 'apiserver-down');
        for (const a of losses)
          for (const b of losses)
            if (a !== b)
              expect(end(a) + lostTimeoutMs <= b.atMs || end(b) + lostTimeoutMs <= a.atMs).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it('lets different faults overlap (many at once, not one at a time)', () => {
    const faults = planFaults({ seed: 1, windowMs: 600_000, workers, lostTimeoutMs, counts: fullRun });
    const overlapping = faults.some((a) => faults.some((b) => a !== b && a.atMs < end(b) && b.atMs < end(a)));
    expect(overlapping).toBe(true);
  });

  it('refuses counts that do not fit the window, naming the fault', () => {
    expect(() =>
      planFaults({ seed: 1, windowMs: 60_000, workers, lostTimeoutMs, counts: { 'apiserver-down': 5 } }),
    ).toThrow(/no room for apiserver-down #\d in a 60 s window: lengthen the run or ask for fewer faults/);
  });

  it('compatible: a second restart of the same process must wait for the first', () => {
    const first: PlannedFault = { kind: 'etcd-restart', atMs: 10_000, durationMs: 3_000 };
    expect(
      compatible({ kind: 'etcd-restart', atMs: 12_000, durationMs: 3_000 }, [first], lostTimeoutMs),
    ).toBe(false);
    expect(
      compatible({ kind: 'etcd-restart', atMs: 20_000, durationMs: 3_000 }, [first], lostTimeoutMs),
    ).toBe(true);
    expect(
      compatible({ kind: 'redis-restart', atMs: 11_000, durationMs: 3_000 }, [first], lostTimeoutMs),
    ).toBe(true);
  });
});
