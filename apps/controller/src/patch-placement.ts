import type { KubeObject, WorkloadClient } from '@jobrelay/kinds';
import { unlessConflict, type WriteOutcome } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  formatPlacementRecord,
  type PlacementRecord,
  type RecordKeyring,
  sealSubjectOf,
} from '@jobrelay/placement';

/**
 * Writes the placement annotation, sealed for this origin, over the version read: a concurrent
 * change comes back as a conflict.
 */
export function patchPlacement<T extends KubeObject>(
  client: WorkloadClient<T>,
  origin: T,
  record: PlacementRecord,
  keyring: RecordKeyring,
): Promise<WriteOutcome<T>> {
  return unlessConflict(() =>
    client.patch(origin.metadata!.namespace!, origin.metadata!.name!, {
      metadata: {
        resourceVersion: origin.metadata!.resourceVersion,
        annotations: {
          [placementAnnotation]: formatPlacementRecord(record, sealSubjectOf(origin), keyring),
          // Placed: the reason it waited no longer applies.
          ...(record.cluster ? { [unschedulableAnnotation]: null } : {}),
        },
      },
    }),
  );
}
