import { mergePatch } from '@jobrelay/kube';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Fleet } from './dispatch-fixtures.ts';
import { eventually } from './kube-test-helpers.ts';

const group = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' } as const;

export interface WorkerClusterCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface WorkerClusterPatch {
  labels?: Record<string, string | null>;
  spec?: Record<string, unknown>;
}

/** What an admin does with kubectl edit/label/patch on a WorkerCluster. */
export function workerClusterAdmin(fleet: Fleet) {
  const custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
  return {
    async patch(name: string, patch: WorkerClusterPatch): Promise<void> {
      await custom.patchClusterCustomObject(
        {
          ...group,
          name,
          body: {
            ...(patch.labels ? { metadata: { labels: patch.labels } } : {}),
            ...(patch.spec ? { spec: patch.spec } : {}),
          },
        },
        mergePatch,
      );
    },
    async get(name: string): Promise<{
      metadata: { labels?: Record<string, string> };
      spec: Record<string, unknown>;
      status?: {
        capacity?: { free?: Record<string, string>; allocatable?: Record<string, string> };
        conditions?: WorkerClusterCondition[];
        connectionAttempts?: number;
        nextAttemptTime?: string;
      };
    }> {
      return (await custom.getClusterCustomObject({ ...group, name })) as never;
    },
    /** The WorkerCluster's Active condition, once `predicate` holds for it (60 s at most). */
    async activeCondition(
      name: string,
      predicate: (c: WorkerClusterCondition) => boolean,
    ): Promise<WorkerClusterCondition> {
      return eventually(
        `WorkerCluster ${name} Active condition`,
        async () => {
          const wc = await this.get(name);
          const condition = wc.status?.conditions?.find((c) => c.type === 'Active');
          return condition && predicate(condition) ? condition : undefined;
        },
        { timeoutMs: 60_000 },
      );
    },
    /** Back to a plain registration: no test labels, weight 1, not cordoned or drained, no limits. */
    async reset(name: string, testLabels: string[]): Promise<void> {
      await custom.patchClusterCustomObject(
        {
          ...group,
          name,
          body: {
            metadata: { labels: Object.fromEntries(testLabels.map((l) => [l, null])) },
            spec: {
              weight: 1,
              unschedulable: null,
              drain: null,
              maxActiveWorkloads: null,
              allowedNamespaces: null,
            },
          },
        },
        mergePatch,
      );
    },
  };
}
