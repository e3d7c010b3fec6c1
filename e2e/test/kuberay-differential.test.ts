// A seeded random mix of KubeRay workloads, each run twice: through jobrelay (origin on the
// management cluster, mirror on a worker) and directly on one worker. Every origin's final
// status must equal its direct twin's, field by field (times, head pod names and IPs, and a
// RayJob's generated cluster name masked). JOBRELAY_RAY_MIX_SEED picks the mix.
import { isDeepStrictEqual } from 'node:util';
import { kuberayManagedBy } from '@jobrelay/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { createTestNamespace, eventually, testSandbox } from '../src/kube-test-helpers.ts';
import {
  comparableRayStatus,
  createRay,
  deleteRay,
  generateRayMix,
  listRay,
  waitForRay,
} from '../src/ray-fixtures.ts';

const seed = Number(process.env.JOBRELAY_RAY_MIX_SEED ?? 20261201);
const count = 6;

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const controller = startController(sandbox);
const mix = generateRayMix(seed, count);
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
