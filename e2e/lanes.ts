// Which e2e files run together. `npm test` runs the shared lanes at the same time, each on a
// fleet of its own (management cluster, three workers, Redis: nothing shared but the machine's
// cores), then the exclusive lane alone on the machine. Files inside a lane run one after
// another, as every file ran before lanes, so a file has its fleet to itself: chaos faults its
// lane's fleet, leader election times a takeover on it, the fleet guard counts its LISTs.
//
// Exclusive: the benchmark guard, whose bound (a drain at least half the rate of a replay of the
// same API calls, measured one after the other) holds only if the machine gives both phases the
// same cores: it is the guard of the drain's rate. The fleet guard runs on a fleet of its own
// beside the other lanes: its checks count requests, watches and turns, which the machine's load
// does not change; its own rate bound (a quarter of its replay's) is a loose collapse bound there
// (its ratio measured 0.44 and 2.11 in two runs beside the lanes, 1.05 alone).
//
// Most e2e time is waiting on real controllers (backoff, leases, timeouts), not CPU: with three
// lanes at once each file took about what it took alone. Lanes are balanced by those seconds,
// longest file first onto the lane that ends first: `node scripts/balance-lanes.ts` prints this
// table anew from the last run's reports (.test-results/), and `npm test` prints the slowest files
// of every run. test/e2e-lanes.test.ts checks that every e2e file is in exactly one lane.

export const sharedLanes = {
  // about 769 s after the first fleet starts
  'e2e-1': [
    'fleet-guard',
    'burst',
    'leader-election',
    'dashboard',
    'kuberay-dispatch',
    'status-agreement',
    'worker-rbac',
    'api-routes',
    'jobset-generic',
    'redis-modes',
    'kuberay-differential',
    'worker-cluster-validation',
    'observability',
  ],
  // about 767 s after the first fleet starts
  'e2e-2': [
    'chaos',
    'dispatch-resilience',
    'api-access-limits',
    'status-differential',
    'leader-capacity-watches',
    'multikueue-guard',
    'redis-password',
    'worker-registration',
    'kuberay-sandbox',
    'sandbox-proof',
    'api-docs-page',
    'dispatch-queue-validation',
  ],
  // about 767 s after the first fleet starts
  'e2e-3': [
    'queue-fairness',
    'credentials-change',
    'tenant-bookkeeping',
    'api-workloads',
    'worker-kueue',
    'api-authorization',
    'dispatch-job-modes',
    'tenant-privileges',
    'placement-turns',
    'kuberay-generic',
    'simulated-logs',
    'kubeconfig-vetting',
  ],
  // about 767 s after the first fleet starts
  'e2e-4': [
    'queues',
    'placement',
    'replacement',
    'api-fuzz',
    'mirror-refusals',
    'odd-jobs',
    'api-end-to-end',
    'helm-chart',
    'observe-only-registry',
    'resilient-informer',
    'bookkeeping-policy',
    'api-access',
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
