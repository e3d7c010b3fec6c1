import {
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';

/** Where jobrelay keeps its own objects (worker kubeconfig Secrets, the API's ServiceAccount). */
export const systemNamespace = 'jobrelay-system';

/** Server-side applies objects as `kubectl apply --server-side` does: idempotent, our fields win. */
export async function applyObjects(kubeConfig: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const object of objects) {
    await api.patch(object, undefined, undefined, 'jobrelay-sandbox', true, PatchStrategy.ServerSideApply);
  }
}
