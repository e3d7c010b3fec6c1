// Prints e2e/lanes.ts's shared lanes balanced by the seconds each file took in the last
// `npm test` (its vitest reports in .test-results/): longest file first, onto the lane that would
// end first, each lane starting when its fleet does (the fleets start one after another).
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
  if (/^e2e-\d+\.json$/.test(file)) {
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
for (const name of files.sort((a, b) => (seconds.get(b) ?? 30) - (seconds.get(a) ?? 30))) {
  const lane = lanes.reduce((first, lane) => (lane.ends < first.ends ? lane : first));
  lane.ends += (seconds.get(name) ?? 30) + perFileOverhead;
  lane.files.push(name);
}
console.log('export const sharedLanes = {');
lanes.forEach((lane, i) => {
  console.log(`  // about ${Math.round(lane.ends)} s after the first fleet starts`);
  console.log(`  'e2e-${i + 1}': [${lane.files.map((f) => `'${f}'`).join(', ')}],`);
});
console.log('} as const satisfies Record<string, readonly string[]>;');
