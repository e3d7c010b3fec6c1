// The parts of a dispatched workload's detail every kind shares (Jobs on /api/v1/namespaces/...
// and every kind on /api/v1/workloads/...): its Events and placement history, its mirror as the
// API's watch of the worker sees it, why it waits.
import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import type { PlacementRecord } from '@jobrelay/placement';
import type { CoreV1Api } from '@kubernetes/client-node';
import { z } from 'zod';
import type { MirrorLookup } from './fleet-view.ts';

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

/** The `source` of a history entry no Event recorded: it is read from the placement record. */
export const placementRecordSource = 'placement-record';

export const eventSchema = z.object({
  type: z.string(),
  reason: z.string(),
  message: z.string(),
  at: z.string().nullable(),
  count: z.number().int(),
  source: z
    .string()
    .nullable()
    .describe(
      `Who says so: the Event's reporting component, or "${placementRecordSource}" for a history entry read from the jobrelay.dev/placement record (no Event recorded it).`,
    ),
});

export type EventView = z.infer<typeof eventSchema>;

export const mirrorSchema = z.object({
  cluster: z.string(),
  uid: z.string().nullable(),
  createdAt: z.string().nullable(),
  status: z.record(z.string(), z.unknown()),
});

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
): { mirror: z.infer<typeof mirrorSchema> | null; mirrorUnavailable: string | null } {
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
 * The detail fields a Job and a workload of any kind share (placement, history, mirror,
 * status, Events, why it waits), with the words for what each is.
 */
export function placedDetailFields(words: { mirror: string; status: string; events: string }) {
  return {
    placement: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'The jobrelay.dev/placement record: cluster, attempt, placedAt, decision (why that cluster), carried progress, excluded clusters; after a worker refused its mirror, refusals, refusedBy and retryAfter, and gaveUp once jobrelay gave up on it.',
      ),
    history: z
      .array(eventSchema)
      .describe(
        `Placement Events (Placed, Replacing, MirrorCreated, ...), oldest first. When no Placed Event tells the current placement (the controller records Placed and MirrorCreated only with --record-dispatch-events), a Placed entry read from the placement record stands for it: its message is the recorded decision, its at placedAt, its source "${placementRecordSource}".`,
      ),
    mirror: mirrorSchema.nullable().describe(words.mirror),
    mirrorUnavailable: z.string().nullable().describe('Why the mirror is not shown, when it is not.'),
    status: z.record(z.string(), z.unknown()).describe(words.status),
    events: z.array(eventSchema).nullable().describe(words.events),
    waiting: z.object({ reason: z.string(), since: z.string().nullable() }).nullable(),
  };
}
