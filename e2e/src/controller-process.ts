import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricSum } from '@jobrelay/bench';
import { controllerEnvironment, controllerNodeFlags } from '@jobrelay/controller/node-flags';
import { repositoryRoot, type Sandbox } from '@jobrelay/sandbox';

export interface ControllerProcess {
  readonly process: ChildProcess;
  readonly logFile: string;
  /** Sends a signal and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  logs(): string;
  /** Where it serves /healthz, /readyz and /metrics (read from its log). */
  healthUrl(): Promise<string>;
  /** The sum of a metric's samples on its /metrics now (0 when it has none). */
  metric(name: string): Promise<number>;
  /** Whether /readyz answers 200 now. */
  isReady(): Promise<boolean>;
  /** Running, stopped by the test, or how it exited on its own (for the report of a failed test). */
  state(): string;
}

let started = 0;
/** The controllers this test file started, for the report of a failed test. */
const startedInThisFile: ControllerProcess[] = [];
/** Which test file of the lane's process this is (beginTestFile). */
let testFile = 0;

/**
 * Before each test file (e2e/src/report-failures.ts): a lane's files share one process and its
 * modules (isolate: false), so what this module keeps per file starts anew, and the file's
 * controllers get a Lease identity of their own.
 */
export function beginTestFile(): void {
  testFile += 1;
  startedInThisFile.length = 0;
}

/**
 * After each test file (e2e/src/report-failures.ts): any controller the file left running is
 * stopped, so none acts on the fleet during the lane's next file.
 */
export async function stopControllersOfThisFile(): Promise<void> {
  await Promise.all(
    startedInThisFile.filter((c) => c.state() === 'running').map((controller) => controller.kill('SIGTERM')),
  );
}

/** The most recent warnings and errors a report of a failed test shows per controller. */
const reportedLogLines = 12;

/**
 * For a failed test: each controller this file started, whether it still runs (or how it
 * ended), and its last warnings and errors, so a failure in CI, where the logs are gone
 * afterwards, says what the controller was doing. The controller logs no secret.
 */
export function controllersReport(): string[] {
  return startedInThisFile.map((controller) => {
    const entries = controller
      .logs()
      .split('\n')
      .map(logEntry)
      .filter((entry): entry is LogEntry => (entry?.level ?? 0) >= 40)
      .slice(-reportedLogLines)
      .map((entry) =>
        `  ${entry.time ? new Date(entry.time).toISOString().slice(11, 23) : ''} ${levelNames[entry.level!] ?? entry.level} ${entry.msg ?? ''}${errorText(entry.err)}`.slice(
          0,
          400,
        ),
      );
    return [
      `controller ${controller.logFile}: ${controller.state()}; its last warnings and errors:`,
      ...(entries.length ? entries : ['  none']),
    ].join('\n');
  });
}

interface LogEntry {
  level?: number;
  time?: number;
  msg?: string;
  err?: unknown;
}

const levelNames: Record<number, string> = { 40: 'warn', 50: 'error', 60: 'fatal' };

function logEntry(line: string): LogEntry | undefined {
  try {
    return JSON.parse(line) as LogEntry;
  } catch {
    return undefined;
  }
}

function errorText(err: unknown): string {
  if (err === undefined) return '';
  if (typeof err === 'string') return `: ${err}`;
  const message = (err as { message?: unknown }).message;
  return `: ${typeof message === 'string' ? message : JSON.stringify(err)}`;
}

/**
 * Runs the real controller as its own process (as it runs in production, and so that it can
 * be SIGKILLed), against the sandbox's management cluster and Redis, with its ServiceAccount's
 * token. Short intervals make the level-triggered backstops visible within a test's time.
 */
export function startController(sandbox: Sandbox, extraArgs: string[] = []): ControllerProcess {
  const logsDir = join(sandbox.dir, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `controller-${process.pid}-${++started}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [
      ...controllerNodeFlags,
      join(repositoryRoot, 'apps/controller/src/main.ts'),
      // The jobrelay-controller ServiceAccount's token, with exactly deploy/controller's RBAC:
      // a permission missing there fails whichever test needs it.
      `--kubeconfig=${sandbox.serviceAccountKubeconfigPath('jobrelay-controller')}`,
      `--redis-url=${sandbox.redisUrl}`,
      '--mirror-retention-seconds=5',
      '--gc-interval-seconds=5',
      '--resync-interval-seconds=5',
      '--cluster-health-interval-seconds=2',
      '--log-level=debug',
      // A free port each time: several controllers (and the demo's) may run at once.
      '--health-address=127.0.0.1:0',
      // One identity per test file, as a pod keeps its name across restarts: a controller
      // restarted after a SIGKILL takes its Lease back at once. Tests of election pass their own.
      // Per file, not per process: a controller an earlier file left running never shares it.
      `--leader-election-identity=e2e-${process.pid}-${testFile}`,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...controllerEnvironment } },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let killed = false;
  const logs = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const controller: ControllerProcess = {
    process: child,
    logFile,
    async kill(signal = 'SIGTERM') {
      killed = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    logs,
    state() {
      if (child.exitCode === null && child.signalCode === null) return 'running';
      return killed
        ? 'stopped by the test'
        : `exited on its own (${child.signalCode ?? `code ${child.exitCode}`})`;
    },
    async healthUrl() {
      for (let i = 0; i < 100; i++) {
        // The log file appears only once the stream has opened it.
        const match = /"url":"(http:\/\/[^"]+)","msg":"serving \/healthz/.exec(logs());
        if (match) return match[1]!;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the controller did not log its health address; see ${logFile}`);
    },
    async metric(name) {
      return metricSum(await (await fetch(`${await this.healthUrl()}/metrics`)).text(), name);
    },
    async isReady() {
      return fetch(`${await this.healthUrl()}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
    },
  };
  startedInThisFile.push(controller);
  return controller;
}
