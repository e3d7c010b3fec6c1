import { z } from 'zod';
import type { RecordKeyring, SealSubject } from './record-seal.ts';

const placementRecordSchema = z.object({
  /** Where the workload lives now; absent while it waits for (re-)placement. */
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
  /**
   * The workload's progress when this attempt began (what earlier attempts did), in its kind's
   * own shape: JSON the record stores, seals and hands back to the kind, never reads. `null`
   * when nothing is carried (a first attempt; a kind without progress).
   */
  carried: z.json(),
  /** Clusters this workload must not go to (a foreign object holds its name there). */
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
  /**
   * The DispatchQueue that admitted this attempt: its quota counts the workload while it is
   * placed and unfinished (kept here so usage is recomputed from Kubernetes after a restart, and
   * so a namespace relabelled meanwhile does not move the usage to another queue).
   */
  queue: z.string().min(1).optional(),
  /**
   * Its queue's admission evicted this attempt (preempted for a higher-priority workload of its
   * queue, or to reclaim nominal quota it borrowed) and says why: the mirror is deleted in the
   * foreground, and once the worker no longer holds it (its pods gone) the progress is carried
   * and the workload waits in its queue again (as a re-placement). Until then the record keeps
   * its cluster and queue: its quota stays held.
   */
  preempted: z.string().optional(),
});

/** A kind's progress as the core holds it: any JSON value, read only by the kind's adapter. */
export type WorkloadProgress = z.infer<ReturnType<typeof z.json>>;
export type PlacementRecord = z.infer<typeof placementRecordSchema>;

/** What a placement record carries when there is no progress to carry. */
export const nothingCarried: WorkloadProgress = null;

/**
 * A placement record as read from a workload. Only `ok` may be acted on: it was sealed by
 * jobrelay for this very workload (its UID) and has not changed since.
 * - untrusted: not JSON, not a record, unsealed, or a seal that does not match: jobrelay did
 *   not write it (a Job author did, or copied it from another workload). It is reported and the
 *   workload is placed from scratch. `claimedAttempt` is the attempt it claims, when it says one
 *   (bounded), so the fresh attempt is numbered past any mirror it may still have somewhere.
 * - unverifiable: sealed under a key jobrelay does not hold (its key Secret was lost or rotated
 *   out). Nothing is done for the workload until the key is restored or the record removed:
 *   placing everything again because a key went missing would be worse.
 */
export type ParsedPlacement =
  | { kind: 'none' }
  | { kind: 'ok'; record: PlacementRecord }
  | { kind: 'untrusted'; problem: string; claimedAttempt?: number }
  | { kind: 'unverifiable'; keyId: string };

/** Attempts above this in an untrusted record are not believed, even to number past them. */
const believableAttempt = 10_000;

/** An untrusted record: the problem, and the attempt it claims when that is believable. */
function untrusted(problem: string, attempt: unknown): Extract<ParsedPlacement, { kind: 'untrusted' }> {
  const believable =
    Number.isInteger(attempt) && (attempt as number) > 0 && (attempt as number) <= believableAttempt;
  return { kind: 'untrusted', problem, ...(believable ? { claimedAttempt: attempt as number } : {}) };
}

type Syntax =
  | { kind: 'none' }
  | { kind: 'ok'; record: PlacementRecord; seal: string | undefined }
  | { kind: 'untrusted'; problem: string; claimedAttempt?: number };

function parseSyntax(annotation: string | undefined): Syntax {
  if (annotation === undefined || annotation === '') return { kind: 'none' };
  let json: unknown;
  try {
    json = JSON.parse(annotation);
  } catch {
    return { kind: 'untrusted', problem: 'it is not JSON' };
  }
  const isObject = json !== null && typeof json === 'object' && !Array.isArray(json);
  const { seal, ...fields } = (isObject ? json : {}) as Record<string, unknown>;
  const parsed = placementRecordSchema.safeParse(isObject ? fields : json);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return untrusted(problem, fields.attempt);
  }
  return { kind: 'ok', record: parsed.data, seal: typeof seal === 'string' ? seal : undefined };
}

/**
 * Reads the `jobrelay.dev/placement` annotation WITHOUT checking its seal: for people and
 * tests reading what is there. Never act on it: `readPlacementRecord` is the one to act on.
 */
export function parsePlacementRecord(annotation: string | undefined): ParsedPlacement {
  const syntax = parseSyntax(annotation);
  return syntax.kind === 'ok' ? { kind: 'ok', record: syntax.record } : syntax;
}

/**
 * Reads the `jobrelay.dev/placement` annotation of `subject` and checks its seal with `keyring`:
 * only a record jobrelay sealed for this workload comes back `ok`.
 */
export function readPlacementRecord(
  annotation: string | undefined,
  subject: SealSubject,
  keyring: RecordKeyring,
): ParsedPlacement {
  const syntax = parseSyntax(annotation);
  if (syntax.kind !== 'ok') return syntax;
  const { record, seal } = syntax;
  const check = keyring.check(seal, record, subject);
  if (check.kind === 'valid') return { kind: 'ok', record };
  if (check.kind === 'unknown-key') return { kind: 'unverifiable', keyId: check.keyId };
  return untrusted(check.problem, record.attempt);
}

/** The annotation's text for `record` on `subject`, sealed with `keyring`'s current key. */
export function formatPlacementRecord(
  record: PlacementRecord,
  subject: SealSubject,
  keyring: RecordKeyring,
): string {
  const checked = placementRecordSchema.parse(record);
  return JSON.stringify({ ...checked, seal: keyring.seal(checked, subject) });
}
