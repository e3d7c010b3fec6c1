import { type WorkerWatchStreams, workerWatchStreamsHelp } from '@jobrelay/clusters';
import { informerRelistsCounter } from '@jobrelay/kube';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

type StreamLabel = 'watch' | 'logs';

/** Where the stream gauges read from: the StreamSupervisor. */
export interface StreamGaugeSource {
  openByKind(): Record<StreamLabel, number>;
  bufferedBytes(): number;
}

/** Where the review counter reads from: the AccessReviewer's own counts. */
export interface ReviewCountSource {
  reviewsSent: number;
  tokenReviewsSent: number;
}

/** Prometheus metrics of the API: requests by route (the pattern, never the raw URL) and status code. */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'code'>;
  readonly latency: Histogram<'method' | 'route' | 'code'>;
  /** Streams ended, by why: `slow-reader` counts the readers dropped for not keeping up. */
  readonly streamsClosed: Counter<'stream' | 'reason'>;
  /** Probes of Redis and the apiserver made for /readyz (answers are shared for a second). */
  readonly readinessProbes: Counter;
  /** Requests refused for want of a valid token: `refused` reached a TokenReview, `limited` did not. */
  readonly failedAuthentications: Counter<'outcome'>;
  #streams: StreamGaugeSource | undefined;
  #reviews: ReviewCountSource | undefined;
  #workerWatches: (() => WorkerWatchStreams) | undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'jobrelay_api_' });
    informerRelistsCounter(registers);
    this.requests = new Counter({
      name: 'jobrelay_api_requests_total',
      help: 'API requests, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'code'],
      registers,
    });
    this.latency = new Histogram({
      name: 'jobrelay_api_request_duration_seconds',
      help: 'Time to the response, by method, route pattern and status code (streams: to the headers).',
      labelNames: ['method', 'route', 'code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.streamsClosed = new Counter({
      name: 'jobrelay_api_streams_closed_total',
      help: 'Streams (watch, logs) ended, by why: forbidden, unauthenticated, review-unavailable, expired, slow-reader (dropped), shutdown, client-left, finished.',
      labelNames: ['stream', 'reason'],
      registers,
    });
    this.readinessProbes = new Counter({
      name: 'jobrelay_api_readiness_probes_total',
      help: 'Probes of Redis and the management apiserver made to answer /readyz.',
      registers,
    });
    this.failedAuthentications = new Counter({
      name: 'jobrelay_api_failed_authentications_total',
      help: 'Requests without a token the management cluster accepts: refused (after a TokenReview, or with no token to review) or limited (429 before any TokenReview).',
      labelNames: ['outcome'],
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'jobrelay_api_open_streams',
      help: 'Streams open now, by kind (watch, logs).',
      labelNames: ['stream'],
      registers,
      collect() {
        const open = metrics.#streams?.openByKind() ?? { watch: 0, logs: 0 };
        for (const [stream, count] of Object.entries(open)) this.set({ stream }, count);
      },
    });
    new Gauge({
      name: 'jobrelay_api_stream_buffered_bytes',
      help: 'Bytes the open streams hold unsent for their readers.',
      registers,
      collect() {
        this.set(metrics.#streams?.bufferedBytes() ?? 0);
      },
    });
    new Gauge({
      name: 'jobrelay_worker_watch_streams',
      help: workerWatchStreamsHelp,
      labelNames: ['resource'],
      registers,
      collect() {
        const streams = metrics.#workerWatches?.() ?? { pods: 0, nodes: 0, mirrors: 0, namespaces: 0 };
        for (const [resource, count] of Object.entries(streams)) this.set({ resource }, count);
      },
    });
    new Counter({
      name: 'jobrelay_api_access_reviews_total',
      help: 'Reviews sent to the management apiserver: TokenReview and SubjectAccessReview.',
      labelNames: ['review'],
      registers,
      collect() {
        const reviews = metrics.#reviews;
        this.reset();
        if (!reviews) return;
        this.inc({ review: 'TokenReview' }, reviews.tokenReviewsSent);
        this.inc({ review: 'SubjectAccessReview' }, reviews.reviewsSent - reviews.tokenReviewsSent);
      },
    });
  }

  observeStreams(source: StreamGaugeSource): void {
    this.#streams = source;
  }

  observeReviews(source: ReviewCountSource): void {
    this.#reviews = source;
  }

  /** The fleet view's watch streams to workers (`jobrelay_worker_watch_streams`). */
  observeWorkerWatches(source: () => WorkerWatchStreams): void {
    this.#workerWatches = source;
  }
}
