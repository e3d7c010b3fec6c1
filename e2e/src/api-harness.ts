import {
  AccessReviewer,
  type ApiApp,
  ApiMetrics,
  buildApi,
  chosenKinds,
  FleetView,
  loadApiConfig,
  servedKinds,
} from '@jobrelay/api';
import type { KubeconfigPolicy } from '@jobrelay/clusters';
import { defaultOriginId } from '@jobrelay/kube';
import type { Identity, Sandbox } from '@jobrelay/sandbox';
import { KubeConfig } from '@kubernetes/client-node';
import { type Logger, pino } from 'pino';

/**
 * Who calls: a sandbox identity's token, no token at all, a token the apiserver does not know,
 * or any other bearer token (a ServiceAccount's, from a TokenRequest).
 */
export type ApiCaller = Identity | 'anonymous' | 'bad-token' | { token: string };

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: () => unknown;
}

export interface ApiHarness {
  app: ApiApp;
  fleet: FleetView;
  access: AccessReviewer;
  /** The API's Prometheus metrics, read without a /metrics request. */
  metrics: ApiMetrics;
  originId: string;
  /** One request through app.inject(), as `caller`. */
  call(
    caller: ApiCaller,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  close(): Promise<void>;
}

/**
 * The real API, built by its factory, against the sandbox's real management apiserver (its own
 * identity: the `jobrelay-api` user with deploy/api's RBAC), the workers and Redis. Requests go
 * through app.inject(); every TokenReview and SubjectAccessReview is a real one.
 */
export async function startApiHarness(
  sandbox: Sandbox,
  options: {
    authCacheSeconds?: number;
    rateLimitPerMinute?: number;
    bodyLimitBytes?: number;
    /** How registered kubeconfigs are vetted; default: the API's defaults (nothing beyond the allow-list). */
    kubeconfigPolicy?: KubeconfigPolicy;
    /** Where the API logs; default silent (JOBRELAY_TEST_API_LOG sets a level). */
    log?: Logger;
    /** Unlimited unless given: the matrix and the fuzz tests send many bad tokens on purpose. */
    failedAuthenticationsPerMinute?: number;
    tokenAudiences?: string[];
    maxStreamsPerIdentity?: number;
    maxStreamSeconds?: number;
    streamBufferBytes?: number;
  } = {},
): Promise<ApiHarness> {
  const management = new KubeConfig();
  management.loadFromFile(sandbox.serviceAccountKubeconfigPath('jobrelay-api'));
  // The controller's origin id, derived as the controller and the API process derive it.
  const originId = await defaultOriginId(management);
  const log = options.log ?? pino({ level: process.env.JOBRELAY_TEST_API_LOG ?? 'silent' });
  // The kinds as the API process picks them with its default flags (the controller's defaults):
  // every built-in kind the management cluster serves.
  const kinds = await servedKinds(chosenKinds(loadApiConfig([], {})), management, log);
  const fleet = new FleetView({
    management,
    kinds,
    originId,
    systemNamespace: 'jobrelay-system',
    redisUrl: sandbox.redisUrl,
    placementPolicy: 'spread',
    kubeconfigPolicy: options.kubeconfigPolicy ?? {},
    log,
  });
  const authCacheSeconds = options.authCacheSeconds ?? 5;
  const access = new AccessReviewer({
    kubeConfig: management,
    cacheSeconds: authCacheSeconds,
    ...(options.tokenAudiences ? { audiences: options.tokenAudiences } : {}),
  });
  const metrics = new ApiMetrics();
  const app = await buildApi({
    fleet,
    access,
    log,
    metrics,
    config: {
      originId,
      systemNamespace: 'jobrelay-system',
      rateLimitPerMinute: options.rateLimitPerMinute ?? 1_000_000,
      bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
      requestTimeoutSeconds: 30,
      authCacheSeconds,
      failedAuthenticationsPerMinute: options.failedAuthenticationsPerMinute ?? 1_000_000,
      ...(options.maxStreamsPerIdentity ? { maxStreamsPerIdentity: options.maxStreamsPerIdentity } : {}),
      ...(options.maxStreamSeconds ? { maxStreamSeconds: options.maxStreamSeconds } : {}),
      ...(options.streamBufferBytes ? { streamBufferBytes: options.streamBufferBytes } : {}),
    },
  });
  await fleet.start();
  await app.ready();
  const tokenOf = (caller: ApiCaller): string | undefined =>
    typeof caller === 'object'
      ? caller.token
      : caller === 'anonymous'
        ? undefined
        : caller === 'bad-token'
          ? 'not-a-token-the-apiserver-knows'
          : sandbox.token(caller);
  return {
    app,
    fleet,
    access,
    metrics,
    originId,
    async call(caller, method, url, body, headers = {}) {
      const token = tokenOf(caller);
      const response = await app.inject({
        method,
        url,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        ...(body === undefined
          ? {}
          : typeof body === 'string'
            ? { payload: body }
            : { payload: body as object }),
      });
      return {
        status: response.statusCode,
        headers: response.headers,
        body: response.body,
        json: () => JSON.parse(response.body) as unknown,
      };
    },
    async close() {
      await app.close();
      await fleet.stop();
    },
  };
}
