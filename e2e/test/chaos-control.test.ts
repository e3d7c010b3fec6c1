// The short chaos run's control (e2e/src/chaos-control.ts): its seeded mix run directly on one
// worker, no jobrelay, no faults. In `npm test` it runs in a shared lane and is saved for the
// chaos run, which runs alone on the machine afterwards and compares every origin with it.
import { afterAll, describe, expect, it } from 'vitest';
import { runChaosControl, saveChaosControl } from '../src/chaos-control.ts';
import { deletePriorityClasses } from '../src/chaos-queues.ts';
import { chaosMix } from '../src/chaos-run.ts';
import { shortChaos } from '../src/chaos-short.ts';
import { clientsFor, testSandbox } from '../src/kube-test-helpers.ts';

const sandbox = testSandbox();
const worker = clientsFor(sandbox, sandbox.workers[0]!.name);

afterAll(async () => {
  // runChaosControl makes them on the worker and leaves them to its caller.
  await deletePriorityClasses([worker]);
});

describe('the short chaos run’s control', () => {
  it(
    'runs every Job and Ray workload of the mix to its end directly on one worker',
    async () => {
      const mix = chaosMix(shortChaos.seed, shortChaos.jobs);
      const control = await runChaosControl({
        sandbox,
        seed: shortChaos.seed,
        mix,
        rayWorkloads: shortChaos.rayWorkloads,
        finishTimeoutMs: shortChaos.finishTimeoutMs,
        log: (line) => console.log(`[chaos-control] ${line}`),
      });
      expect(Object.keys(control.jobs).sort()).toEqual(mix.map((job) => job.name).sort());
      expect(Object.keys(control.ray)).toHaveLength(shortChaos.rayWorkloads);
      const saved = saveChaosControl(control);
      console.log(
        `[chaos-control] ${saved ? `saved for the chaos run: ${saved}` : 'not saved (outside npm test)'}`,
      );
    },
    10 * 60_000,
  );
});
