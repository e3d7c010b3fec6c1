import type { KubeObject, WorkloadKindAdapter } from '@jobrelay/kinds';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import {
  nothingCarried,
  type ParsedPlacement,
  type PlacementDecision,
  type PlacementRecord,
  waitingSince,
} from '@jobrelay/placement';
import { type EventReason, eventReasons } from './event-reasons.ts';
import type { OriginAction } from './origin-actions.ts';
import { statusWrite } from './status-sync.ts';

/** What a placement task found when it looked at its workload, before any cluster is chosen. */
export type PlacementNeed =
  | { kind: 'needed'; previous: PlacementRecord | undefined }
  /** Nothing to place; `why` is for the log. */
  | { kind: 'not-needed'; why: string };

/**
 * Whether a placement task still has work: the workload is the one the task was queued for,
 * still ours, unfinished, not suspended, has no cluster, was not given up on, and is not
 * waiting out a refusal. A record jobrelay did not write is replaced by the workload's
 * reconcile (which queues it again), never placed from.
 */
export function placementNeed<T extends KubeObject>(
  origin: T,
  placement: ParsedPlacement,
  adapter: Pick<WorkloadKindAdapter<T>, 'isManagedBy' | 'isFinished' | 'isSuspended'>,
  task: { uid: string; managedBy: string },
  now: number,
): PlacementNeed {
  const notNeeded = (why: string): PlacementNeed => ({ kind: 'not-needed', why });
  if (origin.metadata?.uid !== task.uid) return notNeeded('another object of that name');
  if (!adapter.isManagedBy(origin, task.managedBy)) return notNeeded('no longer claimed by jobrelay');
  if (origin.metadata?.deletionTimestamp) return notNeeded('being deleted');
  if (adapter.isFinished(origin)) return notNeeded('finished');
  if (adapter.isSuspended(origin)) return notNeeded('suspended');
  if (placement.kind === 'untrusted' || placement.kind === 'unverifiable')
    return notNeeded('its placement record is replaced by its reconcile first');
  const previous = placement.kind === 'ok' ? placement.record : undefined;
  if (previous?.cluster) return notNeeded(`already placed on ${previous.cluster}`);
  if (previous?.gaveUp !== undefined) return notNeeded('jobrelay gave up on it');
  // Refused a moment ago: the reconcile queues it again once the delay is over.
  if (previous?.retryAfter && Date.parse(previous.retryAfter) > now)
    return notNeeded('waiting out a refusal');
  return { kind: 'needed', previous };
}

/** What `chooseWorkerCluster` answered (its ranking is not needed here). */
export type PlacementChoice =
  | (Pick<Extract<PlacementDecision, { kind: 'placed' }>, 'kind' | 'cluster' | 'message'> & {
      /** The DispatchQueue that admitted it (its quota counts the workload while it is placed). */
      queue?: string;
    })
  | Extract<PlacementDecision, { kind: 'unschedulable' }>;

export interface PlacementPlanConfig {
  /** A workload that fits nowhere this long fails (kinds that can fail); 0: it waits forever. */
  placementTimeoutSeconds: number;
  /** Record a Normal `Placed` Event (the decision is in the record either way). */
  recordDispatchEvents?: boolean;
}

/** What a placement ends with, and the actions the executor carries out for it. */
export interface PlacementPlan<T extends KubeObject = KubeObject> {
  outcome: 'placed' | 'unschedulable' | 'gave-up';
  actions: OriginAction<T>[];
}

/**
 * A placement decision as writes, for the same executor as a reconcile's plan:
 *
 * - placed: the record names the cluster and carries the decision's explanation (one write,
 *   over the version read, before anything is created anywhere); a `Placed` Event when asked.
 * - fits nowhere: a `FailedPlacement` Event, and the reason on the workload (annotation
 *   `jobrelay.dev/unschedulable`) when it changed.
 * - fits nowhere for the placement timeout: for kinds with a terminal failure, the gave-up
 *   status (reason PlacementTimeout) and its Event; other kinds keep waiting.
 */
export function planPlacement<T extends KubeObject>(
  origin: T,
  previous: PlacementRecord | undefined,
  decision: PlacementChoice,
  adapter: WorkloadKindAdapter<T>,
  config: PlacementPlanConfig,
  now: number,
): PlacementPlan<T> {
  if (decision.kind === 'placed') {
    const {
      mirrorUid: _mirrorUid,
      waitingSince: _waitingSince,
      retryAfter: _retryAfter,
      // An earlier attempt's queue and eviction are not this one's: only its own admission counts.
      queue: _queue,
      preempted: _preempted,
      ...kept
    } = previous ?? { attempt: 1, carried: nothingCarried, excludedClusters: [] };
    const record: PlacementRecord = {
      ...kept,
      ...(decision.queue !== undefined ? { queue: decision.queue } : {}),
      cluster: decision.cluster,
      placedAt: new Date(now).toISOString(),
      // The explanation travels with the record, in the same write: `kubectl describe` and
      // the admin API show why this cluster without an Event per placement.
      decision: decision.message,
    };
    return {
      outcome: 'placed',
      actions: [
        { type: 'patch-placement', record },
        ...(config.recordDispatchEvents ? [placeEvent('Normal', eventReasons.placed, decision.message)] : []),
      ],
    };
  }
  const why = decision.message;
  const failed = placeEvent('Warning', eventReasons.failedPlacement, why);
  const gaveUp = giveUp(origin, previous, why, adapter, config, now);
  if (gaveUp?.[0]?.type === 'write-status') return { outcome: 'gave-up', actions: [failed, ...gaveUp] };
  const noted: OriginAction<T>[] =
    origin.metadata?.annotations?.[unschedulableAnnotation] === why
      ? []
      : [{ type: 'note-waiting', message: why }];
  // A gave-up status the kind's rules refuse is not written (refuse-status says so): it waits on.
  return { outcome: 'unschedulable', actions: [failed, ...(gaveUp ?? []), ...noted] };
}

/**
 * The optional give-up: the gave-up status and its Event once the workload has waited the
 * placement timeout, for kinds that have a terminal failure to write (a Job: FailureTarget and
 * Failed, in one valid update); the refusal when that status breaks the kind's rules;
 * undefined while it may still wait (or its kind cannot fail).
 */
function giveUp<T extends KubeObject>(
  origin: T,
  previous: PlacementRecord | undefined,
  why: string,
  adapter: WorkloadKindAdapter<T>,
  config: PlacementPlanConfig,
  now: number,
): OriginAction<T>[] | undefined {
  const timeoutMs = config.placementTimeoutSeconds * 1000;
  if (timeoutMs <= 0) return undefined;
  const since = waitingSince(origin, previous)?.getTime() ?? now;
  if (now - since < timeoutMs) return undefined;
  const message = `no cluster fit for ${config.placementTimeoutSeconds}s: ${why}`;
  const failed = adapter.gaveUpStatus?.(origin, new Date(now), eventReasons.placementTimeout, message);
  if (!failed) return undefined;
  const write = statusWrite(adapter, origin, failed, 'gave-up');
  if (write[0]?.type !== 'write-status') return write.length > 0 ? write : undefined;
  return [...write, placeEvent('Warning', eventReasons.placementTimeout, message)];
}

function placeEvent(
  eventType: 'Normal' | 'Warning',
  reason: EventReason,
  note: string,
): Extract<OriginAction, { type: 'record-event' }> {
  return { type: 'record-event', eventType, reason, action: 'Place', note };
}
