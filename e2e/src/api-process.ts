import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { apiCommandLine, repositoryRoot, type Sandbox } from '@jobrelay/sandbox';

export interface ApiProcess {
  readonly process: ChildProcess;
  readonly logFile: string;
  /** Where it listens, read from its log. */
  url(): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  logs(): string;
}

let started = 0;

/**
 * The real API as its own process on a real port (as it runs in production), with its own
 * identity (the sandbox's `jobrelay-api` user and deploy/api's RBAC), the sandbox's Redis.
 */
export function startApiProcess(sandbox: Sandbox, extraArgs: string[] = []): ApiProcess {
  const logsDir = join(sandbox.dir, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const logFile = join(logsDir, `api-${process.pid}-${++started}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [...apiCommandLine(sandbox), '--log-level=info', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const logs = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  return {
    process: child,
    logFile,
    logs,
    async url() {
      for (let i = 0; i < 600; i++) {
        const match = /"url":"(https?:\/\/[^"]+)"[^\n]*"msg":"serving the jobrelay API"/.exec(logs());
        if (match) return match[1]!;
        if (child.exitCode !== null)
          throw new Error(`the API exited (${child.exitCode}); see ${logFile}:\n${logs()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the API did not log its address within 60s; see ${logFile}`);
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** What the kubectl plugin printed and exited with. */
export interface PluginRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the kubectl plugin's own launcher, as kubectl runs it, against `apiUrl` with the
 * kubeconfig at `kubeconfig` (its current context's token is what the plugin sends).
 */
export async function runKubectlPlugin(
  apiUrl: string,
  kubeconfig: string,
  args: string[],
): Promise<PluginRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(repositoryRoot, 'apps/kubectl-jobrelay/bin/kubectl-jobrelay.js'), ...args],
      { env: { ...process.env, KUBECONFIG: kubeconfig, JOBRELAY_API_URL: apiUrl }, timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}
