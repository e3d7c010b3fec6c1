import { batchJobAdapter } from '@jobrelay/kinds';
import { dns1123Label, dns1123Subdomain } from '@jobrelay/kube';
import { labelsMatch, parseLabelSelector } from '@jobrelay/placement';
import { z } from 'zod';
import type { ApiApp, ApiDependencies, OpenStream } from '../build-api.ts';
import { type Job, jobPhases, jobSummary, jobSummarySchema, placementOf } from '../job-views.ts';
import { pageQuerySchema, paginateSorted } from '../pagination.ts';
import { ApiProblem, problemSchema } from '../problems.ts';
import {
  type EventView,
  eventsOf,
  mirrorView,
  placedDetailFields,
  placementHistory,
  plain,
} from '../workload-detail.ts';
import { logsDescription, logsQuerySchema, streamWorkloadLogs } from '../workload-logs.ts';
import { onEvents, onJobs, podLogs, rawParams, rawQuery } from './permissions.ts';

export const namespaceName = z.string().max(63).regex(dns1123Label, 'must be a namespace name');
export const jobName = z.string().max(253).regex(dns1123Subdomain, 'must be a Job name');
const jobParams = z.object({ namespace: namespaceName, name: jobName });
const errors = { '4xx': problemSchema, '5xx': problemSchema };

const jobDetailSchema = jobSummarySchema
  .extend(
    placedDetailFields({
      mirror: "The mirror Job on its worker, from the API's watch of that worker.",
      status: "The origin Job's status.",
      events: 'All Events of the Job; null without list events in its namespace.',
    }),
  )
  .meta({ id: 'JobDetail' });

export function registerJobRoutes(app: ApiApp, deps: ApiDependencies, openStream: OpenStream): void {
  const { fleet } = deps;

  const dispatched = (namespace: string, name: string): Job => {
    const job = fleet.job(namespace, name);
    if (!job) {
      throw new ApiProblem(
        'not-found',
        `no dispatched Job ${namespace}/${name}: it does not exist, or its spec.managedBy is not jobrelay's`,
      );
    }
    return job;
  };

  app.get(
    '/api/v1/jobs',
    {
      schema: {
        tags: ['jobs'],
        summary: 'List dispatched Jobs',
        querystring: pageQuerySchema.extend({
          namespace: namespaceName
            .optional()
            .describe('Only this namespace (needs list jobs there; without it, in all).'),
          cluster: z.string().max(63).optional().describe('Only Jobs placed on this cluster.'),
          phase: z.enum(jobPhases).optional(),
          labelSelector: z.string().max(4096).optional().describe('Over the Jobs’ labels.'),
        }),
        response: {
          200: z.object({ items: z.array(jobSummarySchema), continue: z.string().optional() }),
          ...errors,
        },
      },
      config: { permissions: (request) => [onJobs('list', rawQuery(request, 'namespace'))] },
    },
    async (request) => {
      const { namespace, cluster, phase, labelSelector, limit } = request.query;
      const selector = labelSelector ? parseLabelSelector(labelSelector) : undefined;
      if (selector && !selector.ok) {
        throw new ApiProblem('validation-failed', `labelSelector: ${selector.problem}`, {
          errors: [{ path: 'querystring.labelSelector', message: selector.problem }],
        });
      }
      // Keys in their cached order: a page looks at the Jobs up to its end, not at all of them.
      return paginateSorted(
        fleet.jobKeys(),
        (key) => {
          const job = fleet.jobByKey(key);
          if (!job) return undefined;
          if (namespace && job.metadata?.namespace !== namespace) return undefined;
          const summary = jobSummary(job);
          if (cluster && summary.cluster !== cluster) return undefined;
          if (phase && summary.phase !== phase) return undefined;
          if (selector?.ok && !labelsMatch(selector.selector, summary.labels)) return undefined;
          return summary;
        },
        { limit, continue: request.query.continue },
        { namespace, cluster, phase, labelSelector },
      );
    },
  );

  app.get(
    '/api/v1/namespaces/:namespace/jobs/:name',
    {
      schema: {
        tags: ['jobs'],
        summary:
          'One dispatched Job: placement, history, the mirror’s status on its worker, Events, why it waits',
        params: jobParams,
        response: { 200: jobDetailSchema, ...errors },
      },
      config: {
        permissions: (request) => {
          const { namespace, name } = rawParams(request);
          return [onJobs('get', namespace, name)];
        },
      },
    },
    async (request) => {
      const { namespace, name } = request.params;
      const job = dispatched(namespace, name);
      const summary = jobSummary(job);
      const record = placementOf(job);
      // Events only for callers who may read them through kubectl too.
      const mayReadEvents = await deps.access.allowed(request.caller!, onEvents('list', namespace));
      const events: EventView[] | null = mayReadEvents
        ? await eventsOf(fleet.core, namespace, job.metadata!.uid!)
        : null;
      const { mirror, mirrorUnavailable } = mirrorView(batchJobAdapter, fleet.mirrorOf(batchJobAdapter, job));
      const waiting =
        summary.phase === 'pending'
          ? {
              reason: summary.reason ?? fleet.preview(batchJobAdapter, job).message,
              since: summary.waitingSince,
            }
          : null;
      return {
        ...summary,
        placement: record ? plain(record) : null,
        history: placementHistory(events, record),
        mirror,
        mirrorUnavailable,
        status: plain(job.status),
        events,
        waiting,
      };
    },
  );

  app.get(
    '/api/v1/namespaces/:namespace/jobs/:name/logs',
    {
      schema: {
        tags: ['jobs'],
        summary: "Logs of the Job's pods on its worker, streamed through the API",
        description: logsDescription,
        params: jobParams,
        querystring: logsQuerySchema,
        response: errors,
      },
      config: {
        permissions: (request) => {
          const { namespace, name } = rawParams(request);
          return [onJobs('get', namespace, name), ...(namespace ? [podLogs(namespace)] : [])];
        },
      },
    },
    async (request, reply) => {
      const { namespace, name } = request.params;
      const job = dispatched(namespace, name);
      return streamWorkloadLogs(fleet, batchJobAdapter, job, request.query, request, reply, openStream);
    },
  );
}
