// The short chaos run of `npm test`: one seed, one mix, shared by its control
// (e2e/test/chaos-control.test.ts) and its chaos phase (e2e/test/chaos.test.ts, after it on the
// same lane), so both name the same mix.
import type { ChaosOptions } from './chaos-run.ts';

export const shortChaos = {
  /** Kept: the seed of the first short run (change it only with a reason in the commit). */
  seed: 20261201,
  jobs: 40,
  // A RayCluster and a RayJob (seed 20261201 draws one of each), on KubeRay's real operator.
  rayWorkloads: 2,
  windowMs: 110_000,
  lostTimeoutSeconds: 15,
  counts: {
    'kill-controller': 2,
    'kill-leader': 1,
    'redis-restart': 1,
    'redis-flushall': 1,
    'apiserver-hang-short': 1,
    'apiserver-hang-long': 1,
    'apiserver-down': 1,
    'etcd-restart': 1,
  },
  finishTimeoutMs: 6 * 60_000,
} as const satisfies Omit<ChaosOptions, 'sandbox' | 'log'>;
