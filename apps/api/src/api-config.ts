import { isIP } from 'node:net';
import { kubeconfigPolicyFields, kubeconfigPolicyProblem } from '@jobrelay/clusters';
import { builtInKinds, kindSelectionFields } from '@jobrelay/kinds';
import { ConfigError, dns1123Label, labelValuePattern as labelValue, loadFlagConfig } from '@jobrelay/kube';
import { redisUrlProblem } from '@jobrelay/placement';
import { z } from 'zod';

/** Defaults of the limits on streams and failed authentications; buildApi uses them when not given. */
export const streamAndAbuseDefaults = {
  maxStreamsPerIdentity: 16,
  maxOpenStreams: 1000,
  maxStreamSeconds: 3600,
  streamBufferBytes: 1024 * 1024,
  failedAuthenticationsPerMinute: 60,
} as const;

export const apiConfigSchema = z.object({
  /** Kubeconfig of the management cluster for the API's own identity; default: in-cluster, $KUBECONFIG, ~/.kube/config. */
  kubeconfig: z.string().min(1).optional(),
  /** host:port to listen on; port 0 picks a free one (logged). */
  address: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:8090')
    .default('127.0.0.1:8090'),
  tlsCertFile: z.string().min(1).optional(),
  tlsKeyFile: z.string().min(1).optional(),
  /** Plain HTTP on an address other than loopback: bearer tokens would cross the network in clear. */
  allowInsecureHttp: z.boolean({ error: 'must be true or false (or 1 or 0)' }).default(false),
  /**
   * The controller's --managed-by, --kinds, --kind-managed-by and --generic-kinds-file: the API
   * shows exactly the kinds the controller dispatches, chosen by the same code (@jobrelay/kinds).
   */
  ...kindSelectionFields,
  systemNamespace: z.string().regex(dns1123Label).default('jobrelay-system'),
  /** The controller's `jobrelay.dev/origin`; default: the kube-system namespace UID, as the controller derives it. */
  originId: z.string().max(63).regex(labelValue, 'must be a valid label value').optional(),
  /** One Redis, its Sentinels (redis+sentinel://…/<master>) or a Redis Cluster (redis+cluster://…): see @jobrelay/placement. */
  redisUrl: z
    .string()
    .superRefine((url, context) => {
      const problem = redisUrlProblem(url);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .default('redis://127.0.0.1:6379'),
  placementPolicy: z.enum(['spread', 'binpack']).default('spread'),
  /** The controller's kubeconfig policy (exec plugins, proxies, denied server addresses): registrations are vetted alike. */
  ...kubeconfigPolicyFields,
  /**
   * How long TokenReview and SubjectAccessReview answers are reused (0 to 10), and how often
   * open streams are re-authorized (every second when 0).
   */
  authCacheSeconds: z.coerce.number().int().min(0).max(10).default(5),
  /**
   * Audiences a caller's token must be meant for (TokenReview spec.audiences); empty: the
   * apiserver's own. With `jobrelay-api`, callers send `kubectl create token X --audience
   * jobrelay-api` instead of a token the apiserver itself would accept.
   */
  tokenAudiences: z
    .array(z.string().min(1).max(256).regex(/^\S+$/, 'must be an audience without spaces'))
    .default([]),
  /** Requests per minute per caller (by identity; by address before authentication). */
  rateLimitPerMinute: z.coerce.number().int().min(1).max(1_000_000).default(1200),
  /**
   * Requests per minute from one client address (an IPv6 /64 counts as one) whose bearer token
   * is missing, malformed or refused; past it the address gets 429 without a TokenReview.
   */
  failedAuthenticationsPerMinute: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(streamAndAbuseDefaults.failedAuthenticationsPerMinute),
  /** Open streams (the watch, logs) per identity at once. */
  maxStreamsPerIdentity: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(streamAndAbuseDefaults.maxStreamsPerIdentity),
  /** Open streams of all callers at once: a bound on the process's memory whoever opens them. */
  maxOpenStreams: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(streamAndAbuseDefaults.maxOpenStreams),
  /** A stream ends after this long with a final event telling the client to reconnect. */
  maxStreamSeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(streamAndAbuseDefaults.maxStreamSeconds),
  /** Bytes an event stream may hold unsent for a slow reader before it is dropped. */
  streamBufferBytes: z.coerce
    .number()
    .int()
    .min(16 * 1024)
    .max(256 * 1024 * 1024)
    .default(streamAndAbuseDefaults.streamBufferBytes),
  /** Largest request body accepted; a kubeconfig is a few KiB. */
  bodyLimitBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  /** A request whose headers and body take longer than this to arrive is cut off. */
  requestTimeoutSeconds: z.coerce.number().int().min(1).max(600).default(30),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
});

export type ApiConfig = z.infer<typeof apiConfigSchema>;

const flags = {
  kubeconfig: ['kubeconfig', 'kubeconfig of the management cluster (the API’s own identity)'],
  address: ['address', 'host:port to listen on (default 127.0.0.1:8090; port 0 picks one)'],
  'tls-cert-file': ['tlsCertFile', 'serve HTTPS with this certificate (PEM)'],
  'tls-key-file': ['tlsKeyFile', 'and this private key (PEM)'],
  'allow-insecure-http': ['allowInsecureHttp', 'allow plain HTTP on a non-loopback address (true|false)'],
  'managed-by': [
    'managedBy',
    'the controller’s spec.managedBy value for Jobs (default jobrelay.dev/dispatcher)',
  ],
  kinds: [
    'kinds',
    `the controller’s --kinds: workload kinds to show (default ${builtInKinds.map((k) => k.name).join(',')})`,
  ],
  'kind-managed-by': [
    'kindManagedBy',
    'the controller’s --kind-managed-by: kind=value, e.g. raycluster=kueue.x-k8s.io/multikueue',
  ],
  'generic-kinds-file': ['genericKindsFile', 'the controller’s --generic-kinds-file (JSON or YAML)'],
  'system-namespace': ['systemNamespace', 'where kubeconfig Secrets live (default jobrelay-system)'],
  'origin-id': ['originId', 'the controller’s origin id (default: the kube-system namespace UID)'],
  'redis-url': ['redisUrl', 'the controller’s Redis (default redis://127.0.0.1:6379)'],
  'placement-policy': [
    'placementPolicy',
    'the controller’s default scoring policy, for previews (spread|binpack)',
  ],
  'allow-exec-plugins': [
    'allowExecPlugins',
    'accept exec credential plugins in registered kubeconfigs (true|false)',
  ],
  'allow-proxy-url': [
    'allowProxyUrl',
    'accept proxy-url (http, https, socks5) in registered kubeconfigs (true|false)',
  ],
  'restrict-server-addresses': [
    'restrictServerAddresses',
    'refuse worker servers at loopback, link-local and --denied-server-cidrs addresses (true|false)',
  ],
  'denied-server-cidrs': [
    'deniedServerCidrs',
    'with --restrict-server-addresses: more ranges to refuse, e.g. the pod and service CIDRs',
  ],
  'auth-cache-seconds': [
    'authCacheSeconds',
    'reuse TokenReview/SubjectAccessReview answers this long, and re-authorize open streams as often (0-10, default 5; streams every 1 s at 0)',
  ],
  'token-audiences': [
    'tokenAudiences',
    'audiences callers’ tokens must be meant for, comma-separated, e.g. jobrelay-api (default: the apiserver’s)',
  ],
  'rate-limit-per-minute': ['rateLimitPerMinute', 'requests per minute per caller (default 1200)'],
  'failed-authentications-per-minute': [
    'failedAuthenticationsPerMinute',
    'missing or refused tokens per minute per client address before 429, no TokenReview (default 60)',
  ],
  'max-streams-per-identity': [
    'maxStreamsPerIdentity',
    'open watch and log streams per caller identity (default 16)',
  ],
  'max-open-streams': ['maxOpenStreams', 'open watch and log streams of all callers (default 1000)'],
  'max-stream-seconds': [
    'maxStreamSeconds',
    'a stream ends after this long, telling the client to reconnect (default 3600)',
  ],
  'stream-buffer-bytes': [
    'streamBufferBytes',
    'unsent bytes a watch stream may hold for a slow reader before it is dropped (default 1048576)',
  ],
  'body-limit-bytes': ['bodyLimitBytes', 'largest request body (default 1048576)'],
  'request-timeout-seconds': [
    'requestTimeoutSeconds',
    'cut off requests slower than this to arrive (default 30)',
  ],
  'log-level': ['logLevel', 'trace|debug|info|warn|error|fatal (default info)'],
} as const satisfies Record<string, readonly [keyof ApiConfig, string]>;

const booleanFields: ReadonlySet<keyof ApiConfig> = new Set([
  'allowInsecureHttp',
  'allowExecPlugins',
  'allowProxyUrl',
  'restrictServerAddresses',
]);

export const apiUsage = `usage: jobrelay-api [--flag value ...]   (npm run api -- --help)

The admin REST API of jobrelay. Every flag can also be set by an environment variable
(--redis-url is JOBRELAY_REDIS_URL), or in a YAML or JSON file given by --config
(JOBRELAY_CONFIG) under the setting's name (redisUrl: redis://redis:6379). Flags win over
variables, variables over the file.

  --${'config'.padEnd(24)} a YAML or JSON file of settings
${Object.entries(flags)
  .map(([flag, [, help]]) => `  --${flag.padEnd(24)} ${help}`)
  .join('\n')}`;

export { ConfigError };

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** Flags win over JOBRELAY_* variables, then --config's file, then defaults. Bad values name their source. */
export function loadApiConfig(argv: string[], env: NodeJS.ProcessEnv): ApiConfig {
  const config = loadFlagConfig(argv, env, apiConfigSchema, {
    flags: Object.fromEntries(Object.entries(flags).map(([flag, [field]]) => [flag, field])),
    listFields: new Set(['kinds', 'kindManagedBy', 'deniedServerCidrs', 'tokenAudiences']),
    booleanFields,
  });
  const policyProblem = kubeconfigPolicyProblem(config);
  if (policyProblem)
    throw new ConfigError(`invalid configuration:\n  --denied-server-cidrs ${policyProblem}`);
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsKeyFile)) {
    throw new ConfigError('invalid configuration:\n  --tls-cert-file and --tls-key-file go together');
  }
  const host = config.address.slice(0, config.address.lastIndexOf(':'));
  if (!config.tlsCertFile && !isLoopback(host) && !config.allowInsecureHttp) {
    throw new ConfigError(
      `invalid configuration:\n  --address ${config.address} is not loopback: serve HTTPS (--tls-cert-file, --tls-key-file), or accept bearer tokens in clear with --allow-insecure-http=true`,
    );
  }
  return config;
}
