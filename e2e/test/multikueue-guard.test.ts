// Beside Kueue's MultiKueue, jobrelay does not claim kueue.x-k8s.io/multikueue: KubeRay's
// CRDs accept only that value besides their operator's, so both would dispatch the same
// RayClusters. The controller refuses those kinds with a clear message and goes on with the
// others. Kueue itself is not run here: its AdmissionCheck API (a minimal CRD) and one
// AdmissionCheck naming MultiKueue's controller are what the controller detects.
import { applyObjects, kuberayManagedBy, sandboxRayCluster } from '@jobrelay/sandbox';
import { ApiextensionsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf, placedCluster } from '../src/dispatch-fixtures.ts';
import {
  createTestNamespace,
  dispatcherManagedBy,
  eventually,
  sandboxJob,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';
import { createRay, placementOf, readRay } from '../src/ray-fixtures.ts';

const sandbox = testSandbox();
const fleet: Fleet = fleetOf(sandbox);
const crdName = 'admissionchecks.kueue.x-k8s.io';
let controller: ControllerProcess;
let namespace: string;

beforeAll(async () => {
  await applyObjects(fleet.management.kubeConfig, [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: {
        group: 'kueue.x-k8s.io',
        scope: 'Cluster',
        names: {
          kind: 'AdmissionCheck',
          plural: 'admissionchecks',
          singular: 'admissioncheck',
          listKind: 'AdmissionCheckList',
        },
        versions: [
          {
            name: 'v1beta2',
            served: true,
            storage: true,
            // Explicit fields: client-node drops x-kubernetes-* keys from what it sends.
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { controllerName: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    } as never,
  ]);
  const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  await eventually('the AdmissionCheck API served', async () => {
    await custom.createClusterCustomObject({
      group: 'kueue.x-k8s.io',
      version: 'v1beta2',
      plural: 'admissionchecks',
      body: {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'AdmissionCheck',
        metadata: { name: 'multikueue' },
        spec: { controllerName: 'kueue.x-k8s.io/multikueue' },
      },
    });
    return true;
  });
  namespace = await createTestNamespace(fleet.management, 'mk-guard');
  controller = startController(sandbox);
});

afterAll(async () => {
  await controller?.kill();
  await fleet.management.kubeConfig
    .makeApiClient(ApiextensionsV1Api)
    .deleteCustomResourceDefinition({ name: crdName });
});

describe('beside Kueue’s MultiKueue', () => {
  it('refuses the kinds that would claim kueue.x-k8s.io/multikueue, saying why, and still dispatches Jobs', async () => {
    const refusal = await eventually('the refusal in the log', async () => {
      const line = controller
        .logs()
        .split('\n')
        .find((l) => l.includes('Kueue') && l.includes('refuses'));
      return line
        ? (JSON.parse(line) as { level: number; msg: string; kinds: string[]; found: string })
        : undefined;
    });
    expect(refusal.level).toBe(50);
    expect(refusal.kinds).toEqual(['raycluster', 'rayjob']);
    expect(refusal.found).toBe(
      'AdmissionCheck multikueue (kueue.x-k8s.io/v1beta2) has controllerName kueue.x-k8s.io/multikueue',
    );
    expect(refusal.msg).toContain('rather than fight over the same objects');

    const job = await fleet.management.batch.createNamespacedJob({
      namespace,
      body: sandboxJob({ name: uniqueName('job'), managedBy: dispatcherManagedBy, pod: { runSeconds: 1 } }),
    });
    const name = uniqueName('rc');
    await createRay(
      fleet.management,
      namespace,
      sandboxRayCluster({ name, workerReplicas: 1, managedBy: kuberayManagedBy.multiKueue }),
    );
    await eventually('the Job placed', async () =>
      placedCluster(await fleet.management.batch.readNamespacedJob({ name: job.metadata!.name!, namespace })),
    );
    // Well past a reconcile and a resync: the RayCluster is still nobody's.
    await new Promise((r) => setTimeout(r, 8_000));
    const cluster = await readRay(fleet.management, 'rayclusters', namespace, name);
    expect(placementOf(cluster)).toBeUndefined();
    expect(cluster.status ?? {}).toEqual({});
  });
});
