// Which e2e files run together. `npm test` runs the shared lanes at the same time, each on a
// fleet of its own (management cluster, three workers, Redis: nothing shared but the machine's
// cores), then the exclusive lane alone on the machine. Files inside a lane run one after
// another, as every file ran before lanes, so a file has its fleet to itself: chaos faults its
// lane's fleet, leader election times a takeover on it, the fleet guard counts its LISTs.
//
// Exclusive: the benchmark guard, whose bound (a drain at least half the rate of a replay of the
// same API calls, measured one after the other) holds only if the machine gives both phases the
// same cores. The fleet guard's rate bound is a collapse bound (a quarter of its replay's, where
// it measured 0.49 to 1.05), and its other checks count requests, not time: it shares.
//
// Most e2e time is waiting on real controllers (backoff, leases, timeouts), not CPU: with three
// lanes at once each file took about what it took alone. Lanes are balanced by those seconds,
// longest file first onto the shortest lane (scripts/test.sh prints the slowest files of every
// run); test/e2e-lanes.test.ts checks that every e2e file is in exactly one lane.

export const sharedLanes = {
  'e2e-1': [
    'fleet-guard',
    'tenant-bookkeeping',
    'api-fuzz',
    'kuberay-dispatch',
    'mirror-refusals',
    'helm-chart',
    'api-routes',
    'redis-password',
    'resilient-informer',
    'status-agreement',
    'dispatch-queue-validation',
    'worker-cluster-validation',
  ],
  'e2e-2': [
    'chaos',
    'credentials-change',
    'replacement',
    'dashboard',
    'status-differential',
    'api-workloads',
    'leader-capacity-watches',
    'dispatch-job-modes',
    'kubeconfig-vetting',
    'kuberay-differential',
    'observability',
    'kuberay-generic',
  ],
  'e2e-3': [
    'queue-fairness',
    'dispatch-resilience',
    'api-end-to-end',
    'leader-election',
    'worker-kueue',
    'odd-jobs',
    'bookkeeping-policy',
    'multikueue-guard',
    'jobset-generic',
    'kuberay-sandbox',
    'sandbox-proof',
    'simulated-logs',
    'api-access',
  ],
  'e2e-4': [
    'placement',
    'queues',
    'api-access-limits',
    'burst',
    'placement-turns',
    'api-authorization',
    'worker-rbac',
    'worker-registration',
    'tenant-privileges',
    'api-docs-page',
    'observe-only-registry',
    'redis-modes',
  ],
} as const satisfies Record<string, readonly string[]>;

export const exclusiveLane = ['bench-guard'] as const;

export type LaneName = keyof typeof sharedLanes | 'e2e-exclusive';

/** Every lane with its files' paths, relative to the repository root. */
export function laneFiles(): Record<LaneName, string[]> {
  const paths = (names: readonly string[]) => names.map((name) => `e2e/test/${name}.test.ts`);
  return {
    ...(Object.fromEntries(
      Object.entries(sharedLanes).map(([lane, names]) => [lane, paths(names)]),
    ) as Record<keyof typeof sharedLanes, string[]>),
    'e2e-exclusive': paths(exclusiveLane),
  };
}
