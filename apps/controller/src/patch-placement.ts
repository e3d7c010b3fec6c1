import { isConflict, mergePatch } from '@jobrelay/kube';
import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { formatPlacementRecord, type PlacementRecord } from '@jobrelay/placement';
import type { BatchV1Api, V1Job } from '@kubernetes/client-node';
import { jobKey } from './job-facts.ts';

/** Writes the placement annotation over the version read: a concurrent change is a conflict, retried. */
export async function patchPlacement(
  batch: BatchV1Api,
  origin: V1Job,
  record: PlacementRecord,
): Promise<void> {
  try {
    await batch.patchNamespacedJob(
      {
        name: origin.metadata!.name!,
        namespace: origin.metadata!.namespace!,
        body: {
          metadata: {
            resourceVersion: origin.metadata!.resourceVersion,
            annotations: {
              [placementAnnotation]: formatPlacementRecord(record),
              // Placed: the reason it waited no longer applies.
              ...(record.cluster ? { [unschedulableAnnotation]: null } : {}),
            },
          },
        },
      },
      mergePatch,
    );
  } catch (err) {
    if (isConflict(err)) throw new Error(`origin ${jobKey(origin)} changed while placing it; retrying`);
    throw err;
  }
}
