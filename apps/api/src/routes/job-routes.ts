import { PassThrough } from 'node:stream';
import { describeApiError, dns1123Label, dns1123Subdomain, statusCodeOf } from '@jobrelay/kube';
import { labelsMatch, parseLabelSelector } from '@jobrelay/placement';
import type { V1Job } from '@kubernetes/client-node';
import { z } from 'zod';
import type { ApiApp, ApiDependencies } from '../build-api.ts';
import { jobPhases, jobSummary, jobSummarySchema, placementOf } from '../job-views.ts';
import { pageQuerySchema, paginateSorted } from '../pagination.ts';
import { openPodLog } from '../pod-log-stream.ts';
import { ApiProblem, problemSchema } from '../problems.ts';
import { onEvents, onJobs, podLogs, rawParams, rawQuery } from './permissions.ts';

export const namespaceName = z.string().max(63).regex(dns1123Label, 'must be a namespace name');
export const jobName = z.string().max(253).regex(dns1123Subdomain, 'must be a Job name');
const jobParams = z.object({ namespace: namespaceName, name: jobName });
const errors = { '4xx': problemSchema, '5xx': problemSchema };

/** Events of a Job that tell its placement story, oldest first. */
const placementReasons = new Set([
  'Placed',
  'FailedPlacement',
  'PlacementTimeout',
  'Replacing',
  'MirrorCreated',
  'MirrorAdopted',
  'NameCollision',
  'NamespaceMissing',
  'FinishedWithoutMirror',
  'PlacementUnreadable',
]);

const eventSchema = z.object({
  type: z.string(),
  reason: z.string(),
  message: z.string(),
  at: z.string().nullable(),
  count: z.number().int(),
  source: z.string().nullable(),
});

const jobDetailSchema = jobSummarySchema
  .extend({
    placement: z.record(z.string(), z.unknown()).nullable().describe('The jobrelay.dev/placement record.'),
    history: z
      .array(eventSchema)
      .describe('Placement Events (Placed, Replacing, MirrorCreated, ...), oldest first.'),
    mirror: z
      .object({
        cluster: z.string(),
        uid: z.string().nullable(),
        createdAt: z.string().nullable(),
        status: z.record(z.string(), z.unknown()),
      })
      .nullable()
      .describe("The mirror Job on its worker, from the API's watch of that worker."),
    mirrorUnavailable: z.string().nullable().describe('Why the mirror is not shown, when it is not.'),
    status: z.record(z.string(), z.unknown()).describe("The origin Job's status."),
    events: z
      .array(eventSchema)
      .nullable()
      .describe('All Events of the Job; null without list events in its namespace.'),
    waiting: z.object({ reason: z.string(), since: z.string().nullable() }).nullable(),
  })
  .meta({ id: 'JobDetail' });

function iso(value: Date | string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  return value instanceof Date ? value.toISOString() : value;
}

/** Dates to strings, recursively, so a status is plain JSON. */
function plain(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value ?? {})) as Record<string, unknown>;
}

export function registerJobRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;

  const dispatched = (namespace: string, name: string): V1Job => {
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
      let events: z.infer<typeof eventSchema>[] | null = null;
      if (mayReadEvents) {
        const list = await fleet.core.listNamespacedEvent({
          namespace,
          fieldSelector: `involvedObject.uid=${job.metadata!.uid}`,
        });
        events = list.items
          .map((event) => ({
            type: event.type ?? 'Normal',
            reason: event.reason ?? '',
            message: event.message ?? '',
            at: iso(
              event.eventTime ??
                event.lastTimestamp ??
                event.firstTimestamp ??
                event.metadata?.creationTimestamp,
            ),
            count: event.count ?? event.series?.count ?? 1,
            source: event.reportingComponent || event.source?.component || null,
          }))
          .sort((a, b) => (a.at ?? '').localeCompare(b.at ?? ''));
      }
      const found = fleet.mirrorOf(job);
      const mirror =
        found.kind === 'found'
          ? {
              cluster: found.cluster,
              uid: found.mirror.metadata?.uid ?? null,
              createdAt: iso(found.mirror.metadata?.creationTimestamp),
              status: plain(found.mirror.status),
            }
          : null;
      const mirrorUnavailable = found.kind === 'found' ? null : found.message;
      const waiting =
        summary.phase === 'pending'
          ? { reason: summary.reason ?? fleet.preview(job).message, since: summary.waitingSince }
          : null;
      return {
        ...summary,
        placement: record ? plain(record) : null,
        history: (events ?? []).filter((event) => placementReasons.has(event.reason)),
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
        description:
          'text/plain. With several pods or containers each line is prefixed with `[pod/container] `. `follow=true` streams until the pods end or the client leaves.',
        params: jobParams,
        querystring: z.object({
          follow: z.enum(['true', 'false']).optional(),
          container: z.string().max(63).regex(dns1123Label, 'must be a container name').optional(),
          pod: z.string().max(253).regex(dns1123Subdomain, 'must be a pod name').optional(),
          tailLines: z.coerce.number().int().min(0).max(100_000).optional(),
        }),
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
      const { follow, container, pod: onlyPod, tailLines } = request.query;
      const job = dispatched(namespace, name);
      const found = fleet.mirrorOf(job);
      if (found.kind !== 'found') {
        if (found.kind === 'unplaced')
          throw new ApiProblem(
            'conflict',
            `${namespace}/${name} is not placed on a cluster yet: no pods, no logs`,
          );
        if (found.kind === 'disconnected')
          throw new ApiProblem('unavailable', `${found.message}; retry later`, {}, { 'retry-after': '5' });
        throw new ApiProblem('not-found', `${namespace}/${name}: ${found.message}`);
      }
      const { cluster, connection, mirror } = found;
      // The mirror's pods, by the label the Job controller puts on them.
      const podSelector = `batch.kubernetes.io/controller-uid=${mirror.metadata!.uid}`;
      const pods = (
        await connection.core.listNamespacedPod({
          namespace,
          labelSelector: podSelector,
        })
      ).items
        .filter((pod) => !onlyPod || pod.metadata?.name === onlyPod)
        .sort((a, b) =>
          iso(a.metadata?.creationTimestamp)!.localeCompare(iso(b.metadata?.creationTimestamp)!),
        );
      const streams = pods.flatMap((pod) =>
        (pod.spec?.containers ?? [])
          .filter((c) => !container || c.name === container)
          .map((c) => ({ pod: pod.metadata!.name!, container: c.name })),
      );
      if (streams.length === 0) {
        throw new ApiProblem(
          'not-found',
          onlyPod || container
            ? `no pod${onlyPod ? ` ${onlyPod}` : ''}${container ? ` with container ${container}` : ''} of ${namespace}/${name} on ${cluster}`
            : `${namespace}/${name} has no pods on ${cluster} (yet, or any more)`,
        );
      }
      const prefix = streams.length > 1;
      const output = new PassThrough();
      const closers = new Set<() => void>();
      let left = false;
      // Writes after the client left are dropped, never thrown.
      output.on('error', () => {});
      request.raw.on('close', () => {
        left = true;
        for (const close of closers) close();
        output.end();
      });
      const open = (target: { pod: string; container: string }) => {
        const opened = openPodLog(
          connection.kubeConfig,
          { namespace, ...target },
          { follow: follow === 'true', ...(tailLines !== undefined ? { tailLines } : {}) },
        );
        const done = opened.then(
          ({ response, close }) =>
            new Promise<void>((resolve) => {
              closers.add(close);
              if (left) close();
              let partial = '';
              response.on('data', (chunk: Buffer) => {
                if (!prefix) {
                  output.write(chunk);
                  return;
                }
                const lines = (partial + chunk.toString('utf8')).split('\n');
                partial = lines.pop() ?? '';
                for (const line of lines) output.write(`[${target.pod}/${target.container}] ${line}\n`);
              });
              const finish = () => {
                closers.delete(close);
                if (prefix && partial) output.write(`[${target.pod}/${target.container}] ${partial}\n`);
                partial = '';
                resolve();
              };
              response.once('end', finish);
              response.once('close', finish);
            }),
          () => undefined,
        );
        return { target, opened, done };
      };
      // A followed stream ends when its pod has terminated, as a kubelet's does (KWOK's never
      // ends by itself): the pods are looked at every 2 s while anything is followed.
      const follower =
        follow === 'true'
          ? setInterval(() => {
              void connection.core
                .listNamespacedPod({
                  namespace,
                  labelSelector: podSelector,
                })
                .then((list) => {
                  const terminated = (p: (typeof list.items)[number]) =>
                    p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
                  if (list.items.length > 0 && list.items.every(terminated))
                    for (const close of closers) close();
                })
                .catch(() => {});
            }, 2_000)
          : undefined;
      const note = (target: { pod: string; container: string }, err: unknown) =>
        output.write(
          `[${target.pod}/${target.container}] (no logs: ${logProblem(err, target, cluster).message})\n`,
        );
      // The first stream is opened before answering, so a refusal (say, a pod that has not
      // started) is a clear error status instead of an empty 200.
      const [first, ...rest] = streams;
      const firstStream = open(first!);
      try {
        await firstStream.opened;
      } catch (err) {
        clearInterval(follower);
        throw logProblem(err, first!, cluster);
      }
      void (async () => {
        try {
          if (follow === 'true') {
            const others = rest.map(open);
            await Promise.all([
              firstStream.done,
              ...others.map((s) => s.opened.catch((err: unknown) => note(s.target, err)).then(() => s.done)),
            ]);
          } else {
            await firstStream.done;
            for (const target of rest) {
              if (request.raw.destroyed) break;
              const s = open(target);
              await s.opened.catch((err: unknown) => note(target, err));
              await s.done;
            }
          }
        } finally {
          clearInterval(follower);
          output.end();
        }
      })();
      return reply
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(output as never);
    },
  );
}

function logProblem(err: unknown, target: { pod: string; container: string }, cluster: string): ApiProblem {
  const status = statusCodeOf(err);
  if (status === 400 || status === 404) {
    return new ApiProblem(
      'conflict',
      `${cluster} has no logs for ${target.pod}/${target.container} yet (the container may not have started): ${describeApiError(err)}`,
    );
  }
  return new ApiProblem('upstream-error', `reading logs from ${cluster} failed: ${describeApiError(err)}`);
}
