// The generic adapter (a kind configured by GVK, status copied verbatim) against a real
// controller: KubeRay's RayCluster, declared in a --generic-kinds-file instead of through its
// own adapter. The controller dispatches only Jobs and this generic kind here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kuberayManagedBy, sandboxRayCluster } from '@jobrelay/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { createTestNamespace, eventually, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';
import {
  createRay,
  deleteRay,
  findRayMirror,
  placementOf,
  readRay,
  waitForRay,
} from '../src/ray-fixtures.ts';

const genericRayCluster = `
name: generic-raycluster
group: ray.io
version: v1
kind: RayCluster
plural: rayclusters
managedBy:
  default: ${kuberayManagedBy.multiKueue}
  accepted: [${kuberayManagedBy.multiKueue}]
finishedConditions: []
suspendField: spec.suspend
podSets:
  - template: spec.headGroupSpec.template
  - each: spec.workerGroupSpecs
    template: template
    count:
      - path: replicas
        default: 1
`;

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const kindsDir = mkdtempSync(join(tmpdir(), 'jobrelay-generic-'));
const kindsFile = join(kindsDir, 'kinds.yaml');
writeFileSync(kindsFile, genericRayCluster);
const controller = startController(sandbox, [
  '--kinds=job,generic-raycluster',
  `--generic-kinds-file=${kindsFile}`,
]);
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(fleet.management, 'ray-generic');
});

afterAll(async () => {
  await controller.kill();
  // Once the controller, started with --generic-kinds-file there, has exited.
  rmSync(kindsDir, { recursive: true, force: true });
});

describe('a RayCluster dispatched as a generic kind', () => {
  it('is placed, run by the worker’s real operator, and its status copied verbatim', async () => {
    const name = uniqueName('grc');
    const origin = await createRay(
      fleet.management,
      namespace,
      sandboxRayCluster({ name, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    const ready = await waitForRay(
      fleet.management,
      'rayclusters',
      namespace,
      name,
      'ready',
      (o) => o.status?.state === 'ready',
    );
    const { cluster, mirror } = (await findRayMirror(fleet, origin))!;
    expect(placementOf(ready)?.cluster).toBe(cluster);
    expect(mirror.spec?.managedBy).toBeUndefined();
    // Verbatim: once both have settled, the origin's status is the mirror's, but for the
    // observedGeneration, which counts the origin's own generations.
    const settled = await eventually('the origin to hold the mirror’s status', async () => {
      const [o, m] = await Promise.all([
        readRay(fleet.management, 'rayclusters', namespace, name),
        findRayMirror(fleet, origin),
      ]);
      const strip = (status: Record<string, unknown> | undefined) => {
        const { observedGeneration: _ignored, ...rest } = status ?? {};
        return JSON.stringify(rest);
      };
      return m && strip(o.status) === strip(m.mirror.status) ? o : undefined;
    });
    expect(settled.status?.readyWorkerReplicas).toBe(1);
    expect(controller.logs()).toContain('"generic-raycluster"');

    await deleteRay(fleet.management, 'rayclusters', namespace, name);
    await eventually('the mirror deleted', async () =>
      (await findRayMirror(fleet, origin)) ? undefined : true,
    );
  });
});
