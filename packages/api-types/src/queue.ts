import { z } from 'zod';
import { clusterSchema } from './cluster.ts';
import { workloadQueueSchema } from './dispatch-queue.ts';
import type { Problem } from './problem.ts';
import { type WorkloadSummary, workloadSummarySchema } from './workload.ts';

export const pendingWorkloadSchema = z
  .object({
    position: z.number().int().describe('1 is placed next (among the workloads listed).'),
    kind: z.string().describe('The kind’s name in this API: job, raycluster, rayjob, ...'),
    apiVersion: z.string(),
    objectKind: z.string(),
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    waitingSince: z.string().nullable(),
    waitingSeconds: z.number().int().nullable(),
    reason: z
      .string()
      .describe('Why it waits, e.g. "0/3 clusters available: 1 cordoned, 2 insufficient cpu ...".'),
    queueState: z.enum(['waiting', 'delayed', 'active', 'unknown']).describe('Its placement task in Redis.'),
    queue: workloadQueueSchema
      .nullable()
      .describe('The DispatchQueue it waits in, and its place there; null when no queue takes it.'),
  })
  .meta({ id: 'PendingWorkload' });

export type PendingWorkload = z.infer<typeof pendingWorkloadSchema>;

export const pendingPageSchema = z.object({
  items: z.array(pendingWorkloadSchema),
  total: z.number().int(),
  continue: z.string().optional(),
});

export type PendingPage = z.infer<typeof pendingPageSchema>;

export const clusterVerdictSchema = z.object({
  name: z.string(),
  eligible: z.boolean(),
  score: z.number().nullable(),
  reason: z.string().nullable(),
});

export const placementPreviewSchema = z
  .object({
    decision: z.enum(['placed', 'unschedulable']),
    cluster: z.string().nullable(),
    message: z.string(),
    clusters: z.array(clusterVerdictSchema),
  })
  .meta({ id: 'PlacementPreview' });

export type PlacementPreview = z.infer<typeof placementPreviewSchema>;

export const queueSchema = z.object({
  waiting: z
    .number()
    .int()
    .describe('Placement tasks waiting for a placement worker without a turn (0 while every task has one).'),
  delayed: z
    .number()
    .int()
    .describe('Waiting for a cluster: retried with backoff, or sooner when capacity frees.'),
  active: z.number().int(),
  failed: z.number().int(),
  prioritized: z
    .number()
    .int()
    .describe(
      'Placement tasks waiting for a placement worker, in turns by namespace: one team’s backlog does not hold another team’s next workload behind it.',
    ),
  pending: z
    .number()
    .int()
    .describe('Dispatched workloads of every kind waiting for a cluster, as their placement records say.'),
  placementsPerCluster: z.array(
    z.object({
      cluster: z.string(),
      perMinute: z.array(z.number().int()).describe('Last 10 minutes, oldest first.'),
    }),
  ),
});

export type QueueSummary = z.infer<typeof queueSchema>;

export const statsHistorySchema = z
  .object({
    now: z.string(),
    since: z.string().describe('The series are complete from here on (the API’s start, within the hour).'),
    minutes: z.array(z.string()).describe('The start of each clock minute, oldest first.'),
    placementsPerCluster: z.array(
      z.object({
        cluster: z.string(),
        perMinute: z.array(z.number().int()).describe('One count per entry of `minutes`.'),
      }),
    ),
    dispatchLatency: z
      .array(
        z.object({
          count: z.number().int(),
          medianSeconds: z.number().nullable(),
          p95Seconds: z.number().nullable(),
          maxSeconds: z.number().nullable(),
        }),
      )
      .describe(
        'Per minute: from creation to first placement, of the workloads first placed then (re-placements are not counted).',
      ),
    sampleSeconds: z.number().int(),
    queueDepth: z.array(
      z.object({
        at: z.string(),
        pending: z.number().int().describe('Workloads waiting for a cluster.'),
        queued: z
          .number()
          .int()
          .nullable()
          .describe('Placement tasks in Redis (waiting, delayed, active); null when Redis did not answer.'),
      }),
    ),
  })
  .meta({ id: 'StatsHistory' });

export type StatsHistory = z.infer<typeof statsHistorySchema>;

/** The streams `GET /api/v1/watch?kinds=` picks. */
export const watchStreams = ['workloads', 'clusters'] as const;
export type WatchStream = (typeof watchStreams)[number];

export type ChangeType = 'added' | 'modified' | 'deleted';

/** `event: workload`: a dispatched workload of any kind changed. */
export const workloadEventSchema = z
  .object({
    type: z.enum(['added', 'modified', 'deleted']),
    kind: z.string().describe('The kind’s name in this API.'),
    apiVersion: z.string(),
    object: workloadSummarySchema,
  })
  .meta({ id: 'WorkloadWatchEvent' });

/** `event: cluster`: a WorkerCluster changed. */
export const clusterEventSchema = z
  .object({ type: z.enum(['added', 'modified', 'deleted']), object: clusterSchema })
  .meta({ id: 'ClusterWatchEvent' });

/** Every event of the watch stream, by its `event:` name; `closed` is always the last. */
export type WatchEvent =
  | {
      event: 'workload';
      data: { type: ChangeType; kind: string; apiVersion: string; object: WorkloadSummary };
    }
  | { event: 'cluster'; data: z.infer<typeof clusterEventSchema> }
  | { event: 'closed'; data: Problem };
