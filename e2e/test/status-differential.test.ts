// The status differential, short: a seeded mix of Jobs across every mode, each run through
// jobrelay and directly on the same worker; the origin's final status must equal the direct
// run's, whole, timestamps aside (src/status-differential.ts). The long run of the same check:
// `npm run differential -- --jobs 300 --seed N`.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { testSandbox } from '../src/kube-test-helpers.ts';
import { formatReport, isClean, runStatusDifferential } from '../src/status-differential.ts';

// Fixed so that a failure names a mix anyone can replay; JOBRELAY_DIFFERENTIAL_SEED explores others.
const SEED = Number(process.env.JOBRELAY_DIFFERENTIAL_SEED ?? 20261130);
const JOBS = 30;

let controller: ControllerProcess;

beforeAll(() => {
  controller = startController(testSandbox());
});

afterAll(async () => {
  await controller?.kill('SIGTERM');
});

it(`${JOBS} Jobs of seed ${SEED} end on the origin exactly as on one cluster`, {
  timeout: 600_000,
}, async () => {
  // One block of output at the end rather than a line per Job (vitest frames each log call).
  const progress: string[] = [`status differential: seed ${SEED}, ${JOBS} Jobs`];
  const report = await runStatusDifferential({
    sandbox: testSandbox(),
    seed: SEED,
    jobs: JOBS,
    log: (line) => progress.push(line),
  });
  console.log(`${progress.join('\n')}\n${formatReport(report)}`);
  expect(isClean(report), 'every difference is listed above, under its Job').toBe(true);
});
