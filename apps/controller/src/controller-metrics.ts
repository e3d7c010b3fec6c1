import { type WorkerWatchStreams, workerWatchStreamsHelp } from '@jobrelay/clusters';
import { informerRelistsCounter } from '@jobrelay/kube';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricsSources {
  managedJobs: () => number;
  reconcileQueueLength: () => number;
  placementQueueDepth: () => Promise<Record<string, number>>;
  /** Milliseconds the oldest placement task waiting for a worker has waited. */
  placementQueueOldestWaitingMs: () => Promise<number>;
  clusters: () => Array<{ name: string; active: boolean }>;
  /** Whether this replica holds the leader Lease (always, when leader election is off). */
  leader: () => boolean;
  /** Watch streams to workers held now (only the leader watches pods and nodes). */
  workerWatchStreams: () => WorkerWatchStreams;
  /** A new leader waits for its own capacity view before it places. */
  waitingForCapacity: () => boolean;
}

/**
 * Per DispatchQueue, as the leader's last admission cycle found them (gauges), and what cycles did
 * (counters, histograms). Followers run no cycle: their gauges stay empty.
 */
export class QueueMetrics {
  readonly queuePending: Gauge<'queue'>;
  readonly queueAdmitted: Gauge<'queue'>;
  readonly queueUsage: Gauge<'queue' | 'resource'>;
  readonly queueNominalQuota: Gauge<'queue' | 'resource'>;
  readonly queueBorrowed: Gauge<'queue' | 'resource'>;
  readonly queueEvictions: Counter<'queue' | 'reason'>;
  readonly admissionWaitSeconds: Histogram<'queue'>;
  readonly admissionDecisionSeconds: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    const perQueue = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['queue'], registers });
    const perResource = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['queue', 'resource'], registers });
    this.queuePending = perQueue(
      'jobrelay_queue_pending_workloads',
      'Workloads waiting for admission, per DispatchQueue.',
    );
    this.queueAdmitted = perQueue(
      'jobrelay_queue_admitted_workloads',
      'Workloads holding quota (placed, unfinished), per DispatchQueue.',
    );
    this.queueUsage = perResource(
      'jobrelay_queue_usage',
      'What admitted workloads hold, per DispatchQueue and resource (cpu in millicores, memory in bytes, workloads a count).',
    );
    this.queueNominalQuota = perResource(
      'jobrelay_queue_nominal_quota',
      'Nominal quota, per DispatchQueue and resource (units as jobrelay_queue_usage).',
    );
    this.queueBorrowed = perResource(
      'jobrelay_queue_borrowed',
      'Usage above nominal quota, borrowed from the cohort, per DispatchQueue and resource.',
    );
    this.queueEvictions = new Counter({
      name: 'jobrelay_queue_evictions_total',
      help: 'Workloads evicted by admission, per DispatchQueue and reason (InQueuePreemption, ReclaimNominalQuota).',
      labelNames: ['queue', 'reason'],
      registers,
    });
    this.admissionWaitSeconds = new Histogram({
      name: 'jobrelay_queue_admission_wait_seconds',
      help: 'From a workload’s creation (or its last eviction) to its admission, per DispatchQueue.',
      labelNames: ['queue'],
      buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400],
      registers,
    });
    this.admissionDecisionSeconds = new Histogram({
      name: 'jobrelay_admission_decision_seconds',
      help: 'How long one admission decision (decideAdmission over the snapshot) took.',
      // 1-2.5-5 steps: fine enough to read a p50 and p99 from (the benchmark's queues scenario).
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
  }

  /** Queues deleted since the last cycle disappear from the gauges. */
  resetGauges(): void {
    for (const gauge of [
      this.queuePending,
      this.queueAdmitted,
      this.queueUsage,
      this.queueNominalQuota,
      this.queueBorrowed,
    ])
      gauge.reset();
  }
}

/**
 * Prometheus metrics of the controller. Counters are incremented where things happen;
 * gauges are read from their sources at scrape time, so they are never stale.
 */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'result'>;
  readonly reconcileDuration: Histogram<'lane'>;
  readonly resyncOrigins: Counter<'outcome'>;
  readonly plannedActions: Counter<'lane' | 'action'>;
  readonly placements: Counter<'outcome' | 'cluster'>;
  readonly statusWrites: Counter<'result'>;
  readonly mirrorOperations: Counter<'operation'>;
  readonly dispatchLatency: Histogram;
  readonly statusLag: Histogram;
  readonly workerApiRequests: Counter<'cluster' | 'verb' | 'code'>;
  readonly queues: QueueMetrics;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.queues = new QueueMetrics(this.registry);
    collectDefaultMetrics({ register: this.registry, prefix: 'jobrelay_controller_' });
    informerRelistsCounter(registers);
    this.reconciles = new Counter({
      name: 'jobrelay_reconciles_total',
      help: 'Origin reconciles (every kind), by result (ok, error).',
      labelNames: ['result'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'jobrelay_reconcile_duration_seconds',
      help:
        'One origin reconcile, start to end (its API calls included), by the lane its key ran from (urgent, changes, resync). ' +
        'With --reconcile-concurrency, it bounds how fast a backlog of status changes is written back.',
      labelNames: ['lane'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.resyncOrigins = new Counter({
      name: 'jobrelay_resync_origins_total',
      help:
        'Origins the periodic resync went through, by outcome: queued (reconciled from the caches), ' +
        'unchanged (passed over: its last plan found nothing to do, and neither it, its mirrors nor the clusters changed since).',
      labelNames: ['outcome'],
      registers,
    });
    this.plannedActions = new Counter({
      name: 'jobrelay_planned_actions_total',
      help:
        'Actions the reconciles planned, by action type (none: a plan with nothing to do) and the lane the key ' +
        'ran from (urgent: new workloads and mirrors to create; changes: every other event and requeue; resync).',
      labelNames: ['lane', 'action'],
      registers,
    });
    this.placements = new Counter({
      name: 'jobrelay_placements_total',
      help: 'Placement decisions, by outcome (placed, unschedulable, not-needed, queued: left to its queue) and cluster (placed only; "" otherwise).',
      labelNames: ['outcome', 'cluster'],
      registers,
    });
    this.statusWrites = new Counter({
      name: 'jobrelay_origin_status_writes_total',
      help:
        'Origin status writes, by result: written, conflict (retried), refused (by our validator, never sent), ' +
        'rejected (sent and refused by the apiserver: should stay 0). An unchanged status is not written.',
      labelNames: ['result'],
      registers,
    });
    this.dispatchLatency = new Histogram({
      name: 'jobrelay_dispatch_latency_seconds',
      help: 'From a workload’s creation on the management cluster to its first mirror’s creation on a worker.',
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
      registers,
    });
    this.statusLag = new Histogram({
      name: 'jobrelay_status_lag_seconds',
      help: 'From a mirror’s status change seen on its worker to its origin’s status written (coalescing included).',
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.workerApiRequests = new Counter({
      name: 'jobrelay_worker_api_requests_total',
      help: 'Requests to each worker’s apiserver (watches aside), by Kubernetes verb and HTTP status code (0: no answer).',
      labelNames: ['cluster', 'verb', 'code'],
      registers,
    });
    this.mirrorOperations = new Counter({
      name: 'jobrelay_mirror_operations_total',
      help: "Mirror creations by outcome: created, adopted, collision (a foreign object holds the name), refused (by the worker's apiserver), namespace-missing, stale.",
      labelNames: ['operation'],
      registers,
    });
    new Gauge({
      name: 'jobrelay_managed_workloads',
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
      name: 'jobrelay_placement_queue_workloads',
      help: 'Placement tasks in Redis, by state (waiting, active, delayed = waiting for capacity).',
      labelNames: ['state'],
      registers,
      async collect() {
        const depth = await sources.placementQueueDepth().catch(() => ({}));
        for (const [state, count] of Object.entries(depth)) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'jobrelay_placement_queue_oldest_waiting_seconds',
      help: 'How long the oldest placement task waiting for a worker has waited (0: none waits). Growing: placement falls behind.',
      registers,
      async collect() {
        this.set((await sources.placementQueueOldestWaitingMs().catch(() => 0)) / 1000);
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
      name: 'jobrelay_leader',
      help: '1 while this replica holds the leader Lease and reconciles, else 0 (it places only).',
      registers,
      collect() {
        this.set(sources.leader() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'jobrelay_worker_watch_streams',
      help: workerWatchStreamsHelp,
      labelNames: ['resource'],
      registers,
      collect() {
        for (const [resource, count] of Object.entries(sources.workerWatchStreams()))
          this.set({ resource }, count);
      },
    });
    new Gauge({
      name: 'jobrelay_placement_waiting_for_capacity',
      help: '1 while a new leader places nothing because its own pod and node watches of the Active workers have not synced yet, else 0.',
      registers,
      collect() {
        this.set(sources.waitingForCapacity() ? 1 : 0);
      },
    });
  }
}
