import { hostname } from 'node:os';
import { kubeconfigPolicyOf, WorkerClusterRegistry } from '@jobrelay/clusters';
import type { KindChoice, KubeObject } from '@jobrelay/kinds';
import {
  type Clock,
  type ClusterApiClients,
  EventRecorder,
  makeClusterApiClients,
  mergePatch,
  systemClock,
  TimeoutError,
  withTimeout,
} from '@jobrelay/kube';
import { controllerName } from '@jobrelay/mirror';
import type { RecordKeyring } from '@jobrelay/placement';
import { PlacementQueue } from '@jobrelay/placement/queue';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { admissionFunctions } from './admission-functions.ts';
import { waitForCapacityView } from './capacity-view.ts';
import { ClaimedOriginIndex } from './claimed-origin-index.ts';
import type { ControllerConfig } from './controller-config.ts';
import { ControllerEvents, type PartDescription, subscribeParts } from './controller-events.ts';
import { ControllerMetrics } from './controller-metrics.ts';
import { type AnyDispatchedKind, originKey, originKeyNamespace } from './dispatched-kinds.ts';
import { startHealthServer } from './health-server.ts';
import { KeyedWorkQueue } from './keyed-work-queue.ts';
import { LeaderElector } from './leader-election.ts';
import { type ManagementInformers, managementInformers } from './management-informers.ts';
import { MirrorGarbageCollector } from './mirror-garbage-collector.ts';
import { OriginExecutor, type WorkerTarget } from './origin-executor.ts';
import { OriginReconciler } from './origin-reconciler.ts';
import { OriginResync } from './origin-resync.ts';
import { OriginWriteExpectations } from './origin-write-expectations.ts';
import { OriginPlacer } from './place-origin-jobs.ts';
import { QueueAdmission } from './queue-admission.ts';
import { WorkerAdmissionReasons } from './worker-admission-reasons.ts';
import { createdNamespaceLabels, WorkerNamespaceLabels } from './worker-namespace-labels.ts';

export interface DispatchControllerOptions {
  config: ControllerConfig;
  management: KubeConfig;
  originId: string;
  /** The kinds to dispatch, with the managedBy value claimed for each (see kind-selection.ts). */
  kinds: KindChoice[];
  /**
   * The keys placement records are sealed with (Secret jobrelay-record-key): a record is acted
   * on only when sealed by one of them for that very workload.
   */
  recordKeys: RecordKeyring;
  log: Logger;
  clock?: Clock;
  /** This replica's name in the leader election (config.leaderElectionIdentity, resolved). */
  identity: string;
  /**
   * The leader Lease could not be renewed: another replica may be reconciling already, so the
   * process must stop at once (main exits; its Deployment restarts it as a follower).
   */
  onLostLeadership?: () => void;
}

/**
 * Claims the workloads whose spec.managedBy is ours (per kind), places them through the
 * queue, keeps one mirror per workload on its worker and writes the mirror's status back to
 * the origin. Level-triggered: every watch event, on any cluster, only enqueues the origin's
 * key, and one reconcile per key at a time reads a snapshot, plans (pure, @jobrelay/planner)
 * and executes the plan.
 */
export class DispatchController {
  private readonly options: DispatchControllerOptions;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly informers: ManagementInformers;
  private readonly kinds: ReadonlyMap<string, AnyDispatchedKind>;
  private readonly registry: WorkerClusterRegistry;
  private readonly queue: PlacementQueue;
  /** One reconcile per origin key at a time (the reconciler's work queue). */
  private readonly reconciles: KeyedWorkQueue;
  private readonly events: EventRecorder;
  private readonly ownWrites: OriginWriteExpectations;
  private readonly executor: OriginExecutor;
  private readonly reconciler: OriginReconciler;
  private readonly placer: OriginPlacer;
  /** Every origin's placement record read once per version, for placement and admission. */
  private readonly claimed: ClaimedOriginIndex;
  /** Queue admission (issue 30): idle while no DispatchQueue exists. */
  private readonly admission: QueueAdmission;
  private readonly namespaceLabels: WorkerNamespaceLabels;
  private readonly garbage: MirrorGarbageCollector;
  private readonly resync: OriginResync;
  /** Every part with what it watches and writes, as subscribed (logged at start). */
  readonly parts: PartDescription[];
  private timers: NodeJS.Timeout[] = [];
  readonly metrics: ControllerMetrics;
  private ready = false;
  /** Reconciling, collecting garbage and writing WorkerCluster status: the leader's work. */
  private leading = false;
  /**
   * Leading, and its own capacity view synced (issue 31): placement and admission decide only
   * now. A follower watches no pods or nodes, so a new leader's view starts empty.
   */
  private placing = false;
  /** Since when a new leader has waited for its capacity watches to sync (undefined: not waiting). */
  private waitingForCapacitySince: number | undefined;
  private stopping = false;
  private readonly elector: LeaderElector | undefined;
  private closeHealthServer: (() => Promise<void>) | undefined;

  /**
   * The wiring: caches first (they only emit on the hub), then the parts, each built from what
   * it reads; then each part subscribes to what it declares it watches (`subscribeParts`).
   * Every part's options are built in its own method below.
   */
  constructor(options: DispatchControllerOptions) {
    this.options = options;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    const { management, log } = options;
    const managementApis = makeClusterApiClients(management, { qps: 200, burst: 400 });
    const hub = new ControllerEvents();
    this.informers = managementInformers({ ...options, managementApis, events: hub });
    this.kinds = this.informers.kinds;
    this.events = new EventRecorder(managementApis.events, {
      controller: controllerName,
      instance: `${hostname()}-${process.pid}`,
      log,
      clock: this.clock,
    });
    this.reconciles = this.originWorkQueue();
    this.registry = this.workerRegistry(hub);
    this.queue = new PlacementQueue({
      redisUrl: options.config.redisUrl,
      queueName: `jobrelay-placement-${options.originId}`,
      concurrency: options.config.placementConcurrency,
      now: () => this.clock.now(),
      log,
    });
    this.metrics = this.controllerMetrics();
    this.ownWrites = new OriginWriteExpectations({
      origins: (kind) => this.kinds.get(kind)?.origins,
      clock: this.clock,
      enqueue: (key, at) => this.enqueueReconcile(key, at),
      leading: () => this.leading,
      statusCoalesceMs: options.config.statusCoalesceMs,
      statusLag: (seconds) => this.metrics.statusLag.observe(seconds),
    });
    this.executor = this.originExecutor();
    this.claimed = new ClaimedOriginIndex(options);
    this.placer = this.originPlacer();
    this.reconciler = this.originReconciler();
    this.admission = this.queueAdmission(managementApis);
    this.namespaceLabels = new WorkerNamespaceLabels({
      originId: options.originId,
      management: this.informers.namespaces,
      connections: () => this.registry.connections(),
      connection: (cluster) => this.registry.get(cluster),
      leading: () => this.leading,
      clock: this.clock,
      log,
    });
    this.resync = new OriginResync({
      kinds: this.kinds,
      reconciler: this.reconciler,
      reconciles: this.reconciles,
      counted: this.metrics.resyncOrigins,
    });
    this.garbage = new MirrorGarbageCollector({
      ...options,
      kinds: this.kinds,
      registry: this.registry,
      ownWrites: this.ownWrites,
    });
    // The order every event reaches the parts in (the index's `claimedOrigin` within `origin`).
    this.parts = subscribeParts(hub, [
      this.claimed,
      this.placer,
      this.admission,
      this.reconciler,
      this.namespaceLabels,
      this.resync,
    ]);
    this.elector = this.leaderElector();
  }

  /** Ask for a reconcile of `key`: `first` ahead of status syncs, `afterMs` a while later. */
  private enqueueReconcile(
    key: string,
    { first = false, afterMs }: { first?: boolean; afterMs?: number } = {},
  ): void {
    if (afterMs !== undefined) this.reconciles.addAfter(key, afterMs);
    else this.reconciles.add(key, first);
  }

  private originWorkQueue(): KeyedWorkQueue {
    return new KeyedWorkQueue({
      name: 'origins',
      concurrency: this.options.config.reconcileConcurrency,
      // Nothing is reconciled until start() has synced every cache: a reconcile that ran
      // before the WorkerClusters were listed would take every placement for a cluster
      // that "no longer exists" and move the workload.
      startPaused: true,
      log: this.log,
      clock: this.clock,
      // Namespaces take turns in the queue as at placement: a team's backlog of new workloads
      // (or of their status changes) does not hold another team's behind it.
      turnOf: originKeyNamespace,
      reconcile: async (key, lane) => {
        const timed = this.metrics.reconcileDuration.startTimer({ lane });
        try {
          const result = await this.reconciler.reconcile(key, lane);
          this.metrics.reconciles.inc({ result: 'ok' });
          return result;
        } catch (err) {
          this.metrics.reconciles.inc({ result: 'error' });
          throw err;
        } finally {
          timed();
        }
      },
    });
  }

  private workerRegistry(hub: ControllerEvents): WorkerClusterRegistry {
    const { config, management, originId, kinds } = this.options;
    return new WorkerClusterRegistry({
      management,
      systemNamespace: config.systemNamespace,
      originId,
      kinds: kinds.map((choice) => choice.adapter),
      clock: this.clock,
      log: this.log,
      healthIntervalMs: config.clusterHealthIntervalSeconds * 1000,
      reconnectMaxBackoffMs: config.clusterReconnectMaxSeconds * 1000,
      clientRateLimit: { qps: config.workerQps, burst: config.workerBurst },
      kubeconfigPolicy: kubeconfigPolicyOf(config),
      leading: () => this.leading,
      onWorkerApiResponse: (cluster, verb, code) =>
        this.metrics.workerApiRequests.inc({ cluster, verb, code: String(code) }),
      onMirrorEvent: (cluster, kind, event) => hub.emit('mirror', cluster, kind, event),
      onAvailabilityChange: () => hub.emit('workerAvailability'),
      onCapacityChange: () => hub.emit('workerCapacity'),
      onNamespaceEvent: (cluster, event) => {
        const name = event.object.metadata?.name;
        if (name) hub.emit('workerNamespace', cluster, name);
      },
      beforeActive: (connection) => this.garbage.deleteStaleMirrorsOn(connection),
      assumedRequests: (cluster) => this.placer.loadByCluster().get(cluster)?.assumed ?? {},
    });
  }

  private controllerMetrics(): ControllerMetrics {
    return new ControllerMetrics({
      managedJobs: () => this.managedCount(),
      reconcileQueueLength: () => this.reconciles.length,
      placementQueueDepth: () => this.queue.depth(),
      placementQueueOldestWaitingMs: () => this.queue.oldestWaitingMs(this.clock.now()),
      clusters: () => this.registry.clusters().map((c) => ({ name: c.name, active: c.state.active })),
      leader: () => this.leading,
      workerWatchStreams: () => this.registry.watchStreams(),
      waitingForCapacity: () => this.waitingForCapacitySince !== undefined,
    });
  }

  private originExecutor(): OriginExecutor {
    const { config, originId, recordKeys } = this.options;
    return new OriginExecutor({
      originId,
      recordDispatchEvents: config.recordDispatchEvents,
      createNamespaces: config.createNamespaces,
      recordKeys,
      namespaceLabels: (namespace) => {
        const here = this.informers.namespaces.get(namespace);
        return here ? createdNamespaceLabels(originId, here.metadata?.labels) : undefined;
      },
      events: this.events,
      queue: {
        // A workload its queue already holds needs no placement task: each of its events (its
        // own waiting reason among them) would run one that only says so again.
        enqueue: async (task) => {
          if (this.admission.holds(task.uid)) return;
          await this.queue.enqueue(task);
        },
      },
      forgetOrigin: (uid) => {
        this.placer.forgetOrigin(uid);
        this.queue.forget(uid);
      },
      metrics: this.metrics,
      writes: this.ownWrites,
      log: this.log,
    });
  }

  private originPlacer(): OriginPlacer {
    const { config, recordKeys } = this.options;
    return new OriginPlacer({
      kinds: this.kinds,
      registry: this.registry,
      queue: this.queue,
      executor: this.executor,
      leading: () => this.leading,
      recordKeys,
      config,
      namespaces: this.informers.namespaces,
      clock: this.clock,
      log: this.log,
      // Its reconcile runs ahead of status syncs and plans from the version written (a
      // placement's mirror is created at once): the executor noted the write (ownWrites).
      originWritten: (key) => this.enqueueReconcile(key, { first: true }),
      newestOrigin: (key, cached) => this.ownWrites.newestOrigin(key, cached),
      placedOn: (cluster) => this.metrics.placements.inc({ outcome: 'placed', cluster }),
      // A queued workload waits for its queue's admission, which places it.
      admissionGate: (kind, origin) => this.admission.isQueued(this.kinds.get(kind.adapter.name)!, origin),
    });
  }

  private originReconciler(): OriginReconciler {
    const { config, originId, recordKeys } = this.options;
    // A held mirror's reason, in the worker's Kueue's own words: one LIST of its Workloads
    // through the worker's own client (its rate limit, its timeouts), never awaited.
    const workerAdmission = new WorkerAdmissionReasons({
      listWorkloads: (cluster, { version, namespace, labelSelector }) =>
        this.registry.get(cluster)?.clients.custom.listNamespacedCustomObject({
          group: 'kueue.x-k8s.io',
          version,
          namespace,
          plural: 'workloads',
          labelSelector,
        }),
      clock: this.clock,
      enqueue: (key, at) => this.enqueueReconcile(key, at),
      log: this.log,
    });
    return new OriginReconciler({
      kinds: this.kinds,
      clusters: (kind) => this.registry.mirrorCaches(kind),
      worker: (cluster, kind) => this.workerTarget(cluster, kind),
      executor: this.executor,
      fencesAgainst: (kind, origin, record, cluster) =>
        this.placer.fencesAgainst(kind, origin, record, cluster),
      plannerConfig: {
        originId,
        workerLostTimeoutMs: config.workerLostTimeoutSeconds * 1000,
        mirrorRetentionMs: config.mirrorRetentionSeconds * 1000,
        recordDispatchEvents: config.recordDispatchEvents,
        mirrorRefusalLimit: config.mirrorRefusalLimit,
      },
      recordKeys,
      clock: this.clock,
      enqueue: (key, at) => this.enqueueReconcile(key, at),
      ownWrites: this.ownWrites,
      workerAdmission,
      // Every origin is planned again at least every ten resyncs (5 minutes by default).
      replanUnchangedAfterMs: config.resyncIntervalSeconds * 1000 * 10,
      planned: (actionTypes, lane = 'changes') => {
        if (actionTypes.length === 0) this.metrics.plannedActions.inc({ lane, action: 'none' });
        for (const action of new Set(actionTypes)) this.metrics.plannedActions.inc({ lane, action });
      },
    });
  }

  private queueAdmission(managementApis: ClusterApiClients): QueueAdmission {
    return new QueueAdmission({
      kinds: this.kinds,
      claimed: this.claimed,
      // Its queue let go of it: its reconcile enqueues its placement again.
      released: (kindName, key) => this.reconciles.add(originKey(kindName, key)),
      placer: this.placer,
      queues: this.informers.dispatchQueues,
      priorityClasses: this.informers.priorityLookup,
      namespaces: this.informers.namespaces,
      functions: admissionFunctions,
      writeQueueStatus: async (name, status) => {
        await managementApis.custom.patchClusterCustomObjectStatus(
          { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues', name, body: { status } },
          mergePatch,
        );
      },
      // Admitting places: not before this replica's capacity view is synced.
      leading: () => this.placing,
      recordKeys: this.options.recordKeys,
      clock: this.clock,
      log: this.log,
      metrics: this.metrics.queues,
    });
  }

  private leaderElector(): LeaderElector | undefined {
    const { config, management, identity } = this.options;
    if (!config.leaderElect) return undefined;
    return new LeaderElector({
      kubeConfig: management,
      namespace: config.systemNamespace,
      name: config.leaderElectionLeaseName,
      identity,
      timings: {
        leaseDurationMs: config.leaseDurationSeconds * 1000,
        renewDeadlineMs: config.renewDeadlineSeconds * 1000,
        retryPeriodMs: config.retryPeriodSeconds * 1000,
      },
      clock: this.clock,
      log: this.log,
      onStartedLeading: () => this.lead(),
      onLostLeadership: () => {
        // Stop reconciling now; the process exits (onLostLeadership) before anyone else may lead.
        this.leading = false;
        this.placing = false;
        this.reconciles.stop();
        this.registry.leadershipChanged();
        this.options.onLostLeadership?.();
      },
    });
  }

  async start(): Promise<void> {
    const { config } = this.options;
    // Up first, so a liveness probe sees the process while caches sync; ready only at the end.
    const health = await startHealthServer({
      address: config.healthAddress,
      ready: () => this.ready,
      metrics: this.metrics.registry,
    });
    this.closeHealthServer = health.close;
    this.log.info({ url: health.url }, 'serving /healthz, /readyz and /metrics');
    await this.queue.waitUntilReady();
    // Origins first: a worker is only activated after its stale mirrors, judged against
    // the origins, are gone.
    for (const informer of this.informers.all()) informer.start();
    await this.registry.start();
    await Promise.all([...this.kinds.values()].map((kind) => kind.origins.waitForSync()));
    await this.informers.namespaces.waitForSync();
    await this.informers.waitForQueueRules(this.log);
    this.admission.factsChanged();
    // Mirror caches must be complete before anything is created or collected.
    await Promise.all(
      this.registry
        .connections()
        .flatMap((c) => [
          ...[...this.kinds.keys()].map((kind) => c.mirrors(kind)?.waitForSync()),
          c.namespaces.waitForSync(),
        ]),
    );
    // Ready with warm caches, leading or not: a follower takes over without relisting.
    this.ready = true;
    this.log.info({ parts: this.parts }, 'controller parts: what each watches and writes');
    if (this.elector) {
      this.log.info(
        {
          identity: this.options.identity,
          lease: `${config.systemNamespace}/${config.leaderElectionLeaseName}`,
        },
        'waiting for the leader lease',
      );
      this.elector.start();
    } else await this.lead();
  }

  /** The leader's work starts: once, when this replica holds the Lease (or at once without election). */
  private async lead(): Promise<void> {
    const { config } = this.options;
    if (this.stopping) return;
    this.leading = true;
    // Only the leader watches the workers' pods and nodes (issue 31): its watches start now, so
    // they list while the steps below run. The registry's health checks would start them too,
    // a health interval later.
    this.registry.leadershipChanged();
    // What this replica saw of failing workers while it followed may be old (their checks back
    // off): look again before any of it moves a Job.
    await this.registry
      .recheckInactive()
      .catch((err: unknown) =>
        this.log.warn({ err }, 'checking the inactive clusters on taking the lead failed'),
      );
    if (this.stopping) return;
    // Clusters this replica activated while following skipped their cleanup (followers do not
    // write): one garbage collection, before anything is reconciled, removes stale mirrors there.
    await this.garbage.collectGarbage();
    if (this.stopping) return;
    await waitForCapacityView({
      registry: this.registry,
      clock: this.clock,
      log: this.log,
      stopping: () => this.stopping,
      waiting: (since) => {
        this.waitingForCapacitySince = since;
      },
    });
    if (this.stopping) return;
    // Followers do not write: the clusters' Active condition and capacity as found meanwhile
    // go into their status now, not at the next health check.
    await this.registry
      .writeEveryStatus()
      .catch((err: unknown) =>
        this.log.warn({ err }, 'writing the clusters’ status on taking the lead failed'),
      );
    this.resync.reconcileEveryOrigin({ all: true });
    this.reconciles.resume();
    this.placing = true;
    // Admissions decided while following were not this replica's to make: one cycle now.
    this.admission.factsChanged();
    // Only the leader places: placing writes the origin (its record, the reason it waits, a
    // gave-up status), and only the leader writes. Tasks queued meanwhile waited in Redis.
    this.queue.startWorker(async (task, attempts) => {
      const outcome = await this.placer.place(task, attempts);
      // Placed ones are counted with their cluster by the placer (placedOn).
      if (outcome !== 'placed') this.metrics.placements.inc({ outcome, cluster: '' });
      return outcome;
    });
    this.namespaceLabels.start();
    this.timers.push(
      // Level-triggered backstop: a lost Redis, a missed event or a dead placement task
      // is repaired within one resync.
      setInterval(() => {
        this.resync.reconcileEveryOrigin();
        this.namespaceLabels.reconcileEvery();
      }, config.resyncIntervalSeconds * 1000),
      setInterval(() => void this.garbage.collectGarbage(), config.garbageCollectionIntervalSeconds * 1000),
      // What an operator asks first: how much is managed, waiting, and what it costs the workers.
      setInterval(() => void this.logSummary(), 60_000),
    );
    this.log.info(
      {
        kinds: Object.fromEntries([...this.kinds.values()].map((k) => [k.adapter.name, k.managedBy])),
        originId: this.options.originId,
        origins: this.managedCount(),
      },
      'leading: reconciling',
    );
  }

  /**
   * Graceful stop (SIGTERM): takes no new work, lets in-flight reconciles and placements finish
   * (an unfinished placement task goes back to the queue for another replica once its lock
   * lapses), then frees the leader Lease so a follower takes over at its next attempt, not
   * after the lease duration. Resolves false when `timeoutMs` passed first; the caller exits
   * anyway, and what did not finish is redone by whoever leads next (every step is idempotent).
   */
  async stop(timeoutMs = 20_000): Promise<boolean> {
    this.stopping = true;
    this.ready = false;
    for (const timer of this.timers) clearInterval(timer);
    this.placer.stop();
    this.admission.stop();
    this.reconciles.stop();
    this.namespaceLabels.stop();
    const finished = await withTimeout(
      Promise.all([this.reconciles.whenIdle(), this.queue.close()]),
      timeoutMs,
      'in-flight work',
    ).then(
      () => true,
      (err: unknown) => {
        if (!(err instanceof TimeoutError)) throw err;
        this.log.warn({ timeoutMs }, 'in-flight work did not finish in time; stopping anyway');
        return false;
      },
    );
    this.leading = false;
    this.placing = false;
    await this.elector?.release();
    for (const informer of this.informers.all()) await informer.stop();
    await this.registry.stop();
    await this.closeHealthServer?.();
    return finished;
  }

  private managedCount(): number {
    let count = 0;
    for (const kind of this.kinds.values()) count += kind.origins.list().length;
    return count;
  }

  // ---------------------------------------------------------------------------------------
  // Reconcile one origin: snapshot -> plan -> execute (OriginReconciler), through these clients.

  private workerTarget(cluster: string, kindName: string): WorkerTarget<KubeObject> | undefined {
    const connection = this.registry.get(cluster);
    const kind = this.kinds.get(kindName);
    if (!connection || !kind) return undefined;
    return { client: kind.adapter.client(connection.clients), core: connection.clients.core };
  }

  private async logSummary(): Promise<void> {
    const depth = await this.queue.depth().catch(() => undefined);
    this.log.info(
      {
        origins: Object.fromEntries(
          [...this.kinds.values()].map((k) => [k.adapter.name, k.origins.list().length]),
        ),
        reconcileQueue: this.reconciles.length,
        placementQueue: depth,
        clusters: Object.fromEntries(this.registry.clusters().map((c) => [c.name, c.state.reason])),
        workerApiRequests: this.registry.requestCounts(),
      },
      'summary',
    );
  }
}
