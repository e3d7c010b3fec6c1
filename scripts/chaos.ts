// `npm run chaos -- --seed N`: the chaos run at length (e2e/src/chaos-run.ts says what it does and
// counts). Starts (or reuses) a sandbox of one management cluster and three workers, runs a seeded
// mix of Jobs through two controller replicas while a seeded schedule of faults hits them, prints
// the figures, writes docs/reliability/latest.json and a dated copy, and exits 1 when any figure
// that must be 0 is not.
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { registerSandboxWorkers, repositoryRoot, sandboxDown, sandboxUp } from '@jobrelay/sandbox';
import { type ChaosReport, runChaos } from '../e2e/src/chaos-run.ts';
import { fullRunCounts } from '../e2e/src/chaos-schedule.ts';
import { integerOption } from './cli-arguments.ts';

const usage = `usage: npm run chaos -- [--seed N] [--jobs N] [--ray N] [--window-seconds N] [--controller-kills N] [--out FILE] [--sandbox-dir DIR]

  --seed             the seed of the Job mix and of the fault schedule (default: a random one, printed)
  --jobs             Jobs dispatched (default 500); each also runs once directly on worker-1, without faults
  --ray              KubeRay workloads (RayClusters and RayJobs) among them (default: one per 50 Jobs, at least 2)
  --window-seconds   Jobs arrive and faults start within this window (default 600)
  --controller-kills SIGKILLs of a controller replica, a third of them of the leader (default 12)
  --lost-timeout     the controllers' --worker-lost-timeout-seconds (default 15)
  --out FILE         write the report here instead of docs/reliability/latest.json and its dated copy
  --sandbox-dir DIR  the fleet to start or reuse (default .sandbox-chaos); one started here is stopped at the end`;

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    jobs: { type: 'string' },
    ray: { type: 'string' },
    'window-seconds': { type: 'string' },
    'controller-kills': { type: 'string' },
    'lost-timeout': { type: 'string' },
    out: { type: 'string' },
    'sandbox-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const seed = integerOption('seed', values.seed, Math.floor(Math.random() * 2 ** 31), { min: 0, usage });
const jobs = integerOption('jobs', values.jobs, 500, { min: 1, usage });
const rayWorkloads = integerOption('ray', values.ray, Math.max(2, Math.floor(jobs / 50)), { min: 0, usage });
const windowSeconds = integerOption('window-seconds', values['window-seconds'], 600, { min: 60, usage });
const kills = integerOption('controller-kills', values['controller-kills'], 12, { min: 0, usage });
const lostTimeoutSeconds = integerOption('lost-timeout', values['lost-timeout'], 15, { min: 1, usage });
const dir = resolve(values['sandbox-dir'] ?? join(repositoryRoot, '.sandbox-chaos'));
const counts = fullRunCounts(kills);

console.log(
  `chaos: seed ${seed}, ${jobs} Jobs and ${rayWorkloads} Ray workloads, ${windowSeconds} s (replay: npm run chaos -- --seed ${seed} --jobs ${jobs} --ray ${rayWorkloads} --window-seconds ${windowSeconds})`,
);
const wasRunning = existsSync(join(dir, 'state.json'));
const { sandbox } = await sandboxUp({ dir, workers: 3, log: (line) => console.log(`[sandbox] ${line}`) });
await registerSandboxWorkers(sandbox);
let report: ChaosReport;
try {
  report = await runChaos({
    sandbox,
    seed,
    jobs,
    rayWorkloads,
    windowMs: windowSeconds * 1000,
    lostTimeoutSeconds,
    counts,
    finishTimeoutMs: 15 * 60_000,
    log: (line) => console.log(`[chaos] ${line}`),
  });
} finally {
  // The controllers' and the clusters' logs outlive a sandbox started here: a broken invariant
  // is investigated from them (.sandbox-* is ignored by git).
  const kept = join(repositoryRoot, '.sandbox-chaos-logs', `seed-${seed}-${Date.now()}`);
  cpSync(join(dir, 'logs'), kept, { recursive: true });
  console.log(`logs kept in ${kept}`);
  if (!wasRunning) await sandboxDown(dir);
}

const mustBeZero = [
  'lost',
  'duplicateMirrors',
  'rejectedStatusWrites',
  'orphanMirrors',
  'wrongFinalStatus',
] as const;
for (const key of [
  ...mustBeZero,
  'refusedStatusWrites',
  'finishedWithoutMirror',
  'staleMirrorsAfterReturn',
  'maxStaleSecondsAfterReturn',
  'faultsInjected',
  'moved',
  'maxRecoverySeconds',
] as const)
  console.log(`${key.padEnd(22)} ${report[key]}`);
for (const fault of report.faults)
  console.log(
    `  ${(fault.atMs / 1000).toFixed(0).padStart(4)} s ${fault.kind}${fault.worker ? ` ${fault.worker}` : ''}: ${(fault.durationMs / 1000).toFixed(1)} s, recovered in ${fault.recoverySeconds?.toFixed(1) ?? 'never'} s${fault.error ? ` (${fault.error})` : ''}`,
  );
for (const w of report.wrong)
  console.log(
    `wrong: ${w.job}${w.moved ? ' (moved)' : ''} ${w.summary}\n    ${w.differences.join('\n    ')}`,
  );
// The queues (e2e/src/chaos-queues.ts): quota checked at every sample, never to be exceeded.
for (const q of report.queues)
  console.log(
    `queue ${q.name} (cohort ${q.cohort}): ${q.jobs} Jobs, cpu ${q.nominalCpu} nominal${q.borrowingLimitCpu !== undefined ? `, borrowing at most ${q.borrowingLimitCpu}` : ''}${q.lendingLimitCpu !== undefined ? `, lending at most ${q.lendingLimitCpu}` : ''}; withinQueue ${q.withinQueue}, reclaimWithinCohort ${q.reclaimWithinCohort}; at most ${report.maxQuotaUsed[q.name] ?? 0} cpu held, ${report.maxRunningCpu[q.name]?.current ?? 0} running (${report.maxRunningCpu[q.name]?.all ?? 0} with terminating and stale pods)`,
  );
for (const [key, value] of [
  ['quotaSamples', report.quotaSamples],
  ['quotaExceeded', report.quotaExceeded.length],
  ['placedWithoutQueue', report.placedWithoutQueue.length],
  ['queueWaits', report.queueWaits],
  ['maxQueuePending', report.maxQueuePending],
  ['preemptions', report.preemptions],
  ['runningOverQuota', report.runningOverQuota.length],
] as const)
  console.log(`${key.padEnd(22)} ${value}`);
for (const e of report.quotaExceeded)
  console.log(
    `quota exceeded (${e.by}) at ${(e.atMs / 1000).toFixed(1)} s: ${e.queue} ${e.resource} ${e.used} of ${e.limit}`,
  );
for (const o of report.runningOverQuota)
  console.log(
    `running over quota at ${(o.atMs / 1000).toFixed(1)} s: ${o.queue} ${o.resource} ${o.used} of ${o.limit} (current ${o.current}, terminating ${o.terminating}, stale ${o.stale})`,
  );
for (const job of report.placedWithoutQueue) console.log(`placed without its queue: ${job}`);
for (const d of report.duplicates)
  console.log(
    `duplicate: ${d.job} on ${d.mirrors.map((m) => `${m.cluster} (attempt ${m.attempt})`).join(' and ')} at ${d.atSeconds.toFixed(1)} s`,
  );
const output = {
  date: new Date().toISOString(),
  machine: { cores: cpus().length, model: cpus()[0]?.model },
  command: `npm run chaos -- --seed ${seed} --jobs ${jobs} --ray ${rayWorkloads} --window-seconds ${windowSeconds} --controller-kills ${kills} --lost-timeout ${lostTimeoutSeconds}`,
  ...report,
};
const files = values.out
  ? [resolve(values.out)]
  : [
      join(repositoryRoot, 'docs/reliability/latest.json'),
      join(repositoryRoot, `docs/reliability/${output.date.slice(0, 10)}-seed-${seed}.json`),
    ];
for (const file of files) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${file}`);
}
const failed: string[] = mustBeZero.filter((key) => report[key] !== 0);
if (report.quotaExceeded.length > 0) failed.push('quotaExceeded');
if (report.placedWithoutQueue.length > 0) failed.push('placedWithoutQueue');
console.log(failed.length === 0 ? 'every invariant held' : `broken: ${failed.join(', ')} (seed ${seed})`);
process.exit(failed.length === 0 ? 0 : 1);
