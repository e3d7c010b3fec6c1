import { z } from 'zod';
import { describePermission, type Permission } from '../access-review.ts';
import type { ApiApp, ApiDependencies } from '../build-api.ts';
import { problemSchema } from '../problems.ts';
import { onClusters, onJobs, onKinds } from './permissions.ts';

const errors = { '4xx': problemSchema, '5xx': problemSchema };

/**
 * What a client (the dashboard) asks before it shows a control: each action with exactly the
 * SubjectAccessReviews the routes behind it check, across all namespaces. A caller whose rights
 * stop at one namespace sees `allowed: false` here yet may still call the namespaced routes.
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
  const actions: Record<CallerAction, { permissions: () => Permission[]; routes: string[] }> = {
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
    listJobs: { permissions: () => [onJobs('list')], routes: ['GET /api/v1/jobs'] },
    watchJobs: { permissions: () => [onJobs('watch')], routes: ['GET /api/v1/watch?kinds=jobs'] },
    listWorkloads: {
      permissions: () => onKinds(fleet.workloadKinds.adapters, 'list'),
      routes: ['GET /api/v1/workloads', 'GET /api/v1/pending'],
    },
    readQueue: { permissions: () => [onClusters('list')], routes: ['GET /api/v1/queue'] },
    readLogs: {
      permissions: () => [{ verb: 'get', group: '', resource: 'pods', subresource: 'log' }],
      routes: ['GET /api/v1/namespaces/{ns}/jobs/{name}/logs'],
    },
    listEvents: {
      permissions: () => [{ verb: 'list', group: '', resource: 'events' }],
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
          'Needs only an authenticated caller. Each action is checked with the same SubjectAccessReviews as the routes it stands for, across all namespaces; the dashboard hides or disables what is not allowed and names the missing permission.',
        response: {
          200: z
            .object({
              username: z.string(),
              groups: z.array(z.string()),
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
      const answers = await Promise.all(
        callerActions.map(async (action) => {
          const permissions = actions[action].permissions();
          const missing = await deps.access.firstMissing(caller, permissions);
          return {
            action,
            allowed: missing === undefined,
            needs: describePermission(missing ?? permissions[0]!),
            routes: actions[action].routes,
          };
        }),
      );
      return { username: caller.username, groups: caller.groups, actions: answers };
    },
  );
}
