// Where a run's CPU goes, by kind of process: samples every process in /proc once a second and,
// when stopped (SIGINT, SIGTERM, or the command it ran exits), prints the CPU seconds each kind
// used while it watched. A process that starts and ends between two samples is missed, and one
// that ends loses at most its last second: both small beside a test run's minutes.
//
//   node scripts/cpu-by-process.ts [--every-seconds N] [-- COMMAND ARGS...]
//
// With a command, it runs the command and stops when the command ends; without one, it runs until
// stopped. Linux only (/proc). How npm test spent its CPU, for instance:
//   node scripts/cpu-by-process.ts -- npm test
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { 'every-seconds': { type: 'string', default: '1' } },
  allowPositionals: true,
});
const everyMs = Number(values['every-seconds']) * 1000;
if (!(everyMs > 0)) throw new Error('--every-seconds must be a positive number');

/** Clock ticks per second: 100 on every Linux this runs on (getconf CLK_TCK). */
const ticksPerSecond = 100;
const thirdParty = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
  'kwok',
  'ray-operator',
  'jobset-manager',
  'kueue-manager',
  'redis-server',
  'chromium',
  'helm',
  'promtool',
];

/** The kind of a process: the binary's name, and for Node what it runs. */
function kindOf(argv: string[], comm: string): string {
  const binary = basename(argv[0] ?? comm);
  const known = thirdParty.find((name) => binary.startsWith(name) || comm.startsWith(name));
  if (known) return known;
  if (binary === 'node' || comm === 'node' || comm.startsWith('node-')) {
    const line = argv.join(' ');
    if (line.includes('apps/controller/src/main.ts')) return 'node: controller';
    if (line.includes('apps/api/src/main.ts')) return 'node: admin API';
    if (line.includes('vitest')) return 'node: vitest (tests and harness)';
    if (line.includes('packages/sandbox/src/cli.ts')) return 'node: sandbox CLI';
    return `node: ${basename(argv.find((arg, i) => i > 0 && !arg.startsWith('-')) ?? '?')}`;
  }
  return comm;
}

interface Seen {
  kind: string;
  /** Ticks when first seen (0 for a process born while watching: all of its time counts). */
  first: number;
  last: number;
}
const seen = new Map<string, Seen>();
let firstRound = true;

function sample(): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended since the listing
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    // A PID is reused: with its start time it names one process.
    const key = `${pid}@${fields[19]}`;
    const known = seen.get(key);
    if (known) {
      known.last = ticks;
      continue;
    }
    let argv: string[] = [];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {}
    seen.set(key, { kind: kindOf(argv, comm), first: firstRound ? ticks : 0, last: ticks });
  }
  firstRound = false;
}

function report(watchedMs: number): void {
  const byKind = new Map<string, number>();
  for (const { kind, first, last } of seen.values())
    byKind.set(kind, (byKind.get(kind) ?? 0) + (last - first) / ticksPerSecond);
  const total = [...byKind.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\nCPU by kind of process over ${(watchedMs / 1000).toFixed(0)} s: ${total.toFixed(0)} CPU-s (${(total / (watchedMs / 1000)).toFixed(2)} cores on average)`,
  );
  for (const [kind, seconds] of [...byKind].sort((a, b) => b[1] - a[1])) {
    if (seconds < 0.5) continue;
    console.log(
      `${seconds.toFixed(1).padStart(8)} s ${((100 * seconds) / total).toFixed(1).padStart(5)} %  ${kind}`,
    );
  }
}

const began = Date.now();
sample();
const timer = setInterval(sample, everyMs);
const finish = (code: number) => {
  clearInterval(timer);
  sample();
  report(Date.now() - began);
  process.exit(code);
};
process.on('SIGINT', () => finish(130));
process.on('SIGTERM', () => finish(143));
if (positionals.length > 0) {
  const child = spawn(positionals[0]!, positionals.slice(1), { stdio: 'inherit' });
  child.on('exit', (code) => finish(code ?? 1));
}
