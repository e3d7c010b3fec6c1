import { z } from 'zod';
import type { ApiApp, ApiDependencies } from '../build-api.ts';
import { problemSchema } from '../problems.ts';
import { minuteStarts } from '../stats-history.ts';
import { onClusters } from './permissions.ts';

const errors = { '4xx': problemSchema, '5xx': problemSchema };
const iso = (ms: number) => new Date(ms).toISOString();

export function registerStatsRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;
  app.get(
    '/api/v1/stats/history',
    {
      schema: {
        tags: ['queue'],
        summary: 'The last hour for charts: placements per cluster per minute, dispatch latency, queue depth',
        description:
          'Kept in the API process’s memory (Kubernetes keeps no history, Redis only the queue): placements are rebuilt at start from the placement records of the workloads that still exist, queue depth samples (every `sampleSeconds`) start empty after a restart. `since` says from when the series are complete. Needs list workerclusters, as /api/v1/queue.',
        response: {
          200: z
            .object({
              now: z.string(),
              since: z
                .string()
                .describe('The series are complete from here on (the API’s start, within the hour).'),
              minutes: z.array(z.string()).describe('The start of each clock minute, oldest first.'),
              placementsPerCluster: z.array(
                z.object({
                  cluster: z.string(),
                  perMinute: z.array(z.number().int()).describe('One count per entry of `minutes`.'),
                }),
              ),
              dispatchLatency: z
                .array(
                  z.object({
                    count: z.number().int(),
                    medianSeconds: z.number().nullable(),
                    p95Seconds: z.number().nullable(),
                    maxSeconds: z.number().nullable(),
                  }),
                )
                .describe(
                  'Per minute: from creation to first placement, of the workloads first placed then (re-placements are not counted).',
                ),
              sampleSeconds: z.number().int(),
              queueDepth: z.array(
                z.object({
                  at: z.string(),
                  pending: z.number().int().describe('Workloads waiting for a cluster.'),
                  queued: z
                    .number()
                    .int()
                    .nullable()
                    .describe(
                      'Placement tasks in Redis (waiting, delayed, active); null when Redis did not answer.',
                    ),
                }),
              ),
            })
            .meta({ id: 'StatsHistory' }),
          ...errors,
        },
      },
      config: { permissions: () => [onClusters('list')] },
    },
    async () => {
      const history = fleet.statsHistory();
      const starts = minuteStarts(history.now, history.minutes);
      return {
        now: iso(history.now),
        since: iso(history.since),
        minutes: starts.map(iso),
        placementsPerCluster: history.placementsPerCluster,
        dispatchLatency: history.dispatchLatency,
        sampleSeconds: history.sampleSeconds,
        queueDepth: history.queueDepth.map((sample) => ({ ...sample, at: iso(sample.at) })),
      };
    },
  );
}
