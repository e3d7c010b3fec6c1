import { z } from 'zod';
import { describePermission, type Permission } from '../access-review.ts';
import type { ApiApp, ApiDependencies } from '../build-api.ts';
import { problemSchema } from '../problems.ts';
import { namespaceName } from './job-routes.ts';
import { onClusters, onEvents, onJobs, onKinds, podLogs } from './permissions.ts';

const errors = { '4xx': problemSchema, '5xx': problemSchema };

/**
 * What a client (the dashboard) asks before it shows a control: each action with exactly the
 * SubjectAccessReviews the routes behind it check, across all namespaces, or with `namespace`
 * in that one (the Job, workload, log and Event actions; the fleet's are cluster-wide), as the
 * routes check them when given that namespace. A caller whose rights stop at one namespace
 * asks with it.
 */
export const callerActions = [
  'listClusters',
  'watchClusters',
  'cordonClusters',
  'drainClusters',
  'listJobs',
  'watchJobs',
  'listWorkloads',
  'readQueue',
  'readLogs',
  'listEvents',
] as const;
export type CallerAction = (typeof callerActions)[number];

const actionSchema = z.object({
  action: z.enum(callerActions),
  allowed: z.boolean(),
  needs: z
    .string()
    .describe(
      'The first permission the action needs that the caller lacks, or when allowed the first it needs.',
    ),
  routes: z.array(z.string()).describe('The routes this action stands for.'),
});

export function registerIdentityRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;
  // Each action's permissions in `namespace`, or in all namespaces when it is undefined.
  const actions: Record<
    CallerAction,
    { permissions: (namespace?: string) => Permission[]; routes: string[] }
  > = {
    listClusters: {
      permissions: () => [onClusters('list')],
      routes: ['GET /api/v1/clusters', 'GET /api/v1/queue', 'GET /api/v1/stats/history'],
    },
    watchClusters: { permissions: () => [onClusters('watch')], routes: ['GET /api/v1/watch?kinds=clusters'] },
    cordonClusters: {
      permissions: () => [onClusters('update', undefined, 'cordon')],
      routes: ['POST /api/v1/clusters/{name}/cordon', 'POST /api/v1/clusters/{name}/uncordon'],
    },
    drainClusters: {
      permissions: () => [onClusters('update', undefined, 'drain')],
      routes: ['POST /api/v1/clusters/{name}/drain'],
    },
    listJobs: { permissions: (namespace) => [onJobs('list', namespace)], routes: ['GET /api/v1/jobs'] },
    watchJobs: {
      permissions: (namespace) => [onJobs('watch', namespace)],
      routes: ['GET /api/v1/watch?kinds=jobs'],
    },
    listWorkloads: {
      permissions: (namespace) => onKinds(fleet.workloadKinds.adapters, 'list', namespace),
      routes: ['GET /api/v1/workloads', 'GET /api/v1/pending'],
    },
    readQueue: { permissions: () => [onClusters('list')], routes: ['GET /api/v1/queue'] },
    readLogs: {
      permissions: (namespace) => [podLogs(namespace)],
      routes: ['GET /api/v1/namespaces/{ns}/jobs/{name}/logs'],
    },
    listEvents: {
      permissions: (namespace) => [onEvents('list', namespace)],
      routes: ['GET /api/v1/namespaces/{ns}/jobs/{name} (its events)'],
    },
  };

  app.get(
    '/api/v1/me',
    {
      schema: {
        tags: ['identity'],
        summary: 'Who the caller is (TokenReview) and which actions their RBAC allows (SubjectAccessReviews)',
        description:
          'Needs only an authenticated caller. Each action is checked with the same SubjectAccessReviews as the routes it stands for, across all namespaces, or with `namespace` in that one for the Job, workload, log and Event actions (the fleet actions are cluster-wide either way); the dashboard hides or disables what is not allowed and names the missing permission.',
        querystring: z.object({
          namespace: namespaceName
            .optional()
            .describe(
              'Check the namespaced actions in this namespace (for a caller whose rights stop at one).',
            ),
        }),
        response: {
          200: z
            .object({
              username: z.string(),
              groups: z.array(z.string()),
              namespace: z
                .string()
                .nullable()
                .describe('The namespace the actions were checked in; null: all.'),
              actions: z.array(actionSchema),
            })
            .meta({ id: 'Caller' }),
          ...errors,
        },
      },
      config: { permissions: () => [] },
    },
    async (request) => {
      const caller = request.caller!;
      const { namespace } = request.query;
      const answers = await Promise.all(
        callerActions.map(async (action) => {
          const permissions = actions[action].permissions(namespace);
          const missing = await deps.access.firstMissing(caller, permissions);
          return {
            action,
            allowed: missing === undefined,
            needs: describePermission(missing ?? permissions[0]!),
            routes: actions[action].routes,
          };
        }),
      );
      return {
        username: caller.username,
        groups: caller.groups,
        namespace: namespace ?? null,
        actions: answers,
      };
    },
  );
}
