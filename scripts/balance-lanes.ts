// Prints e2e/lanes.ts's shared lanes balanced by the seconds each file took in the last
// `npm test` (its vitest reports in .test-results/): longest file first, onto the lane that would
// end first, each lane starting when its fleet does (the fleets start one after another); the
// lanes run their files in the order printed (e2e/src/lane-sequencer.ts).
//
//   node scripts/balance-lanes.ts [--lanes N]
//
// Paste the output over `sharedLanes` (a file the last run did not run counts as 30 s).
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { exclusiveLane, laneFiles } from '../e2e/lanes.ts';
import { fileSeconds, readVitestReport } from './vitest-reports.ts';

const { values } = parseArgs({ options: { lanes: { type: 'string', default: '4' } } });
const laneCount = Number(values.lanes);
if (!Number.isInteger(laneCount) || laneCount < 1) throw new Error('--lanes must be a whole number from 1');

const results = join(import.meta.dirname, '..', '.test-results');
const seconds = new Map<string, number>();
const fleetSeconds: number[] = [];
for (const file of readdirSync(results)) {
  // The exclusive lane's report too: a file moved from it to a shared lane keeps its seconds.
  if (/^e2e-(\d+|exclusive)\.json$/.test(file)) {
    for (const result of readVitestReport(join(results, file))?.testResults ?? [])
      seconds.set(basename(result.name, '.test.ts'), fileSeconds(result));
  }
  const fleetLog = /^e2e-\d+-fleet\.log$/.test(file) ? readFileSync(join(results, file), 'utf8') : '';
  const ready = /sandbox ready in ([\d.]+)s/.exec(fleetLog);
  if (ready) fleetSeconds.push(Number(ready[1]));
}
const perFleet = fleetSeconds.length ? fleetSeconds.reduce((a, b) => a + b) / fleetSeconds.length : 40;
const exclusive = new Set<string>(exclusiveLane);
const files = Object.values(laneFiles())
  .flat()
  .map((path) => basename(path, '.test.ts'))
  .filter((name) => !exclusive.has(name));
// A file's own start (a fresh worker, its imports) costs a few seconds beyond its tests.
const perFileOverhead = 4;
const lanes = Array.from({ length: laneCount }, (_, i) => ({
  ends: perFleet * (i + 1),
  files: [] as string[],
}));
// The short chaos run goes with its control run, onto one lane (it reuses the control the lane
// ran before it), last on that lane (no file after it on the fleet it faulted), and not on the
// first lane, whose fleet the exclusive lane uses next.
const chaosPair = ['chaos-control', 'chaos'];
const secondsOf = (name: string) => seconds.get(name) ?? 30;
const units = [chaosPair, ...files.filter((name) => !chaosPair.includes(name)).map((name) => [name])].sort(
  (a, b) => b.reduce((t, n) => t + secondsOf(n), 0) - a.reduce((t, n) => t + secondsOf(n), 0),
);
for (const unit of units) {
  const eligible = unit === chaosPair && lanes.length > 1 ? lanes.slice(1) : lanes;
  const lane = eligible.reduce((first, lane) => (lane.ends < first.ends ? lane : first));
  for (const name of unit) lane.ends += secondsOf(name) + perFileOverhead;
  lane.files.push(...unit.filter((name) => name !== 'chaos'));
}
for (const lane of lanes) if (lane.files.includes('chaos-control')) lane.files.push('chaos');
console.log('export const sharedLanes = {');
lanes.forEach((lane, i) => {
  console.log(`  // about ${Math.round(lane.ends)} s after the first fleet starts`);
  console.log(`  'e2e-${i + 1}': [${lane.files.map((f) => `'${f}'`).join(', ')}],`);
});
console.log('} as const satisfies Record<string, readonly string[]>;');
