import { workerClusterGroup, workerClusterPlural, workerClusterVersion } from '@jobrelay/clusters';
import { systemNamespace } from '@jobrelay/sandbox';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { ClusterClients } from './kube-test-helpers.ts';

export interface FleetWriteVersions {
  clusters: Record<string, string>;
  secrets: Record<string, string>;
}

/**
 * Every WorkerCluster and every kubeconfig Secret in jobrelay-system, name → resourceVersion:
 * two equal snapshots around a request prove it wrote none of them.
 */
export async function fleetWriteVersions(management: ClusterClients): Promise<FleetWriteVersions> {
  const list = (await management.kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
    group: workerClusterGroup,
    version: workerClusterVersion,
    plural: workerClusterPlural,
  })) as { items: Array<{ metadata: { name: string; resourceVersion: string } }> };
  const secrets = await management.core.listNamespacedSecret({ namespace: systemNamespace });
  return {
    clusters: Object.fromEntries(list.items.map((i) => [i.metadata.name, i.metadata.resourceVersion])),
    secrets: Object.fromEntries(secrets.items.map((s) => [s.metadata!.name!, s.metadata!.resourceVersion!])),
  };
}
