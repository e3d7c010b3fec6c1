import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

export interface MetricsSources {
  managedJobs: () => number;
  reconcileQueueLength: () => number;
  placementQueueDepth: () => Promise<Record<string, number>>;
  clusters: () => Array<{ name: string; active: boolean }>;
  workerApiRequests: () => Record<string, number>;
}

/**
 * Prometheus metrics of the controller. Counters are incremented where things happen;
 * gauges are read from their sources at scrape time, so they are never stale.
 */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'result'>;
  readonly placements: Counter<'outcome'>;
  readonly statusWrites: Counter<'result'>;
  readonly mirrorOperations: Counter<'operation'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'jobrelay_controller_' });
    this.reconciles = new Counter({
      name: 'jobrelay_reconciles_total',
      help: 'Origin reconciles (every kind), by result (ok, error).',
      labelNames: ['result'],
      registers,
    });
    this.placements = new Counter({
      name: 'jobrelay_placements_total',
      help: 'Placement decisions, by outcome (placed, unschedulable, not-needed).',
      labelNames: ['outcome'],
      registers,
    });
    this.statusWrites = new Counter({
      name: 'jobrelay_origin_status_writes_total',
      help: 'Origin status writes, by result (written, refused by our validator, conflict); an unchanged status is not written.',
      labelNames: ['result'],
      registers,
    });
    this.mirrorOperations = new Counter({
      name: 'jobrelay_mirror_operations_total',
      help: 'Mirrors created, adopted, or refused because a foreign object holds the name (collision), by operation.',
      labelNames: ['operation'],
      registers,
    });
    new Gauge({
      name: 'jobrelay_managed_jobs',
      help: 'Origins of every kind with our managedBy, as cached.',
      registers,
      collect() {
        this.set(sources.managedJobs());
      },
    });
    new Gauge({
      name: 'jobrelay_reconcile_queue_length',
      help: 'Origins waiting for a reconcile.',
      registers,
      collect() {
        this.set(sources.reconcileQueueLength());
      },
    });
    new Gauge({
      name: 'jobrelay_placement_queue_jobs',
      help: 'Placement tasks in Redis, by state (waiting, active, delayed = waiting for capacity).',
      labelNames: ['state'],
      registers,
      async collect() {
        const depth = await sources.placementQueueDepth().catch(() => ({}));
        for (const [state, count] of Object.entries(depth)) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'jobrelay_worker_cluster_active',
      help: '1 when the WorkerCluster is Active, else 0.',
      labelNames: ['cluster'],
      registers,
      collect() {
        this.reset();
        for (const cluster of sources.clusters()) this.set({ cluster: cluster.name }, cluster.active ? 1 : 0);
      },
    });
    new Gauge({
      name: 'jobrelay_worker_api_requests',
      help: 'API requests sent to each worker cluster since start (rate-limited clients).',
      labelNames: ['cluster'],
      registers,
      collect() {
        for (const [cluster, count] of Object.entries(sources.workerApiRequests()))
          this.set({ cluster }, count);
      },
    });
  }
}
