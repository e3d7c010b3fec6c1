import { z } from 'zod';

/**
 * What a client (the dashboard) asks before it shows a control: each action with exactly the
 * SubjectAccessReviews the routes behind it check.
 */
export const callerActions = [
  'listClusters',
  'watchClusters',
  'cordonClusters',
  'drainClusters',
  'listWorkloads',
  'watchWorkloads',
  'readQueue',
  'listQueues',
  'readLogs',
  'listEvents',
] as const;
export type CallerActionName = (typeof callerActions)[number];

export const callerActionSchema = z.object({
  action: z.enum(callerActions),
  allowed: z.boolean(),
  needs: z
    .string()
    .describe(
      'The first permission the action needs that the caller lacks, or when allowed the first it needs.',
    ),
  routes: z.array(z.string()).describe('The routes this action stands for.'),
});

export type CallerAction = z.infer<typeof callerActionSchema>;

export const callerKindRightsSchema = z.object({
  kind: z.string().describe('The kind’s name in this API (see /api/v1/kinds).'),
  list: z.boolean().describe('May list it (the workload list and the pending queue with kind=).'),
  watch: z.boolean().describe('May watch it (the watch stream with kind=).'),
});

export type CallerKindRights = z.infer<typeof callerKindRightsSchema>;

export const callerSchema = z
  .object({
    username: z.string(),
    groups: z.array(z.string()),
    namespace: z.string().nullable().describe('The namespace the actions were checked in; null: all.'),
    actions: z.array(callerActionSchema),
    kinds: z
      .array(callerKindRightsSchema)
      .describe(
        'Per dispatched kind, whether the caller may list and watch it (in `namespace` if given): a client narrows its kind= filters to these.',
      ),
  })
  .meta({ id: 'Caller' });

export type Caller = z.infer<typeof callerSchema>;
