import { isNotFound } from '@jobrelay/kube';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { multiKueueManagedBy } from './ray/ray-types.ts';

/** Kueue's AdmissionCheck API versions, newest first. */
const admissionCheckVersions = ['v1beta2', 'v1beta1'];

/**
 * Whether Kueue's MultiKueue runs on this management cluster: an AdmissionCheck whose
 * controllerName is MultiKueue's. Returns what was found, for the refusal message, or
 * undefined. Kueue without such an AdmissionCheck dispatches nothing, so it is no conflict.
 */
export async function findMultiKueue(custom: CustomObjectsApi): Promise<string | undefined> {
  for (const version of admissionCheckVersions) {
    let list: { items?: Array<{ metadata?: { name?: string }; spec?: { controllerName?: string } }> };
    try {
      list = await custom.listClusterCustomObject({
        group: 'kueue.x-k8s.io',
        version,
        plural: 'admissionchecks',
      });
    } catch (err) {
      if (isNotFound(err)) continue;
      throw err;
    }
    const check = (list.items ?? []).find((item) => item.spec?.controllerName === multiKueueManagedBy);
    if (check)
      return `AdmissionCheck ${check.metadata?.name} (kueue.x-k8s.io/${version}) has controllerName ${multiKueueManagedBy}`;
  }
  return undefined;
}
