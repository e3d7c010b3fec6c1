import {
  type PendingWorkload,
  pendingPageSchema,
  placementPreviewSchema,
  queueSchema,
  type WatchStream,
  watchStreams,
} from '@jobrelay/api-types';
import { type AnyWorkloadKindAdapter, apiVersionOf, type KubeObject } from '@jobrelay/kinds';
import { z } from 'zod';
import type { Permission } from '../access-review.ts';
import type { ApiApp, ApiDependencies, OpenStream } from '../api-app.ts';
import { EventStreamWriter } from '../event-stream-writer.ts';
import type { FleetChange, FleetView, PreviewResult } from '../fleet-view.ts';
import { pageQuerySchema, paginate } from '../pagination.ts';
import { ApiProblem } from '../problems.ts';
import { workloadQueue } from '../queue-views.ts';
import { closedEventFrame, slowReaderProblem } from '../stream-policy.ts';
import { podDemandProblem, workloadSummary } from '../workload-views.ts';
import { onClusters, onKind, onKinds, rawQuery } from './permissions.ts';
import { errors, kindList, kindName, namespaceName, workloadName } from './route-schemas.ts';

/** Any dispatched kind's manifest: its apiVersion and kind pick the adapter that reads the rest. */
const previewManifest = z
  .object({
    apiVersion: z.string().min(1).max(253).describe('e.g. ray.io/v1'),
    kind: z.string().min(1).max(63).describe('e.g. RayCluster'),
    metadata: z
      .object({
        name: workloadName.optional(),
        namespace: namespaceName.default('default'),
        annotations: z.record(z.string().max(317), z.string().max(262_144)).optional(),
        labels: z.record(z.string().max(317), z.string().max(63)).optional(),
      })
      .default({ namespace: 'default' }),
    spec: z.record(z.string(), z.unknown()),
  })
  .passthrough();

const previewBody = z.union([
  z
    .object({ kind: kindName, namespace: namespaceName, name: workloadName })
    .strict()
    .describe('A dispatched workload, by its kind’s name (see /api/v1/kinds) and its own.'),
  z
    .object({ manifest: previewManifest })
    .strict()
    .describe(
      'A manifest of any dispatched kind (apiVersion and kind required); another kind is 422 unsupported-kind.',
    ),
]);

const streamList = `^(${watchStreams.join('|')})(,(${watchStreams.join('|')}))*$`;

/** Where the preview of an object its adapter cannot read stops: a 400 naming the spec. */
function previewOrRefuse(
  fleet: FleetView,
  adapter: AnyWorkloadKindAdapter,
  object: KubeObject,
  field: string,
): PreviewResult {
  let problem: string | undefined;
  try {
    problem = podDemandProblem(adapter.podDemand(object));
    if (!problem) return fleet.preview(adapter, object);
  } catch (err) {
    problem = (err as Error).message;
  }
  const message = `not a ${adapter.resource.kind} spec placement can read: ${problem}`;
  throw new ApiProblem('validation-failed', `${field}: ${message}`, { errors: [{ path: field, message }] });
}

export function registerQueueRoutes(
  app: ApiApp,
  deps: ApiDependencies,
  openStream: OpenStream,
  streamBufferBytes: number,
): void {
  const { fleet } = deps;

  app.get(
    '/api/v1/pending',
    {
      schema: {
        tags: ['queue'],
        summary:
          'Workloads of every kind waiting for a cluster, longest waiting first, with how long and why',
        description:
          'The placement queue is one queue for every kind. Needs list on every kind listed (its group and plural), in `namespace` if given: narrow with `kind`.',
        querystring: pageQuerySchema.extend({
          namespace: namespaceName.optional(),
          kind: kindList.optional().describe('Only these kinds (comma-separated names, see /api/v1/kinds).'),
        }),
        response: { 200: pendingPageSchema, ...errors },
      },
      config: {
        permissions: (request) =>
          onKinds(
            fleet.workloadKinds.select(rawQuery(request, 'kind')).adapters,
            'list',
            rawQuery(request, 'namespace'),
          ),
      },
    },
    async (request) => {
      const { namespace, kind, limit } = request.query;
      const adapters = fleet.workloadKinds.selectOrRefuse(kind, 'querystring.kind');
      const now = Date.now();
      const states = await fleet.queueStates().catch(() => new Map<string, 'unknown'>());
      const places = fleet.queuePlaces();
      const items = fleet
        .pending(adapters)
        .filter((entry) => !namespace || entry.object.metadata?.namespace === namespace)
        .map((entry, index): PendingWorkload => {
          const summary = workloadSummary(entry.adapter, entry.object, false);
          const since = entry.waitingSince;
          return {
            position: index + 1,
            kind: summary.kind,
            apiVersion: summary.apiVersion,
            objectKind: summary.objectKind,
            namespace: summary.namespace,
            name: summary.name,
            uid: summary.uid,
            waitingSince: since,
            waitingSeconds: since ? Math.max(0, Math.floor((now - Date.parse(since)) / 1000)) : null,
            reason: summary.reason ?? 'waiting for the placement worker to look at it',
            queueState: states.get(summary.uid) ?? 'unknown',
            queue: workloadQueue(
              { record: undefined, reason: summary.reason, uid: summary.uid },
              () => fleet.selectQueue(entry.object),
              places,
            ),
          };
        });
      // Keys sort in queue order: the position, zero-padded.
      const page = paginate(
        items,
        (item) => String(item.position).padStart(10, '0'),
        { limit, continue: request.query.continue },
        { namespace, kind },
      );
      return { ...page, total: items.length };
    },
  );

  app.post(
    '/api/v1/placement-preview',
    {
      schema: {
        tags: ['queue'],
        summary:
          'Where a workload of any kind would be placed now, and each cluster’s verdict; nothing is created',
        description:
          'By name (`kind`, `namespace`, `name`: a dispatched workload) or by manifest (`manifest`: any dispatched kind, picked by its apiVersion and kind). Needs list workerclusters, and by name get on that kind.',
        body: previewBody,
        response: { 200: placementPreviewSchema, ...errors },
      },
      config: {
        permissions: (request) => {
          const body = request.body as { kind?: unknown; namespace?: unknown; name?: unknown } | undefined;
          const adapter = typeof body?.kind === 'string' ? fleet.workloadKinds.named(body.kind) : undefined;
          const byName = adapter && typeof body?.namespace === 'string' && typeof body.name === 'string';
          return [
            onClusters('list'),
            ...(byName ? [onKind(adapter, 'get', body.namespace as string, body.name as string)] : []),
          ];
        },
      },
    },
    async (request) => {
      const body = request.body;
      if ('manifest' in body) {
        const { apiVersion, kind, metadata } = body.manifest;
        const adapter = fleet.workloadKinds.ofManifestOrRefuse(apiVersion, kind);
        const object = { ...body.manifest, metadata: { uid: 'preview', ...metadata } } as KubeObject;
        return previewOrRefuse(fleet, adapter, object, 'body.manifest.spec');
      }
      const adapter = fleet.workloadKinds.namedOrNotFound(body.kind);
      const object = fleet.workload(adapter.name, body.namespace, body.name);
      if (!object)
        throw new ApiProblem(
          'not-found',
          `no dispatched ${adapter.resource.kind} ${body.namespace}/${body.name}`,
        );
      return previewOrRefuse(fleet, adapter, object, 'body');
    },
  );

  app.get(
    '/api/v1/queue',
    {
      schema: {
        tags: ['queue'],
        summary: 'The placement queue: depth by state, and placements per cluster over the last 10 minutes',
        response: { 200: queueSchema, ...errors },
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
        summary: 'Server-sent events: workload (every kind) and cluster changes as they happen',
        description:
          'text/event-stream. Events `workload` (data: {type, kind, apiVersion, object: WorkloadSummary}), one per change of a dispatched workload of any kind, and `cluster` (data: {type, object: Cluster}); type added|modified|deleted. `kinds` picks the streams (default both: workloads,clusters) and `kind` the workload kinds (comma-separated names; default every one). Needs watch on each kind streamed (its group and plural; in `namespace` if given) and on workerclusters for clusters. A comment every 15 s keeps proxies from closing the stream. List first, then watch.\n\nThe stream is re-authorized at the API’s access-review cache interval (--auth-cache-seconds, at least every second) with exactly the permissions it was opened with. Its last event is always `event: closed`, whose data is a Problem saying why: `forbidden` (403, with missingPermission: a right was removed), `unauthenticated` (401: the token expired or was revoked), `stream-expired` (408: open for --max-stream-seconds; reconnect), `slow-reader` (408: more than --stream-buffer-bytes waited unsent; reconnect and read faster), `unavailable` (503: the API stops, or could not re-authorize twice in a row; reconnect). A caller over --max-streams-per-identity open streams (or the API over --max-open-streams) gets 429 `too-many-streams` instead of a stream.',
        querystring: z.object({
          namespace: namespaceName.optional(),
          kinds: z
            .string()
            .max(64)
            .regex(new RegExp(streamList), 'must be workloads, clusters, or both separated by a comma')
            .default(watchStreams.join(',')),
          kind: kindList
            .optional()
            .describe('Workload events of these kinds only (comma-separated names, see /api/v1/kinds).'),
        }),
        response: { 200: z.string(), ...errors },
      },
      config: {
        permissions: (request) => {
          const streams = (rawQuery(request, 'kinds') ?? watchStreams.join(',')).split(',');
          const namespace = rawQuery(request, 'namespace');
          const permissions: Permission[] = [];
          const add = (permission: Permission) => {
            const key = JSON.stringify(permission);
            if (!permissions.some((p) => JSON.stringify(p) === key)) permissions.push(permission);
          };
          // Every kind, in the dispatched order, before clusters: the first refused is reported.
          if (streams.includes('workloads'))
            for (const permission of onKinds(
              fleet.workloadKinds.select(rawQuery(request, 'kind')).adapters,
              'watch',
              namespace,
            ))
              add(permission);
          if (streams.includes('clusters')) add(onClusters('watch'));
          return permissions;
        },
      },
    },
    async (request, reply) => {
      const { namespace } = request.query;
      const streams = new Set(request.query.kinds.split(',') as WatchStream[]);
      const workloadKinds = new Set(
        fleet.workloadKinds
          .selectOrRefuse(request.query.kind, 'querystring.kind')
          .map((adapter) => adapter.name),
      );
      let writer: EventStreamWriter | undefined;
      let unsubscribe = () => {};
      let heartbeat: NodeJS.Timeout | undefined;
      const instance = request.url.split('?')[0];
      const stop = () => {
        clearInterval(heartbeat);
        unsubscribe();
      };
      // Admitted (or refused with 429) before anything is written.
      const stream = openStream(request, {
        kind: 'watch',
        end: (problem) => {
          stop();
          writer?.end(closedEventFrame(problem, instance));
        },
        bufferedBytes: () => writer?.bufferedBytes ?? 0,
      });
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const events = new EventStreamWriter(res, {
        maxBufferedBytes: streamBufferBytes,
        onOverflow: (buffered) => stream.end('slow-reader', slowReaderProblem(buffered, streamBufferBytes)),
      });
      writer = events;
      events.write(': jobrelay watch\nretry: 2000\n\n');
      unsubscribe = fleet.subscribe((change: FleetChange) => {
        if (change.kind === 'workload') {
          const { adapter, object } = change;
          if (namespace && object.metadata?.namespace !== namespace) return;
          if (streams.has('workloads') && workloadKinds.has(adapter.name)) {
            const seen = change.type !== 'deleted' && fleet.mirrorSeen(adapter, object);
            events.event('workload', {
              type: change.type,
              kind: adapter.name,
              apiVersion: apiVersionOf(adapter.resource),
              object: workloadSummary(adapter, object, seen),
            });
          }
        } else if (change.kind === 'cluster' && streams.has('clusters')) {
          events.event('cluster', { type: change.type, object: fleet.clusterViewOf(change.cluster) });
        }
      });
      heartbeat = setInterval(() => events.comment('keep-alive'), 15_000);
      res.once('close', () => {
        stop();
        stream.release('client-left');
      });
    },
  );
}
