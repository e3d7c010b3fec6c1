import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { JobrelayApiClient } from './api-client.ts';
import { bearerTokenFor } from './bearer-token.ts';
import type { CommandSpec, ParsedCommandLine } from './command-line.ts';
import { formatTable } from './format-table.ts';
import {
  type Env,
  kubeconfigFiles,
  loadKubeconfig,
  type MergedKubeconfig,
  type ResolvedContext,
  resolveContext,
} from './kubeconfig-files.ts';
import { UnreachableError, UsageError } from './plugin-errors.ts';

export interface PluginIo {
  env: Env;
  stdout: Writable;
  stderr: Writable;
  /** The clock for ages and timeouts; tests pin it. */
  now?: () => Date;
  /** How often `drain --wait` asks again (default 2 s). */
  drainPollIntervalMs?: number;
}

export type OutputFormat = 'table' | 'json' | 'yaml';

/**
 * What a command needs from the world: its flags, output, the caller's kubeconfig and an API
 * client. Credentials are resolved only when a command first talks to the API, so a usage
 * error never waits on an exec credential plugin.
 */
export class PluginSession {
  readonly command: CommandSpec;
  readonly args: string[];
  readonly io: PluginIo;
  readonly output: OutputFormat;
  #values: ParsedCommandLine['values'];
  #kubeconfig: MergedKubeconfig | undefined;
  #api: Promise<JobrelayApiClient> | undefined;

  constructor(parsed: ParsedCommandLine, io: PluginIo) {
    this.command = parsed.command;
    this.args = parsed.args;
    this.io = io;
    this.#values = parsed.values;
    const output = this.string('output');
    if (output !== undefined && output !== 'json' && output !== 'yaml') {
      throw new UsageError(`--output must be json or yaml, not "${output}"`, parsed.command.name);
    }
    this.output = output ?? 'table';
  }

  string(name: string): string | undefined {
    const value = this.#values[name];
    return typeof value === 'string' ? value : undefined;
  }

  flag(name: string): boolean {
    return this.#values[name] === true;
  }

  list(name: string): string[] {
    const value = this.#values[name];
    return Array.isArray(value) ? value : [];
  }

  now(): Date {
    return this.io.now ? this.io.now() : new Date();
  }

  out(text: string): void {
    this.io.stdout.write(text);
  }

  err(text: string): void {
    this.io.stderr.write(text);
  }

  table(headers: readonly string[], rows: string[][], empty: string): void {
    if (rows.length === 0) this.err(`${empty}\n`);
    else this.out(formatTable(headers, rows));
  }

  /** The API's JSON as returned, or the same as YAML. */
  printObject(value: unknown): void {
    this.out(this.output === 'yaml' ? stringify(value) : `${JSON.stringify(value, null, 2)}\n`);
  }

  /** The caller's kubeconfig, merged as kubectl merges it. */
  kubeconfig(): MergedKubeconfig {
    if (!this.#kubeconfig) {
      const { files, explicit } = kubeconfigFiles(this.string('kubeconfig'), this.io.env);
      this.#kubeconfig = loadKubeconfig(files, explicit);
    }
    return this.#kubeconfig;
  }

  callerContext(): ResolvedContext {
    return resolveContext(this.kubeconfig(), this.string('context'));
  }

  /** -n, else the context's namespace, else "default": kubectl's rule. */
  namespace(): string {
    const flag = this.string('namespace');
    if (flag) return flag;
    try {
      return this.callerContext().namespace ?? 'default';
    } catch {
      // Without a usable context the API call fails with the same message a moment later.
      return 'default';
    }
  }

  api(): Promise<JobrelayApiClient> {
    this.#api ??= this.#connect();
    return this.#api;
  }

  async #connect(): Promise<JobrelayApiClient> {
    const address = this.string('api-url') ?? this.io.env.JOBRELAY_API_URL;
    if (!address) {
      throw new UnreachableError(
        'no API address: pass --api-url or set JOBRELAY_API_URL (e.g. http://127.0.0.1:8090)',
      );
    }
    let baseUrl: URL;
    try {
      baseUrl = new URL(address);
    } catch {
      throw new UnreachableError(`the API address "${address}" is not a URL (e.g. http://127.0.0.1:8090)`);
    }
    const caFile = this.string('certificate-authority') ?? this.io.env.JOBRELAY_API_CA;
    let ca: Buffer | undefined;
    if (caFile) {
      try {
        ca = readFileSync(caFile);
      } catch (err) {
        throw new UnreachableError(
          `cannot read the API's CA ${caFile}: ${(err as NodeJS.ErrnoException).code ?? err}`,
        );
      }
    }
    const token = await bearerTokenFor(this.callerContext());
    return new JobrelayApiClient({ baseUrl, token, ...(ca ? { ca } : {}) });
  }
}
