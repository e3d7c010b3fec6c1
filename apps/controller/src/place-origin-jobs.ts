import { workloadCountResource } from '@jobrelay/admission';
import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock } from '@jobrelay/kube';
import { isNotFound } from '@jobrelay/kube';
import {
  type ClusterCandidate,
  type ClusterLoad,
  chooseWorkerCluster,
  clusterCandidates,
  fenceRejection,
  type KindedWorkload,
  type NamespaceLookup,
  type ParsedPlacement,
  PlacedLoadIndex,
  type PlacementOutcome,
  type PlacementRecord,
  type PlacementTask,
  type PodGroup,
  placedWorkload,
  placedWorkloadOf,
  placementRecordOf,
  placementRequestFor,
  type RecordKeyring,
} from '@jobrelay/placement';
import type { PlacementQueue } from '@jobrelay/placement/queue';
import { type OriginAction, type PlacementChoice, placementNeed, planPlacement } from '@jobrelay/planner';
import { addResources, type Resources } from '@jobrelay/resources';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import type { ClaimedOriginEvent, ControllerEventSubscriber, ControllerPart } from './controller-events.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';
import { originKey } from './dispatched-kinds.ts';
import type { ExecutionResult, OriginExecutor } from './origin-executor.ts';
import { placementTaskKind } from './placement-task-kind.ts';

/** A dispatched kind as placement uses it: its adapter and claimed value, its origin cache, its client. */
export type PlacedKind = Pick<AnyDispatchedKind, 'adapter' | 'managedBy' | 'management'> & {
  origins: Pick<AnyDispatchedKind['origins'], 'get'>;
};

export interface OriginPlacerOptions {
  /** The dispatched kinds by adapter name: their origins are read, and written through them. */
  kinds: ReadonlyMap<string, PlacedKind>;
  /** The WorkerClusters, their state and capacity: the candidates. */
  registry: Pick<WorkerClusterRegistry, 'clusters' | 'fencesView'>;
  /** Waiting placements are promoted through it when capacity frees up. */
  queue: Pick<PlacementQueue, 'retryWaitingNow'>;
  /** Carries out each placement's plan (its writes, Events and their bookkeeping), as for a reconcile. */
  executor: Pick<OriginExecutor, 'execute'>;
  /** Whether this replica holds the leader Lease: only the leader writes, so only it places. */
  leading: () => boolean;
  /** Seals the placement records it writes, and checks those it reads. */
  recordKeys: RecordKeyring;
  config: Pick<
    ControllerConfig,
    'placementPolicy' | 'placementTimeoutSeconds' | 'recordDispatchEvents' | 'systemNamespace'
  >;
  /** The management cluster's namespaces: a workload's namespace's Pod Security level. */
  namespaces: NamespaceLookup;
  clock: Clock;
  log: Logger;
  /**
   * A placement wrote the origin (its record, the reason it waits, the gave-up status) over
   * version `over`; `written` is the apiserver's answer. The controller asks for the origin's
   * reconcile at once (a placement's mirror is created without waiting for the watch); the
   * answer it plans from was already noted by the executor that made the write, so it reads
   * only `key`.
   */
  originWritten: (key: string, over: string, written: KubeObject) => void;
  /**
   * The newest version of an origin known (`OriginReconciler.newestOrigin`): this process's last
   * write's answer while the cache still shows a version it went over. A placement written over
   * the cache's version then would only meet a conflict. Absent: the cache.
   */
  newestOrigin?: (key: string, cached: KubeObject | undefined) => KubeObject | undefined;
  /** A workload was placed on `cluster` (counted). */
  placedOn: (cluster: string) => void;
  /**
   * Whether a DispatchQueue takes this workload (or refuses it): its admission, not this
   * placement task, places it (`QueueAdmission`). The task then asks for an admission cycle and
   * waits. Absent, or false for every workload when no DispatchQueue exists: placed as always.
   */
  admissionGate?: (kind: PlacedKind, origin: KubeObject) => boolean;
}

/** What an admission asks of the placer: the cluster its decision reserved, and the queue that admitted it. */
export interface Admission {
  cluster: string;
  queue: string;
  /** For the record's `decision`: that the queue admitted it, and where. */
  message: string;
}

/**
 * Placement: runs from the leader's BullMQ worker. It reads the origin from the cache, asks
 * `chooseWorkerCluster`, and turns the decision into a plan (`planPlacement`: the placement
 * record before anything is created anywhere, or the reason it waits, or the gave-up status)
 * that the reconcile's executor carries out with its write bookkeeping. It writes over the
 * version it read, so a stale cache costs a conflict and a retry, never a wrong placement.
 * It keeps each placed workload's share of its cluster's load up to date as the cache changes
 * (so a decision costs the same with 10 or 10,000 workloads placed), and counts placements
 * written but not yet seen in the cache, so concurrent placements see them.
 */
export class OriginPlacer implements ControllerPart {
  private readonly options: OriginPlacerOptions;
  private readonly log: Logger;
  /** Placements written but not yet seen in the origin cache (cf. kube-scheduler's assume cache). */
  private readonly assumedPlacements = new Map<string, string>();
  /** By origin UID: every placed, unfinished workload's share of its cluster's load. */
  private readonly placed = new PlacedLoadIndex();
  /** Pod demand per origin UID, for the generation it was computed from (RayCluster replicas may change). */
  private readonly demandCache = new Map<string, { generation: number | undefined; demand: PodGroup[] }>();
  private retryWaitingTimer: NodeJS.Timeout | undefined;

  constructor(options: OriginPlacerOptions) {
    this.options = options;
    this.log = options.log;
  }

  readonly name = 'placement';
  /**
   * Its load index follows the origins (as the shared index read them: ClaimedOriginIndex);
   * waiting placements get another look when a namespace (its Pod Security level) or a worker
   * (its availability, capacity or namespaces) changed.
   */
  readonly watches = [
    'claimedOrigin',
    'managementNamespace',
    'workerNamespace',
    'workerAvailability',
    'workerCapacity',
  ] as const;
  readonly writes = ['origins: placement records, waiting reasons, gave-up status', 'Events'];

  subscribe(events: ControllerEventSubscriber): void {
    events.on('claimedOrigin', (event) => this.observe(event));
    const retry = () => this.retryWaitingPlacementsSoon();
    events.on('managementNamespace', retry);
    events.on('workerNamespace', retry);
    events.on('workerAvailability', retry);
    events.on('workerCapacity', retry);
  }

  stop(): void {
    clearTimeout(this.retryWaitingTimer);
  }

  /**
   * An origin changed in the cache (its record read by the shared index): its share of its
   * cluster's load follows.
   */
  observe(event: ClaimedOriginEvent<PlacedKind>): void {
    if (event.type === 'delete') {
      this.forgetOrigin(event.uid);
      return;
    }
    const { kind, uid, origin, placement, finished } = event.claimed;
    const recorded = placement.kind === 'ok' ? placement.record.cluster : undefined;
    // The cache shows this placement: it need not be assumed any longer.
    if (recorded !== undefined && this.assumedPlacements.get(uid) === recorded)
      this.assumedPlacements.delete(uid);
    this.updatePlaced(kind, origin, { finished, placement });
  }

  /** The origin is gone: nothing of it is assumed or cached any longer. */
  forgetOrigin(originUid: string): void {
    this.assumedPlacements.delete(originUid);
    this.demandCache.delete(originUid);
    this.placed.delete(originUid);
  }

  /** Its share of its cluster's load, from `read` when the caller read it already (the shared index). */
  private updatePlaced(
    kind: PlacedKind,
    workload: KubeObject,
    read?: { finished: boolean; placement: ParsedPlacement },
  ): void {
    const uid = workload.metadata!.uid!;
    const entry: KindedWorkload = { workload, facts: kind.adapter };
    const assumed = this.assumedPlacements.get(uid);
    const demandOf = (e: KindedWorkload) => this.demandOf(e);
    const share = read
      ? placedWorkloadOf(entry, read, assumed, demandOf)
      : placedWorkload(entry, assumed, this.options.recordKeys, demandOf);
    if (share) this.placed.set(uid, share);
    else this.placed.delete(uid);
  }

  async place(task: PlacementTask, attemptsMade: number): Promise<PlacementOutcome> {
    // Only the leader writes: a task that reaches a replica that no longer leads goes back to
    // the queue (BullMQ retries it) for the one that does.
    if (!this.options.leading()) throw new Error('not the leader: placement left to the leader');
    const key = `${task.namespace}/${task.name}`;
    const taskKind = placementTaskKind(task, this.options.kinds);
    if (taskKind.kind === 'refused') {
      this.log.warn({ workload: key, uid: task.uid }, taskKind.message);
      return 'not-needed';
    }
    const kind = taskKind.dispatched;
    const { adapter } = kind;
    // The cache, not a GET: the placement write below carries the version read here.
    const cached = kind.origins.get(key);
    let origin = this.options.newestOrigin?.(originKey(adapter.name, key), cached) ?? cached;
    if (!origin || origin.metadata?.uid !== task.uid) {
      // Not (or not yet) in the cache as the task knows it: ask the apiserver.
      try {
        origin = await kind.management.read(task.namespace, task.name);
      } catch (err) {
        if (isNotFound(err)) return 'not-needed';
        throw err;
      }
    }
    const parsed = placementRecordOf(origin, this.options.recordKeys);
    const need = placementNeed(
      origin,
      parsed,
      adapter,
      { uid: task.uid, managedBy: kind.managedBy },
      this.options.clock.now(),
    );
    if (need.kind === 'not-needed') return 'not-needed';
    const { previous } = need;
    // A namespace created a moment before its workload may not have reached the cache yet: a
    // retry, not a reason to write on the workload (placementRequestFor would say it waits).
    if (!this.options.namespaces.get(task.namespace))
      throw new Error(`namespace ${task.namespace} is not in the cache yet; retrying`);
    // Its queue's admission places it, with quota reserved: this task only waits for it.
    if (this.options.admissionGate?.(kind, origin)) {
      // The task ends here: a delayed retry per waiting workload, each promoted on every
      // capacity change, cost more than the whole admission (10,000 waiting: moveToDelayed
      // storms). The admission cycle places it, or hands it back (QueueAdmission.released).
      this.log.debug({ kind: adapter.name, job: key }, 'queued: left to its queue’s admission');
      return 'queued';
    }
    const request = placementRequestFor(origin, previous, this.placementSettings(), adapter, (o) =>
      this.demandOf({ workload: o, facts: adapter }),
    );
    const decision =
      request.kind === 'invalid'
        ? { kind: 'unschedulable' as const, message: request.message }
        : chooseWorkerCluster(this.candidates(), request.request);
    return this.carryOut(kind, origin, previous, decision, attemptsMade);
  }

  /**
   * Places a workload its queue admitted, on the cluster the admission reserved, at once (not
   * through a task): the record names the cluster and the queue (whose quota it holds while it is
   * placed and unfinished). `not-needed` when the cache shows nothing to place any longer.
   */
  async placeAdmitted(
    kindName: string,
    key: string,
    uid: string,
    admission: Admission,
  ): Promise<PlacementOutcome> {
    if (!this.options.leading()) throw new Error('not the leader: placement left to the leader');
    const kind = this.options.kinds.get(kindName);
    const origin = kind?.origins.get(key);
    if (!kind || !origin || origin.metadata?.uid !== uid) return 'not-needed';
    const parsed = placementRecordOf(origin, this.options.recordKeys);
    const need = placementNeed(
      origin,
      parsed,
      kind.adapter,
      { uid, managedBy: kind.managedBy },
      this.options.clock.now(),
    );
    if (need.kind === 'not-needed') return 'not-needed';
    return this.carryOut(
      kind,
      origin,
      need.previous,
      { kind: 'placed', cluster: admission.cluster, message: admission.message, queue: admission.queue },
      0,
    );
  }

  /**
   * Where a workload would go now (the same candidates and request as its placement task), with
   * `extra` requests per cluster on top of their load: what an admission decision reserved
   * already and has not placed yet.
   */
  chooseFor(
    kind: Pick<PlacedKind, 'adapter'>,
    origin: KubeObject,
    extra: ReadonlyMap<string, Resources>,
  ): { kind: 'fits'; cluster: string } | { kind: 'no-cluster'; message: string } {
    const parsed = placementRecordOf(origin, this.options.recordKeys);
    const previous = parsed.kind === 'ok' ? parsed.record : undefined;
    const request = placementRequestFor(origin, previous, this.placementSettings(), kind.adapter, (o) =>
      this.demandOf({ workload: o, facts: kind.adapter }),
    );
    if (request.kind === 'invalid') return { kind: 'no-cluster', message: request.message };
    const load = this.loadByCluster();
    for (const [cluster, { [workloadCountResource]: admitted = 0, ...requests }] of extra) {
      const here = load.get(cluster) ?? { workloads: 0, assumed: {} };
      load.set(cluster, {
        workloads: here.workloads + admitted,
        assumed: addResources(here.assumed, requests),
      });
    }
    const decision = chooseWorkerCluster(
      clusterCandidates(this.options.registry.clusters(), load),
      request.request,
    );
    return decision.kind === 'placed'
      ? { kind: 'fits', cluster: decision.cluster }
      : { kind: 'no-cluster', message: decision.message };
  }

  /** The pods a workload runs at once (cached per spec generation): what its queue's quota counts. */
  demandOfOrigin(kind: Pick<PlacedKind, 'adapter'>, origin: KubeObject): PodGroup[] {
    return this.demandOf({ workload: origin, facts: kind.adapter });
  }

  /**
   * Writes actions planned for a workload outside its reconcile (its queue's waiting reason, an
   * eviction) through the executor, and hands the apiserver's answer to its reconcile.
   */
  async writeOn(kind: PlacedKind, origin: KubeObject, actions: OriginAction[]): Promise<ExecutionResult> {
    const { namespace, name, uid, resourceVersion: over } = origin.metadata!;
    const result = await this.options.executor.execute(actions, {
      adapter: kind.adapter,
      namespace: namespace!,
      name: name!,
      uid: uid!,
      origin,
      management: kind.management,
      worker: () => undefined,
    });
    const written = result.origin;
    if (written && written.metadata?.resourceVersion !== over)
      this.options.originWritten(originKey(kind.adapter.name, `${namespace}/${name}`), over!, written);
    return result;
  }

  /** A placement decision as writes, carried out with its assumption (see place). */
  private async carryOut(
    kind: PlacedKind,
    origin: KubeObject,
    previous: PlacementRecord | undefined,
    decision: PlacementChoice,
    attemptsMade: number,
  ): Promise<PlacementOutcome> {
    const { adapter } = kind;
    const { namespace, name, uid } = origin.metadata as { namespace: string; name: string; uid: string };
    const key = `${namespace}/${name}`;
    const task = { namespace, name, uid };
    const now = this.options.clock.now();
    const plan = planPlacement(origin, previous, decision, adapter, this.options.config, now);
    if (decision.kind === 'unschedulable') {
      this.log.info(
        { kind: adapter.name, job: key, attemptsMade, why: decision.message },
        'no cluster fits yet',
      );
    } else {
      // Assumed at once, before any await: placements running concurrently must count it.
      this.assumedPlacements.set(task.uid, decision.cluster);
      this.updatePlaced(kind, origin);
    }
    const unassume = () => {
      if (decision.kind !== 'placed') return;
      this.assumedPlacements.delete(task.uid);
      const cached = kind.origins.get(key);
      if (cached?.metadata?.uid === task.uid) this.updatePlaced(kind, cached);
      else this.placed.delete(task.uid);
    };
    const over = origin.metadata!.resourceVersion!;
    let result: ExecutionResult;
    try {
      result = await this.options.executor.execute(plan.actions, {
        adapter,
        namespace: task.namespace,
        name: task.name,
        uid: task.uid,
        origin,
        management: kind.management,
        // A placement writes on the management cluster only.
        worker: () => undefined,
      });
    } catch (err) {
      unassume();
      throw err;
    }
    const written = result.origin;
    if (written && written.metadata?.resourceVersion !== over)
      this.options.originWritten(originKey(adapter.name, key), over, written);
    if (result.conflicted) {
      unassume();
      // The cache was behind the apiserver: BullMQ retries the task, which reads it again.
      throw new Error(`origin ${key} changed while placing it; retrying`);
    }
    if (decision.kind === 'placed') {
      this.log.info(
        { kind: adapter.name, job: key, cluster: decision.cluster, attempt: previous?.attempt ?? 1 },
        decision.message,
      );
      this.options.placedOn(decision.cluster);
      return 'placed';
    }
    // Given up: the workload has failed, there is nothing left to place.
    return plan.outcome === 'gave-up' ? 'not-needed' : 'unschedulable';
  }

  /**
   * Per cluster: unfinished jobrelay workloads of every kind placed there (placements not
   * yet seen in the cache included) and the requests of those whose pods do not exist yet,
   * so a burst of placements does not all land on the cluster that looked emptiest a moment ago.
   */
  loadByCluster(): ClusterLoad {
    const capacities = new Map(this.options.registry.clusters().map((c) => [c.name, c.capacity]));
    return this.placed.load(capacities);
  }

  /** What placement reads beside the workload: the default policy and the namespaces. */
  private placementSettings() {
    return {
      defaultPolicy: this.options.config.placementPolicy,
      systemNamespace: this.options.config.systemNamespace,
      namespaces: this.options.namespaces,
    };
  }

  /**
   * Why `cluster`'s fences would keep this placed workload out now (not its capacity: the
   * workload is already counted there), or undefined if they would not; checked just before its
   * mirror is created. Its own place in the cluster's load is not counted against its limits.
   */
  fencesAgainst(
    kind: Pick<PlacedKind, 'adapter'>,
    origin: KubeObject,
    record: PlacementRecord,
    cluster: string,
  ): string | undefined {
    const input = this.options.registry.fencesView(cluster);
    if (!input) return undefined;
    const request = placementRequestFor(origin, record, this.placementSettings(), kind.adapter, (o) =>
      this.demandOf({ workload: o, facts: kind.adapter }),
    );
    if (request.kind === 'invalid') return request.message;
    // Only the count of workloads matters to the fences, not the assumed requests (capacity).
    const self = this.placed.get(origin.metadata!.uid!);
    const others = this.placed.workloadsOn(cluster) - (self?.cluster === cluster ? 1 : 0);
    const [candidate] = clusterCandidates([input], new Map([[cluster, { workloads: others, assumed: {} }]]));
    return fenceRejection(candidate!, request.request);
  }

  /** Capacity freed or a cluster changed: waiting placements are retried now, at most twice a second. */
  retryWaitingPlacementsSoon(): void {
    // The leader's placement workers are the only ones; a follower leaves its queue alone.
    if (this.retryWaitingTimer || !this.options.leading()) return;
    this.retryWaitingTimer = setTimeout(() => {
      this.retryWaitingTimer = undefined;
      void this.options.queue.retryWaitingNow().catch(() => {});
    }, 500);
  }

  /** The pods a workload runs at once, computed once per origin and spec generation. */
  private demandOf({ workload, facts }: KindedWorkload): PodGroup[] {
    const uid = workload.metadata!.uid!;
    const generation = workload.metadata?.generation;
    const cached = this.demandCache.get(uid);
    if (cached && cached.generation === generation) return cached.demand;
    const demand = (facts as { podDemand(o: KubeObject): PodGroup[] }).podDemand(workload);
    this.demandCache.set(uid, { generation, demand });
    return demand;
  }

  private candidates(): ClusterCandidate[] {
    return clusterCandidates(this.options.registry.clusters(), this.loadByCluster());
  }
}
