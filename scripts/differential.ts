// `npm run differential -- --jobs 300 --seed N`: the status differential at length. Starts (or
// reuses) the e2e fleet as the e2e set-up does, starts the controller, runs a seeded mix of Jobs
// through jobrelay and directly on one worker, prints the seed and every difference, and exits
// 1 on any (e2e/src/status-differential.ts says what is compared).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { registerSandboxWorkers, repositoryRoot, sandboxDown, sandboxUp } from '@jobrelay/sandbox';
import { startController } from '../e2e/src/controller-process.ts';
import { formatReport, isClean, runStatusDifferential } from '../e2e/src/status-differential.ts';
import { integerOption } from './cli-arguments.ts';

const usage = `usage: npm run differential -- [--jobs N] [--seed N] [--concurrency N] [--sandbox-dir DIR]

  --jobs         Jobs in the mix (default 300)
  --seed         the mix's seed (default: a random one, printed)
  --concurrency  Jobs in flight at once, each run three times (default 10)
  --sandbox-dir  the fleet to start or reuse (default: $JOBRELAY_E2E_SANDBOX_DIR, else .sandbox-e2e);
                 a fleet started here is stopped at the end`;

const { values } = parseArgs({
  options: {
    jobs: { type: 'string' },
    seed: { type: 'string' },
    concurrency: { type: 'string' },
    'sandbox-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const jobs = integerOption('jobs', values.jobs, 300, { min: 0, usage });
const seed = integerOption('seed', values.seed, Math.floor(Math.random() * 2 ** 31), { min: 0, usage });
const concurrency = Math.max(1, integerOption('concurrency', values.concurrency, 10, { min: 0, usage }));
const dir = resolve(
  values['sandbox-dir'] ?? process.env.JOBRELAY_E2E_SANDBOX_DIR ?? join(repositoryRoot, '.sandbox-e2e'),
);

console.log(
  `status differential: seed ${seed}, ${jobs} Jobs (replay: npm run differential -- --jobs ${jobs} --seed ${seed})`,
);
const wasRunning = existsSync(join(dir, 'state.json'));
const { sandbox } = await sandboxUp({ dir, workers: 3, log: (line) => console.log(`[sandbox] ${line}`) });
await registerSandboxWorkers(sandbox);
const controller = startController(sandbox);
let clean = false;
try {
  const report = await runStatusDifferential({
    sandbox,
    seed,
    jobs,
    concurrency,
    log: (line) => console.log(`[differential] ${line}`),
  });
  console.log(formatReport(report));
  clean = isClean(report);
} finally {
  await controller.kill('SIGTERM');
  console.log(`controller log: ${controller.logFile}`);
  if (!wasRunning) await sandboxDown(dir);
}
console.log(clean ? 'no difference' : `differences found (seed ${seed})`);
process.exit(clean ? 0 : 1);
