// A seeded random mix of KubeRay workloads, each run twice: through jobrelay (origin on the
// management cluster, mirror on a worker) and directly on one worker. Every origin's final
// status must equal its direct twin's, field by field (times, head pod names and IPs, and a
// RayJob's generated cluster name masked). JOBRELAY_RAY_MIX_SEED picks the mix.
import { isDeepStrictEqual } from 'node:util';
import { kuberayManagedBy, sandboxRayCluster, sandboxRayJob } from '@jobrelay/sandbox';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { seededRandom } from '../src/job-mix.ts';
import { createTestNamespace, eventually, testSandbox } from '../src/kube-test-helpers.ts';
import {
  comparableRayStatus,
  createRay,
  deleteRay,
  listRay,
  type RayObject,
  type RayPlural,
  waitForRay,
} from '../src/ray-fixtures.ts';

const seed = Number(process.env.JOBRELAY_RAY_MIX_SEED ?? 20261201);
const count = 6;

interface MixedRay {
  name: string;
  plural: RayPlural;
  manifest: (managedBy?: string) => KubernetesObject;
  /** Final: a RayCluster ready with every worker, a RayJob Complete or Failed. */
  settled: (object: RayObject) => boolean;
  describe: string;
}

function generateRayMix(): MixedRay[] {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const requests = { cpu: pick(['100m', '200m', '300m']), memory: pick(['128Mi', '256Mi']) };
    if (random() < 0.5) {
      const workers = pick([0, 1, 2, 3]);
      const name = `mix-rc-${i}`;
      return {
        name,
        plural: 'rayclusters' as const,
        manifest: (managedBy?: string) =>
          sandboxRayCluster({ name, workerReplicas: workers, requests, ...(managedBy ? { managedBy } : {}) }),
        settled: (o: RayObject) =>
          o.status?.state === 'ready' && (o.status.readyWorkerReplicas ?? 0) === workers,
        describe: `RayCluster, ${workers} workers of ${requests.cpu}`,
      };
    }
    const exitCode = pick([0, 0, 1]);
    const submissionMode = pick(['K8sJobMode', 'HTTPMode'] as const);
    const runSeconds = pick([1, 2, 3]);
    // Drawn once: the dispatched object and its direct twin must be the same workload.
    const clusterWorkers = pick([0, 1]);
    const name = `mix-rj-${i}`;
    return {
      name,
      plural: 'rayjobs' as const,
      manifest: (managedBy?: string) =>
        sandboxRayJob({
          name,
          submissionMode,
          runSeconds,
          exitCode,
          cluster: { workerReplicas: clusterWorkers, requests },
          ...(managedBy ? { managedBy } : {}),
        }),
      settled: (o: RayObject) =>
        o.status?.jobDeploymentStatus === 'Complete' || o.status?.jobDeploymentStatus === 'Failed',
      describe: `RayJob ${submissionMode}, ${runSeconds}s, exit ${exitCode}`,
    };
  });
}

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const controller = startController(sandbox);
const mix = generateRayMix();
let originNs: string;
let directNs: string;

beforeAll(async () => {
  [originNs, directNs] = await Promise.all([
    createTestNamespace(fleet.management, 'ray-mix'),
    createTestNamespace(fleet.direct, 'ray-mix-direct'),
  ]);
});

afterAll(async () => {
  for (const plural of ['rayclusters', 'rayjobs'] as const) {
    for (const object of await listRay(fleet.management, plural, originNs)) {
      await deleteRay(fleet.management, plural, originNs, object.metadata!.name!);
    }
  }
  await fleet.direct.core.deleteNamespace({ name: directNs });
  await eventually(
    'no Ray pods of the mix left on the workers',
    async () => {
      for (const worker of fleet.workers.values()) {
        for (const namespace of [originNs, directNs]) {
          const pods = await worker.core.listNamespacedPod({ namespace, labelSelector: 'ray.io/cluster' });
          if (pods.items.length > 0) return undefined;
        }
      }
      return true;
    },
    { timeoutMs: 120_000 },
  );
  await controller.kill();
});

describe(`a seeded mix of ${count} Ray workloads (seed ${seed})`, () => {
  it('ends every dispatched one with the status of its direct twin', async () => {
    process.stdout.write(
      `[ray-mix] seed ${seed}: ${mix.map((m) => `${m.name} (${m.describe})`).join('; ')}\n`,
    );
    for (const item of mix) {
      await createRay(fleet.management, originNs, item.manifest(kuberayManagedBy.multiKueue));
      await createRay(fleet.direct, directNs, item.manifest());
    }
    const results = await Promise.all(
      mix.map(async (item) => {
        const [dispatched, direct] = await Promise.all([
          waitForRay(fleet.management, item.plural, originNs, item.name, 'settled', item.settled, 180_000),
          waitForRay(fleet.direct, item.plural, directNs, item.name, 'settled', item.settled, 180_000),
        ]);
        return {
          name: item.name,
          dispatched: comparableRayStatus(dispatched.status, originNs, item.name),
          direct: comparableRayStatus(direct.status, directNs, item.name),
        };
      }),
    );
    const differing = results.filter((r) => !isDeepStrictEqual(r.dispatched, r.direct));
    for (const r of differing) expect(r.dispatched, `${r.name} (seed ${seed})`).toEqual(r.direct);
    expect(differing.map((r) => r.name)).toEqual([]);
  }, 300_000);
});
