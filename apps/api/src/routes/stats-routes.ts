import { statsHistorySchema } from '@jobrelay/api-types';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import { minuteStarts } from '../stats-history.ts';
import { onClusters } from './permissions.ts';
import { errors } from './route-schemas.ts';

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
        response: { 200: statsHistorySchema, ...errors },
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
