// Dispatched workloads of every kind: the kinds shown, a list across kinds, one workload's
// detail and its pods' logs. Each route's kind comes from the adapter its request names (the
// path's `{kind}`, the `kind` filter), and so does every SubjectAccessReview: get or list on
// that kind's group and plural, never batch/jobs for another kind.
import {
  type WorkloadDetail,
  type WorkloadSummary,
  workloadDetailSchema,
  workloadKindSchema,
  workloadSummarySchema,
} from '@jobrelay/api-types';
import { type AnyWorkloadKindAdapter, apiVersionOf } from '@jobrelay/kinds';
import { labelsMatch, parseLabelSelector } from '@jobrelay/resources';
import { z } from 'zod';
import type { ApiApp, ApiDependencies, OpenStream } from '../api-app.ts';
import { pageQuerySchema, paginateSorted } from '../pagination.ts';
import { placementOf } from '../placement-trust.ts';
import { ApiProblem } from '../problems.ts';
import { type EventView, eventsOf, workloadDetail } from '../workload-detail.ts';
import { logsDescription, logsQuerySchema, streamWorkloadLogs } from '../workload-logs.ts';
import { workloadPhases, workloadSummary } from '../workload-views.ts';
import { onEvents, onKind, onKinds, podLogs, rawParams, rawQuery } from './permissions.ts';
import { errors, kindList, kindName, namespaceName, workloadName } from './route-schemas.ts';

const workloadParams = z.object({ kind: kindName, namespace: namespaceName, name: workloadName });

/** The kinds a raw `kind` filter names (authorization runs before validation: unknown names are refused later). */
function filteredKinds(deps: ApiDependencies, raw: string | undefined): AnyWorkloadKindAdapter[] {
  return deps.fleet.workloadKinds.select(raw).adapters;
}

export function registerWorkloadRoutes(app: ApiApp, deps: ApiDependencies, openStream: OpenStream): void {
  const { fleet } = deps;
  const kinds = fleet.workloadKinds;

  const dispatched = (kind: string, namespace: string, name: string) => {
    const adapter = kinds.namedOrNotFound(kind);
    const object = fleet.workload(adapter.name, namespace, name);
    if (!object) {
      throw new ApiProblem(
        'not-found',
        `no dispatched ${adapter.resource.kind} ${namespace}/${name}: it does not exist, or its spec.managedBy is not jobrelay's`,
      );
    }
    return { adapter, object };
  };

  app.get(
    '/api/v1/kinds',
    {
      schema: {
        tags: ['workloads'],
        summary:
          'The workload kinds dispatched here (and shown by this API), with what jobrelay claims of each',
        description:
          'The controller’s --kinds, --kind-managed-by and --generic-kinds-file, less the kinds the management cluster does not serve. Needs only an authenticated caller, as API discovery does.',
        response: { 200: z.object({ items: z.array(workloadKindSchema) }), ...errors },
      },
      config: { permissions: () => [] },
    },
    async () => ({
      items: kinds.choices.map(({ adapter, managedBy }) => ({
        name: adapter.name,
        apiVersion: apiVersionOf(adapter.resource),
        kind: adapter.resource.kind,
        plural: adapter.resource.plural,
        group: adapter.resource.group,
        managedBy,
        verification: adapter.verification,
      })),
    }),
  );

  app.get(
    '/api/v1/workloads',
    {
      schema: {
        tags: ['workloads'],
        summary: 'List dispatched workloads of every kind (Jobs, RayClusters, RayJobs, ...)',
        description:
          'Sorted by namespace, name, then kind. Needs list on every kind listed (its group and plural), in `namespace` if given: narrow with `kind` to what you may read. Phases: pending (waiting for a cluster), placed (a cluster is chosen, its mirror not seen there), running (its mirror exists on that cluster), finished, suspended.',
        querystring: pageQuerySchema.extend({
          kind: kindList.optional().describe('Only these kinds (comma-separated names, see /api/v1/kinds).'),
          namespace: namespaceName
            .optional()
            .describe('Only this namespace (needs list there; without it, in all).'),
          cluster: z.string().max(63).optional().describe('Only workloads placed on this cluster.'),
          phase: z.enum(workloadPhases).optional(),
          labelSelector: z.string().max(4096).optional().describe('Over the objects’ labels.'),
        }),
        response: {
          200: z.object({ items: z.array(workloadSummarySchema), continue: z.string().optional() }),
          ...errors,
        },
      },
      config: {
        permissions: (request) =>
          onKinds(filteredKinds(deps, rawQuery(request, 'kind')), 'list', rawQuery(request, 'namespace')),
      },
    },
    async (request) => {
      const { kind, namespace, cluster, phase, labelSelector, limit } = request.query;
      const selected = new Set(kinds.selectOrRefuse(kind, 'querystring.kind').map((adapter) => adapter.name));
      const selector = labelSelector ? parseLabelSelector(labelSelector) : undefined;
      if (selector && !selector.ok) {
        throw new ApiProblem('validation-failed', `labelSelector: ${selector.problem}`, {
          errors: [{ path: 'querystring.labelSelector', message: selector.problem }],
        });
      }
      // Keys in their cached order: a page looks at the workloads up to its end, not at all of them.
      return paginateSorted(
        fleet.workloadListKeys(),
        (key): WorkloadSummary | undefined => {
          const entry = fleet.workloadByListKey(key);
          if (!entry || !selected.has(entry.adapter.name)) return undefined;
          const { adapter, object } = entry;
          if (namespace && object.metadata?.namespace !== namespace) return undefined;
          if (cluster && placementOf(object)?.cluster !== cluster) return undefined;
          if (selector?.ok && !labelsMatch(selector.selector, object.metadata?.labels ?? {}))
            return undefined;
          const summary = workloadSummary(adapter, object, fleet.mirrorSeen(adapter, object));
          if (phase && summary.phase !== phase) return undefined;
          return summary;
        },
        { limit, continue: request.query.continue },
        { kind, namespace, cluster, phase, labelSelector },
      );
    },
  );

  app.get(
    '/api/v1/workloads/:kind/:namespace/:name',
    {
      schema: {
        tags: ['workloads'],
        summary:
          'One dispatched workload of any kind: placement, history, the mirror’s status on its worker, Events, why it waits',
        description:
          '`kind` is the kind’s name in this API (job, raycluster, rayjob, ...; see /api/v1/kinds); an unknown one is 404. Needs get on that kind (its group and plural); Events only with list events in the namespace.',
        params: workloadParams,
        response: { 200: workloadDetailSchema, ...errors },
      },
      config: {
        permissions: (request) => {
          const { kind, namespace, name } = rawParams(request);
          const adapter = kind ? kinds.named(kind) : undefined;
          return adapter ? [onKind(adapter, 'get', namespace, name)] : [];
        },
      },
    },
    async (request): Promise<WorkloadDetail> => {
      const { kind, namespace, name } = request.params;
      const { adapter, object } = dispatched(kind, namespace, name);
      // Events only for callers who may read them through kubectl too.
      const mayReadEvents = await deps.access.allowed(request.caller!, onEvents('list', namespace));
      const events: EventView[] | null = mayReadEvents
        ? await eventsOf(fleet.core, namespace, object.metadata!.uid!)
        : null;
      return workloadDetail(
        adapter,
        object,
        fleet.mirrorOf(adapter, object),
        events,
        () => {
          try {
            return fleet.preview(adapter, object).message;
          } catch (err) {
            return `its ${adapter.resource.kind} cannot be read for placement: ${(err as Error).message}`;
          }
        },
        Date.now(),
        () => fleet.selectQueue(object),
        fleet.queuePlaces(),
      );
    },
  );

  app.get(
    '/api/v1/workloads/:kind/:namespace/:name/logs',
    {
      schema: {
        tags: ['workloads'],
        summary: "Logs of a workload's pods on its worker, streamed through the API",
        description: `${logsDescription} The pods are found as its kind says: a Job's by its controller-uid label, a RayCluster's by ray.io/cluster, a RayJob's RayCluster and submitter Job, a generic kind's by its configured podLabel. Needs get on the kind and get pods/log in the namespace.`,
        params: workloadParams,
        querystring: logsQuerySchema,
        response: errors,
      },
      config: {
        permissions: (request) => {
          const { kind, namespace, name } = rawParams(request);
          const adapter = kind ? kinds.named(kind) : undefined;
          return [
            ...(adapter ? [onKind(adapter, 'get', namespace, name)] : []),
            ...(namespace ? [podLogs(namespace)] : []),
          ];
        },
      },
    },
    async (request, reply) => {
      const { kind, namespace, name } = request.params;
      const { adapter, object } = dispatched(kind, namespace, name);
      return streamWorkloadLogs(fleet, adapter, object, request.query, request, reply, openStream);
    },
  );
}
