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
