import { z } from 'zod';
import type { ApiApp, ApiDependencies } from '../build-api.ts';
import type { FleetChange } from '../fleet-view.ts';
import { jobSummary } from '../job-views.ts';
import { pageQuerySchema, paginate } from '../pagination.ts';
import { ApiProblem, problemSchema } from '../problems.ts';
import { jobName, namespaceName } from './job-routes.ts';
import { onClusters, onJobs, rawQuery } from './permissions.ts';

const errors = { '4xx': problemSchema, '5xx': problemSchema };

const pendingItemSchema = z
  .object({
    position: z.number().int().describe('1 is placed next (among the Jobs you may list).'),
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    waitingSince: z.string().nullable(),
    waitingSeconds: z.number().int().nullable(),
    reason: z
      .string()
      .describe('Why it waits, e.g. "0/3 clusters available: 1 cordoned, 2 insufficient cpu ...".'),
    queueState: z.enum(['waiting', 'delayed', 'active', 'unknown']).describe('Its placement task in Redis.'),
  })
  .meta({ id: 'PendingJob' });

const verdictSchema = z.object({
  name: z.string(),
  eligible: z.boolean(),
  score: z.number().nullable(),
  reason: z.string().nullable(),
});

const previewJob = z
  .object({
    apiVersion: z.literal('batch/v1').optional(),
    kind: z.literal('Job').optional(),
    metadata: z
      .object({
        name: jobName.optional(),
        namespace: namespaceName.default('default'),
        annotations: z.record(z.string().max(317), z.string().max(262_144)).optional(),
        labels: z.record(z.string().max(317), z.string().max(63)).optional(),
      })
      .default({ namespace: 'default' }),
    spec: z
      .object({
        parallelism: z.number().int().min(0).max(100_000).optional(),
        completions: z.number().int().min(0).max(100_000).optional(),
        completionMode: z.enum(['NonIndexed', 'Indexed']).optional(),
        template: z.object({
          spec: z
            .object({
              containers: z
                .array(
                  z
                    .object({
                      name: z.string().max(63),
                      resources: z
                        .object({
                          requests: z
                            .record(z.string().max(317), z.union([z.string().max(64), z.number()]))
                            .optional(),
                          limits: z
                            .record(z.string().max(317), z.union([z.string().max(64), z.number()]))
                            .optional(),
                        })
                        .optional(),
                    })
                    .passthrough(),
                )
                .min(1)
                .max(100),
              initContainers: z
                .array(z.object({ name: z.string().max(63) }).passthrough())
                .max(100)
                .optional(),
            })
            .passthrough(),
        }),
      })
      .passthrough(),
  })
  .passthrough();

const previewBody = z.union([
  z.object({ namespace: namespaceName, name: jobName }).strict(),
  z.object({ job: previewJob }).strict(),
]);

export function registerQueueRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;

  app.get(
    '/api/v1/pending',
    {
      schema: {
        tags: ['queue'],
        summary: 'Jobs waiting for a cluster, in order, with how long and why',
        querystring: pageQuerySchema.extend({ namespace: namespaceName.optional() }),
        response: {
          200: z.object({
            items: z.array(pendingItemSchema),
            total: z.number().int(),
            continue: z.string().optional(),
          }),
          ...errors,
        },
      },
      config: { permissions: (request) => [onJobs('list', rawQuery(request, 'namespace'))] },
    },
    async (request) => {
      const { namespace, limit } = request.query;
      const now = Date.now();
      const states = await fleet.queueStates().catch(() => new Map<string, 'unknown'>());
      const items = fleet
        .pending()
        .filter((entry) => !namespace || entry.job.metadata?.namespace === namespace)
        .map((entry, index) => {
          const summary = jobSummary(entry.job);
          const since = entry.waitingSince;
          return {
            position: index + 1,
            namespace: summary.namespace,
            name: summary.name,
            uid: summary.uid,
            waitingSince: since,
            waitingSeconds: since ? Math.max(0, Math.floor((now - Date.parse(since)) / 1000)) : null,
            reason: summary.reason ?? 'waiting for the placement worker to look at it',
            queueState: states.get(summary.uid) ?? ('unknown' as const),
          };
        });
      // Keys sort in queue order: the position, zero-padded.
      const page = paginate(
        items,
        (item) => String(item.position).padStart(10, '0'),
        { limit, continue: request.query.continue },
        { namespace },
      );
      return { ...page, total: items.length };
    },
  );

  app.post(
    '/api/v1/placement-preview',
    {
      schema: {
        tags: ['queue'],
        summary: 'Where a Job would be placed now, and each cluster’s verdict; nothing is created',
        body: previewBody,
        response: {
          200: z.object({
            decision: z.enum(['placed', 'unschedulable']),
            cluster: z.string().nullable(),
            message: z.string(),
            clusters: z.array(verdictSchema),
          }),
          ...errors,
        },
      },
      config: {
        permissions: (request) => {
          const body = request.body as { namespace?: unknown; name?: unknown } | undefined;
          const byName = typeof body?.namespace === 'string' && typeof body.name === 'string';
          return [
            onClusters('list'),
            ...(byName ? [onJobs('get', body.namespace as string, body.name as string)] : []),
          ];
        },
      },
    },
    async (request) => {
      const body = request.body;
      if ('job' in body) {
        const job = {
          ...body.job,
          metadata: { uid: 'preview', ...body.job.metadata },
        } as unknown as Parameters<typeof fleet.preview>[0];
        return fleet.preview(job);
      }
      const job = fleet.job(body.namespace, body.name);
      if (!job) throw new ApiProblem('not-found', `no dispatched Job ${body.namespace}/${body.name}`);
      return fleet.preview(job);
    },
  );

  app.get(
    '/api/v1/queue',
    {
      schema: {
        tags: ['queue'],
        summary: 'The placement queue: depth by state, and placements per cluster over the last 10 minutes',
        response: {
          200: z.object({
            waiting: z.number().int(),
            delayed: z
              .number()
              .int()
              .describe('Waiting for a cluster: retried with backoff, or sooner when capacity frees.'),
            active: z.number().int(),
            failed: z.number().int(),
            prioritized: z.number().int(),
            pending: z.number().int().describe('Dispatched Jobs waiting for a cluster, as the Jobs say.'),
            placementsPerCluster: z.array(
              z.object({
                cluster: z.string(),
                perMinute: z.array(z.number().int()).describe('Last 10 minutes, oldest first.'),
              }),
            ),
          }),
          ...errors,
        },
      },
      config: { permissions: () => [onClusters('list')] },
    },
    async () => {
      let counts: Record<string, number>;
      try {
        counts = await fleet.queueCounts();
      } catch {
        throw new ApiProblem(
          'unavailable',
          'Redis does not answer; the queue cannot be read now',
          {},
          { 'retry-after': '5' },
        );
      }
      const perMinute = fleet.placementsPerMinute();
      const names = new Set([...fleet.workerClusters().map((wc) => wc.metadata.name), ...perMinute.keys()]);
      return {
        waiting: counts.waiting ?? 0,
        delayed: counts.delayed ?? 0,
        active: counts.active ?? 0,
        failed: counts.failed ?? 0,
        prioritized: counts.prioritized ?? 0,
        pending: fleet.pending().length,
        placementsPerCluster: [...names].sort().map((cluster) => ({
          cluster,
          perMinute: perMinute.get(cluster) ?? new Array<number>(10).fill(0),
        })),
      };
    },
  );

  app.get(
    '/api/v1/watch',
    {
      schema: {
        tags: ['queue'],
        summary: 'Server-sent events: Job and cluster changes as they happen',
        description:
          'text/event-stream. Events `job` (data: {type, object: JobSummary}) and `cluster` (data: {type, object: Cluster}), type added|modified|deleted; a comment every 15 s keeps proxies from closing the stream. List first, then watch.',
        querystring: z.object({
          namespace: namespaceName.optional(),
          kinds: z
            .string()
            .regex(/^(jobs|clusters)(,(jobs|clusters))?$/, 'must be jobs, clusters, or jobs,clusters')
            .default('jobs,clusters'),
        }),
        response: { 200: z.string(), ...errors },
      },
      config: {
        permissions: (request) => {
          const kinds = (rawQuery(request, 'kinds') ?? 'jobs,clusters').split(',');
          return [
            ...(kinds.includes('jobs') ? [onJobs('watch', rawQuery(request, 'namespace'))] : []),
            ...(kinds.includes('clusters') ? [onClusters('watch')] : []),
          ];
        },
      },
    },
    async (request, reply) => {
      const { namespace } = request.query;
      const kinds = new Set(request.query.kinds.split(','));
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(': jobrelay watch\nretry: 2000\n\n');
      const send = (event: string, data: unknown) =>
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const unsubscribe = fleet.subscribe((change: FleetChange) => {
        if (change.kind === 'job' && kinds.has('jobs')) {
          if (namespace && change.job.metadata?.namespace !== namespace) return;
          send('job', { type: change.type, object: jobSummary(change.job) });
        } else if (change.kind === 'cluster' && kinds.has('clusters')) {
          send('cluster', { type: change.type, object: fleet.clusterViewOf(change.cluster) });
        }
      });
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
      request.raw.on('close', () => {
        clearInterval(heartbeat);
        unsubscribe();
      });
    },
  );
}
