import { z } from 'zod';

/** Counts from earlier attempts, added to the current mirror's so the origin's never go back. */
const carriedProgressSchema = z.object({
  succeeded: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  completedIndexes: z.string().optional(),
  failedIndexes: z.string().optional(),
});

const placementRecordSchema = z.object({
  /** Where the Job lives now; absent while it waits for (re-)placement. */
  cluster: z.string().min(1).optional(),
  /** 1 for the first placement, +1 for every re-placement; mirrors of older attempts are stale. */
  attempt: z.number().int().positive(),
  placedAt: z.string().optional(),
  /** Why this cluster: the placement decision, scores and filters (kube-scheduler style). */
  decision: z.string().optional(),
  /**
   * Written by versions before 0.2 once the mirror existed; read by none since (a mirror's
   * labels say whose and which attempt it is). Kept so their records still parse.
   */
  mirrorUid: z.string().optional(),
  carried: carriedProgressSchema,
  /** Clusters this Job must not go to (a foreign Job holds its name there). */
  excludedClusters: z.array(z.string()),
  /** Why the last attempt ended, for people reading the annotation. */
  lastReplacedBecause: z.string().optional(),
  /** When this attempt started waiting for a cluster (the placement timeout counts from it). */
  waitingSince: z.string().optional(),
  /**
   * How many times a worker's apiserver refused to create this workload's mirror (a 400, 403,
   * 413 or 422: an admission policy, a quota, a field it does not know), over all attempts.
   */
  refusals: z.number().int().nonnegative().optional(),
  /** Clusters that refused its mirror: placement prefers any other that fits. */
  refusedBy: z.array(z.string()).optional(),
  /** After a refusal, the workload is not placed again before this time. */
  retryAfter: z.string().optional(),
  /**
   * jobrelay gave up on this workload (its mirror was refused too often) and says why; nothing
   * more is done for it. Removing the annotation lets it be placed afresh.
   */
  gaveUp: z.string().optional(),
});

export type CarriedProgress = z.infer<typeof carriedProgressSchema>;
export type PlacementRecord = z.infer<typeof placementRecordSchema>;

export const noProgress: CarriedProgress = { succeeded: 0, failed: 0 };

export type ParsedPlacement =
  | { kind: 'none' }
  | { kind: 'ok'; record: PlacementRecord }
  | { kind: 'unreadable'; problem: string };

/** Reads the `jobrelay.dev/placement` annotation; a damaged one is reported, never guessed at. */
export function parsePlacementRecord(annotation: string | undefined): ParsedPlacement {
  if (annotation === undefined || annotation === '') return { kind: 'none' };
  let json: unknown;
  try {
    json = JSON.parse(annotation);
  } catch {
    return { kind: 'unreadable', problem: 'it is not JSON' };
  }
  const parsed = placementRecordSchema.safeParse(json);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return { kind: 'unreadable', problem };
  }
  return { kind: 'ok', record: parsed.data };
}

export function formatPlacementRecord(record: PlacementRecord): string {
  return JSON.stringify(placementRecordSchema.parse(record));
}
