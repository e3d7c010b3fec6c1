import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxRememberedPlacements, PlacementLog } from '../src/placement-log.ts';
import {
  bucketByMinute,
  minuteStarts,
  nearestRank,
  placementHistory,
  QueueDepthHistory,
} from '../src/stats-history.ts';

const now = Date.parse('2026-12-01T12:00:30Z');
const minute = 60_000;

describe('minuteStarts and bucketByMinute', () => {
  it('gives clock-aligned minutes, oldest first, the last one holding now', () => {
    const starts = minuteStarts(now, 3);
    expect(starts.map((t) => new Date(t).toISOString())).toEqual([
      '2026-12-01T11:58:00.000Z',
      '2026-12-01T11:59:00.000Z',
      '2026-12-01T12:00:00.000Z',
    ]);
  });

  it('puts each time in its minute and leaves out those outside the window', () => {
    const times = [now, now - 30_000, now - 31_000, now - 3 * minute, now + minute];
    expect(bucketByMinute(times, (t) => t, now, 3)).toEqual([[], [now - 31_000], [now, now - 30_000]]);
  });

  it('keeps exactly the items within the window, each once, in the minute whose start is at or before it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: now - 90 * minute, max: now + 5 * minute })),
        fc.integer({ min: 1, max: 90 }),
        (times, minutes) => {
          const buckets = bucketByMinute(times, (t) => t, now, minutes);
          const starts = minuteStarts(now, minutes);
          expect(buckets).toHaveLength(minutes);
          const end = starts.at(-1)! + minute;
          expect(buckets.flat().length).toBe(times.filter((t) => t >= starts[0]! && t < end).length);
          buckets.forEach((bucket, i) => {
            for (const t of bucket) {
              expect(t).toBeGreaterThanOrEqual(starts[i]!);
              expect(t).toBeLessThan(starts[i]! + minute);
            }
          });
        },
      ),
    );
  });
});

describe('nearestRank', () => {
  it('picks the nearest-rank quantile', () => {
    expect(nearestRank([], 0.5)).toBeUndefined();
    expect(nearestRank([1, 2, 3, 4], 0.5)).toBe(2);
    expect(nearestRank([1, 2, 3, 4], 0.95)).toBe(4);
    expect(nearestRank([7], 0)).toBe(7);
  });
});

describe('placementHistory', () => {
  it('counts placements per cluster per minute (every registered cluster listed) and the latency of first placements', () => {
    const history = placementHistory(
      [
        { cluster: 'w1', at: now - 10_000, latencyMs: 2_000 },
        { cluster: 'w1', at: now - 20_000, latencyMs: 4_000 },
        { cluster: 'w2', at: now - 70_000, latencyMs: undefined },
      ],
      ['w3', 'w1'],
      now,
      3,
    );
    expect(history.placementsPerCluster).toEqual([
      { cluster: 'w1', perMinute: [0, 0, 2] },
      { cluster: 'w2', perMinute: [0, 1, 0] },
      { cluster: 'w3', perMinute: [0, 0, 0] },
    ]);
    expect(history.dispatchLatency).toEqual([
      { count: 0, medianSeconds: null, p95Seconds: null, maxSeconds: null },
      { count: 0, medianSeconds: null, p95Seconds: null, maxSeconds: null },
      { count: 2, medianSeconds: 2, p95Seconds: 4, maxSeconds: 4 },
    ]);
  });
});

describe('QueueDepthHistory', () => {
  it('keeps the last samples only, oldest first, however many were recorded', () => {
    const ring = new QueueDepthHistory(3);
    for (let i = 1; i <= 5; i++) ring.record({ at: i, pending: i, queued: null });
    expect(ring.samples(0).map((s) => s.at)).toEqual([3, 4, 5]);
    expect(ring.samples(4).map((s) => s.at)).toEqual([4, 5]);
    expect(() => new QueueDepthHistory(0)).toThrow(/positive integer, not 0/);
  });
});

describe('PlacementLog for the charts', () => {
  it('remembers an hour, with the latency of first attempts from creation to placement', () => {
    const log = new PlacementLog();
    const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();
    log.add('a', 1, 'w1', ago(50 * 60), now, ago(50 * 60 + 3));
    log.add('b', 2, 'w2', ago(10), now, ago(100));
    log.add('c', 1, 'w1', ago(61 * 60), now, ago(62 * 60));
    expect(log.placements(now)).toEqual([
      { cluster: 'w1', at: now - 50 * 60_000, latencyMs: 3_000 },
      { cluster: 'w2', at: now - 10_000, latencyMs: undefined },
    ]);
    // The queue view still shows 10 minutes.
    expect(log.perMinute(now).get('w1')).toBeUndefined();
  });

  it('stays bounded: beyond the limit the oldest placements are forgotten', () => {
    const log = new PlacementLog();
    const at = new Date(now).toISOString();
    for (let i = 0; i <= maxRememberedPlacements; i++) log.add(`uid-${i}`, 1, 'w1', at, now);
    expect(log.placements(now)).toHaveLength(maxRememberedPlacements);
  });
});
