import type { ClusterApiClients } from '@jobrelay/kube';
import { mergePatch } from '@jobrelay/kube';
import type { KubeObject, WorkloadClient, WorkloadResource } from './workload-kind-adapter.ts';

/**
 * The WorkloadClient of a custom resource, through the cluster's shared, rate-limited
 * CustomObjectsApi. Objects stay plain JSON (dates are strings), as the apiserver sends them.
 */
export function customObjectClient<T extends KubeObject>(
  resource: WorkloadResource,
  apis: Pick<ClusterApiClients, 'custom'>,
): WorkloadClient<T> {
  const { group, version, plural } = resource;
  const custom = apis.custom;
  return {
    create: (namespace, body) =>
      custom.createNamespacedCustomObject({ group, version, plural, namespace, body }) as Promise<T>,
    read: (namespace, name) =>
      custom.getNamespacedCustomObject({ group, version, plural, namespace, name }) as Promise<T>,
    patch: (namespace, name, body) =>
      custom.patchNamespacedCustomObject(
        { group, version, plural, namespace, name, body },
        mergePatch,
      ) as Promise<T>,
    patchStatus: (namespace, name, body) =>
      custom.patchNamespacedCustomObjectStatus(
        { group, version, plural, namespace, name, body },
        mergePatch,
      ) as Promise<T>,
    replaceStatus: (object) =>
      custom.replaceNamespacedCustomObjectStatus({
        group,
        version,
        plural,
        namespace: object.metadata!.namespace!,
        name: object.metadata!.name!,
        body: object,
      }) as Promise<T>,
    delete: async (namespace, name, uid, propagation = 'Background') => {
      await custom.deleteNamespacedCustomObject({
        group,
        version,
        plural,
        namespace,
        name,
        propagationPolicy: propagation,
        body: { propagationPolicy: propagation, preconditions: { uid } },
      });
    },
  };
}
