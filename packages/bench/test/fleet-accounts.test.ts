// The fleet scenario's accounts from what it observed: where statuses waited, and the
// apiservers' requests per workload. Pure functions over the benchmark's own records.

import { describe, expect, it } from 'vitest';
import { dispatchSecondsOf, requestsPerJob, statusTailOf } from '../src/fleet-scale.ts';
import type { DispatchWrites } from '../src/scenarios.ts';

describe('statusTailOf', () => {
  it("splits each workload's lag at its mirror's startTime, and times the last ones from the last mirror", () => {
    // Times in ms as the watches saw them: mirror seen, its startTime seen, its origin's seen.
    const observed = {
      mirrorsSeen: new Map([
        ['a', 1_000],
        ['b', 2_000],
      ]),
      mirrorsStarted: new Map([
        ['a', 1_100],
        ['b', 2_300],
      ]),
      syncedAt: new Map([
        ['a', 5_100],
        ['b', 12_300],
      ]),
    };
    expect(statusTailOf(observed)).toEqual({
      workerMeanSeconds: 0.2, // (100 + 300) / 2 ms
      jobrelayMeanSeconds: 7, // (4,000 + 10,000) / 2 ms
      lastMirrorStartedSeconds: 0.3,
      lastOriginSyncedSeconds: 10.3,
    });
  });

  it('leaves out a workload not seen at every step from the means', () => {
    const observed = {
      mirrorsSeen: new Map([
        ['a', 0],
        ['b', 0],
      ]),
      mirrorsStarted: new Map([
        ['a', 1_000],
        ['b', 5_000],
      ]),
      // b's origin never showed a status.
      syncedAt: new Map([['a', 3_000]]),
    };
    const tail = statusTailOf(observed);
    expect(tail.workerMeanSeconds).toBe(1);
    expect(tail.jobrelayMeanSeconds).toBe(2);
  });
});

describe('requestsPerJob', () => {
  const account = (requestsByCluster: Record<string, Record<string, number>>): DispatchWrites => ({
    dispatch: 0,
    originStatus: 0,
    byCluster: {},
    requestsByCluster,
  });

  it('divides by the workloads, sums the workers, and keeps the management cluster apart', () => {
    const result = requestsPerJob(
      account({
        management: { 'PATCH batch/jobs': 1_040, 'PUT batch/jobs/status': 1_000, 'GET /secrets': 4 },
        'worker-1': { 'POST batch/jobs': 520 },
        'worker-2': { 'POST batch/jobs': 520, 'WATCH /pods': 30 },
      }),
      'management',
      1_000,
    );
    expect(result.management).toEqual({ 'PATCH batch/jobs': 1.04, 'PUT batch/jobs/status': 1 });
    expect(result.workers).toEqual({ 'POST batch/jobs': 1.04, 'WATCH /pods': 0.03 });
    // Most per workload first.
    expect(Object.keys(result.management)).toEqual(['PATCH batch/jobs', 'PUT batch/jobs/status']);
  });
});

describe('dispatchSecondsOf', () => {
  it('takes each workload with a mirror from its create, and counts them', () => {
    const created = new Map(Array.from({ length: 100 }, (_, i) => [`uid-${i}`, 1000 * i] as const));
    // Every mirror 2 s after its create, the last one 60 s after; one never placed; one seen
    // before its create's answer (0 s).
    const seen = new Map([...created].map(([uid, at]) => [uid, at + 2000] as const));
    seen.set('uid-99', 99_000 + 60_000);
    seen.delete('uid-50');
    seen.set('uid-7', 7000 - 5);
    // Of 99, the 99th percentile is the 99th value: the longest.
    expect(dispatchSecondsOf(created, seen)).toEqual({ p50: 2, p99: 60, max: 60, placed: 99 });
  });

  it('has no figures for no mirrors', () => {
    expect(dispatchSecondsOf(new Map([['a', 1]]), new Map())).toEqual({
      p50: null,
      p99: null,
      max: null,
      placed: 0,
    });
  });
});
