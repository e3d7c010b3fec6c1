import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/**
 * This installation's `jobrelay.dev/origin` value: the UID of the management cluster's
 * kube-system namespace, which is stable for the cluster's life and unique, so two
 * management clusters sharing a worker never touch each other's mirrors.
 */
export async function defaultOriginId(management: KubeConfig): Promise<string> {
  const namespace = await management.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
  const uid = namespace.metadata?.uid;
  if (!uid) throw new Error('the kube-system namespace has no UID; set --origin-id explicitly');
  return uid;
}
