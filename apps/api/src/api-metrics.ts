import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of the API: requests by route (the pattern, never the raw URL) and status code. */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'code'>;
  readonly latency: Histogram<'method' | 'route' | 'code'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'jobrelay_api_' });
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
  }
}
