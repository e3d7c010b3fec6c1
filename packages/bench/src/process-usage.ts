import { readFileSync } from 'node:fs';

/** CPU time (user + system) and resident memory of one process, from /proc. */
export interface ProcessUsage {
  cpuMs: number;
  rssBytes: number;
}

// USER_HZ is 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)); /proc reports ticks.
export const clockTicksPerSecond = 100;

export function processUsage(pid: number): ProcessUsage {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 (utime) and 15 (stime), counted from 1 with pid and comm as 1 and 2.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
  return { cpuMs: (ticks * 1000) / clockTicksPerSecond, rssBytes: rssKiB * 1024 };
}

/** Time one thread spent on a CPU and waiting for one while runnable, in ms, since it started. */
export interface ThreadSchedule {
  runMs: number;
  waitMs: number;
}

/**
 * The main thread's schedule (/proc/PID/task/PID/schedstat: ns on a CPU, ns runnable in a run
 * queue, slices): for Node.js the event loop's thread, where a controller's work runs.
 */
export function mainThreadSchedule(pid: number): ThreadSchedule {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
}

/** Shares of the wall time a thread ran, and waited runnable for a CPU. */
export interface ScheduleShares {
  running: number;
  waitingForCpu: number;
}

/** The shares of the wall time between two readings of one thread's schedule. */
export function scheduleShares(
  before: ThreadSchedule,
  after: ThreadSchedule,
  wallMs: number,
): ScheduleShares {
  return {
    running: (after.runMs - before.runMs) / wallMs,
    waitingForCpu: (after.waitMs - before.waitMs) / wallMs,
  };
}
