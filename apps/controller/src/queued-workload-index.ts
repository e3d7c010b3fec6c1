// What admission knows of each queued workload, one entry per origin: whether it is admitted
// (its record names a cluster and a queue, unfinished) or pending, as read from the origin and its
// placement record, with its queue choice, priority and demand once computed; and what tells two
// readings of one origin apart (whether its facts or its admission changed). QueueAdmission
// (queue-admission.ts) keeps the index from the origins as the shared index read them
// (ClaimedOriginIndex: each record parsed once, for placement too) and runs the cycles over it;
// its writers (queue-admission-writers.ts) read entries.

import type { InvalidQueue, QueueChoice, QueueSpec, WorkloadPriority } from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock } from '@jobrelay/kube';
import type { PlacementRecord } from '@jobrelay/placement';
import { placementNeed } from '@jobrelay/planner';
import type { Resources } from '@jobrelay/resources';
import type { ClaimedOrigin } from './controller-events.ts';
import type { PlacedKind } from './place-origin-jobs.ts';

/** A dispatched kind as admission reads it: placement's view (its whole cache: the shared index). */
export type AdmittedKind = PlacedKind;

/** Every DispatchQueue parsed: the usable specs, and the others with their object (for their status). */
export interface ParsedQueues {
  specs: QueueSpec[];
  invalid: Map<string, { queue: InvalidQueue; object: KubeObject }>;
}

/** What admission knows of one origin, kept up to date from its cache's events. */
export interface IndexedWorkload {
  kindName: string;
  /** `namespace/name`. */
  key: string;
  uid: string;
  origin: KubeObject;
  /** Placed, unfinished, with the queue that admitted it in its record. */
  admitted?: {
    cluster: string;
    queue: string;
    admittedAt: number;
    evicting: boolean;
    record: PlacementRecord;
  };
  /** Claimed, unfinished, unsuspended, unplaced, not given up: it waits to be placed. */
  pending: boolean;
  /** Its record as last read (for an eviction: written over). */
  record?: PlacementRecord;
  /** Its creationTimestamp, parsed once (every cycle orders by it). */
  createdAt: number;
  /** Queue choice, priority and demand, as of `factsVersion` (queues, classes and namespaces change them). */
  facts?: { version: number; choice: QueueChoice; priority: WorkloadPriority; demand: Resources };
}

/**
 * Admitted or pending, or undefined when admission has nothing to do with it: from the origin as
 * the shared index read it (ClaimedOriginIndex).
 */
export function indexedWorkload(
  claimed: ClaimedOrigin<AdmittedKind>,
  options: { clock: Clock },
): IndexedWorkload | undefined {
  const { kind, origin, placement: parsed, finished } = claimed;
  const { uid, namespace, name } = origin.metadata ?? {};
  if (!uid || !namespace || !name) return undefined;
  const record = parsed.kind === 'ok' ? parsed.record : undefined;
  const base = {
    kindName: kind.adapter.name,
    key: `${namespace}/${name}`,
    uid,
    origin,
    record,
    createdAt: createdAtOf(origin),
  };
  if (record?.cluster && record.queue && !finished) {
    const placedAt = record.placedAt ? Date.parse(record.placedAt) : Number.NaN;
    return {
      ...base,
      pending: false,
      admitted: {
        cluster: record.cluster,
        queue: record.queue,
        admittedAt: Number.isNaN(placedAt) ? base.createdAt : placedAt,
        evicting: record.preempted !== undefined,
        record,
      },
    };
  }
  const need = placementNeed(
    origin,
    parsed,
    kind.adapter,
    { uid, managedBy: kind.managedBy },
    options.clock.now(),
  );
  if (need.kind !== 'needed') return undefined;
  return { ...base, pending: true };
}

function createdAtOf(origin: KubeObject): number {
  const at = Date.parse(origin.metadata?.creationTimestamp ?? '');
  return Number.isNaN(at) ? 0 : at;
}

/** Whether what decides a workload's facts is unchanged: its spec (generation) and labels. */
export function sameFactsInputs(a: KubeObject, b: KubeObject): boolean {
  const labels = (o: KubeObject) => JSON.stringify(o.metadata?.labels ?? {});
  return (
    a.metadata?.generation !== undefined &&
    a.metadata.generation === b.metadata?.generation &&
    labels(a) === labels(b)
  );
}

export function sameAdmission(a: IndexedWorkload, b: IndexedWorkload): boolean {
  return (
    a.admitted?.cluster === b.admitted?.cluster &&
    a.admitted?.queue === b.admitted?.queue &&
    a.admitted?.evicting === b.admitted?.evicting
  );
}
