import { z } from 'zod';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import type { ApiMetrics } from '../api-metrics.ts';
import { CachedProbe } from '../cached-probe.ts';

/**
 * /readyz answers from one probe of Redis and the apiserver per second, however often it is
 * asked: anonymous callers must not be able to turn it into load on either.
 */
const readinessCacheMs = 1_000;

/** /healthz, /readyz (anonymous, as kubelet probes are) and /metrics (needs get on /metrics, like the apiserver's). */
export function registerOperationRoutes(app: ApiApp, deps: ApiDependencies, metrics: ApiMetrics): void {
  const readiness = new CachedProbe(() => {
    metrics.readinessProbes.inc();
    return deps.fleet.readiness();
  }, readinessCacheMs);
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The process answers',
        security: [],
        response: { 200: z.string() },
      },
    },
    async (_request, reply) => reply.type('text/plain').send('ok\n'),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Ready: caches synced, Redis and the management apiserver answer',
        description: 'Probed at most once a second; concurrent requests share one probe.',
        security: [],
        response: {
          200: z.object({
            ready: z.boolean(),
            redis: z.boolean(),
            apiserver: z.boolean(),
            caches: z.boolean(),
          }),
          503: z.object({
            ready: z.boolean(),
            redis: z.boolean(),
            apiserver: z.boolean(),
            caches: z.boolean(),
          }),
        },
      },
    },
    async (_request, reply) => {
      const checks = await readiness.get();
      const ready = checks.redis && checks.apiserver && checks.caches;
      return reply.code(ready ? 200 : 503).send({ ready, ...checks });
    },
  );
  app.get(
    '/metrics',
    {
      schema: { tags: ['operations'], summary: 'Prometheus metrics', response: { 200: z.string() } },
      config: { permissions: () => [{ verb: 'get', nonResourceURL: '/metrics' }] },
    },
    async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
