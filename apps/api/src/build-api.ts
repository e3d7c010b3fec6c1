import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { ReviewUnavailableError } from './access-review.ts';
import type { ApiApp, ApiDependencies, OpenStream } from './api-app.ts';
import { streamAndAbuseDefaults } from './api-config.ts';
import { ApiMetrics } from './api-metrics.ts';
import { clientAddressKey, FailedAuthenticationLimit } from './failed-authentication-limit.ts';
import { ApiProblem, type ProblemCode, problemContentType } from './problems.ts';
import { registerClusterRoutes } from './routes/cluster-routes.ts';
import { registerDashboardRoutes } from './routes/dashboard-routes.ts';
import { registerDispatchQueueRoutes } from './routes/dispatch-queue-routes.ts';
import { registerIdentityRoutes } from './routes/identity-routes.ts';
import { registerOperationRoutes } from './routes/operation-routes.ts';
import { registerQueueRoutes } from './routes/queue-routes.ts';
import { registerStatsRoutes } from './routes/stats-routes.ts';
import { registerWorkloadRoutes } from './routes/workload-routes.ts';
import { missingPermissionProblem } from './stream-policy.ts';
import { StreamSupervisor } from './stream-supervisor.ts';
import { problemClientErrorHandler, RouteMethods } from './transport-refusals.ts';
import { upstreamProblem } from './upstream-errors.ts';

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
  408: 'request-timeout',
  409: 'conflict',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  431: 'headers-too-large',
  429: 'rate-limited',
};

/**
 * Builds the API without listening: tests drive it with app.inject(), main.ts only wires
 * configuration, the logger and signals around it.
 */
export async function buildApi(deps: ApiDependencies): Promise<ApiApp> {
  const metrics = deps.metrics ?? new ApiMetrics();
  metrics.observeReviews(deps.access);
  const limits = { ...streamAndAbuseDefaults, ...definedOnly(deps.config) };
  const streams = new StreamSupervisor({
    access: deps.access,
    caps: { perIdentity: limits.maxStreamsPerIdentity, total: limits.maxOpenStreams },
    maxStreamSeconds: limits.maxStreamSeconds,
    authCacheSeconds: deps.config.authCacheSeconds ?? 5,
    streamBufferBytes: limits.streamBufferBytes,
    metrics,
    log: deps.log,
  });
  const failedAuthentications = new FailedAuthenticationLimit({
    maxFailures: limits.failedAuthenticationsPerMinute,
    windowMs: 60_000,
  });
  /** Bearer tokens of authenticated requests, for their streams' re-checks; never a property a serializer could log. */
  const bearerTokens = new WeakMap<FastifyRequest, string>();
  const openStream: OpenStream = (request, handlers) => {
    const token = bearerTokens.get(request);
    if (!request.caller || token === undefined || !request.authorizedPermissions) {
      // Fail closed: a stream is only opened on a route that authenticated and authorized.
      throw new Error('a stream was opened on a request that was not authorized');
    }
    return streams.open(
      { caller: request.caller, token, permissions: request.authorizedPermissions },
      handlers,
    );
  };
  const routeMethods = new RouteMethods();
  let closing = false;
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: deps.config.bodyLimitBytes,
    requestTimeout: deps.config.requestTimeoutSeconds * 1000,
    // Streams (logs -f, watch) stay open; idle keep-alive sockets do not.
    keepAliveTimeout: 10_000,
    routerOptions: { maxParamLength: 512 },
    // A request without Host reaches fastify, which refuses it as a problem (Node's own refusal
    // is a bare 400 that no handler sees).
    http: { requireHostHeader: false },
    ...(deps.tls ? { https: { cert: deps.tls.cert, key: deps.tls.key, requireHostHeader: false } } : {}),
    // Requests arriving while the API stops get a problem from the onRequest hook below, not
    // fastify's plain-JSON 503.
    return503OnClosing: false,
    clientErrorHandler: problemClientErrorHandler(deps.log),
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
  app.addHook('onRoute', (route) => routeMethods.add(route.method, route.url ?? route.path));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = routeMethods.allowedFor(path);
    const problem =
      allowed.length > 0
        ? new ApiProblem(
            'method-not-allowed',
            `${path} is served for ${allowed.join(', ')}, not ${request.method}`,
            {},
            { allow: allowed.join(', ') },
          )
        : new ApiProblem(
            'not-found',
            `no route ${request.method} ${path}; the routes are listed at /docs and /openapi.json`,
          );
    void reply
      .code(problem.status)
      .headers(problem.headers)
      .type(problemContentType)
      .send(problem.toProblem(path));
  });
  app.addHook('preClose', async () => {
    closing = true;
    // Open streams end with a final event, so the server can close its connections.
    streams.close();
  });

  // Authentication first: nothing else runs for a caller the management cluster does not know.
  app.addHook('onRequest', async (request) => {
    if (closing)
      throw new ApiProblem('unavailable', 'the API is shutting down; retry', {}, { 'retry-after': '2' });
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      throw new ApiProblem('bad-request', 'an HTTP/1.1 request needs a Host header');
    }
    if (isPublic(request.url)) return;
    // Before any TokenReview: an address that sent too many bad tokens costs the apiserver nothing.
    const address = clientAddressKey(request.ip);
    const retryAfter = failedAuthentications.retryAfterSeconds(address);
    if (retryAfter !== undefined) {
      metrics.failedAuthentications.inc({ outcome: 'limited' });
      throw new ApiProblem(
        'rate-limited',
        `more than ${limits.failedAuthenticationsPerMinute} requests without a valid token from ${request.ip} in a minute (--failed-authentications-per-minute); retry in ${retryAfter}s with a valid token`,
        {},
        { 'retry-after': String(retryAfter) },
      );
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      failedAuthentications.recordFailure(address);
      metrics.failedAuthentications.inc({ outcome: 'refused' });
      throw new ApiProblem(
        'unauthenticated',
        'send a Kubernetes bearer token of the management cluster: Authorization: Bearer <token>',
        {},
        { 'www-authenticate': 'Bearer realm="jobrelay"' },
      );
    }
    const caller = await deps.access.authenticate(match[1]!);
    if (!caller) {
      failedAuthentications.recordFailure(address);
      metrics.failedAuthentications.inc({ outcome: 'refused' });
      throw new ApiProblem(
        'unauthenticated',
        'the management cluster did not accept this token (TokenReview): it is unknown, expired, or meant for another audience',
        {},
        { 'www-authenticate': 'Bearer realm="jobrelay", error="invalid_token"' },
      );
    }
    request.caller = caller;
    bearerTokens.set(request, match[1]!);
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
    if (missing) throw missingPermissionProblem(request.caller.username, missing);
    request.authorizedPermissions = permissions;
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
          'The fleet of worker clusters, dispatched workloads of every kind (Jobs, KubeRay RayClusters and RayJobs, configured kinds), the pending queue, placement previews and worker pod logs. Every route except /healthz, /readyz and the docs takes a Kubernetes bearer token of the management cluster and is authorized by SubjectAccessReview: the API grants exactly what the caller’s RBAC grants through kubectl.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // Bundled assets (no CDN): @fastify/swagger-ui serves swagger-ui-dist from node_modules. A
  // token typed into "Authorize" lives in the page only: persisted, any script of the origin
  // could read it from localStorage for as long as it stays valid.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: false },
    staticCSP: swaggerUiContentSecurityPolicy,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerOperationRoutes(app, deps, metrics);
  registerClusterRoutes(app, deps);
  registerWorkloadRoutes(app, deps, openStream);
  registerQueueRoutes(app, deps, openStream, streams.streamBufferBytes);
  registerDispatchQueueRoutes(app, deps);
  registerStatsRoutes(app, deps);
  registerIdentityRoutes(app, deps);
  registerDashboardRoutes(app, deps);
  return app;
}

/**
 * Swagger UI's page, scripts and styles come from the API itself, as the dashboard's do; its
 * "Try it out" calls go to the API only. swagger-ui-bundle.js adds one fixed <style> element of
 * its own, allowed by its hash alone (e2e/test/api-docs-page.test.ts fails on any violation, so
 * a swagger-ui-dist that changes it is noticed); its icons are data: SVGs.
 */
const swaggerUiInlineStyleHash = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
export const swaggerUiContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${swaggerUiInlineStyleHash}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** The config's values that are set: undefined never overrides a default. */
function definedOnly<T extends object>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as never;
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
