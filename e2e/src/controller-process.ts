import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot, type Sandbox } from '@jobrelay/sandbox';

export interface ControllerProcess {
  readonly process: ChildProcess;
  readonly logFile: string;
  /** Sends a signal and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  logs(): string;
}

let started = 0;

/**
 * Runs the real controller as its own process (as it runs in production, and so that it can
 * be SIGKILLed), against the sandbox's management cluster and Redis. Short intervals make
 * the level-triggered backstops visible within a test's time.
 */
export function startController(sandbox: Sandbox, extraArgs: string[] = []): ControllerProcess {
  const logsDir = join(sandbox.dir, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `controller-${process.pid}-${++started}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [
      join(repositoryRoot, 'apps/controller/src/main.ts'),
      `--kubeconfig=${sandbox.kubeconfigPath(sandbox.management.name)}`,
      `--redis-url=${sandbox.redisUrl}`,
      '--mirror-retention-seconds=5',
      '--gc-interval-seconds=5',
      '--resync-interval-seconds=5',
      '--cluster-health-interval-seconds=2',
      '--log-level=debug',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    process: child,
    logFile,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    logs: () => readFileSync(logFile, 'utf8'),
  };
}
