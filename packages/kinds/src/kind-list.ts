// The kinds jobrelay knows. Adding a kind is its adapter folder plus one line here.
import { batchJobAdapter } from './batch-job/batch-job-adapter.ts';
import { rayClusterAdapter } from './ray-cluster/ray-cluster-adapter.ts';
import { rayJobAdapter } from './ray-job/ray-job-adapter.ts';
import type { AnyWorkloadKindAdapter } from './workload-kind-adapter.ts';

export const builtInKinds: readonly AnyWorkloadKindAdapter[] = [
  batchJobAdapter,
  rayClusterAdapter,
  rayJobAdapter,
];

/** The built-in kind of that adapter name, if any. */
export function builtInKind(name: string): AnyWorkloadKindAdapter | undefined {
  return builtInKinds.find((kind) => kind.name === name);
}
