import { z } from 'zod';
import { workloadQueueSchema } from './dispatch-queue.ts';
import { type WorkloadPhase, workloadPhases } from './workload-phases.ts';

export { type WorkloadPhase, workloadPhases };

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

/** The `source` of a history entry no Event recorded: it is read from the placement record. */
export const placementRecordSource = 'placement-record';

export const eventSchema = z
  .object({
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
  })
  .meta({ id: 'WorkloadEvent' });

export type EventView = z.infer<typeof eventSchema>;

export const mirrorSchema = z.object({
  cluster: z.string(),
  uid: z.string().nullable(),
  createdAt: z.string().nullable(),
  status: z.record(z.string(), z.unknown()),
});

export type MirrorView = z.infer<typeof mirrorSchema>;

export const workloadDetailSchema = workloadSummarySchema
  .extend({
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
    mirror: mirrorSchema
      .nullable()
      .describe("The mirror on its worker, from the API's watch of that worker."),
    mirrorUnavailable: z.string().nullable().describe('Why the mirror is not shown, when it is not.'),
    status: z.record(z.string(), z.unknown()).describe("The origin's status (the mirror's, written back)."),
    events: z
      .array(eventSchema)
      .nullable()
      .describe('All Events of the object; null without list events in its namespace.'),
    waiting: z.object({ reason: z.string(), since: z.string().nullable() }).nullable(),
    queue: workloadQueueSchema
      .nullable()
      .describe(
        'Its DispatchQueue: while admitted the one its placement record names (whose quota it holds), while pending the one it waits in with its place; null when none.',
      ),
    podSelectors: z
      .array(z.object({ labelSelector: z.string(), description: z.string() }))
      .describe(
        'How its pods are found on its worker (label selectors, from its mirror), which the logs route reads; empty while unknown.',
      ),
  })
  .meta({ id: 'WorkloadDetail' });

export type WorkloadDetail = z.infer<typeof workloadDetailSchema>;

export const workloadKindSchema = z
  .object({
    name: z.string().describe('How this API names the kind: in URLs, the `kind` filters, and items.'),
    apiVersion: z.string(),
    kind: z.string(),
    plural: z.string().describe('Its resource: the RBAC rules a caller needs name it (with the group).'),
    group: z.string(),
    managedBy: z.string().describe('The spec.managedBy value jobrelay claims for it.'),
    verification: z
      .enum(['real-controller', 'generic-untested'])
      .describe('real-controller: tested against the kind’s own controller; generic-untested: not run here.'),
  })
  .meta({ id: 'WorkloadKind' });

export type WorkloadKind = z.infer<typeof workloadKindSchema>;

/** A page of a list: `continue` while more remain (pass it back with the same filters). */
export interface Page<T> {
  items: T[];
  continue?: string | undefined;
}
