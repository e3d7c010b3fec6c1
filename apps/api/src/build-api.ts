import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import {
  type AccessReviewer,
  type Caller,
  describePermission,
  type Permission,
  ReviewUnavailableError,
} from './access-review.ts';
import type { ApiConfig } from './api-config.ts';
import { ApiMetrics } from './api-metrics.ts';
import type { FleetView } from './fleet-view.ts';
import { ApiProblem, type ProblemCode, problemContentType } from './problems.ts';
import { registerClusterRoutes } from './routes/cluster-routes.ts';
import { registerDashboardRoutes } from './routes/dashboard-routes.ts';
import { registerIdentityRoutes } from './routes/identity-routes.ts';
import { registerJobRoutes } from './routes/job-routes.ts';
import { registerOperationRoutes } from './routes/operation-routes.ts';
import { registerQueueRoutes } from './routes/queue-routes.ts';
import { registerStatsRoutes } from './routes/stats-routes.ts';
import { registerWorkloadRoutes } from './routes/workload-routes.ts';
import { upstreamProblem } from './upstream-errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the bearer token passed a TokenReview. */
    caller?: Caller;
  }
  interface FastifyContextConfig {
    /** Every SubjectAccessReview the route needs, computed from the raw params and query. */
    permissions?: (request: FastifyRequest) => Permission[];
  }
}

export type ApiApp = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  Logger,
  ZodTypeProvider
>;

export interface ApiDependencies {
  fleet: FleetView;
  access: AccessReviewer;
  log: Logger;
  config: Pick<
    ApiConfig,
    'systemNamespace' | 'rateLimitPerMinute' | 'bodyLimitBytes' | 'requestTimeoutSeconds'
  > & { originId: string };
  metrics?: ApiMetrics;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string; key: string };
}

/**
 * Reachable without a token: they describe the API, say whether the process is up, or are the
 * dashboard's page and bundle (its data calls carry the token); no data.
 */
const publicPaths = ['/healthz', '/readyz', '/openapi.json', '/docs', '/dashboard'];
function isPublic(url: string): boolean {
  const path = url.split('?')[0]!;
  return publicPaths.some((p) => path === p || path.startsWith(`${p}/`));
}

const statusCodes: Record<number, ProblemCode> = {
  400: 'bad-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  409: 'conflict',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  429: 'rate-limited',
};

/**
 * Builds the API without listening: tests drive it with app.inject(), main.ts only wires
 * configuration, the logger and signals around it.
 */
export async function buildApi(deps: ApiDependencies): Promise<ApiApp> {
  const metrics = deps.metrics ?? new ApiMetrics();
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: deps.config.bodyLimitBytes,
    requestTimeout: deps.config.requestTimeoutSeconds * 1000,
    // Streams (logs -f, watch) stay open; idle keep-alive sockets do not.
    keepAliveTimeout: 10_000,
    routerOptions: { maxParamLength: 512 },
    ...(deps.tls ? { https: { cert: deps.tls.cert, key: deps.tls.key } } : {}),
    // Fastify logs each request and its completion through a per-request child logger (with
    // reqId): method, URL and status, never headers; pino redaction in main.ts is the backstop.
    requestIdHeader: false,
    // The router refuses a URL it cannot decode (bad percent-encoding) or a path segment past
    // maxParamLength before any hook or error handler runs; fastify's own answer would be plain
    // JSON, not a problem. Nothing was authenticated yet, so the answer says only what is wrong.
    frameworkErrors: (error, request, reply) => {
      const detail =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'a path segment is longer than 512 characters'
          : error.code === 'FST_ERR_BAD_URL'
            ? 'the URL is not validly percent-encoded'
            : error.message;
      const problem = new ApiProblem('bad-request', detail);
      // Serialized here: this reply belongs to no route, so it has no serializer of its own.
      void (reply as unknown as FastifyReply)
        .code(problem.status)
        .type(problemContentType)
        .send(JSON.stringify(problem.toProblem(request.url.split('?')[0])));
    },
  }).withTypeProvider<ZodTypeProvider>() as unknown as ApiApp;

  // JSON only: fastify would otherwise accept text/plain bodies as strings.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toProblem(error, request, deps.log);
    void reply
      .code(problem.status)
      .headers(problem.headers)
      .type(problemContentType)
      .send(problem.toProblem(request.url.split('?')[0]));
  });
  app.setNotFoundHandler((request, reply) => {
    const problem = new ApiProblem(
      'not-found',
      `no route ${request.method} ${request.url.split('?')[0]}; the routes are listed at /docs and /openapi.json`,
    );
    void reply
      .code(404)
      .type(problemContentType)
      .send(problem.toProblem(request.url.split('?')[0]));
  });

  // Authentication first: nothing else runs for a caller the management cluster does not know.
  app.addHook('onRequest', async (request) => {
    if (isPublic(request.url)) return;
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new ApiProblem(
        'unauthenticated',
        'send a Kubernetes bearer token of the management cluster: Authorization: Bearer <token>',
        {},
        { 'www-authenticate': 'Bearer realm="jobrelay"' },
      );
    }
    const caller = await deps.access.authenticate(match[1]!);
    if (!caller) {
      throw new ApiProblem(
        'unauthenticated',
        'the management cluster did not accept this token (TokenReview): it is unknown, expired, or meant for another audience',
        {},
        { 'www-authenticate': 'Bearer realm="jobrelay", error="invalid_token"' },
      );
    }
    request.caller = caller;
    request.log = request.log.child({ user: caller.username });
  });

  await app.register(rateLimit, {
    global: true,
    // After authentication, so each identity has its own budget (its address before that).
    hook: 'preParsing',
    max: deps.config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => request.caller?.username ?? `address:${request.ip}`,
    allowList: (request: FastifyRequest) => isPublic(request.url),
    errorResponseBuilder: (_request, context) =>
      new ApiProblem(
        'rate-limited',
        `more than ${context.max} requests per minute from this identity; retry in ${Math.ceil(context.ttl / 1000)}s`,
      ),
  });

  // Authorization before validation, like the apiserver: a refused caller learns nothing from
  // how its input would have been judged, and nothing is read or written for it.
  app.addHook('preValidation', async (request) => {
    const permissions = request.routeOptions.config.permissions?.(request);
    if (!permissions) return;
    // Fail closed: a protected route never runs without an authenticated caller.
    if (!request.caller) throw new ApiProblem('unauthenticated', 'this route needs a bearer token');
    const missing = await deps.access.firstMissing(request.caller, permissions);
    if (missing) {
      throw new ApiProblem(
        'forbidden',
        `${request.caller.username} is not allowed to ${describePermission(missing)}`,
        {
          missingPermission:
            'nonResourceURL' in missing
              ? { verb: missing.verb, nonResourceURL: missing.nonResourceURL }
              : {
                  verb: missing.verb,
                  group: missing.group,
                  resource: missing.resource,
                  ...(missing.subresource ? { subresource: missing.subresource } : {}),
                  ...(missing.namespace ? { namespace: missing.namespace } : {}),
                  ...(missing.name ? { name: missing.name } : {}),
                },
        },
      );
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      code: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500)
      request.log.warn({ status: reply.statusCode, route: labels.route }, 'request failed');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'jobrelay admin API',
        version: 'v1',
        description:
          'The fleet of worker clusters, dispatched workloads of every kind (batch/v1 Jobs, KubeRay RayClusters and RayJobs, generic kinds), the pending queue, placement previews and worker pod logs. Every route except /healthz, /readyz and the docs takes a Kubernetes bearer token of the management cluster and is authorized by SubjectAccessReview: the API grants exactly what the caller’s RBAC grants through kubectl.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // Bundled assets (no CDN): @fastify/swagger-ui serves swagger-ui-dist from node_modules.
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { persistAuthorization: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerOperationRoutes(app, deps, metrics);
  registerClusterRoutes(app, deps);
  registerJobRoutes(app, deps);
  registerWorkloadRoutes(app, deps);
  registerQueueRoutes(app, deps);
  registerStatsRoutes(app, deps);
  registerIdentityRoutes(app, deps);
  registerDashboardRoutes(app, deps);
  return app;
}

function toProblem(
  error: FastifyError | ApiProblem | Error,
  request: FastifyRequest,
  log: Logger,
): ApiProblem {
  if (error instanceof ApiProblem) return error;
  if (error instanceof ReviewUnavailableError) {
    log.warn({ err: error.message }, 'access review failed');
    return new ApiProblem(
      'unavailable',
      'the management cluster could not review the request; retry shortly',
      {},
      { 'retry-after': '2' },
    );
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = (error as FastifyError).validationContext ?? 'request';
    const errors = error.validation.map((issue) => ({
      path: `${context}${issue.instancePath === '/' ? '' : issue.instancePath.replaceAll('/', '.')}`,
      message: issue.message ?? 'is not valid',
    }));
    return new ApiProblem('validation-failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), {
      errors,
    });
  }
  const upstream = upstreamProblem(error);
  if (upstream) return upstream;
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new ApiProblem(statusCodes[status] ?? 'bad-request', error.message);
  }
  request.log.error({ err: error }, 'unexpected error');
  return new ApiProblem(
    'internal',
    `an internal error occurred (request ${request.id}); the API's log has the details`,
  );
}
