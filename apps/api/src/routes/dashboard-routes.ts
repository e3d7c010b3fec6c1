import { dashboardAssets, dashboardContentSecurityPolicy } from '@jobrelay/dashboard';
import type { FastifyReply } from 'fastify';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import { ApiProblem } from '../problems.ts';

/**
 * The web dashboard's page, script and stylesheet (packages/dashboard), public like /docs: they
 * hold no data of the cluster. Every data call the page makes goes to /api/v1 with the
 * caller's bearer token, so the dashboard shows exactly what the caller's RBAC allows.
 */
export function registerDashboardRoutes(app: ApiApp, deps: ApiDependencies): void {
  // Built in memory once, as the API starts: no build step anywhere else.
  dashboardAssets().catch((err: unknown) =>
    deps.log.error({ err }, 'the dashboard could not be built; /dashboard/ answers 503'),
  );

  const send = async (
    reply: FastifyReply,
    type: string,
    pick: (a: { html: string; js: string; css: string }) => string,
  ) => {
    let assets: Awaited<ReturnType<typeof dashboardAssets>>;
    try {
      assets = await dashboardAssets();
    } catch {
      throw new ApiProblem(
        'unavailable',
        "the dashboard could not be built (the API's log says why); the API's routes work without it",
        {},
        { 'retry-after': '30' },
      );
    }
    return reply
      .type(type)
      .headers({
        'content-security-policy': dashboardContentSecurityPolicy,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // The bundle changes only with a new API version; revalidating is cheap.
        'cache-control': 'no-cache',
      })
      .send(pick(assets));
  };
  const hidden = { schema: { hide: true } };
  app.get('/dashboard', hidden, async (_request, reply) => reply.redirect('/dashboard/', 308));
  app.get('/dashboard/', hidden, async (_request, reply) =>
    send(reply, 'text/html; charset=utf-8', (a) => a.html),
  );
  app.get('/dashboard/app.js', hidden, async (_request, reply) =>
    send(reply, 'text/javascript; charset=utf-8', (a) => a.js),
  );
  app.get('/dashboard/app.css', hidden, async (_request, reply) =>
    send(reply, 'text/css; charset=utf-8', (a) => a.css),
  );
}
