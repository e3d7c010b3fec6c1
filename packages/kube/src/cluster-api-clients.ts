import type { AgentOptions, RequestOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import {
  type ApiType,
  BatchV1Api,
  type Configuration,
  CoreV1Api,
  CustomObjectsApi,
  createConfiguration,
  EventsV1Api,
  type HttpLibrary,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
  type SecurityAuthentication,
  ServerConfiguration,
  VersionApi,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import { Agent } from 'undici';
import { requestVerb } from './request-verb.ts';
import { TokenBucket } from './token-bucket.ts';
import { undiciHttpLibrary } from './undici-http-library.ts';

export interface ClusterClientOptions {
  /** Sustained requests per second to this cluster's apiserver (client-go's default is 5; ours is higher, see the flag). */
  qps: number;
  /** Requests allowed at once above the sustained rate. */
  burst: number;
  /**
   * Every request (watches aside, they have their own client) is abandoned when its answer
   * does not start, or stalls, this long after it was sent. A frozen apiserver accepts
   * connections and never answers; without a bound, a reconcile waiting on it would hold its
   * Job for minutes (undici's own limits are 300 s), long past the lost-worker timeout that
   * should move the Job.
   */
  requestTimeoutMs?: number;
  /**
   * Called with every answered request's Kubernetes verb and HTTP status code (0 when no
   * answer came: refused, reset, timed out), for metrics.
   */
  onResponse?: (verb: string, code: number) => void;
}

export const defaultWorkerRequestTimeoutMs = 15_000;

export interface ClusterApiClients {
  batch: BatchV1Api;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  events: EventsV1Api;
  version: VersionApi;
  /** Requests sent through these clients so far. */
  readonly requestCount: number;
}

type Dispatcher = ReturnType<RequestContext['getDispatcher']>;

/**
 * API clients for one cluster that share one rate limit and one HTTP connection pool.
 * client-node builds a new connection pool for every request (so every call pays a TLS
 * handshake); here the first request's pool is kept and reused by all the others, and the
 * requests go through undici's `request` rather than `fetch` (see undici-http-library.ts).
 */
export function makeClusterApiClients(
  kubeConfig: KubeConfig,
  options: ClusterClientOptions,
): ClusterApiClients {
  const bucket = new TokenBucket(options);
  let requests = 0;
  const configuration = sharedPoolConfiguration(kubeConfig, {
    requestTimeoutMs: options.requestTimeoutMs ?? defaultWorkerRequestTimeoutMs,
    beforeRequest: async () => {
      await bucket.take();
      requests += 1;
    },
    ...(options.onResponse ? { onResponse: options.onResponse } : {}),
  });
  const make = <T extends ApiType>(Api: new (config: typeof configuration) => T): T => new Api(configuration);
  return {
    batch: make(BatchV1Api),
    core: make(CoreV1Api),
    custom: make(CustomObjectsApi),
    events: make(EventsV1Api),
    version: make(VersionApi),
    get requestCount() {
      return requests;
    },
  };
}

/**
 * A client-node configuration whose requests all share one connection pool (see
 * `connectionPool`; behind a proxy, the first request's) and go through undici's `request`;
 * each is abandoned when no answer comes within `requestTimeoutMs` of sending it (default
 * `defaultWorkerRequestTimeoutMs`; see undici-http-library.ts).
 */
export function sharedPoolConfiguration(
  kubeConfig: KubeConfig,
  options: {
    requestTimeoutMs?: number;
    beforeRequest?: () => Promise<void>;
    onResponse?: (verb: string, code: number) => void;
  } = {},
): Configuration {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const transport = undiciHttpLibrary(options.requestTimeoutMs ?? defaultWorkerRequestTimeoutMs);
  let shared: Dispatcher | undefined;
  let own: Promise<Dispatcher | undefined> | undefined;
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: requestAuthentication(kubeConfig) },
    httpApi: options.onResponse ? observedHttpLibrary(transport, options.onResponse) : transport,
    promiseMiddleware: [
      {
        async pre(context: RequestContext): Promise<RequestContext> {
          await options.beforeRequest?.();
          own ??= connectionPool(kubeConfig, connectionsPerApiserver);
          shared ??= (await own) ?? context.getDispatcher();
          if (shared) context.setDispatcher(shared);
          context.setHeaderParam('User-Agent', 'jobrelay');
          return context;
        },
        async post(context: ResponseContext): Promise<ResponseContext> {
          return context;
        },
      },
    ],
  });
}

/**
 * How a request (or watch) to the kubeconfig's cluster is authenticated. Behind a proxy,
 * client-node's own authentication, which also builds the proxy's pool (the caller keeps the
 * first one: `connectionPool` gives none there); else the credential headers only, TLS being
 * `connectionPool`'s.
 */
export function requestAuthentication(kubeConfig: KubeConfig): SecurityAuthentication {
  return kubeConfig.getCurrentCluster()?.proxyUrl ? kubeConfig : headersOnlyAuthentication(kubeConfig);
}

/** What client-node's KubeConfig keeps private: the credential headers of its current user. */
interface KubeConfigInternals {
  applyAuthorizationHeader?: (opts: { headers: Record<string, string> }) => Promise<void>;
}

/**
 * client-node's kubeconfig authentication without its per-request setup: on every request
 * its `applySecurityAuthentication` decodes the CA, client certificate and key again (or reads
 * their files) and builds a new undici Agent, which `sharedPoolConfiguration` then discards
 * for the shared pool. This sets the same headers (basic auth, then the token or an auth
 * provider's or exec plugin's, refreshed as client-node refreshes them, and impersonation) and
 * leaves TLS to the pool. With a client-node that no longer has the private method it reads
 * the headers with, its own authentication is used: slower, still right.
 */
export function headersOnlyAuthentication(kubeConfig: KubeConfig): SecurityAuthentication {
  const { applyAuthorizationHeader } = kubeConfig as unknown as KubeConfigInternals;
  if (typeof applyAuthorizationHeader !== 'function') return kubeConfig;
  return {
    getName: () => 'kubeconfig credentials (TLS in the shared pool)',
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      const user = kubeConfig.getCurrentUser();
      if (!user) return;
      if (user.username) {
        const basic = Buffer.from(`${user.username}:${user.password}`).toString('base64');
        context.setHeaderParam('Authorization', `Basic ${basic}`);
      }
      const opts: { headers: Record<string, string> } = { headers: {} };
      if (user.impersonateUser != null) opts.headers['Impersonate-User'] = user.impersonateUser;
      await applyAuthorizationHeader.call(kubeConfig, opts);
      for (const [name, value] of Object.entries(opts.headers)) context.setHeaderParam(name, `${value}`);
    },
  };
}

/** The transport, reporting each request's verb and status code as it completes. */
function observedHttpLibrary(transport: HttpLibrary, onResponse: (verb: string, code: number) => void) {
  return wrapHttpLibrary({
    async send(context: RequestContext): Promise<ResponseContext> {
      const verb = requestVerb(context.getHttpMethod(), context.getUrl());
      try {
        const response = await transport.send(context).toPromise();
        onResponse(verb, response.httpStatusCode);
        return response;
      } catch (err) {
        onResponse(verb, 0);
        throw err;
      }
    },
  });
}

/** Connections per apiserver: enough for every reconcile and placement running at once. */
const connectionsPerApiserver = 32;

/** How long an idle pooled connection is kept (below the apiserver's 90 s idle timeout). */
const idleConnectionMs = 30_000;

/**
 * A pool of at most `connections` HTTP/1.1 keep-alive connections with the kubeconfig's TLS
 * settings: requests share one (`sharedPoolConfiguration`), each watcher has its own (a watch
 * holds its connection open). undici speaks HTTP/2 to an apiserver by default, and Node's
 * HTTP/2 core costs more CPU per small request than undici's HTTP/1.1 parser: in the dispatch
 * benchmark's drain, 4 of 4 runs in alternation used less controller CPU per Job over HTTP/1.1
 * (docs/benchmarks.md, sixth round). Undefined when the kubeconfig goes through a proxy:
 * client-node's own pool is used.
 */
export async function connectionPool(
  kubeConfig: KubeConfig,
  connections: number,
): Promise<Dispatcher | undefined> {
  const tls: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  const agentOptions: AgentOptions = {};
  for (const field of [
    'ca',
    'cert',
    'key',
    'pfx',
    'passphrase',
    'rejectUnauthorized',
    'servername',
  ] as const) {
    if (tls[field] !== undefined) Object.assign(agentOptions, { [field]: tls[field] });
  }
  const options = kubeConfig.createDispatcherOptions(kubeConfig.getCurrentCluster(), agentOptions);
  if (options.type !== 'agent') return undefined;
  // One TLS context for every connection of the pool: Node builds one per connection otherwise
  // (parsing the CA, certificate and key each time a connection opens).
  const { ca, cert, key, pfx, passphrase } = options.connect as AgentOptions;
  const secureContext = createSecureContext({ ca, cert, key, pfx, passphrase });
  return new Agent({
    connect: { ...options.connect, secureContext },
    allowH2: false,
    connections,
    // The apiserver keeps an idle connection 90 s; undici's default (4 s) closes the pool's
    // spare connections between bursts, and each reopening costs a TLS handshake.
    keepAliveTimeout: idleConnectionMs,
  }) as unknown as Dispatcher;
}
