import { unlessConflict, type WriteOutcome } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import type { Workload } from './placement-inputs.ts';
import { sealSubjectOf } from './placement-inputs.ts';
import { formatPlacementRecord, type PlacementRecord } from './placement-record.ts';
import type { RecordKeyring } from './record-seal.ts';

/** What the placement write needs of a kind's client: a merge patch of the object. */
export interface PlacementPatcher<T> {
  patch(namespace: string, name: string, body: object): Promise<T>;
}

/**
 * Writes the placement annotation, sealed for this origin, over the version read: a concurrent
 * change comes back as a conflict. The controller's one way to write a record (and the
 * benchmark's replay of it).
 */
export function patchPlacement<T extends Workload>(
  client: PlacementPatcher<T>,
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
