import type { ObjectMeta } from '@jobrelay/kube';
import { originLabel, originUidLabel, placementAttemptAnnotation } from './jobrelay-names.ts';

export type MirrorOwnership =
  /** Ours, for this origin Job; `attempt` is the placement attempt that created it. */
  | { kind: 'this-origin'; attempt: number | undefined }
  /** Ours, but for another origin object (an earlier Job of the same name): stale, safe to delete. */
  | { kind: 'other-origin'; originUid: string }
  /** Not created by this installation: never modified, adopted or deleted. */
  | { kind: 'foreign'; owner: string };

/**
 * Who an object (of any kind) found on a worker belongs to, decided only from labels we set. Another
 * installation's mirror, or anybody's Job of the same name, is foreign (kueue #11849, #12404).
 */
export function mirrorOwnership(
  job: { metadata?: ObjectMeta | undefined },
  originId: string,
  originUid: string,
): MirrorOwnership {
  // Controllers copy their object's labels onto what they create (KubeRay's RayJob onto its
  // RayCluster, JobSet onto its Jobs), so a child of one of our mirrors carries our labels
  // too. jobrelay never sets a controller reference on a mirror: anything that has one is
  // some controller's child, and never ours to adopt or delete.
  const controller = job.metadata?.ownerReferences?.find((reference) => reference.controller);
  if (controller) return { kind: 'foreign', owner: `created by ${controller.kind} ${controller.name}` };
  const labels = job.metadata?.labels ?? {};
  const jobOrigin = labels[originLabel];
  const jobOriginUid = labels[originUidLabel];
  if (jobOrigin !== originId || !jobOriginUid) {
    return {
      kind: 'foreign',
      owner: jobOrigin ? `jobrelay installation ${jobOrigin}` : 'not created by jobrelay',
    };
  }
  if (jobOriginUid !== originUid) return { kind: 'other-origin', originUid: jobOriginUid };
  const attempt = Number(job.metadata?.annotations?.[placementAttemptAnnotation]);
  return { kind: 'this-origin', attempt: Number.isInteger(attempt) ? attempt : undefined };
}
