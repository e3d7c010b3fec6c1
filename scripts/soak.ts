// `npm run soak`: resource bounds over a long run (issue 12). Starts (or reuses) the benchmark's
// sandbox, sends --jobs Jobs that finish at once (completions 0, deleted by their TTL once
// Complete) through one controller at --rate a second, and reads the controller's memory and
// Redis every --sample-every Jobs (the heap after a full collection) and once more when everything
// is gone. Prints the readings,
// writes docs/reliability/soak-latest.json and a dated copy, and exits 1 on a Job never seen
// Complete, on Redis keeping keys after the run, or on controller memory that grew with the
// number of Jobs dispatched rather than present.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BenchFleet, type BenchSettings, soak } from '@jobrelay/bench';
import { controllerEnvironment, controllerNodeFlags } from '@jobrelay/controller/node-flags';
import { registerSandboxWorkers, repositoryRoot, sandboxUp } from '@jobrelay/sandbox';
import { integerOption } from './cli-arguments.ts';

const usage = `usage: npm run soak -- [--jobs N] [--rate N] [--sample-every N] [--sandbox-dir DIR] [--out FILE]

  --jobs N          Jobs sent through the controller (default 10000)
  --rate N          Jobs created per second (default 25)
  --sample-every N  read memory every N Jobs (default 1000)
  --sandbox-dir DIR the fleet to start or reuse (default .sandbox-bench-perf, the benchmark's)
  --out FILE        write the JSON here instead of docs/reliability/soak-latest.json and its dated copy`;

const { values } = parseArgs({
  options: {
    jobs: { type: 'string' },
    rate: { type: 'string' },
    'sample-every': { type: 'string' },
    'sandbox-dir': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const jobs = integerOption('jobs', values.jobs, 10_000, { min: 1, usage });
const ratePerSec = integerOption('rate', values.rate, 25, { min: 1, usage });
const sampleEvery = integerOption('sample-every', values['sample-every'], 1000, { min: 1, usage });
const dir = resolve(values['sandbox-dir'] ?? join(repositoryRoot, '.sandbox-bench-perf'));
const log = (line: string) => console.log(`[soak] ${line}`);
const heapDir = join(dir, 'logs', 'soak', 'heap');

const { sandbox } = await sandboxUp({ dir, workers: 3, log });
await registerSandboxWorkers(sandbox);
const fleet = new BenchFleet(sandbox);
const settings: BenchSettings = {
  concurrency: 16,
  controllerRuntime: { nodeFlags: controllerNodeFlags, environment: controllerEnvironment },
  workerQps: 50,
  workerBurst: 100,
  controllerArgs: [],
  // Each reading follows a heap snapshot (a full collection): the heap read is what is kept.
  nodeArgs: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`],
  logDir: join(dir, 'logs', 'soak'),
  log,
};
const run = `soak-${Date.now().toString(36)}`;
log(`${jobs} Jobs at ${ratePerSec}/s in namespace bench-${run}`);
let result: Awaited<ReturnType<typeof soak>>;
try {
  // Settle: the mirrors' 30 s retention and one 30 s resync after the last origin is gone.
  result = await soak(fleet, settings, {
    jobs,
    ratePerSec,
    sampleEvery,
    run,
    settleSeconds: 40,
    heapSnapshotDir: heapDir,
  });
} finally {
  await fleet.deleteNamespace(`bench-${run}`).catch(() => {});
  await fleet.close();
}

// The first reading with Jobs flowing is the reference: startup is behind it.
const reference = result.samples.find((s) => s.created >= sampleEvery) ?? result.samples[0]!;
const problems: string[] = [];
if (result.lost > 0) problems.push(`${result.lost} Jobs never seen Complete`);
// BullMQ's own keys (the queue's meta, id counter, events stream) stay; finished entries must not.
if (result.settled.redisKeys > 20)
  problems.push(`Redis keeps ${result.settled.redisKeys} keys after the run`);
if (result.settled.controllerHeapUsedMiB > reference.controllerHeapUsedMiB * 1.5)
  problems.push(
    `the controller's heap grew from ${reference.controllerHeapUsedMiB.toFixed(0)} to ${result.settled.controllerHeapUsedMiB.toFixed(0)} MiB`,
  );
const output = {
  date: new Date().toISOString(),
  machine: { cores: cpus().length, model: cpus()[0]?.model },
  command: `npm run soak -- --jobs ${jobs} --rate ${ratePerSec} --sample-every ${sampleEvery}`,
  ...result,
  problems,
};
const files = values.out
  ? [resolve(values.out)]
  : [
      join(repositoryRoot, 'docs/reliability/soak-latest.json'),
      join(repositoryRoot, `docs/reliability/${output.date.slice(0, 10)}-soak.json`),
    ];
for (const file of files) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  log(`wrote ${file}`);
}
log(
  problems.length === 0
    ? 'bounded: nothing grew with the Jobs dispatched'
    : `problems: ${problems.join('; ')}`,
);
process.exit(problems.length === 0 ? 0 : 1);
