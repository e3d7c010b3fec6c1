import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError, type ControllerConfig, loadControllerConfig } from '../src/controller-config.ts';

/** The message of the ConfigError `load` throws; fails the test if it throws nothing or something else. */
function configErrorOf(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error('expected a ConfigError, but the configuration loaded');
}

const defaults: ControllerConfig = {
  managedBy: 'jobrelay.dev/dispatcher',
  kinds: ['job', 'raycluster', 'rayjob'],
  kindManagedBy: [],
  namespaces: [],
  systemNamespace: 'jobrelay-system',
  redisUrl: 'redis://127.0.0.1:6379',
  mirrorRetentionSeconds: 30,
  garbageCollectionIntervalSeconds: 60,
  resyncIntervalSeconds: 30,
  clusterHealthIntervalSeconds: 10,
  placementPolicy: 'spread',
  workerLostTimeoutSeconds: 900,
  placementTimeoutSeconds: 0,
  mirrorRefusalLimit: 3,
  workerQps: 50,
  workerBurst: 100,
  clusterReconnectMaxSeconds: 300,
  allowExecPlugins: false,
  allowProxyUrl: false,
  restrictServerAddresses: false,
  deniedServerCidrs: [],
  createNamespaces: true,
  reconcileConcurrency: 16,
  placementConcurrency: 16,
  statusCoalesceMs: 100,
  recordDispatchEvents: false,
  logLevel: 'info',
  healthAddress: '127.0.0.1:8081',
  leaderElect: true,
  leaderElectionLeaseName: 'jobrelay-controller',
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
  shutdownTimeoutSeconds: 20,
};

describe('loadControllerConfig', () => {
  it('uses the defaults when nothing is given', () => {
    const config = loadControllerConfig([], {});
    expect(config).toStrictEqual(defaults);
  });

  it('ignores environment variables outside the JOBRELAY_ prefix', () => {
    expect(loadControllerConfig([], { REDIS_URL: 'redis://elsewhere:6379', MANAGED_BY: 'x' })).toStrictEqual(
      defaults,
    );
  });

  it('takes JOBRELAY_* variables, and flags win over them', () => {
    const env = {
      JOBRELAY_REDIS_URL: 'redis://from-env:6379',
      JOBRELAY_MANAGED_BY: 'env.example.com/dispatcher',
      JOBRELAY_GC_INTERVAL_SECONDS: '120',
      JOBRELAY_LOG_LEVEL: 'debug',
    };
    const config = loadControllerConfig(
      ['--redis-url', 'rediss://from-flag:6380', '--log-level=warn', '--reconcile-concurrency', '4'],
      env,
    );
    expect(config).toMatchObject({
      redisUrl: 'rediss://from-flag:6380',
      logLevel: 'warn',
      reconcileConcurrency: 4,
      managedBy: 'env.example.com/dispatcher',
      garbageCollectionIntervalSeconds: 120,
    });
  });

  it('treats an empty value as unset', () => {
    expect(loadControllerConfig(['--redis-url', ''], { JOBRELAY_NAMESPACES: '' })).toMatchObject({
      redisUrl: defaults.redisUrl,
      namespaces: [],
    });
  });

  it.each([
    { value: 'team-a', namespaces: ['team-a'] },
    { value: 'team-a,team-b', namespaces: ['team-a', 'team-b'] },
    { value: ' team-a , team-b ,, ', namespaces: ['team-a', 'team-b'] },
  ])('splits --namespaces $value', ({ value, namespaces }) => {
    expect(loadControllerConfig(['--namespaces', value], {}).namespaces).toEqual(namespaces);
    expect(loadControllerConfig([], { JOBRELAY_NAMESPACES: value }).namespaces).toEqual(namespaces);
  });

  it.each([
    { value: 'true', expected: true },
    { value: '1', expected: true },
    { value: 'false', expected: false },
    { value: '0', expected: false },
  ])('reads --create-namespaces $value as $expected', ({ value, expected }) => {
    expect(loadControllerConfig(['--create-namespaces', value], {}).createNamespaces).toBe(expected);
  });

  it.each([
    { why: 'no domain prefix', managedBy: 'dispatcher', fragment: 'must be a domain-prefixed path' },
    {
      why: 'an uppercase domain',
      managedBy: 'Jobrelay.dev/dispatcher',
      fragment: 'must be a domain-prefixed path',
    },
    { why: 'an empty path', managedBy: 'jobrelay.dev/', fragment: 'must be a domain-prefixed path' },
    {
      why: 'more than 63 characters',
      managedBy: `jobrelay.dev/${'d'.repeat(51)}`,
      fragment: 'must be at most 63 characters',
    },
    {
      why: 'the built-in controller’s value',
      managedBy: 'kubernetes.io/job-controller',
      fragment: 'is reserved for the built-in Job controller',
    },
  ])('refuses a managedBy with $why, naming the flag', ({ managedBy, fragment }) => {
    expect(configErrorOf(() => loadControllerConfig(['--managed-by', managedBy], {}))).toContain(
      `--managed-by: ${fragment}`,
    );
    expect(configErrorOf(() => loadControllerConfig([], { JOBRELAY_MANAGED_BY: managedBy }))).toContain(
      `--managed-by: ${fragment}`,
    );
  });

  it('accepts a managedBy of exactly 63 characters', () => {
    const managedBy = `jobrelay.dev/${'d'.repeat(50)}`;
    expect(managedBy).toHaveLength(63);
    expect(loadControllerConfig(['--managed-by', managedBy], {}).managedBy).toBe(managedBy);
  });

  it.each(['http://127.0.0.1:6379', '127.0.0.1:6379', 'redis:/oops'])('refuses the redis URL %s', (url) => {
    expect(configErrorOf(() => loadControllerConfig(['--redis-url', url], {}))).toContain(
      '--redis-url: must be redis://host:port, redis+sentinel://',
    );
  });

  it.each(['redis+sentinel://s1:26379,s2:26379/mymaster', 'rediss+cluster://:pw@n1:7000,n2:7000'])(
    'accepts the Sentinel or Cluster URL %s',
    (url) => {
      expect(loadControllerConfig(['--redis-url', url], {}).redisUrl).toBe(url);
    },
  );

  it('refuses a namespace that is not a namespace name', () => {
    expect(configErrorOf(() => loadControllerConfig(['--namespaces', 'ok,Not_OK'], {}))).toContain(
      '--namespaces: must be a namespace name',
    );
  });

  it.each([
    { argv: ['--reconcile-concurrency', 'many'], flag: '--reconcile-concurrency' },
    { argv: ['--reconcile-concurrency', '0'], flag: '--reconcile-concurrency' },
    { argv: ['--reconcile-concurrency', '1000'], flag: '--reconcile-concurrency' },
    { argv: ['--mirror-retention-seconds=-1'], flag: '--mirror-retention-seconds' },
    { argv: ['--resync-interval-seconds', '1.5'], flag: '--resync-interval-seconds' },
    { argv: ['--gc-interval-seconds', '0'], flag: '--gc-interval-seconds' },
    { argv: ['--cluster-health-interval-seconds', 'ten'], flag: '--cluster-health-interval-seconds' },
  ])('names the flag of a bad number: $argv', ({ argv, flag }) => {
    expect(configErrorOf(() => loadControllerConfig(argv, {}))).toMatch(new RegExp(`\\n  ${flag}: `));
  });

  it('names the flag for a bad number that came from the environment', () => {
    const message = configErrorOf(() =>
      loadControllerConfig([], { JOBRELAY_CLUSTER_HEALTH_INTERVAL_SECONDS: 'soon' }),
    );
    expect(message).toContain('--cluster-health-interval-seconds: ');
    expect(message).toContain('(from JOBRELAY_CLUSTER_HEALTH_INTERVAL_SECONDS)');
  });

  it('lists every problem, one line per flag', () => {
    const message = configErrorOf(() =>
      loadControllerConfig(['--redis-url', 'http://x', '--log-level', 'chatty', '--managed-by', 'x'], {}),
    );
    const lines = message.split('\n').slice(1);
    expect(lines.map((line) => line.trim().split(':')[0]).sort()).toEqual([
      '--log-level',
      '--managed-by',
      '--redis-url',
    ]);
  });

  it.each([
    { argv: ['--no-such-flag', 'x'], fragment: "Unknown option '--no-such-flag'" },
    { argv: ['--managed-by'], fragment: "'--managed-by <value>' argument missing" },
    { argv: ['stray'], fragment: "Unexpected argument 'stray'" },
  ])('throws a ConfigError for bad arguments: $argv', ({ argv, fragment }) => {
    expect(configErrorOf(() => loadControllerConfig(argv, {}))).toContain(fragment);
  });
});

describe('--create-namespaces', () => {
  it('accepts true and false and refuses anything else', async () => {
    const { loadControllerConfig } = await import('../src/controller-config.ts');
    expect(loadControllerConfig(['--create-namespaces', 'false'], {}).createNamespaces).toBe(false);
    expect(loadControllerConfig(['--create-namespaces', 'true'], {}).createNamespaces).toBe(true);
    expect(() => loadControllerConfig(['--create-namespaces', 'yes'], {})).toThrow(
      '--create-namespaces: must be true or false (or 1 or 0)',
    );
  });
});

/** Writes `text` to a file of its own directory, removed when the calling test finishes. */
function configFile(text: string, name = 'controller.yaml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobrelay-config-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('the worker kubeconfig policy', () => {
  it('takes --allow-proxy-url, --restrict-server-addresses and --denied-server-cidrs', () => {
    expect(
      loadControllerConfig(
        ['--allow-proxy-url', '1', '--restrict-server-addresses=true', '--denied-server-cidrs', 'fd00::/108'],
        { JOBRELAY_ALLOW_EXEC_PLUGINS: 'true' },
      ),
    ).toMatchObject({
      allowExecPlugins: true,
      allowProxyUrl: true,
      restrictServerAddresses: true,
      deniedServerCidrs: ['fd00::/108'],
    });
  });

  it('names a bad CIDR, and CIDRs that would not be checked', () => {
    expect(
      configErrorOf(() =>
        loadControllerConfig(['--restrict-server-addresses=true', '--denied-server-cidrs', 'pods'], {}),
      ),
    ).toContain('--denied-server-cidrs: "pods" is not a CIDR (expected e.g. 10.96.0.0/12 or fd00::/108)');
    expect(
      configErrorOf(() => loadControllerConfig(['--denied-server-cidrs', '10.96.0.0/12'], {})),
    ).toContain('--denied-server-cidrs: is checked only with --restrict-server-addresses=true');
    expect(configErrorOf(() => loadControllerConfig(['--allow-proxy-url', 'yes'], {}))).toContain(
      '--allow-proxy-url: must be true or false (or 1 or 0)',
    );
  });

  it('lists the flags in the usage', async () => {
    const { controllerUsage } = await import('../src/controller-config.ts');
    for (const flag of [
      '--allow-exec-plugins',
      '--allow-proxy-url',
      '--restrict-server-addresses',
      '--denied-server-cidrs',
    ])
      expect(controllerUsage).toContain(flag);
  });
});

describe('--config', () => {
  it('reads settings by name from a YAML file, with real lists, booleans and numbers', () => {
    const file = configFile(
      [
        'redisUrl: redis://redis:6379',
        'namespaces: [team-a, team-b]',
        'createNamespaces: false',
        'reconcileConcurrency: 8',
      ].join('\n'),
    );
    expect(loadControllerConfig(['--config', file], {})).toStrictEqual({
      ...defaults,
      redisUrl: 'redis://redis:6379',
      namespaces: ['team-a', 'team-b'],
      createNamespaces: false,
      reconcileConcurrency: 8,
    });
  });

  it('reads JSON, and JOBRELAY_CONFIG names the file too', () => {
    const file = configFile(JSON.stringify({ logLevel: 'debug', leaderElect: false }), 'controller.json');
    expect(loadControllerConfig([], { JOBRELAY_CONFIG: file })).toMatchObject({
      logLevel: 'debug',
      leaderElect: false,
    });
  });

  it('lets variables win over the file, and flags over both', () => {
    const file = configFile('redisUrl: redis://file:6379\nlogLevel: debug\nworkerQps: 20\n');
    const config = loadControllerConfig(['--config', file, '--log-level', 'warn'], {
      JOBRELAY_LOG_LEVEL: 'error',
      JOBRELAY_WORKER_QPS: '30',
    });
    expect(config).toMatchObject({ redisUrl: 'redis://file:6379', logLevel: 'warn', workerQps: 30 });
  });

  it('names the file and the key of a bad value', () => {
    const file = configFile('redisUrl: http://redis:6379\n');
    expect(configErrorOf(() => loadControllerConfig(['--config', file], {}))).toContain(
      `redisUrl: must be redis://host:port, redis+sentinel://sentinel:26379,…/<master name>, or redis+cluster://node:6379,… (rediss for TLS) (in ${file})`,
    );
  });

  it('refuses unknown settings, listing the known ones', () => {
    const file = configFile('redisURL: redis://redis:6379\n');
    const message = configErrorOf(() => loadControllerConfig(['--config', file], {}));
    expect(message).toContain('unknown setting "redisURL"');
    expect(message).toContain('redisUrl');
  });

  it.each([
    { text: '- a\n- b\n', fragment: 'must be a mapping of settings' },
    { text: 'redisUrl: [unclosed\n', fragment: 'not YAML or JSON' },
  ])('refuses a file that is not a mapping: $fragment', ({ text, fragment }) => {
    expect(configErrorOf(() => loadControllerConfig(['--config', configFile(text)], {}))).toContain(fragment);
  });

  it('says so when the file cannot be read', () => {
    expect(
      configErrorOf(() => loadControllerConfig(['--config', '/nonexistent/controller.yaml'], {})),
    ).toContain('--config /nonexistent/controller.yaml: cannot be read (ENOENT)');
  });

  it('reads an empty file as no settings', () => {
    expect(loadControllerConfig(['--config', configFile('')], {})).toStrictEqual(defaults);
  });
});

describe('leader election settings', () => {
  it('takes the timings and identity from flags', () => {
    expect(
      loadControllerConfig(
        [
          '--lease-duration-seconds=30',
          '--renew-deadline-seconds=20',
          '--retry-period-seconds=5',
          '--leader-election-identity=pod-a',
        ],
        {},
      ),
    ).toMatchObject({
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
      retryPeriodSeconds: 5,
      leaderElectionIdentity: 'pod-a',
    });
  });

  it('refuses a renew deadline not shorter than the lease duration', () => {
    expect(
      configErrorOf(() =>
        loadControllerConfig(['--lease-duration-seconds=10', '--renew-deadline-seconds=10'], {}),
      ),
    ).toContain('--renew-deadline-seconds: must be shorter than the lease duration (10s)');
  });

  it('refuses a retry period not shorter than the renew deadline', () => {
    expect(configErrorOf(() => loadControllerConfig(['--retry-period-seconds=10'], {}))).toContain(
      '--retry-period-seconds: must be shorter than the renew deadline (10s)',
    );
  });

  it('refuses a lease name that is not an object name', () => {
    expect(
      configErrorOf(() => loadControllerConfig(['--leader-election-lease-name=Jobrelay'], {})),
    ).toContain('--leader-election-lease-name: must be a Kubernetes object name');
  });
});
