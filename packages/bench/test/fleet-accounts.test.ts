// The fleet scenario's accounts from what it observed: where statuses waited, and the
// apiservers' requests per workload. Pure functions over the benchmark's own records.

import { describe, expect, it } from 'vitest';
import { requestsPerJob, statusTailOf } from '../src/fleet-scale.ts';
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
