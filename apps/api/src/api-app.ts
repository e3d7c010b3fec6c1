// The API's types the route modules share with build-api.ts, apart from it: routes import
// these, build-api.ts imports the routes, and no two modules import each other.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { AccessReviewer, Caller, Permission } from './access-review.ts';
import type { ApiConfig } from './api-config.ts';
import type { ApiMetrics } from './api-metrics.ts';
import type { FleetView } from './fleet-view.ts';
import type { StreamHandlers, SupervisedStream } from './stream-supervisor.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the bearer token passed a TokenReview. */
    caller?: Caller;
    /** Every permission the route's SubjectAccessReviews granted: what a stream re-checks. */
    authorizedPermissions?: Permission[];
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
  > &
    Partial<
      Pick<
        ApiConfig,
        | 'authCacheSeconds'
        | 'failedAuthenticationsPerMinute'
        | 'maxStreamsPerIdentity'
        | 'maxOpenStreams'
        | 'maxStreamSeconds'
        | 'streamBufferBytes'
      >
    > & { originId: string };
  metrics?: ApiMetrics;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string; key: string };
}

/** Opens a supervised stream for an authorized request: routes that stream call it before answering. */
export type OpenStream = (request: FastifyRequest, handlers: StreamHandlers) => SupervisedStream;
