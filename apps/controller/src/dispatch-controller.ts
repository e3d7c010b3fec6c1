import { hostname } from 'node:os';
import { CachedPriorityClasses } from '@jobrelay/admission';
import {
  kubeconfigPolicyOf,
  type Namespace,
  namespaceInformer,
  WorkerClusterRegistry,
  type WorkerConnection,
} from '@jobrelay/clusters';
import { apiVersionOf, collectionPath, type KindChoice, type KubeObject } from '@jobrelay/kinds';
import {
  type Clock,
  EventRecorder,
  makeClusterApiClients,
  mergePatch,
  objectKey,
  ResilientInformer,
  systemClock,
  TimeoutError,
  withTimeout,
} from '@jobrelay/kube';
import { controllerName } from '@jobrelay/mirror';
import { placementRecordOf, type RecordKeyring } from '@jobrelay/placement';
import { PlacementQueue } from '@jobrelay/placement/queue';
import { classifyMirror, isDeletable, type PlannerConfig } from '@jobrelay/planner';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { admissionFunctions } from './admission-functions.ts';
import type { ControllerConfig } from './controller-config.ts';
import { ControllerMetrics } from './controller-metrics.ts';
import { type AnyDispatchedKind, originKey, originKeyNamespace } from './dispatched-kinds.ts';
import { startHealthServer } from './health-server.ts';
import { KeyedWorkQueue } from './keyed-work-queue.ts';
import { LeaderElector } from './leader-election.ts';
import { deleteMirror } from './mirror-operations.ts';
import { OriginExecutor, type WorkerTarget } from './origin-executor.ts';
import { OriginReconciler } from './origin-reconciler.ts';
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
  private readonly kinds = new Map<string, AnyDispatchedKind>();
  private readonly registry: WorkerClusterRegistry;
  private readonly queue: PlacementQueue;
  private readonly reconciles: KeyedWorkQueue;
  private readonly events: EventRecorder;
  private readonly placer: OriginPlacer;
  private readonly executor: OriginExecutor;
  private readonly plannerConfig: PlannerConfig;
  /** The management cluster's namespaces (their labels): Pod Security levels, for placement and for workers. */
  private readonly namespaces: ResilientInformer<Namespace>;
  private readonly namespaceLabels: WorkerNamespaceLabels;
  /** One origin's reconcile and the bookkeeping of the controller's own writes (see OriginReconciler). */
  private readonly reconciler: OriginReconciler;
  /** DispatchQueues (cluster-scoped custom objects), raw: admission parses each. */
  private readonly dispatchQueues: ResilientInformer<KubeObject>;
  /** PriorityClasses: a workload's priority in its queue. */
  private readonly priorityClasses: ResilientInformer<KubeObject>;
  private readonly priorityLookup: CachedPriorityClasses;
  /** Queue admission (issue 30): idle while no DispatchQueue exists. */
  private readonly admission: QueueAdmission;
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

  constructor(options: DispatchControllerOptions) {
    this.options = options;
    const { config, management, log } = options;
    this.log = log;
    this.clock = options.clock ?? systemClock;
    this.plannerConfig = {
      originId: options.originId,
      workerLostTimeoutMs: config.workerLostTimeoutSeconds * 1000,
      mirrorRetentionMs: config.mirrorRetentionSeconds * 1000,
      recordDispatchEvents: config.recordDispatchEvents,
      mirrorRefusalLimit: config.mirrorRefusalLimit,
    };
    const managementApis = makeClusterApiClients(management, { qps: 200, burst: 400 });
    this.events = new EventRecorder(managementApis.events, {
      controller: controllerName,
      instance: `${hostname()}-${process.pid}`,
      log,
      clock: this.clock,
    });
    this.reconciles = new KeyedWorkQueue({
      name: 'origins',
      concurrency: config.reconcileConcurrency,
      // Nothing is reconciled until start() has synced every cache: a reconcile that ran
      // before the WorkerClusters were listed would take every placement for a cluster
      // that "no longer exists" and move the workload.
      startPaused: true,
      log,
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
    const namespace = config.namespaces.length === 1 ? config.namespaces[0] : undefined;
    for (const { adapter, managedBy } of options.kinds) {
      const { resource } = adapter;
      const origins = new ResilientInformer<KubeObject>({
        name: `origin ${resource.kind}s`,
        kubeConfig: management,
        apiVersion: apiVersionOf(resource),
        kind: resource.kind,
        path: collectionPath(resource, namespace),
        // There is no field selector for managedBy: drop everyone else's objects on arrival.
        keep: (object) =>
          adapter.isManagedBy(object, managedBy) &&
          (config.namespaces.length === 0 || config.namespaces.includes(object.metadata?.namespace ?? '')),
        log,
        onEvent: (event) => {
          this.placer.observe(this.kinds.get(adapter.name)!, event);
          this.admission.observe(this.kinds.get(adapter.name)!, event);
          this.reconciler.originEvent(originKey(adapter.name, objectKey(event.object)), event);
        },
      });
      this.kinds.set(adapter.name, {
        adapter,
        managedBy,
        origins,
        management: adapter.client(managementApis),
      });
    }
    this.namespaces = namespaceInformer({
      name: 'management namespaces',
      kubeConfig: management,
      log,
      onEvent: (event) => {
        const name = event.object.metadata?.name;
        if (!name) return;
        // A level raised or lowered here: worker namespaces jobrelay manages follow, and
        // workloads waiting on a weaker namespace there, or on this one, get another look.
        this.namespaceLabels.managementNamespaceChanged(name);
        this.placer.retryWaitingPlacementsSoon();
        // Its labels select queues: the queue of every workload there may change.
        this.admission.factsChanged();
      },
    });
    this.registry = new WorkerClusterRegistry({
      management,
      systemNamespace: config.systemNamespace,
      originId: options.originId,
      kinds: options.kinds.map((choice) => choice.adapter),
      clock: this.clock,
      log,
      healthIntervalMs: config.clusterHealthIntervalSeconds * 1000,
      reconnectMaxBackoffMs: config.clusterReconnectMaxSeconds * 1000,
      clientRateLimit: { qps: config.workerQps, burst: config.workerBurst },
      kubeconfigPolicy: kubeconfigPolicyOf(config),
      leading: () => this.leading,
      onWorkerApiResponse: (cluster, verb, code) =>
        this.metrics.workerApiRequests.inc({ cluster, verb, code: String(code) }),
      onMirrorEvent: (cluster, kind, event) => {
        this.admission.observeMirror(cluster, kind, event);
        this.reconciler.mirrorEvent(cluster, kind, event, objectKey(event.object));
      },
      onAvailabilityChange: () => {
        // A cluster joined, left, or was (un)cordoned: waiting workloads get another look now.
        this.placer.retryWaitingPlacementsSoon();
        this.admission.capacityChanged();
        this.reconcileEveryOrigin({ all: true });
      },
      onCapacityChange: () => {
        this.placer.retryWaitingPlacementsSoon();
        this.admission.capacityChanged();
      },
      onNamespaceEvent: (cluster, event) => {
        const name = event.object.metadata?.name;
        if (name) this.namespaceLabels.workerNamespaceChanged(cluster, name);
        this.placer.retryWaitingPlacementsSoon();
      },
      beforeActive: (connection) => this.deleteStaleMirrorsOn(connection),
      assumedRequests: (cluster) => this.placer.loadByCluster().get(cluster)?.assumed ?? {},
    });
    this.queue = new PlacementQueue({
      redisUrl: config.redisUrl,
      queueName: `jobrelay-placement-${options.originId}`,
      concurrency: config.placementConcurrency,
      now: () => this.clock.now(),
      log,
    });
    this.metrics = new ControllerMetrics({
      managedJobs: () => this.managedCount(),
      reconcileQueueLength: () => this.reconciles.length,
      placementQueueDepth: () => this.queue.depth(),
      placementQueueOldestWaitingMs: () => this.queue.oldestWaitingMs(this.clock.now()),
      clusters: () => this.registry.clusters().map((c) => ({ name: c.name, active: c.state.active })),
      leader: () => this.leading,
      workerWatchStreams: () => this.registry.watchStreams(),
      waitingForCapacity: () => this.waitingForCapacitySince !== undefined,
    });
    this.executor = new OriginExecutor({
      originId: options.originId,
      recordDispatchEvents: config.recordDispatchEvents,
      createNamespaces: config.createNamespaces,
      recordKeys: options.recordKeys,
      namespaceLabels: (namespace) => {
        const here = this.namespaces.get(namespace);
        return here ? createdNamespaceLabels(options.originId, here.metadata?.labels) : undefined;
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
      mirrorCreating: (kind, cluster, body) => this.reconciler.mirrorCreating(kind, cluster, objectKey(body)),
      mirrorCreated: (kind, cluster, mirror) =>
        this.reconciler.mirrorCreated(kind, cluster, mirror, objectKey(mirror)),
      metrics: this.metrics,
      originWriting: (kind, origin) => this.reconciler.originWriting(kind, objectKey(origin)),
      originUnwritten: (kind, origin) => this.reconciler.originUnwritten(kind, objectKey(origin)),
      originWritten: (kind, origin, over) =>
        this.reconciler.originWritten(kind, origin, objectKey(origin), over.metadata?.resourceVersion),
      statusWritten: (kind, origin) => this.reconciler.statusWritten(kind, objectKey(origin)),
      log,
    });
    const enqueueReconcile = (
      key: string,
      { first = false, afterMs }: { first?: boolean; afterMs?: number } = {},
    ) => {
      if (afterMs !== undefined) this.reconciles.addAfter(key, afterMs);
      else this.reconciles.add(key, first);
    };
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
      enqueue: enqueueReconcile,
      log,
    });
    this.reconciler = new OriginReconciler({
      kinds: this.kinds,
      clusters: (kind) => this.registry.mirrorCaches(kind),
      worker: (cluster, kind) => this.workerTarget(cluster, kind),
      executor: this.executor,
      fencesAgainst: (kind, origin, record, cluster) =>
        this.placer.fencesAgainst(kind, origin, record, cluster),
      plannerConfig: this.plannerConfig,
      recordKeys: options.recordKeys,
      clock: this.clock,
      enqueue: enqueueReconcile,
      leading: () => this.leading,
      statusCoalesceMs: config.statusCoalesceMs,
      statusLag: (seconds) => this.metrics.statusLag.observe(seconds),
      workerAdmission,
      // Every origin is planned again at least every ten resyncs (5 minutes by default).
      replanUnchangedAfterMs: config.resyncIntervalSeconds * 1000 * 10,
      planned: (actionTypes, lane = 'changes') => {
        if (actionTypes.length === 0) this.metrics.plannedActions.inc({ lane, action: 'none' });
        for (const action of new Set(actionTypes)) this.metrics.plannedActions.inc({ lane, action });
      },
    });
    this.placer = new OriginPlacer({
      kinds: this.kinds,
      registry: this.registry,
      queue: this.queue,
      executor: this.executor,
      leading: () => this.leading,
      recordKeys: options.recordKeys,
      config,
      namespaces: this.namespaces,
      clock: this.clock,
      log,
      // Its reconcile runs ahead of status syncs and plans from the version written (a
      // placement's mirror is created at once): the executor noted the write (originWritten).
      originWritten: (key) => this.reconciler.placerWrote(key),
      newestOrigin: (key, cached) => this.reconciler.newestOrigin(key, cached),
      placedOn: (cluster) => this.metrics.placements.inc({ outcome: 'placed', cluster }),
      // A queued workload waits for its queue's admission, which places it.
      admissionGate: (kind, origin) => this.admission.isQueued(this.kinds.get(kind.adapter.name)!, origin),
    });
    this.dispatchQueues = new ResilientInformer<KubeObject>({
      name: 'dispatch queues',
      kubeConfig: management,
      apiVersion: 'jobrelay.dev/v1alpha1',
      kind: 'DispatchQueue',
      path: '/apis/jobrelay.dev/v1alpha1/dispatchqueues',
      log,
      // Its own status writes (every few seconds while admitting) change nothing admission reads.
      onEvent: (event) => {
        if (
          event.type === 'upsert' &&
          event.previous?.metadata?.generation === event.object.metadata?.generation
        )
          return;
        this.admission.factsChanged();
      },
    });
    this.priorityClasses = new ResilientInformer<KubeObject>({
      name: 'priority classes',
      kubeConfig: management,
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      path: '/apis/scheduling.k8s.io/v1/priorityclasses',
      log,
      onEvent: () => {
        this.priorityLookup.changed();
        this.admission.factsChanged();
      },
    });
    this.priorityLookup = new CachedPriorityClasses(() => this.priorityClasses.list());
    this.admission = new QueueAdmission({
      kinds: this.kinds,
      // Its queue let go of it: its reconcile enqueues its placement again.
      released: (kindName, key) => this.reconciles.add(originKey(kindName, key)),
      placer: this.placer,
      queues: this.dispatchQueues,
      priorityClasses: this.priorityLookup,
      namespaces: this.namespaces,
      functions: admissionFunctions,
      writeQueueStatus: async (name, status) => {
        await managementApis.custom.patchClusterCustomObjectStatus(
          {
            group: 'jobrelay.dev',
            version: 'v1alpha1',
            plural: 'dispatchqueues',
            name,
            body: { status },
          },
          mergePatch,
        );
      },
      // Admitting places: not before this replica's capacity view is synced.
      leading: () => this.placing,
      recordKeys: options.recordKeys,
      clock: this.clock,
      log,
      metrics: this.metrics.queues,
    });
    this.namespaceLabels = new WorkerNamespaceLabels({
      originId: options.originId,
      management: this.namespaces,
      connections: () => this.registry.connections(),
      connection: (cluster) => this.registry.get(cluster),
      leading: () => this.leading,
      clock: this.clock,
      log,
    });
    this.elector = config.leaderElect
      ? new LeaderElector({
          kubeConfig: management,
          namespace: config.systemNamespace,
          name: config.leaderElectionLeaseName,
          identity: options.identity,
          timings: {
            leaseDurationMs: config.leaseDurationSeconds * 1000,
            renewDeadlineMs: config.renewDeadlineSeconds * 1000,
            retryPeriodMs: config.retryPeriodSeconds * 1000,
          },
          clock: this.clock,
          log,
          onStartedLeading: () => this.lead(),
          onLostLeadership: () => {
            // Stop reconciling now; the process exits (onLostLeadership) before anyone else may lead.
            this.leading = false;
            this.placing = false;
            this.reconciles.stop();
            this.registry.leadershipChanged();
            options.onLostLeadership?.();
          },
        })
      : undefined;
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
    for (const kind of this.kinds.values()) kind.origins.start();
    this.namespaces.start();
    this.dispatchQueues.start();
    this.priorityClasses.start();
    await this.registry.start();
    await Promise.all([...this.kinds.values()].map((kind) => kind.origins.waitForSync()));
    await this.namespaces.waitForSync();
    await this.waitForQueueCaches();
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
    await this.collectGarbage();
    if (this.stopping) return;
    await this.waitForCapacityView();
    if (this.stopping) return;
    // Followers do not write: the clusters' Active condition and capacity as found meanwhile
    // go into their status now, not at the next health check.
    await this.registry
      .writeEveryStatus()
      .catch((err: unknown) =>
        this.log.warn({ err }, 'writing the clusters’ status on taking the lead failed'),
      );
    this.reconcileEveryOrigin({ all: true });
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
        this.reconcileEveryOrigin();
        this.namespaceLabels.reconcileEvery();
      }, config.resyncIntervalSeconds * 1000),
      setInterval(() => void this.collectGarbage(), config.garbageCollectionIntervalSeconds * 1000),
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
   * Waits until this replica's own pod and node watches have synced for every Active worker: a
   * new leader places nothing before. The capacity a follower read (published by the old leader)
   * may be stale, and a cluster whose capacity is "not known yet" is no candidate, so deciding
   * early would send every workload to the clusters listed first. Bounded: a worker whose pods
   * cannot be listed (the watch keeps failing) stays "not known" and gets nothing until it can.
   */
  private async waitForCapacityView(): Promise<void> {
    // A list of 10,000 pods takes a few seconds; a minute means the watch is failing.
    const limitMs = 60_000;
    const started = this.clock.now();
    let pending = this.registry.capacityNotSynced();
    if (pending.length === 0) {
      this.log.info({ waitedMs: 0 }, 'capacity of every Active worker synced: placing');
      return;
    }
    this.waitingForCapacitySince = started;
    this.log.info(
      { clusters: pending },
      'waiting for the capacity watches of Active workers to sync before placing',
    );
    while (pending.length > 0 && !this.stopping && this.clock.now() - started < limitMs) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pending = this.registry.capacityNotSynced();
    }
    this.waitingForCapacitySince = undefined;
    const waitedMs = this.clock.now() - started;
    if (pending.length === 0) this.log.info({ waitedMs }, 'capacity of every Active worker synced: placing');
    else
      this.log.warn(
        { waitedMs, clusters: pending },
        'capacity watches still not synced: placing, with nothing placed on these clusters until they are',
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
    await Promise.all([...this.kinds.values()].map((kind) => kind.origins.stop()));
    await this.namespaces.stop();
    await this.dispatchQueues.stop();
    await this.priorityClasses.stop();
    await this.registry.stop();
    await this.closeHealthServer?.();
    return finished;
  }

  /**
   * DispatchQueues and PriorityClasses listed before anything is placed, so a queued workload is
   * never placed as unqueued. Where the DispatchQueue CRD is not installed the list keeps failing
   * (the informer retries): after a bounded wait the controller goes on without queues, and
   * admission starts whenever queues appear.
   */
  private async waitForQueueCaches(): Promise<void> {
    const waitMs = 15_000;
    for (const informer of [this.dispatchQueues, this.priorityClasses]) {
      await withTimeout(informer.waitForSync(), waitMs, 'queue caches').catch((err: unknown) => {
        if (!(err instanceof TimeoutError)) throw err;
        this.log.warn(
          { waitMs },
          'DispatchQueues or PriorityClasses could not be listed (is the DispatchQueue CRD installed?); going on without queue admission until they are',
        );
      });
    }
    this.admission.factsChanged();
  }

  private managedCount(): number {
    let count = 0;
    for (const kind of this.kinds.values()) count += kind.origins.list().length;
    return count;
  }

  /**
   * The periodic resync: every origin is reconciled from the caches, except one whose last plan
   * found nothing to do while nothing it was planned from has changed (its plan would be the
   * same; at 100,000 workloads planning each again cost a fifth of a core). Those are planned
   * again at least every ten resyncs, whatever they show. `all`: none is passed over (a cluster
   * came or went, or this replica just took the lead).
   */
  private reconcileEveryOrigin({ all = false }: { all?: boolean } = {}): void {
    let queued = 0;
    let unchanged = 0;
    for (const kind of this.kinds.values()) {
      const unchangedSincePlanned = this.reconciler.unchangedSincePlanned(kind.adapter.name);
      for (const origin of kind.origins.list()) {
        const name = objectKey(origin);
        if (!all && unchangedSincePlanned(origin, name)) {
          unchanged++;
          continue;
        }
        queued++;
        this.reconciles.addInBackground(originKey(kind.adapter.name, name));
      }
    }
    this.metrics.resyncOrigins.inc({ outcome: 'queued' }, queued);
    this.metrics.resyncOrigins.inc({ outcome: 'unchanged' }, unchanged);
  }

  // ---------------------------------------------------------------------------------------
  // Reconcile one origin: snapshot -> plan -> execute (OriginReconciler), through these clients.

  private workerTarget(cluster: string, kindName: string): WorkerTarget<KubeObject> | undefined {
    const connection = this.registry.get(cluster);
    const kind = this.kinds.get(kindName);
    if (!connection || !kind) return undefined;
    return { client: kind.adapter.client(connection.clients), core: connection.clients.core };
  }

  // ---------------------------------------------------------------------------------------
  // Workers (re)connecting, and garbage collection: both by the one rule of classifyMirror.

  /** Every mirror of every kind on a connection that the one rule says to delete. */
  private *deletableMirrors(
    connection: WorkerConnection,
  ): Iterable<{ kind: AnyDispatchedKind; mirror: KubeObject; why: string }> {
    for (const kind of this.kinds.values()) {
      for (const mirror of connection.mirrors(kind.adapter.name)?.list() ?? []) {
        // Judged against the newest origin known: a mirror created from a placement the cache
        // does not show yet (WrittenOrigins) is that placement's, not a stale one.
        const origin = this.reconciler.newestOrigin(
          originKey(kind.adapter.name, objectKey(mirror)),
          kind.origins.get(objectKey(mirror)),
        );
        const mirrorClass = classifyMirror(mirror, {
          originId: this.options.originId,
          cluster: connection.name,
          origin: origin
            ? {
                uid: origin.metadata!.uid!,
                placement: placementRecordOf(origin, this.options.recordKeys),
              }
            : undefined,
        });
        if (isDeletable(mirrorClass)) {
          yield {
            kind,
            mirror,
            why: mirrorClass.kind === 'stale' ? mirrorClass.why : 'its origin no longer exists',
          };
        }
      }
    }
  }

  /**
   * Runs when a worker (re)connects, before it is Active: mirrors there that are not their
   * origin's current placement (moved while the worker was away, or deleted) go first.
   */
  private async deleteStaleMirrorsOn(connection: WorkerConnection): Promise<void> {
    await Promise.all([...this.kinds.values()].map((kind) => kind.origins.waitForSync()));
    let deleted = 0;
    for (const { kind, mirror, why } of [...this.deletableMirrors(connection)]) {
      await deleteMirror(kind.adapter.client(connection.clients), mirror);
      deleted += 1;
      this.log.info(
        { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, why },
        'deleted a stale mirror on a returning cluster',
      );
    }
    if (deleted > 0)
      this.log.info({ cluster: connection.name, deleted }, 'cleaned up before activating the cluster');
  }

  private async collectGarbage(): Promise<void> {
    this.reconciler.expireExpectations();
    if (![...this.kinds.values()].every((kind) => kind.origins.hasSynced)) return;
    for (const connection of this.registry.connections()) {
      if (!connection.state.active) continue;
      for (const { kind, mirror, why } of [...this.deletableMirrors(connection)]) {
        try {
          await deleteMirror(kind.adapter.client(connection.clients), mirror);
          this.log.info(
            { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, why },
            'garbage-collected a mirror',
          );
        } catch (err) {
          this.log.warn(
            { kind: kind.adapter.name, job: objectKey(mirror), cluster: connection.name, err },
            'garbage collection failed',
          );
        }
      }
    }
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
