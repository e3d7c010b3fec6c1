import { spawn } from 'node:child_process';
import { closeSync, openSync, readlinkSync, realpathSync } from 'node:fs';

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `pid` is alive and is still the program we started: after a reboot or a long
 * time a pid can be reused, and `down` must never signal a stranger.
 */
export function isOurProcess(pid: number | undefined, binary: string): boolean {
  if (!pid || !processExists(pid)) return false;
  try {
    // The executable, not argv: redis-server rewrites its process title.
    return readlinkSync(`/proc/${pid}/exe`) === realpathSync(binary);
  } catch {
    return false; // no /proc (not Linux), the process just exited, or the binary is gone
  }
}

export interface DetachedProcessSpec {
  binary: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Starts a process that outlives this one (its own session), output appended to logFile. */
export function startDetached(spec: DetachedProcessSpec): number {
  const log = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.binary, spec.args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: spec.env ?? process.env,
      cwd: spec.cwd,
    });
    if (child.pid === undefined) throw new Error(`could not start ${spec.binary}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
export async function stopProcess(pid: number, binary: string, graceMs = 10_000): Promise<void> {
  if (!isOurProcess(pid, binary)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isOurProcess(pid, binary)) return;
    await sleep(100);
  }
  if (isOurProcess(pid, binary)) process.kill(pid, 'SIGKILL');
  while (processExists(pid) && isOurProcess(pid, binary)) await sleep(50);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
