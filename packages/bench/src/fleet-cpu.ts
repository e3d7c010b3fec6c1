import { readFileSync } from 'node:fs';
import { sandboxProcessIds } from '@jobrelay/sandbox';
import { clockTicksPerSecond, processUsage } from './process-usage.ts';

/**
 * CPU time of everything a scenario runs on this machine, by part: the sandbox's processes
 * (etcd, each cluster's apiserver and controllers, KWOK, the ray-operators, Redis), the
 * controller under test and the benchmark's own process (its clients and watches), and the
 * machine's busy time as the kernel counts it (/proc/stat: every process, this one included).
 * On two cores every part competes with every other, so a dispatch that costs the apiservers
 * or Redis more slows the drain as surely as the controller's own CPU does; this is the
 * account that says which.
 */
export type FleetCpu = Record<string, number>;

/** The part a sandbox process belongs to: management and worker apiservers apart, the rest by program. */
export function fleetPart(processName: string): string {
  const [cluster, program] = processName.includes('/') ? processName.split('/', 2) : ['', processName];
  if (program === 'kube-apiserver')
    return cluster === 'management' ? 'apiserver (management)' : 'apiservers (workers)';
  return program!;
}

/** Every part's CPU so far, in ms; `machineBusy` is the whole machine's (all cores summed). */
export function readFleetCpu(sandboxDir: string, extra: Record<string, () => number> = {}): FleetCpu {
  const cpu: FleetCpu = {};
  for (const { name, pid } of sandboxProcessIds(sandboxDir)) {
    const part = fleetPart(name);
    try {
      cpu[part] = (cpu[part] ?? 0) + processUsage(pid).cpuMs;
    } catch {
      // Gone since the status was read: it used nothing more we could count.
    }
  }
  for (const [part, read] of Object.entries(extra)) cpu[part] = read();
  cpu.machineBusy = machineBusyMs();
  return cpu;
}

/** CPU per Job of each part between two readings. */
export function fleetCpuPerJob(before: FleetCpu, after: FleetCpu, jobs: number): FleetCpu {
  const perJob: FleetCpu = {};
  for (const [part, ms] of Object.entries(after)) perJob[part] = round2((ms - (before[part] ?? 0)) / jobs);
  return perJob;
}

/** Each part's CPU between two readings in cores (ms of CPU per ms of wall time). */
export function coresOver(before: FleetCpu, after: FleetCpu, wallMs: number): FleetCpu {
  const cores: FleetCpu = {};
  for (const [part, ms] of Object.entries(after)) cores[part] = (ms - (before[part] ?? 0)) / wallMs;
  return cores;
}

/** One line of cores: the machine's total, then every part, largest first. */
export function describeCores(cores: FleetCpu): string {
  return describeWith(cores, 3);
}

/** The benchmark's own process: its clients, watches and bookkeeping. */
export function benchProcessCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Busy time of all cores since boot (user, nice, system, irq, softirq, steal), in ms. */
function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  const ticks = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return (ticks * 1000) / clockTicksPerSecond;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** One line: the machine's total, then every part, largest first. */
export function describeParts(perJob: FleetCpu): string {
  return describeWith(perJob, 2);
}

/** The machine's total (two decimals), then every part largest first, to `digits` decimals. */
function describeWith(values: FleetCpu, digits: number): string {
  const { machineBusy, ...parts } = values;
  const listed = Object.entries(parts)
    .sort(([, a], [, b]) => b - a)
    .map(([part, value]) => `${part} ${value.toFixed(digits)}`);
  return `machine ${machineBusy?.toFixed(2) ?? '?'} = ${listed.join(', ')}, other processes the rest`;
}
