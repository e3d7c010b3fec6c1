import type { KubeObject, WorkloadClient } from '@jobrelay/kinds';
import { unlessConflict, type WriteOutcome } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { formatPlacementRecord, type PlacementRecord } from '@jobrelay/placement';

/** Writes the placement annotation over the version read: a concurrent change comes back as a conflict. */
export function patchPlacement<T extends KubeObject>(
  client: WorkloadClient<T>,
  origin: T,
  record: PlacementRecord,
): Promise<WriteOutcome<T>> {
  return unlessConflict(() =>
    client.patch(origin.metadata!.namespace!, origin.metadata!.name!, {
      metadata: {
        resourceVersion: origin.metadata!.resourceVersion,
        annotations: {
          [placementAnnotation]: formatPlacementRecord(record),
          // Placed: the reason it waited no longer applies.
          ...(record.cluster ? { [unschedulableAnnotation]: null } : {}),
        },
      },
    }),
  );
}
