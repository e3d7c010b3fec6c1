import { kubeconfigPolicyFields, kubeconfigPolicyProblem } from '@jobrelay/clusters';
import { kindSelectionFields } from '@jobrelay/kinds';
import {
  ConfigError,
  dns1123Label,
  dns1123Subdomain,
  labelValuePattern as labelValue,
  loadFlagConfig,
} from '@jobrelay/kube';
import { redisUrlProblem } from '@jobrelay/placement';
import { defaultMirrorRefusalLimit } from '@jobrelay/planner';
import { z } from 'zod';

const seconds = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

export const controllerConfigSchema = z.object({
  /** Kubeconfig of the management cluster; default: in-cluster, then $KUBECONFIG, then ~/.kube/config. */
  kubeconfig: z.string().min(1).optional(),
  ...kindSelectionFields,
  /** Namespaces to watch; empty means all. */
  namespaces: z.array(z.string().regex(dns1123Label, 'must be a namespace name')).default([]),
  systemNamespace: z.string().regex(dns1123Label).default('jobrelay-system'),
  /** Value of `jobrelay.dev/origin` on our mirrors; default: derived from the kube-system namespace UID. */
  originId: z.string().max(63).regex(labelValue, 'must be a valid label value').optional(),
  /** One Redis, its Sentinels (redis+sentinel://…/<master>) or a Redis Cluster (redis+cluster://…): see @jobrelay/placement. */
  redisUrl: z
    .string()
    .superRefine((url, context) => {
      const problem = redisUrlProblem(url);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .default('redis://127.0.0.1:6379'),
  /** How long a mirror stays on its worker after the origin shows its final status. */
  mirrorRetentionSeconds: seconds(30),
  garbageCollectionIntervalSeconds: seconds(60, 1),
  /** Every origin is reconciled at least this often, which also rebuilds a flushed queue. */
  resyncIntervalSeconds: seconds(30, 1),
  clusterHealthIntervalSeconds: seconds(10, 1),
  /** How placement scores clusters unless a Job's jobrelay.dev/placement-policy says otherwise. */
  placementPolicy: z.enum(['spread', 'binpack']).default('spread'),
  /** A cluster not Active this long has its unfinished Jobs placed elsewhere. */
  workerLostTimeoutSeconds: seconds(900, 1),
  /** Fail a Job that fits no cluster for this long; 0 waits forever. */
  placementTimeoutSeconds: seconds(0),
  /** Give up on a workload (a Job fails, reason MirrorRefused) once worker apiservers refused its mirror this often. */
  mirrorRefusalLimit: z.coerce.number().int().min(1).max(100).default(defaultMirrorRefusalLimit),
  /** Client-side rate limit per worker cluster (requests per second, and burst). */
  workerQps: z.coerce.number().positive().max(10_000).default(50),
  workerBurst: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Cap of the backoff between connection attempts to a failing worker. */
  clusterReconnectMaxSeconds: seconds(300, 1),
  /** What a worker kubeconfig may hold beyond the allow-list: exec plugins, proxies, denied server addresses. */
  ...kubeconfigPolicyFields,
  createNamespaces: z.boolean({ error: 'must be true or false (or 1 or 0)' }).default(true),
  /**
   * Also record a Normal Event for every placement and mirror creation (two more writes per
   * dispatched workload). Off by default: the decision is in the placement record, and
   * Warning Events (no cluster fits, moves, collisions, refusals) are always recorded.
   */
  recordDispatchEvents: z.boolean({ error: 'must be true or false (or 1 or 0)' }).default(false),
  reconcileConcurrency: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * A mirror's change is synced this many milliseconds after it is seen, so that changes
   * arriving together (pod created then ready; succeeded then Complete) cost one origin status
   * write; 0 syncs at once.
   */
  statusCoalesceMs: z.coerce.number().int().min(0).max(10_000).default(100),
  /** Placements decided at once (BullMQ worker concurrency). */
  placementConcurrency: z.coerce.number().int().min(1).max(256).default(16),
  /** host:port of /healthz, /readyz and /metrics; port 0 picks a free one (logged). */
  healthAddress: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 0.0.0.0:8081')
    .default('127.0.0.1:8081'),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  /**
   * Reconcile only while holding a coordination.k8s.io Lease in the system namespace, so that
   * replicas can run side by side (placement tasks are shared through the queue by all).
   */
  leaderElect: z.boolean({ error: 'must be true or false (or 1 or 0)' }).default(true),
  leaderElectionLeaseName: z
    .string()
    .regex(dns1123Subdomain, 'must be a Kubernetes object name')
    .default('jobrelay-controller'),
  /** Unique per replica; default: $POD_NAME (the chart sets it), else the host name and a random suffix. */
  leaderElectionIdentity: z.string().min(1).max(253).optional(),
  leaseDurationSeconds: seconds(15, 2),
  renewDeadlineSeconds: seconds(10, 1),
  retryPeriodSeconds: seconds(2, 1),
  /** On SIGTERM, in-flight work gets this long to finish before the process exits anyway; keep it under the pod's grace period. */
  shutdownTimeoutSeconds: seconds(20, 1),
});

/** The whole schema, with the checks that relate fields to each other. */
export const checkedControllerConfigSchema = controllerConfigSchema.superRefine((config, context) => {
  // As client-go requires: a holder gives up before the others may take over, and retries in between.
  if (config.renewDeadlineSeconds >= config.leaseDurationSeconds)
    context.addIssue({
      code: 'custom',
      path: ['renewDeadlineSeconds'],
      message: `must be shorter than the lease duration (${config.leaseDurationSeconds}s)`,
    });
  if (config.retryPeriodSeconds >= config.renewDeadlineSeconds)
    context.addIssue({
      code: 'custom',
      path: ['retryPeriodSeconds'],
      message: `must be shorter than the renew deadline (${config.renewDeadlineSeconds}s)`,
    });
  const policyProblem = kubeconfigPolicyProblem(config);
  if (policyProblem)
    context.addIssue({ code: 'custom', path: ['deniedServerCidrs'], message: policyProblem });
});

export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

const flags = {
  kubeconfig: 'kubeconfig',
  'managed-by': 'managedBy',
  kinds: 'kinds',
  'kind-managed-by': 'kindManagedBy',
  'generic-kinds-file': 'genericKindsFile',
  namespaces: 'namespaces',
  'system-namespace': 'systemNamespace',
  'origin-id': 'originId',
  'redis-url': 'redisUrl',
  'mirror-retention-seconds': 'mirrorRetentionSeconds',
  'gc-interval-seconds': 'garbageCollectionIntervalSeconds',
  'resync-interval-seconds': 'resyncIntervalSeconds',
  'cluster-health-interval-seconds': 'clusterHealthIntervalSeconds',
  'create-namespaces': 'createNamespaces',
  'record-dispatch-events': 'recordDispatchEvents',
  'placement-policy': 'placementPolicy',
  'allow-exec-plugins': 'allowExecPlugins',
  'allow-proxy-url': 'allowProxyUrl',
  'restrict-server-addresses': 'restrictServerAddresses',
  'denied-server-cidrs': 'deniedServerCidrs',
  'worker-lost-timeout-seconds': 'workerLostTimeoutSeconds',
  'placement-timeout-seconds': 'placementTimeoutSeconds',
  'mirror-refusal-limit': 'mirrorRefusalLimit',
  'worker-qps': 'workerQps',
  'worker-burst': 'workerBurst',
  'cluster-reconnect-max-seconds': 'clusterReconnectMaxSeconds',
  'reconcile-concurrency': 'reconcileConcurrency',
  'placement-concurrency': 'placementConcurrency',
  'status-coalesce-ms': 'statusCoalesceMs',
  'log-level': 'logLevel',
  'health-address': 'healthAddress',
  'leader-elect': 'leaderElect',
  'leader-election-lease-name': 'leaderElectionLeaseName',
  'leader-election-identity': 'leaderElectionIdentity',
  'lease-duration-seconds': 'leaseDurationSeconds',
  'renew-deadline-seconds': 'renewDeadlineSeconds',
  'retry-period-seconds': 'retryPeriodSeconds',
  'shutdown-timeout-seconds': 'shutdownTimeoutSeconds',
} as const satisfies Record<string, keyof ControllerConfig>;

export const controllerUsage = `usage: jobrelay-controller [--flag value ...]

Every flag can also be set by an environment variable (--redis-url is JOBRELAY_REDIS_URL),
or in a YAML or JSON file given by --config (JOBRELAY_CONFIG) under the setting's name
(redisUrl: redis://redis:6379). Flags win over variables, variables over the file.
  --config
${Object.keys(flags)
  .map((flag) => `  --${flag}`)
  .join('\n')}`;

export { ConfigError };

/** Flags win over JOBRELAY_* variables, then --config's file, then defaults. Bad values name their source. */
export function loadControllerConfig(argv: string[], env: NodeJS.ProcessEnv): ControllerConfig {
  return loadFlagConfig(argv, env, checkedControllerConfigSchema, {
    flags,
    listFields: new Set(['namespaces', 'kinds', 'kindManagedBy', 'deniedServerCidrs']),
    booleanFields: new Set([
      'createNamespaces',
      'allowExecPlugins',
      'allowProxyUrl',
      'restrictServerAddresses',
      'recordDispatchEvents',
      'leaderElect',
    ]),
  });
}
