// Which e2e files run together. `npm test` runs the shared lanes at the same time, each on a
// fleet of its own (management cluster, three workers, Redis: nothing shared but the machine's
// cores), then the exclusive lane alone on the machine. Files inside a lane run one after
// another in the order listed here (e2e/src/lane-sequencer.ts), so a file has its fleet to
// itself: leader election times a takeover on its lane's fleet.
//
// Exclusive: the benchmark's guards (fleet-guard: a plain drain, then the fleet benchmark made
// small). The plain drain's bound (at least half the rate of a replay of the same API calls,
// measured one after the other) holds only if the machine gives both phases the same cores: it
// is the guard of the drain's rate; the fleet drain's (a quarter of its replay's) measured 0.44,
// 2.11 and 0.17 in runs beside the lanes, 1.05 alone: beside them it is noise.
//
// The short chaos run asserts invariants, not speed, so it runs in a shared lane: last on its
// lane (no file after it on the fleet it faulted), after its control run (the workers' own
// controllers alone, kept for it: e2e/src/chaos-control.ts), never on the first lane (whose
// fleet the exclusive lane uses next). Beside the lanes (load average 15 on two cores) it once
// found a queue over its quota by placement records while a worker's apiserver was down. One way
// that could happen is fixed since (queue admission let a finished mirror of an earlier attempt
// free the quota of the attempt still running); the sampler names the instant if it recurs.
//
// Four lanes keep both cores busy (1.9 of 2 on average in the shared part of a run), so a file's
// seconds depend on what runs beside it: one file took 103 s in one run and 232 s in the next.
// The CPU of that run (`node scripts/cpu-by-process.ts -- npm test`): the 16 kube-apiservers 44 %
// (each starts with KubeRay's 3 MB of CRDs, 7 CPU-s, and idles at about 2 % of a core), etcd,
// the kube-controller-managers, KWOK and schedulers 15 %, the vitest processes 15 %, the
// controllers the tests start 13 %. Lanes are balanced by the seconds of the last run, longest
// file first onto the lane that ends first: `node scripts/balance-lanes.ts` prints this table
// anew from the last run's reports (.test-results/), and `npm test` prints the slowest files of
// every run. test/e2e-lanes.test.ts checks that every e2e file is in exactly one lane.

export const sharedLanes = {
  // about 683 s after the first fleet starts
  'e2e-1': [
    'placement',
    'dispatch-resilience',
    'tenant-bookkeeping',
    'api-access-limits',
    'bookkeeping-policy',
    'leader-capacity-watches',
    'redis-password',
    'api-authorization',
    'placement-turns',
    'observe-only-registry',
    'api-docs-page',
    'simulated-logs',
    'observability',
  ],
  // about 681 s after the first fleet starts
  'e2e-2': [
    'chaos-control',
    'queue-fairness',
    'api-fuzz',
    'worker-rbac',
    'kuberay-dispatch',
    'odd-jobs',
    'api-routes',
    'sandbox-proof',
    'multikueue-guard',
    'kubeconfig-vetting',
    'worker-cluster-validation',
    'chaos',
  ],
  // about 679 s after the first fleet starts
  'e2e-3': [
    'leader-election',
    'replacement',
    'credentials-change',
    'mirror-refusals',
    'dispatch-job-modes',
    'worker-kueue',
    'api-workloads',
    'worker-registration',
    'kuberay-sandbox',
    'resilient-informer',
    'status-agreement',
    'api-access',
  ],
  // about 682 s after the first fleet starts
  'e2e-4': [
    'burst',
    'queues',
    'status-differential',
    'dashboard',
    'jobset-generic',
    'api-end-to-end',
    'tenant-privileges',
    'kuberay-differential',
    'helm-chart',
    'redis-modes',
    'kuberay-generic',
    'dispatch-queue-validation',
  ],
} as const satisfies Record<string, readonly string[]>;

export const exclusiveLane = ['fleet-guard'] as const;

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
