import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import { mapWithConcurrency } from '@jobrelay/kube';
import type { AccessReviewer, Caller } from './access-review.ts';
import { onKind } from './routes/permissions.ts';

/** SubjectAccessReviews in flight at once for one answer: a cluster may hold many namespaces. */
const reviewConcurrency = 8;

/**
 * Which of these workloads the caller may list, as the workload and Job lists decide it: `list`
 * on the workload's kind in all namespaces, else in the workload's own namespace. One review per
 * kind, then one per namespace of a kind not listable everywhere (answers are cached).
 */
export async function listableKindNamespaces(
  access: Pick<AccessReviewer, 'allowed'>,
  caller: Caller,
  workloads: ReadonlyArray<{ adapter: AnyWorkloadKindAdapter; object: KubeObject }>,
): Promise<(kind: string, namespace: string) => boolean> {
  const namespacesByKind = new Map<string, { adapter: AnyWorkloadKindAdapter; namespaces: Set<string> }>();
  for (const { adapter, object } of workloads) {
    const entry = namespacesByKind.get(adapter.name) ?? { adapter, namespaces: new Set<string>() };
    entry.namespaces.add(object.metadata?.namespace ?? '');
    namespacesByKind.set(adapter.name, entry);
  }
  const everywhere = new Set<string>();
  const inNamespace = new Set<string>();
  await mapWithConcurrency(
    [...namespacesByKind.values()],
    reviewConcurrency,
    async ({ adapter, namespaces }) => {
      if (await access.allowed(caller, onKind(adapter, 'list'))) {
        everywhere.add(adapter.name);
        return;
      }
      await mapWithConcurrency([...namespaces], reviewConcurrency, async (namespace) => {
        if (namespace && (await access.allowed(caller, onKind(adapter, 'list', namespace))))
          inNamespace.add(`${adapter.name}/${namespace}`);
      });
    },
  );
  return (kind, namespace) => everywhere.has(kind) || inNamespace.has(`${kind}/${namespace}`);
}
