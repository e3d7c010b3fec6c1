// DispatchQueues (jobrelay.dev/v1alpha1, cluster-scoped) as the API shows them: the spec's
// summary beside the status the controller's leader writes, and one queue's workloads.
import { z } from 'zod';

export const queueResourceSchema = z
  .object({
    name: z.string().describe('cpu, memory, nvidia.com/gpu, workloads (a count), ...'),
    nominal: z.string().describe('Nominal quota across the fleet, as a quantity ("40", "64Gi").'),
    borrowingLimit: z
      .string()
      .nullable()
      .describe('At most this much above nominal; null: what the cohort lends, without limit.'),
    lendingLimit: z
      .string()
      .nullable()
      .describe('At most this much of nominal lent to the cohort; null: all of it.'),
    used: z
      .string()
      .nullable()
      .describe('What its admitted workloads hold (status.usage); null before any status.'),
    borrowed: z
      .string()
      .nullable()
      .describe('The part of used above nominal (status.borrowed); null when none.'),
    usedAmount: z
      .number()
      .nullable()
      .describe(
        'used as placement counts it (cpu in millicores, memory in bytes, others in units), for bars; null when not a quantity.',
      ),
    nominalAmount: z.number().nullable(),
    borrowingLimitAmount: z.number().nullable(),
  })
  .meta({ id: 'QueueResource' });

export type QueueResource = z.infer<typeof queueResourceSchema>;

export const queueConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
});

export const dispatchQueueSchema = z
  .object({
    name: z.string(),
    valid: z.boolean().describe('Whether the controller can use its spec; false: problems says why.'),
    problems: z.array(z.string()).describe('What is wrong with its spec (empty when valid).'),
    cohort: z.string().nullable(),
    weight: z.number().nullable().describe('Fair-sharing weight in its cohort.'),
    queueingStrategy: z.enum(['StrictFIFO', 'BestEffortFIFO']).nullable(),
    preemption: z
      .object({ withinQueue: z.string(), reclaimWithinCohort: z.string() })
      .nullable()
      .describe('withinQueue: Never|LowerPriority; reclaimWithinCohort: Never|LowerPriority|Any.'),
    namespaceSelector: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('The namespaces whose workloads it takes; null: only workloads naming it by label.'),
    resources: z.array(queueResourceSchema).describe('Per resource of its nominal quota, with usage.'),
    status: z
      .object({
        pendingWorkloads: z.number().int(),
        admittedWorkloads: z.number().int(),
        usage: z.record(z.string(), z.string()),
        borrowed: z.record(z.string(), z.string()),
        share: z.string().describe('Weighted dominant-resource share, a decimal ("0.25").'),
        columns: z.object({ cpu: z.string(), memory: z.string(), gpu: z.string() }),
        conditions: z.array(queueConditionSchema),
        observedGeneration: z.number().int().nullable(),
      })
      .nullable()
      .describe('As the controller’s leader last wrote it; null before it did.'),
    createdAt: z.string().nullable(),
  })
  .meta({ id: 'DispatchQueue' });

export type DispatchQueue = z.infer<typeof dispatchQueueSchema>;

export const dispatchQueueListSchema = z.object({ items: z.array(dispatchQueueSchema) });

export type DispatchQueueList = z.infer<typeof dispatchQueueListSchema>;

export const queuedWorkloadSchema = z
  .object({
    kind: z.string().describe('The kind’s name in this API: job, raycluster, rayjob, ...'),
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    position: z
      .number()
      .int()
      .nullable()
      .describe(
        'Pending: 1-based place in the queue’s order (among every pending workload of it); null when admitted.',
      ),
    reason: z.string().nullable().describe('Pending: why it waits, as the controller wrote it.'),
    waitingSince: z.string().nullable(),
    cluster: z.string().nullable().describe('Admitted: where it runs.'),
    admittedAt: z.string().nullable().describe('Admitted: when its current placement was recorded.'),
    pods: z.number().int(),
  })
  .meta({ id: 'QueuedWorkload' });

export type QueuedWorkload = z.infer<typeof queuedWorkloadSchema>;

export const dispatchQueueDetailSchema = dispatchQueueSchema
  .extend({
    pending: z
      .array(queuedWorkloadSchema)
      .describe('Its pending workloads the caller may list, in queue order.'),
    admitted: z.array(queuedWorkloadSchema).describe('Its admitted workloads the caller may list, by name.'),
    hidden: z
      .object({ pending: z.number().int(), admitted: z.number().int() })
      .describe('Workloads of it the caller may not list: counted, not named.'),
  })
  .meta({ id: 'DispatchQueueDetail' });

export type DispatchQueueDetail = z.infer<typeof dispatchQueueDetailSchema>;

/** A workload's queue, for the pending list and a workload's detail. */
export const workloadQueueSchema = z
  .object({
    name: z.string(),
    position: z
      .number()
      .int()
      .nullable()
      .describe('While pending: its place in the queue; null when admitted or unknown.'),
    of: z.number().int().nullable().describe('While pending: how many wait in the queue.'),
  })
  .meta({ id: 'WorkloadQueue' });

export type WorkloadQueue = z.infer<typeof workloadQueueSchema>;
