// What the API shows of a dispatched workload of any kind, from its adapter's predicates and
// the origin's placement record; nothing here knows a kind.

import { type WorkloadPhase, type WorkloadSummary, workloadPhases } from '@jobrelay/api-types';
import { type AnyWorkloadKindAdapter, apiVersionOf, type KubeObject } from '@jobrelay/kinds';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import {
  waitingSince as attemptWaitingSince,
  type PlacementRecord,
  type PodGroup,
} from '@jobrelay/placement';
import { placementOf, recordKeysVersion } from './placement-trust.ts';

export { type WorkloadPhase, workloadPhases };

// The phases are described where they are defined: @jobrelay/api-types (workload.ts).

/** What the phase reads of a kind: its adapter's predicates. */
export type PhaseFacts = Pick<AnyWorkloadKindAdapter, 'isFinished' | 'isSuspended'>;

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

/** While unplaced: when the current attempt started waiting for a cluster (as the controller counts it). */
export function waitingSince(object: KubeObject): string | null {
  const record = placementOf(object);
  if (record?.cluster) return null;
  return attemptWaitingSince(object, record)?.toISOString() ?? null;
}

/**
 * Why an unplaced workload waits, as the controller last said it: given up on (its mirror was
 * refused too often), refused by a worker and waiting out the delay, or fitting no cluster.
 */
export function waitingReason(object: KubeObject, now: number = Date.now()): string | null {
  const record = placementOf(object);
  if (record?.gaveUp !== undefined) return `jobrelay gave up on it: ${record.gaveUp}`;
  if (record?.retryAfter && !record.cluster && Date.parse(record.retryAfter) > now)
    return `${record.lastReplacedBecause ?? 'a worker refused its mirror'}; placed again after ${record.retryAfter}`;
  return object.metadata?.annotations?.[unschedulableAnnotation] ?? null;
}

/** The pods the adapter counts for placement; 0 for an object its adapter cannot read. */
export function podCount(adapter: AnyWorkloadKindAdapter, object: KubeObject): number {
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
  adapter: AnyWorkloadKindAdapter,
  object: KubeObject,
  mirrorSeen: boolean,
  now: number = Date.now(),
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
    reason: phase === 'pending' ? waitingReason(object, now) : null,
  };
}

/** `kind/namespace/name`: the controller's key of an origin, unique across kinds. */
export function workloadKey(adapter: Pick<AnyWorkloadKindAdapter, 'name'>, object: KubeObject): string {
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
