// Which e2e files run together. `npm test` runs the shared lanes at the same time, each on a
// fleet of its own (management cluster, three workers, Redis: nothing shared but the machine's
// cores), then the exclusive lane alone on the machine. Files inside a lane run one after
// another, as every file ran before lanes, so a file has its fleet to itself: leader election
// times a takeover on its lane's fleet.
//
// Exclusive: the benchmark's guards (fleet-guard: a plain drain, then the fleet benchmark made
// small). The plain drain's bound (at least half the rate of a replay of the same API calls,
// measured one after the other) holds only if the machine gives both phases the same cores: it
// is the guard of the drain's rate; the fleet drain's (a quarter of its replay's) measured 0.44,
// 2.11 and 0.17 in runs beside the lanes, 1.05 alone: beside them it is noise. And chaos: beside
// the four lanes (load average 15 on two cores) its seeded run found a queue over its quota by
// placement records while a worker's apiserver was down (1.4 of 1 cpu; issue 44's ground); alone
// it passes, as it always did. Its control run (the workers' own controllers alone) needs no
// quiet machine: it runs in a shared lane (chaos-control) and is kept for chaos
// (e2e/src/chaos-control.ts).
//
// Most e2e time is waiting on real controllers (backoff, leases, timeouts), not CPU: with three
// lanes at once each file took about what it took alone. Lanes are balanced by those seconds,
// longest file first onto the lane that ends first: `node scripts/balance-lanes.ts` prints this
// table anew from the last run's reports (.test-results/), and `npm test` prints the slowest files
// of every run. test/e2e-lanes.test.ts checks that every e2e file is in exactly one lane.

export const sharedLanes = {
  // about 618 s after the first fleet starts
  'e2e-1': [
    'queue-fairness',
    'queues',
    'credentials-change',
    'api-end-to-end',
    'mirror-refusals',
    'multikueue-guard',
    'helm-chart',
    'worker-rbac',
    'redis-password',
    'api-docs-page',
    'observe-only-registry',
    'worker-cluster-validation',
  ],
  // about 619 s after the first fleet starts
  'e2e-2': [
    'dispatch-resilience',
    'burst',
    'chaos-control',
    'leader-election',
    'leader-capacity-watches',
    'odd-jobs',
    'worker-registration',
    'tenant-privileges',
    'kuberay-sandbox',
    'sandbox-proof',
    'redis-modes',
    'kuberay-generic',
  ],
  // about 620 s after the first fleet starts
  'e2e-3': [
    'placement',
    'api-access-limits',
    'status-differential',
    'jobset-generic',
    'worker-kueue',
    'dispatch-job-modes',
    'bookkeeping-policy',
    'kubeconfig-vetting',
    'placement-turns',
    'kuberay-differential',
    'simulated-logs',
    'api-access',
  ],
  // about 622 s after the first fleet starts
  'e2e-4': [
    'replacement',
    'tenant-bookkeeping',
    'dashboard',
    'kuberay-dispatch',
    'api-fuzz',
    'api-authorization',
    'api-routes',
    'api-workloads',
    'resilient-informer',
    'status-agreement',
    'dispatch-queue-validation',
    'observability',
  ],
} as const satisfies Record<string, readonly string[]>;

export const exclusiveLane = ['chaos', 'fleet-guard'] as const;

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
