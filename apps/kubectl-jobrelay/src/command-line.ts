import { parseArgs } from 'node:util';
import { exitCodes, UsageError } from './plugin-errors.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in help, e.g. FILE. */
  value?: string;
  description: string;
}

export type CommandName =
  | 'clusters'
  | 'register'
  | 'cordon'
  | 'uncordon'
  | 'drain'
  | 'deregister'
  | 'jobs'
  | 'workloads'
  | 'explain'
  | 'pending'
  | 'queues'
  | 'logs'
  | 'help';

export interface CommandSpec {
  name: CommandName;
  usage: string;
  summary: string;
  /** Positional arguments: how many are required and allowed. */
  args: { min: number; max: number };
  options: Record<string, OptionSpec>;
  examples: string[];
}

/** Flags every command takes; they may also come before the command name, as with kubectl. */
export const globalOptions: Record<string, OptionSpec> = {
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    description: 'kubeconfig whose current context authenticates you (else $KUBECONFIG, else ~/.kube/config)',
  },
  context: { type: 'string', value: 'NAME', description: 'the kubeconfig context to use' },
  'api-url': {
    type: 'string',
    value: 'URL',
    description: 'the jobrelay API, e.g. http://127.0.0.1:8090 (else $JOBRELAY_API_URL)',
  },
  'certificate-authority': {
    type: 'string',
    value: 'FILE',
    description: 'CA bundle for an HTTPS API with a private CA (else $JOBRELAY_API_CA)',
  },
  output: { type: 'string', short: 'o', value: 'FORMAT', description: 'json or yaml instead of a table' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

const namespace: OptionSpec = {
  type: 'string',
  short: 'n',
  value: 'NS',
  description: "the Job's namespace (default: the context's namespace, else default)",
};
const workloadNamespace: OptionSpec = {
  ...namespace,
  description: "the workload's namespace (default: the context's namespace, else default)",
};
/** The kind of one workload, for commands naming one. */
const oneKind: OptionSpec = {
  type: 'string',
  value: 'KIND',
  description:
    'its kind as the API names it: job, raycluster, rayjob, ... (or write KIND/NAME); without it, whichever kind has a workload of that name',
};
const limit: OptionSpec = {
  type: 'string',
  value: 'N',
  description: 'items per API page; every page is fetched (default 500)',
};

export const commands: readonly CommandSpec[] = [
  {
    name: 'clusters',
    usage: 'clusters [NAME] [-l SELECTOR] [--limit N] [-o json|yaml]',
    summary: 'list worker clusters with health, capacity and load, or show one',
    args: { min: 0, max: 1 },
    options: {
      selector: {
        type: 'string',
        short: 'l',
        value: 'SELECTOR',
        description: 'label selector over clusters',
      },
      limit,
    },
    examples: ['kubectl jobrelay clusters', 'kubectl jobrelay clusters worker-1 -o yaml'],
  },
  {
    name: 'register',
    usage:
      'register NAME --from-context CTX [--kubeconfig-file F] [--label k=v]... [--weight N] [--max-active-workloads N] [--allowed-namespace NS]... [--dry-run]',
    summary: "register a worker cluster from one of your kubeconfig's contexts",
    args: { min: 1, max: 1 },
    options: {
      'from-context': { type: 'string', value: 'CTX', description: 'the context that reaches the worker' },
      'kubeconfig-file': {
        type: 'string',
        value: 'FILE',
        description: 'read CTX from this file (default: the kubeconfig the plugin uses)',
      },
      label: {
        type: 'string',
        multiple: true,
        value: 'k=v',
        description: 'a label of the cluster; repeatable',
      },
      weight: { type: 'string', value: 'N', description: 'placement weight, 0..100' },
      'max-active-workloads': {
        type: 'string',
        value: 'N',
        description: 'most unfinished workloads (every kind) at once',
      },
      'allowed-namespace': {
        type: 'string',
        multiple: true,
        value: 'NS',
        description: 'only Jobs of this namespace; repeatable (default: all)',
      },
      'dry-run': { type: 'boolean', description: 'vet and probe the kubeconfig, save nothing' },
    },
    examples: [
      'kubectl jobrelay register worker-3 --from-context kind-worker-3 --label region=eu --weight 50',
      'kubectl jobrelay register worker-3 --from-context w3 --kubeconfig-file ./w3.kubeconfig --dry-run',
    ],
  },
  {
    name: 'cordon',
    usage: 'cordon NAME',
    summary: 'place no new workloads on a cluster (running ones stay)',
    args: { min: 1, max: 1 },
    options: {},
    examples: ['kubectl jobrelay cordon worker-1'],
  },
  {
    name: 'uncordon',
    usage: 'uncordon NAME',
    summary: 'place workloads on a cluster again (clears cordon and drain)',
    args: { min: 1, max: 1 },
    options: {},
    examples: ['kubectl jobrelay uncordon worker-1'],
  },
  {
    name: 'drain',
    usage: 'drain NAME [--wait] [--timeout 10m]',
    summary:
      'cordon a cluster and move its unfinished workloads (every kind) elsewhere; prints how many remain',
    args: { min: 1, max: 1 },
    options: {
      wait: { type: 'boolean', description: 'wait until no workload remains' },
      timeout: {
        type: 'string',
        value: 'DURATION',
        description: 'how long --wait waits, e.g. 90s, 10m, 1h (default 10m; 0: forever)',
      },
    },
    examples: ['kubectl jobrelay drain worker-1 --wait --timeout 15m'],
  },
  {
    name: 'deregister',
    usage: 'deregister NAME [--force]',
    summary: 'remove a worker cluster and its kubeconfig Secret',
    args: { min: 1, max: 1 },
    options: {
      force: {
        type: 'boolean',
        description: 'even while workloads are placed there (drain it first instead)',
      },
    },
    examples: ['kubectl jobrelay deregister worker-1'],
  },
  {
    name: 'jobs',
    usage: 'jobs [-n NS | -A] [--cluster C] [--phase P] [-l SELECTOR] [--limit N] [-o json|yaml]',
    summary: 'list dispatched Jobs and where they run: the same as workloads --kind job',
    args: { min: 0, max: 0 },
    options: {
      namespace,
      'all-namespaces': { type: 'boolean', short: 'A', description: 'Jobs of every namespace' },
      cluster: { type: 'string', value: 'C', description: 'only Jobs placed on this cluster' },
      phase: {
        type: 'string',
        value: 'P',
        description: 'pending, placed, running, finished or suspended',
      },
      selector: { type: 'string', short: 'l', value: 'SELECTOR', description: 'label selector over Jobs' },
      limit,
    },
    examples: [
      'kubectl jobrelay jobs -A --phase running',
      'kubectl jobrelay jobs -n team-a --cluster worker-2',
    ],
  },
  {
    name: 'workloads',
    usage:
      'workloads [-n NS | -A] [--kind KIND[,KIND]] [--cluster C] [--phase P] [-l SELECTOR] [--limit N] [-o json|yaml]',
    summary: 'list dispatched workloads of every kind (Jobs, RayClusters, RayJobs, ...) and where they run',
    args: { min: 0, max: 0 },
    options: {
      namespace: { ...namespace, description: "only this namespace (default: the context's, else default)" },
      'all-namespaces': { type: 'boolean', short: 'A', description: 'workloads of every namespace' },
      kind: {
        type: 'string',
        value: 'KIND',
        description: 'only these kinds, comma-separated: job, raycluster, rayjob, ... (default: every kind)',
      },
      cluster: { type: 'string', value: 'C', description: 'only workloads placed on this cluster' },
      phase: {
        type: 'string',
        value: 'P',
        description: 'pending, placed, running, finished or suspended',
      },
      selector: {
        type: 'string',
        short: 'l',
        value: 'SELECTOR',
        description: 'label selector over the workloads',
      },
      limit,
    },
    examples: [
      'kubectl jobrelay workloads -A',
      'kubectl jobrelay workloads -n team-a --kind raycluster,rayjob --phase running',
    ],
  },
  {
    name: 'explain',
    usage: 'explain [KIND/[NS/]]NAME [--kind KIND] [-n NS] [-o json|yaml]',
    summary: 'where a workload runs and why, or why it waits (with a placement preview)',
    args: { min: 1, max: 1 },
    options: { namespace: workloadNamespace, kind: oneKind },
    examples: [
      'kubectl jobrelay explain train-42 -n team-a   # whatever its kind, when only one kind has that name',
      'kubectl jobrelay explain raycluster/team-a/demo',
      'kubectl jobrelay explain demo --kind raycluster -n team-a',
    ],
  },
  {
    name: 'pending',
    usage: 'pending [-n NS] [--kind KIND[,KIND]] [--limit N] [-o json|yaml]',
    summary:
      'workloads of every kind waiting for a cluster, longest waiting first, and why (default: every namespace)',
    args: { min: 0, max: 0 },
    options: {
      namespace: { ...namespace, description: 'only this namespace (default: every namespace)' },
      kind: {
        type: 'string',
        value: 'KIND',
        description: 'only these kinds, comma-separated (default: every kind)',
      },
      limit,
    },
    examples: ['kubectl jobrelay pending', 'kubectl jobrelay pending -n team-a --kind job -o json'],
  },
  {
    name: 'queues',
    usage: 'queues [NAME] [-o json|yaml]',
    summary:
      'DispatchQueues with pending and admitted counts, usage of nominal quota, borrowed and share; or one, with its workloads in order and why each waits',
    args: { min: 0, max: 1 },
    options: {},
    examples: [
      'kubectl jobrelay queues',
      'kubectl jobrelay queues research',
      'kubectl jobrelay get queue research -o yaml',
    ],
  },
  {
    name: 'logs',
    usage: 'logs [KIND/[NS/]]NAME [--kind KIND] [-n NS] [-f] [-c CONTAINER] [--tail N] [--pod POD]',
    summary: "a dispatched workload's pod logs, from the worker it runs on",
    args: { min: 1, max: 1 },
    options: {
      namespace: workloadNamespace,
      kind: oneKind,
      follow: { type: 'boolean', short: 'f', description: 'keep streaming new lines' },
      container: { type: 'string', short: 'c', value: 'CONTAINER', description: 'only this container' },
      tail: { type: 'string', value: 'N', description: 'only the last N lines of each container' },
      pod: { type: 'string', value: 'POD', description: 'only this pod' },
    },
    examples: [
      'kubectl jobrelay logs train-42 -n team-a -f --tail 20',
      'kubectl jobrelay logs raycluster/team-a/demo --tail 5',
    ],
  },
  {
    name: 'help',
    usage: 'help [COMMAND]',
    summary: 'help for the plugin or one command',
    args: { min: 0, max: 1 },
    options: {},
    examples: ['kubectl jobrelay help drain'],
  },
];

/** `get <resource> [NAME]` is accepted too, for kubectl habits. */
const getResources: Record<string, CommandName> = {
  cluster: 'clusters',
  clusters: 'clusters',
  workercluster: 'clusters',
  workerclusters: 'clusters',
  job: 'jobs',
  jobs: 'jobs',
  workload: 'workloads',
  workloads: 'workloads',
  pending: 'pending',
  queue: 'queues',
  queues: 'queues',
  dispatchqueue: 'queues',
  dispatchqueues: 'queues',
};

export interface ParsedCommandLine {
  command: CommandSpec;
  args: string[];
  values: Record<string, string | boolean | string[] | undefined>;
}

type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

function toParseArgsOptions(specs: Record<string, OptionSpec>): ParseArgsOptions {
  const result: ParseArgsOptions = {};
  for (const [name, spec] of Object.entries(specs)) {
    result[name] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  return result;
}

export function findCommand(name: string): CommandSpec | undefined {
  return commands.find((c) => c.name === name);
}

/**
 * Parses argv (without node and the script) into a command, its positional arguments and its
 * flags. Flags are checked against exactly what the command takes, so a typo is a usage error
 * (exit 2) rather than something silently ignored.
 */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  // Pass 1 only locates the command name: global flags may precede it and take values
  // (`--context x clusters`), so the first positional is found with every known flag declared.
  const every: Record<string, OptionSpec> = { ...globalOptions };
  for (const c of commands) Object.assign(every, c.options);
  const located = parseArgs({
    args: [...argv],
    options: toParseArgsOptions(every),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const positionals = located.tokens.filter((t) => t.kind === 'positional');
  const first = positionals[0];
  if (!first) {
    if (located.values.help === true) return { command: findCommand('help')!, args: [], values: {} };
    throw new UsageError('no command given');
  }
  let name = first.value;
  const consumed = new Set([first.index]);
  if (name === 'get') {
    const resource = positionals[1];
    if (!resource) throw new UsageError('get needs a resource: clusters, jobs, workloads, pending or queues');
    const mapped = getResources[resource.value.toLowerCase()];
    if (!mapped)
      throw new UsageError(
        `unknown resource "${resource.value}" for get: use clusters, jobs, workloads, pending or queues`,
      );
    name = mapped;
    consumed.add(resource.index);
  }
  const command = findCommand(name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  const rest = argv.filter((_, index) => !consumed.has(index));
  let parsed: {
    values: Record<string, string | boolean | (string | boolean)[] | undefined>;
    positionals: string[];
  };
  try {
    parsed = parseArgs({
      args: rest,
      options: toParseArgsOptions({ ...globalOptions, ...command.options }),
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError(parseArgsMessage(err), command.name);
  }
  const values = parsed.values as ParsedCommandLine['values'];
  if (values.help === true) return { command, args: parsed.positionals, values };
  if (parsed.positionals.length < command.args.min) {
    throw new UsageError(
      `${command.name} needs ${command.usage.split(' ')[1] ?? 'an argument'}`,
      command.name,
    );
  }
  if (parsed.positionals.length > command.args.max) {
    throw new UsageError(
      `unexpected argument "${parsed.positionals[command.args.max]}" for ${command.name}`,
      command.name,
    );
  }
  return { command, args: parsed.positionals, values };
}

/** node:util's messages mention "parseArgs"; reword the common ones the kubectl way. */
function parseArgsMessage(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown flag: ${unknown[1]}`;
  const missing = /Option '([^']+)' argument missing/.exec(message);
  if (missing) return `flag needs an argument: ${missing[1]?.replace(/ <value>$/, '')}`;
  return message.replace(/\. To specify a positional argument.*$/s, '');
}

function flagText(name: string, spec: OptionSpec): string {
  const long = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  return spec.short ? `-${spec.short}, ${long}` : `    ${long}`;
}

function optionLines(specs: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(specs).map(
    ([name, spec]) => [flagText(name, spec), spec.description] as const,
  );
  const width = Math.max(...entries.map(([flag]) => flag.length));
  return entries.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`);
}

export const exitCodeHelp = [
  'Exit codes:',
  `  ${exitCodes.ok}  success`,
  `  ${exitCodes.failed}  the API refused or the operation failed (error: <detail>; for 403 the missing permission)`,
  `  ${exitCodes.usage}  usage error: unknown command or flag, missing or malformed argument`,
  `  ${exitCodes.unreachable}  the API cannot be reached, or no usable credentials (no API URL, no bearer token, 401)`,
];

export function usageLine(command?: CommandSpec): string {
  return command ? `Usage: kubectl jobrelay ${command.usage}` : 'Usage: kubectl jobrelay COMMAND [flags]';
}

export function pluginHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'kubectl jobrelay: manage the jobrelay fleet through its admin API, as your current kubectl identity.',
    '',
    usageLine(),
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    `  ${'get'.padEnd(width)}  get clusters|cluster NAME|jobs|workloads|pending|queues|queue NAME: the same as the commands above`,
    '',
    'Flags of every command:',
    ...optionLines(globalOptions),
    '',
    ...exitCodeHelp,
    '',
    "Run 'kubectl jobrelay COMMAND --help' for a command's flags and examples.",
    '',
  ].join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const own = Object.keys(command.options).length > 0 ? ['Flags:', ...optionLines(command.options), ''] : [];
  return [
    `${command.summary}.`,
    '',
    usageLine(command),
    '',
    ...own,
    'Flags of every command:',
    ...optionLines(globalOptions),
    '',
    'Examples:',
    ...command.examples.map((e) => `  ${e}`),
    '',
    ...exitCodeHelp,
    '',
  ].join('\n');
}

/** An integer flag within bounds, or a usage error naming the flag and the value. */
export function integerFlag(
  command: string,
  flag: string,
  value: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
    throw new UsageError(`--${flag} must be ${range}, not "${value}"`, command);
  }
  return Number(value);
}

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go-style durations as kubectl takes them: "90s", "10m", "1h30m", "0" (no limit). */
export function durationFlag(command: string, flag: string, value: string): number {
  if (value === '0') return 0;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new UsageError(`--${flag} must be a duration like 90s, 10m or 1h30m, not "${value}"`, command);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * (durationUnits[p[2]!] ?? 0), 0);
}

/** `k=v` pairs of repeated --label flags. */
export function labelFlags(command: string, values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of values) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--label must be key=value, not "${pair}"`, command);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

/** A workload a command names: its kind (the API's name; undefined: not given), namespace and name. */
export interface WorkloadRef {
  kind: string | undefined;
  namespace: string;
  name: string;
}

const refSegment = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * NAME, KIND/NAME or KIND/NS/NAME (kubectl's `job/train` habit), with --kind and -n: without a
 * kind the command looks the name up in every kind; the namespace defaults to `defaultNamespace`.
 * A kind or namespace given twice must agree.
 */
export function workloadRef(
  command: string,
  arg: string,
  flags: { kind?: string | undefined; namespace?: string | undefined },
  defaultNamespace: () => string,
): WorkloadRef {
  const parts = arg.split('/');
  if (parts.length > 3 || parts.some((part) => part === '')) {
    throw new UsageError(`"${arg}" is not NAME, KIND/NAME or KIND/NAMESPACE/NAME`, command);
  }
  const name = parts.at(-1)!;
  const kindInArg = parts.length > 1 ? parts[0]!.toLowerCase() : undefined;
  const namespaceInArg = parts.length === 3 ? parts[1] : undefined;
  const kindFlag = flags.kind?.toLowerCase();
  if (kindInArg && kindFlag && kindInArg !== kindFlag)
    throw new UsageError(`the kind is given twice: ${kindInArg}/ and --kind ${kindFlag}`, command);
  if (namespaceInArg && flags.namespace && namespaceInArg !== flags.namespace)
    throw new UsageError(
      `the namespace is given twice: ${namespaceInArg} in "${arg}" and -n ${flags.namespace}`,
      command,
    );
  const kind = kindInArg ?? kindFlag;
  for (const [what, value] of [
    ['kind', kind],
    ['namespace', namespaceInArg],
    ['name', name],
  ] as const) {
    if (value !== undefined && !refSegment.test(value))
      throw new UsageError(`"${value}" is not a valid ${what}`, command);
  }
  return { kind, namespace: namespaceInArg ?? flags.namespace ?? defaultNamespace(), name };
}
