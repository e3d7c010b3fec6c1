// What the API shows of a dispatched workload of any kind, from its adapter's predicates and
// the origin's placement record; nothing here knows a kind. batch/v1 Jobs keep their own,
// richer view on the /api/v1/jobs routes (job-views.ts).
import { type AnyJobKindAdapter, apiVersionOf, type KubeObject } from '@jobrelay/kinds';
import type { PlacementRecord, PodGroup } from '@jobrelay/placement';
import { z } from 'zod';
import { placementOf, waitingReason, waitingSince } from './job-views.ts';
import { recordKeysVersion } from './placement-trust.ts';

/**
 * One vocabulary for every kind, derived from the adapter and the placement record:
 * - `pending`: waiting for a cluster (no cluster in its placement record);
 * - `placed`: a cluster is chosen, but the API does not see its mirror there (being created,
 *   or the worker is not reachable from the API now);
 * - `running`: its mirror exists on the chosen cluster, where the kind's own controller runs it;
 * - `finished`: the adapter says it ended and will not run again (a Job Complete or Failed, a
 *   RayJob Complete or Failed; a RayCluster never finishes);
 * - `suspended`: suspended by its author (spec.suspend, or the kind's suspend field).
 * finished wins over suspended, which wins over the rest.
 */
export const workloadPhases = ['pending', 'placed', 'running', 'finished', 'suspended'] as const;
export type WorkloadPhase = (typeof workloadPhases)[number];

/** What the phase reads of a kind: its adapter's predicates. */
export type PhaseFacts = Pick<AnyJobKindAdapter, 'isFinished' | 'isSuspended'>;

/** Pure: the phase of `object` of the kind `facts` describes, given its record and whether its mirror is seen. */
export function workloadPhase(
  facts: PhaseFacts,
  object: KubeObject,
  record: PlacementRecord | undefined,
  mirrorSeen: boolean,
): WorkloadPhase {
  if (facts.isFinished(object)) return 'finished';
  if (facts.isSuspended(object)) return 'suspended';
  if (!record?.cluster) return 'pending';
  return mirrorSeen ? 'running' : 'placed';
}

export const workloadSummarySchema = z
  .object({
    kind: z
      .string()
      .describe('The kind’s name in this API (its adapter’s): job, raycluster, rayjob, or a generic kind’s.'),
    apiVersion: z.string().describe('The object’s apiVersion, e.g. ray.io/v1.'),
    objectKind: z.string().describe('The object’s kind, e.g. RayCluster.'),
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    phase: z.enum(workloadPhases),
    cluster: z.string().nullable().describe('Where it is placed now; null while it waits.'),
    attempt: z.number().int().nullable().describe('1 for the first placement, +1 per re-placement.'),
    placedAt: z.string().nullable(),
    waitingSince: z.string().nullable().describe('While pending: since when this attempt waits.'),
    createdAt: z.string().nullable(),
    finishedAt: z.string().nullable().describe('When it finished, if its kind says.'),
    pods: z
      .number()
      .int()
      .describe('Pods it runs at once, as placement counts them (its pod groups, e.g. head + workers).'),
    reason: z.string().nullable().describe('While pending: why it waits for a cluster.'),
    labels: z.record(z.string(), z.string()),
  })
  .meta({ id: 'WorkloadSummary' });

export type WorkloadSummary = z.infer<typeof workloadSummarySchema>;

/** The pods the adapter counts for placement; 0 for an object its adapter cannot read. */
export function podCount(adapter: AnyJobKindAdapter, object: KubeObject): number {
  try {
    return adapter.podDemand(object).reduce((sum, group) => sum + group.count, 0);
  } catch {
    return 0;
  }
}

type SummaryBase = Omit<WorkloadSummary, 'phase' | 'waitingSince' | 'reason'>;
/** The parts that do not depend on the mirror, once per object version (informers replace objects). */
const bases = new WeakMap<KubeObject, { keys: number; base: SummaryBase }>();

/** What lists show of a dispatched workload: the phase from its adapter, record and mirror. */
export function workloadSummary(
  adapter: AnyJobKindAdapter,
  object: KubeObject,
  mirrorSeen: boolean,
): WorkloadSummary {
  const cached = bases.get(object);
  let base = cached?.keys === recordKeysVersion() ? cached.base : undefined;
  const record = placementOf(object);
  if (!base) {
    let finishedAt: Date | undefined;
    try {
      finishedAt = adapter.finishedAt(object);
    } catch {
      finishedAt = undefined;
    }
    base = {
      kind: adapter.name,
      apiVersion: apiVersionOf(adapter.resource),
      objectKind: adapter.resource.kind,
      namespace: object.metadata?.namespace ?? '',
      name: object.metadata?.name ?? '',
      uid: object.metadata?.uid ?? '',
      cluster: record?.cluster ?? null,
      attempt: record?.attempt ?? null,
      placedAt: record?.cluster ? (record.placedAt ?? null) : null,
      createdAt: object.metadata?.creationTimestamp ?? null,
      finishedAt: finishedAt && !Number.isNaN(finishedAt.getTime()) ? finishedAt.toISOString() : null,
      pods: podCount(adapter, object),
      labels: object.metadata?.labels ?? {},
    };
    bases.set(object, { keys: recordKeysVersion(), base });
  }
  const phase = workloadPhase(adapter, object, record, mirrorSeen);
  return {
    ...base,
    phase,
    waitingSince: phase === 'pending' ? waitingSince(object) : null,
    reason: phase === 'pending' ? waitingReason(object) : null,
  };
}

/** `kind/namespace/name`: the controller's key of an origin, unique across kinds. */
export function workloadKey(adapter: Pick<AnyJobKindAdapter, 'name'>, object: KubeObject): string {
  return `${adapter.name}/${object.metadata?.namespace}/${object.metadata?.name}`;
}

/**
 * Why pod groups an adapter read from a manifest cannot be placed, or undefined when they can:
 * every count a whole number of pods, every request a finite amount, none negative. An origin's
 * spec passed its apiserver's schema; a previewed manifest did not, and a count of "2" or a
 * request of {} would otherwise reach the scores as NaN.
 */
export function podDemandProblem(groups: readonly PodGroup[]): string | undefined {
  const shown = (value: unknown) => (typeof value === 'number' ? String(value) : JSON.stringify(value));
  for (const [index, group] of groups.entries()) {
    if (typeof group.count !== 'number' || !Number.isInteger(group.count) || group.count < 0)
      return `pod group ${index + 1} has ${shown(group.count)} pods, not a whole number`;
    for (const [resource, amount] of Object.entries(group.requests)) {
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
        return `pod group ${index + 1} requests ${shown(amount)} ${resource}, not an amount`;
    }
  }
  return undefined;
}
