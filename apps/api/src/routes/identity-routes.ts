import { type CallerActionName, callerActions, callerSchema } from '@jobrelay/api-types';
import { z } from 'zod';
import { describePermission, type Permission } from '../access-review.ts';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import { onClusters, onEvents, onKind, onKinds, onQueues, podLogs } from './permissions.ts';
import { errors, namespaceName } from './route-schemas.ts';

// What a client (the dashboard) asks before it shows a control: each action with exactly the
// SubjectAccessReviews the routes behind it check, across all namespaces, or with `namespace`
// in that one (the workload, log and Event actions; the fleet's are cluster-wide), as the routes
// check them when given that namespace. A caller whose rights stop at one namespace asks with it.

export function registerIdentityRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;
  // Each action's permissions in `namespace`, or in all namespaces when it is undefined.
  const actions: Record<
    CallerActionName,
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
    listWorkloads: {
      permissions: (namespace) => onKinds(fleet.workloadKinds.adapters, 'list', namespace),
      routes: ['GET /api/v1/workloads', 'GET /api/v1/pending'],
    },
    watchWorkloads: {
      permissions: (namespace) => onKinds(fleet.workloadKinds.adapters, 'watch', namespace),
      routes: ['GET /api/v1/watch?kinds=workloads'],
    },
    readQueue: { permissions: () => [onClusters('list')], routes: ['GET /api/v1/queue'] },
    listQueues: {
      permissions: () => [onQueues('list')],
      routes: ['GET /api/v1/queues', 'GET /api/v1/queues/{name} (get)'],
    },
    readLogs: {
      permissions: (namespace) => [podLogs(namespace)],
      routes: ['GET /api/v1/workloads/{kind}/{ns}/{name}/logs'],
    },
    listEvents: {
      permissions: (namespace) => [onEvents('list', namespace)],
      routes: ['GET /api/v1/workloads/{kind}/{ns}/{name} (its events)'],
    },
  };

  app.get(
    '/api/v1/me',
    {
      schema: {
        tags: ['identity'],
        summary: 'Who the caller is (TokenReview) and which actions their RBAC allows (SubjectAccessReviews)',
        description:
          'Needs only an authenticated caller. Each action is checked with the same SubjectAccessReviews as the routes it stands for, across all namespaces, or with `namespace` in that one for the workload, log and Event actions (the fleet actions are cluster-wide either way), and per kind whether it may be listed and watched; the dashboard hides or disables what is not allowed and names the missing permission.',
        querystring: z.object({
          namespace: namespaceName
            .optional()
            .describe(
              'Check the namespaced actions in this namespace (for a caller whose rights stop at one).',
            ),
        }),
        response: { 200: callerSchema, ...errors },
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
      const kinds = await Promise.all(
        fleet.workloadKinds.adapters.map(async (adapter) => {
          const [list, watch] = await Promise.all([
            deps.access.allowed(caller, onKind(adapter, 'list', namespace)),
            deps.access.allowed(caller, onKind(adapter, 'watch', namespace)),
          ]);
          return { kind: adapter.name, list, watch };
        }),
      );
      return {
        username: caller.username,
        groups: caller.groups,
        namespace: namespace ?? null,
        actions: answers,
        kinds,
      };
    },
  );
}
