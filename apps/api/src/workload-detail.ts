// The parts of a dispatched workload's detail: its Events and placement history, its mirror as
// the API's watch of the worker sees it.
import {
  type EventView,
  type MirrorView,
  placementRecordSource,
  type WorkloadDetail,
} from '@jobrelay/api-types';
import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import type { PlacementRecord } from '@jobrelay/placement';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { MirrorLookup } from './fleet-view.ts';
import { placementOf } from './placement-trust.ts';
import { type QueuePlace, workloadQueue } from './queue-views.ts';
import { workloadSummary } from './workload-views.ts';

/** Events of a workload that tell its placement story, oldest first. */
export const placementReasons: ReadonlySet<string> = new Set([
  'Placed',
  'FailedPlacement',
  'PlacementTimeout',
  'Replacing',
  'MirrorCreated',
  'MirrorAdopted',
  'NameCollision',
  'NamespaceMissing',
  'FinishedWithoutMirror',
  'PlacementUntrusted',
  'PlacementUnverifiable',
  'MirrorTampered',
  'MirrorRefused',
]);

export { type EventView, placementRecordSource };

export function iso(value: Date | string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  return value instanceof Date ? value.toISOString() : value;
}

/** Dates to strings, recursively, so a status is plain JSON. */
export function plain(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value ?? {})) as Record<string, unknown>;
}

/** Every Event about the object (by its UID), oldest first: one API call. */
export async function eventsOf(core: CoreV1Api, namespace: string, uid: string): Promise<EventView[]> {
  const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${uid}` });
  return list.items
    .map((event) => ({
      type: event.type ?? 'Normal',
      reason: event.reason ?? '',
      message: event.message ?? '',
      at: iso(
        event.eventTime ?? event.lastTimestamp ?? event.firstTimestamp ?? event.metadata?.creationTimestamp,
      ),
      count: event.count ?? event.series?.count ?? 1,
      source: event.reportingComponent || event.source?.component || null,
    }))
    .sort((a, b) => (a.at ?? '').localeCompare(b.at ?? ''));
}

/**
 * The placement story, oldest first: the placement Events, and the current placement read
 * from the record when no Placed Event tells it. The controller records Placed (and
 * MirrorCreated) only with --record-dispatch-events, a write per dispatch saved; the record
 * always says where, since when and (from 0.2) why. `events` is null for a caller who may not
 * list Events: the record is theirs to read all the same (it is in `placement`).
 */
export function placementHistory(
  events: EventView[] | null,
  record: PlacementRecord | undefined,
): EventView[] {
  const history = (events ?? []).filter((event) => placementReasons.has(event.reason));
  const cluster = record?.cluster;
  if (!record || !cluster || history.some((event) => tellsPlacement(event, record))) return history;
  const entry: EventView = {
    type: 'Normal',
    reason: 'Placed',
    message: record.decision ?? `placed on ${cluster} (attempt ${record.attempt})`,
    at: record.placedAt ?? null,
    count: 1,
    source: placementRecordSource,
  };
  const at = timeOf(entry.at);
  // In time order; a record that does not say when goes last, as the latest word.
  const later = at === undefined ? -1 : history.findIndex((event) => (timeOf(event.at) ?? -1) > at);
  return later === -1 ? [...history, entry] : [...history.slice(0, later), entry, ...history.slice(later)];
}

/**
 * Whether a Placed Event is about the record's placement: it carries the recorded decision, or
 * it came at or after placedAt (the controller records it right after writing the record, by
 * the same clock). An earlier attempt's Placed Event is neither.
 */
function tellsPlacement(event: EventView, record: PlacementRecord): boolean {
  if (event.reason !== 'Placed') return false;
  if (record.decision !== undefined && event.message === record.decision) return true;
  const placedAt = timeOf(record.placedAt);
  const at = timeOf(event.at);
  return placedAt !== undefined && at !== undefined && at >= placedAt;
}

function timeOf(text: string | null | undefined): number | undefined {
  const ms = text ? Date.parse(text) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** The mirror as shown (its status as the kind's adapter reads it), or why there is none. */
export function mirrorView(
  adapter: AnyWorkloadKindAdapter,
  found: MirrorLookup,
): { mirror: MirrorView | null; mirrorUnavailable: string | null } {
  if (found.kind !== 'found') return { mirror: null, mirrorUnavailable: found.message };
  const mirror: KubeObject = found.mirror;
  return {
    mirror: {
      cluster: found.cluster,
      uid: mirror.metadata?.uid ?? null,
      createdAt: iso(mirror.metadata?.creationTimestamp),
      status: plain(adapter.statusOf(mirror)),
    },
    mirrorUnavailable: null,
  };
}

/**
 * A workload's detail from what the API holds of it: the origin, its mirror as found on its
 * worker, its Events (null for a caller who may not list them), and, for a pending workload
 * whose record says nothing, why placement would refuse it now (`previewReason`, asked only
 * then). The summary's phase follows the mirror: found means running.
 */
export function workloadDetail(
  adapter: AnyWorkloadKindAdapter,
  object: KubeObject,
  found: MirrorLookup,
  events: EventView[] | null,
  previewReason: () => string,
  now: number = Date.now(),
  /** The queue that takes it while pending, when its reason does not name one (FleetView.selectQueue). */
  selectQueue: () => string | undefined = () => undefined,
  /** Pending workloads' places in their queues (FleetView.queuePlaces). */
  places: ReadonlyMap<string, QueuePlace> = new Map(),
): WorkloadDetail {
  const summary = workloadSummary(adapter, object, found.kind === 'found', now);
  const record = placementOf(object);
  const { mirror, mirrorUnavailable } = mirrorView(adapter, found);
  const waiting =
    summary.phase === 'pending'
      ? { reason: summary.reason ?? previewReason(), since: summary.waitingSince }
      : null;
  return {
    ...summary,
    placement: record ? plain(record) : null,
    history: placementHistory(events, record),
    mirror,
    mirrorUnavailable,
    status: plain(adapter.statusOf(object)),
    events,
    waiting,
    queue:
      summary.phase === 'finished'
        ? null
        : workloadQueue({ record, reason: summary.reason, uid: summary.uid }, selectQueue, places),
    podSelectors: found.kind === 'found' ? (adapter.podsOf?.(found.mirror) ?? []) : [],
  };
}
