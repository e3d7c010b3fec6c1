import type { AgentOptions, RequestOptions } from 'node:https';
import {
  type ApiType,
  BatchV1Api,
  type Configuration,
  CoreV1Api,
  CustomObjectsApi,
  createConfiguration,
  EventsV1Api,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
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
   * Every request (watches aside, they have their own client) is abandoned after this long.
   * A frozen apiserver accepts connections and never answers; without a bound, a reconcile
   * waiting on it would hold its Job for minutes (undici's own limits are 300 s), long past
   * the lost-worker timeout that should move the Job.
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
 * `requestDispatcher`; else the first request's) and go through undici's `request`; each is
 * abandoned after `requestTimeoutMs`.
 */
export function sharedPoolConfiguration(
  kubeConfig: KubeConfig,
  options: {
    requestTimeoutMs: number;
    beforeRequest?: () => Promise<void>;
    onResponse?: (verb: string, code: number) => void;
  },
): Configuration {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  let shared: Dispatcher | undefined;
  let own: Promise<Dispatcher | undefined> | undefined;
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kubeConfig },
    httpApi: options.onResponse ? observedHttpLibrary(options.onResponse) : undiciHttpLibrary,
    promiseMiddleware: [
      {
        async pre(context: RequestContext): Promise<RequestContext> {
          await options.beforeRequest?.();
          context.setSignal(AbortSignal.timeout(options.requestTimeoutMs));
          own ??= requestDispatcher(kubeConfig);
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

/** The undici transport, reporting each request's verb and status code as it completes. */
function observedHttpLibrary(onResponse: (verb: string, code: number) => void) {
  return wrapHttpLibrary({
    async send(context: RequestContext): Promise<ResponseContext> {
      const verb = requestVerb(context.getHttpMethod(), context.getUrl());
      try {
        const response = await undiciHttpLibrary.send(context).toPromise();
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

/**
 * A pool of HTTP/1.1 keep-alive connections with the kubeconfig's TLS settings, for requests
 * (watches keep client-node's pool: a watch holds its connection open). undici speaks HTTP/2 to
 * an apiserver by default, and Node's HTTP/2 core costs more CPU per small request than
 * undici's HTTP/1.1 parser: in the dispatch benchmark's drain, 4 of 4 runs in alternation used
 * less controller CPU per Job over HTTP/1.1 (docs/benchmarks.md, sixth round). Undefined when
 * the kubeconfig goes through a proxy or has no TLS settings: client-node's own pool is used.
 */
async function requestDispatcher(kubeConfig: KubeConfig): Promise<Dispatcher | undefined> {
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
  return new Agent({
    connect: options.connect,
    allowH2: false,
    connections: connectionsPerApiserver,
  }) as unknown as Dispatcher;
}
