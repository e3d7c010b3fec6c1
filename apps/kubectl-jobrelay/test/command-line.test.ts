import { describe, expect, it } from 'vitest';
import { durationFlag, integerFlag, labelFlags, parseCommandLine, workloadRef } from '../src/command-line.ts';
import { UsageError } from '../src/plugin-errors.ts';

describe('parseCommandLine', () => {
  it.each([
    { argv: ['clusters'], command: 'clusters', args: [] },
    { argv: ['clusters', 'w1', '-o', 'yaml'], command: 'clusters', args: ['w1'], values: { output: 'yaml' } },
    // Global flags before the command, with values, as kubectl allows.
    {
      argv: ['--context', 'mgmt', '--api-url=http://x', 'jobs', '-A'],
      command: 'jobs',
      args: [],
      values: { context: 'mgmt', 'api-url': 'http://x', 'all-namespaces': true },
    },
    { argv: ['get', 'cluster', 'w1'], command: 'clusters', args: ['w1'] },
    { argv: ['get', 'jobs', '-n', 'team-a'], command: 'jobs', args: [], values: { namespace: 'team-a' } },
    {
      argv: ['register', 'w3', '--from-context', 'c', '--label', 'a=1', '--label', 'b=2', '--dry-run'],
      command: 'register',
      args: ['w3'],
      values: { 'from-context': 'c', label: ['a=1', 'b=2'], 'dry-run': true },
    },
    {
      argv: ['logs', 'j', '-n', 'ns', '-f', '-c', 'main', '--tail', '5'],
      command: 'logs',
      args: ['j'],
      values: { namespace: 'ns', follow: true, container: 'main', tail: '5' },
    },
    {
      argv: ['drain', 'w1', '--wait', '--timeout', '1m'],
      command: 'drain',
      args: ['w1'],
      values: { wait: true },
    },
    {
      argv: ['get', 'workloads', '--kind', 'raycluster', '-A'],
      command: 'workloads',
      args: [],
      values: { kind: 'raycluster', 'all-namespaces': true },
    },
    {
      argv: ['logs', 'raycluster/team-a/demo', '--tail', '1'],
      command: 'logs',
      args: ['raycluster/team-a/demo'],
      values: { tail: '1' },
    },
    {
      argv: ['explain', 'demo', '--kind', 'rayjob'],
      command: 'explain',
      args: ['demo'],
      values: { kind: 'rayjob' },
    },
    { argv: ['--help'], command: 'help', args: [] },
    { argv: ['help', 'drain'], command: 'help', args: ['drain'] },
  ])('$argv', ({ argv, command, args, values }) => {
    const parsed = parseCommandLine(argv);
    expect(parsed.command.name).toBe(command);
    expect(parsed.args).toEqual(args);
    if (values) expect(parsed.values).toMatchObject(values);
  });

  it.each([
    { argv: [], message: 'no command given' },
    { argv: ['frobnicate'], message: 'unknown command "frobnicate"' },
    { argv: ['clusters', '--bogus'], message: 'unknown flag: --bogus', command: 'clusters' },
    // A flag of another command is still unknown here: `--wait` belongs to drain.
    { argv: ['cordon', 'w1', '--wait'], message: 'unknown flag: --wait', command: 'cordon' },
    { argv: ['drain'], message: 'drain needs NAME', command: 'drain' },
    { argv: ['cordon', 'w1', 'w2'], message: 'unexpected argument "w2" for cordon', command: 'cordon' },
    { argv: ['jobs', '-n'], message: 'flag needs an argument: -n, --namespace', command: 'jobs' },
    {
      argv: ['get', 'pods'],
      message: 'unknown resource "pods" for get: use clusters, jobs, workloads, pending or queues',
    },
  ])('refuses $argv', ({ argv, message, command }) => {
    let caught: unknown;
    try {
      parseCommandLine(argv);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).message).toBe(message);
    expect((caught as UsageError).command).toBe(command);
  });

  it('takes --help after a command as that command’s help, whatever else is missing', () => {
    const parsed = parseCommandLine(['drain', '--help']);
    expect(parsed.command.name).toBe('drain');
    expect(parsed.values.help).toBe(true);
  });
});

describe('flag values', () => {
  it('reads integers within bounds and names the flag otherwise', () => {
    expect(integerFlag('register', 'weight', '100', 0, 100)).toBe(100);
    expect(integerFlag('register', 'weight', undefined, 0, 100)).toBeUndefined();
    expect(() => integerFlag('register', 'weight', '101', 0, 100)).toThrow(
      '--weight must be an integer from 0 to 100, not "101"',
    );
    expect(() => integerFlag('logs', 'tail', '-1', 0)).toThrow('--tail must be an integer >= 0, not "-1"');
  });

  it('reads Go-style durations', () => {
    expect(durationFlag('drain', 'timeout', '90s')).toBe(90_000);
    expect(durationFlag('drain', 'timeout', '1h30m')).toBe(5_400_000);
    expect(durationFlag('drain', 'timeout', '0')).toBe(0);
    expect(() => durationFlag('drain', 'timeout', '10')).toThrow('--timeout must be a duration');
    expect(() => durationFlag('drain', 'timeout', '10m garbage')).toThrow('--timeout must be a duration');
  });

  it('reads labels as key=value, the value may hold "="', () => {
    expect(labelFlags('register', ['region=eu', 'expr=a=b'])).toEqual({ region: 'eu', expr: 'a=b' });
    expect(() => labelFlags('register', ['region'])).toThrow('--label must be key=value, not "region"');
  });
});

describe('workloadRef: NAME, KIND/NAME or KIND/NAMESPACE/NAME, with --kind and -n', () => {
  const context = () => 'ctx-ns';
  it.each([
    // No kind given: the command looks the name up in every kind.
    { arg: 'train', flags: {}, ref: { kind: undefined, namespace: 'ctx-ns', name: 'train' } },
    { arg: 'train', flags: { namespace: 'a' }, ref: { kind: undefined, namespace: 'a', name: 'train' } },
    {
      arg: 'demo',
      flags: { kind: 'RayCluster' },
      ref: { kind: 'raycluster', namespace: 'ctx-ns', name: 'demo' },
    },
    {
      arg: 'raycluster/demo',
      flags: { namespace: 'a' },
      ref: { kind: 'raycluster', namespace: 'a', name: 'demo' },
    },
    { arg: 'rayjob/team-a/demo', flags: {}, ref: { kind: 'rayjob', namespace: 'team-a', name: 'demo' } },
    // Said twice, the same: fine.
    {
      arg: 'rayjob/team-a/demo',
      flags: { kind: 'rayjob', namespace: 'team-a' },
      ref: { kind: 'rayjob', namespace: 'team-a', name: 'demo' },
    },
  ])('$arg with $flags', ({ arg, flags, ref }) => {
    expect(workloadRef('explain', arg, flags, context)).toEqual(ref);
  });

  it.each([
    { arg: 'a/b/c/d', flags: {}, message: '"a/b/c/d" is not NAME, KIND/NAME or KIND/NAMESPACE/NAME' },
    { arg: 'raycluster/', flags: {}, message: '"raycluster/" is not NAME, KIND/NAME or KIND/NAMESPACE/NAME' },
    { arg: 'rayjob/x', flags: { kind: 'job' }, message: 'the kind is given twice: rayjob/ and --kind job' },
    {
      arg: 'rayjob/a/x',
      flags: { namespace: 'b' },
      message: 'the namespace is given twice: a in "rayjob/a/x" and -n b',
    },
    { arg: 'Bad_Name', flags: {}, message: '"Bad_Name" is not a valid name' },
  ])('refuses $arg with $flags', ({ arg, flags, message }) => {
    let caught: unknown;
    try {
      workloadRef('logs', arg, flags, context);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).message).toBe(message);
    expect((caught as UsageError).command).toBe('logs');
  });
});
