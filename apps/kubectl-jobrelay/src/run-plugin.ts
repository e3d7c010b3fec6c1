import {
  clustersCommand,
  cordonCommand,
  deregisterCommand,
  drainCommand,
  registerCommand,
} from './cluster-commands.ts';
import {
  type CommandName,
  commandHelp,
  findCommand,
  type ParsedCommandLine,
  parseCommandLine,
  pluginHelp,
  usageLine,
} from './command-line.ts';
import { describeApiError } from './describe-api-error.ts';
import {
  ApiError,
  type ExitCode,
  exitCodes,
  OperationError,
  UnreachableError,
  UsageError,
} from './plugin-errors.ts';
import { type PluginIo, PluginSession } from './plugin-session.ts';
import { queuesCommand } from './queue-commands.ts';
import {
  explainCommand,
  jobsCommand,
  logsCommand,
  pendingCommand,
  workloadsCommand,
} from './workload-commands.ts';

const handlers: Record<Exclude<CommandName, 'help'>, (s: PluginSession) => Promise<void>> = {
  clusters: clustersCommand,
  register: registerCommand,
  cordon: (s) => cordonCommand(s, 'cordon'),
  uncordon: (s) => cordonCommand(s, 'uncordon'),
  drain: drainCommand,
  deregister: deregisterCommand,
  jobs: jobsCommand,
  workloads: workloadsCommand,
  explain: explainCommand,
  pending: pendingCommand,
  queues: queuesCommand,
  logs: logsCommand,
};

/**
 * Runs `kubectl jobrelay <argv...>` and resolves to its exit code (see exitCodes). Everything it
 * reads and writes goes through `io`, so a test drives it in-process exactly as the bin does.
 * It never throws for expected failures; it prints `error: ...` to io.stderr instead.
 */
export async function runPlugin(argv: readonly string[], io: PluginIo): Promise<ExitCode> {
  let parsed: ParsedCommandLine;
  try {
    parsed = parseCommandLine(argv);
  } catch (err) {
    return report(err, io);
  }
  if (parsed.command.name === 'help') {
    const topic = parsed.args[0];
    if (topic === undefined) {
      io.stdout.write(pluginHelp());
      return exitCodes.ok;
    }
    const command = findCommand(topic);
    if (!command) return report(new UsageError(`unknown command "${topic}"`), io);
    io.stdout.write(commandHelp(command));
    return exitCodes.ok;
  }
  if (parsed.values.help === true) {
    io.stdout.write(commandHelp(parsed.command));
    return exitCodes.ok;
  }
  try {
    const session = new PluginSession(parsed, io);
    await handlers[parsed.command.name](session);
    return exitCodes.ok;
  } catch (err) {
    return report(err, io);
  }
}

/** Prints an error the way kubectl does and picks its exit code. */
function report(err: unknown, io: PluginIo): ExitCode {
  if (err instanceof UsageError) {
    const command = err.command ? findCommand(err.command) : undefined;
    io.stderr.write(`error: ${err.message}\n${usageLine(command)}\n`);
    io.stderr.write(`See 'kubectl jobrelay ${command ? `${command.name} ` : ''}--help'.\n`);
    return exitCodes.usage;
  }
  if (err instanceof ApiError) {
    io.stderr.write(`${describeApiError(err).join('\n')}\n`);
    // A rejected token is a credentials problem, not a failed operation: the same code as none at all.
    return err.status === 401 ? exitCodes.unreachable : exitCodes.failed;
  }
  if (err instanceof UnreachableError) {
    io.stderr.write(`error: ${err.message}\n`);
    return exitCodes.unreachable;
  }
  if (err instanceof OperationError) {
    io.stderr.write(`error: ${err.message}\n`);
    return exitCodes.failed;
  }
  io.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return exitCodes.failed;
}
