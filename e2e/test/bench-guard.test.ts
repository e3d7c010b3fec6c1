// The benchmark's guard in CI: a short drain and its replay on the e2e fleet. It fails only
// on a collapse (dispatch under half of what the same API calls achieve replayed, ten times
// today's CPU per Job, more than 3 writes per dispatch, origin status writes beyond the mirrors'
// changes or meeting conflicts in more than 1 in 100 Jobs), never on noise: the full benchmark
// with its targets is `npm run bench` (docs/benchmarks.md). The figures are printed.

import { BenchFleet, type BenchSettings, drainBacklog, replayDispatch } from '@jobrelay/bench';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardSettings } from '../src/bench-guard-settings.ts';
import { testSandbox } from '../src/kube-test-helpers.ts';

const jobs = Number(process.env.JOBRELAY_BENCH_GUARD_JOBS ?? 300);
let fleet: BenchFleet;
let settings: BenchSettings;
const namespaces: string[] = [];

beforeAll(() => {
  const sandbox = testSandbox();
  fleet = new BenchFleet(sandbox);
  settings = guardSettings(sandbox, 'bench-guard');
});

afterAll(async () => {
  for (const namespace of namespaces) await fleet.deleteNamespace(namespace);
  await fleet.close();
});

describe(`a drain of ${jobs} claimed Jobs`, () => {
  it('costs about what its API calls cost replayed, in CPU and writes per Job', {
    timeout: 600_000,
  }, async () => {
    const run = `guard-${Date.now().toString(36)}`;
    namespaces.push(`bench-${run}-replay`, `bench-${run}-drain`);
    const replay = await replayDispatch(fleet, settings, { jobs, run: `${run}-replay` });
    const drain = await drainBacklog(fleet, settings, { jobs, run: `${run}-drain`, flushRedis: false });
    const ratioReplay = drain.dispatchJobsPerSec / replay.replayJobsPerSec;
    console.log(
      `[bench-guard] ${jobs} Jobs: dispatch ${drain.dispatchJobsPerSec.toFixed(1)} Jobs/s, replay ${replay.replayJobsPerSec.toFixed(1)} Jobs/s ` +
        `(ratio ${ratioReplay.toFixed(2)}), ${drain.controllerCpuMsPerJob.toFixed(1)} CPU ms/Job, ` +
        `${drain.writesPerDispatch.toFixed(2)} writes/dispatch, ${drain.originStatusWritesPerJob.toFixed(2)} status writes ` +
        `for ${drain.mirrorStatusChangesPerJob.toFixed(2)} mirror status changes per Job (${drain.originStatusWriteConflicts} met a conflict), ` +
        `RSS ${drain.rssMiB.toFixed(0)} MiB`,
    );
    expect(ratioReplay).toBeGreaterThan(0.5);
    expect(drain.controllerCpuMsPerJob).toBeLessThan(50);
    expect(drain.writesPerDispatch).toBeLessThan(3);
    // Coalesced: never more origin status writes than mirror status changes to show.
    expect(drain.originStatusWritesPerJob).toBeLessThanOrEqual(drain.mirrorStatusChangesPerJob + 0.05);
    // Only jobrelay writes these statuses: a conflict is a write planned from a version older than
    // its own last one (9 of 300 did before reconciles planned from their writes' answers).
    expect(drain.originStatusWriteConflicts).toBeLessThanOrEqual(jobs * 0.01);
  });
});
