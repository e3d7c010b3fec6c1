import type {
  AdmissionDecision,
  AdmissionSnapshot,
  AdmittedWorkload,
  DispatchQueueStatus,
  EvictionReason,
  InvalidQueue,
  ParsedQueue,
  PriorityClassLookup,
  QueueChoice,
  QueuedWorkload,
  QueueSelectionInput,
  QueueSpec,
  QueueUsage,
  WorkloadPriority,
} from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock, InformerEvent } from '@jobrelay/kube';
import { originUidLabel, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  type PlacementRecord,
  placementRecordOf,
  type RecordKeyring,
  totalDemand,
  type WorkloadPodTemplate,
  waitingSince,
} from '@jobrelay/placement';
import { type OriginAction, placementNeed } from '@jobrelay/planner';
import { formatResourceAmount, type Resources } from '@jobrelay/resources';
import type { Logger } from 'pino';
import type { QueueMetrics } from './controller-metrics.ts';
import type { OriginPlacer, PlacedKind } from './place-origin-jobs.ts';

/**
 * The pure functions of `@jobrelay/admission` (and the planner's eviction) the controller runs:
 * passed in, so the wiring is tested apart from the decision's own exhaustive tests.
 */
export interface AdmissionFunctions {
  decideAdmission(snapshot: AdmissionSnapshot): AdmissionDecision;
  parseDispatchQueue(object: unknown): ParsedQueue;
  queueFor(
    workload: QueueSelectionInput,
    namespaceLabels: Record<string, string> | undefined,
    queues: readonly QueueSpec[],
    invalidQueues: readonly InvalidQueue[],
  ): QueueChoice;
  workloadPriority(
    templates: readonly WorkloadPodTemplate[] | undefined,
    classes: PriorityClassLookup,
  ): WorkloadPriority;
  /** The actions that mark the record `preempted` and record a `Preempted` Event (its reconcile re-places it). */
  planEviction(record: PlacementRecord, message: string): OriginAction[];
  /** `used/nominal` of cpu, memory and GPUs for `kubectl get dispatchqueues`. */
  queueStatusColumns?(nominal: Resources, used: Resources): DispatchQueueStatus['columns'];
}

/** A dispatched kind as admission reads it: placement's view, and its whole origin cache. */
export type AdmittedKind = PlacedKind & {
  origins: PlacedKind['origins'] & { list(): KubeObject[] };
};

export interface QueueAdmissionOptions {
  kinds: ReadonlyMap<string, AdmittedKind>;
  placer: Pick<OriginPlacer, 'placeAdmitted' | 'chooseFor' | 'demandOfOrigin' | 'writeOn'>;
  /** The DispatchQueue cache (cluster-scoped custom objects), raw: each is parsed here. */
  queues: { list(): KubeObject[] };
  priorityClasses: PriorityClassLookup;
  /** The management cluster's namespaces: their labels select queues. */
  namespaces: { get(name: string): { metadata?: { labels?: Record<string, string> } } | undefined };
  functions: AdmissionFunctions;
  /** Writes a DispatchQueue's `.status` (merge patch of the status subresource). */
  writeQueueStatus(name: string, status: DispatchQueueStatus): Promise<void>;
  leading(): boolean;
  recordKeys: RecordKeyring;
  clock: Clock;
  log: Logger;
  metrics?: QueueMetrics;
  /** Changes seen within this long cost one admission cycle (default 200 ms). */
  debounceMs?: number;
  /** A queue's status is written at most this often (default 2 s). */
  statusIntervalMs?: number;
  /** False: cycles run only when called (tests drive them); nothing is scheduled on a timer. */
  scheduleCycles?: boolean;
  /**
   * At most this many waiting reasons written per cycle (default 100): a burst of thousands
   * waiting is noted over a few cycles rather than holding admission while thousands of writes
   * land. Those with no reason yet, or a new gate, go first; refreshes take at most a tenth.
   */
  notesPerCycle?: number;
  /**
   * A reason whose gate is the same as the one last written (only its figures moved: usage,
   * borrowing) is rewritten at most this often (default 60 s); a new gate at once.
   */
  noteRefreshMs?: number;
  /**
   * A cycle waits at most this long for its writes (default 10 s) before the next may run: one
   * request that hangs (a dead connection under load) must not hold every queue's admission.
   * What it wrote stays assumed, so the next cycle neither admits nor evicts it twice.
   */
  writeWaitMs?: number;
  /**
   * A workload this replica left to its queue (`isQueued` said so, and its placement task ended)
   * is no longer queued: its queue went, or no longer selects its namespace. Its reconcile must
   * enqueue its placement again.
   */
  released?(kindName: string, key: string): void;
}

interface ParsedQueues {
  specs: QueueSpec[];
  invalid: Map<string, { queue: InvalidQueue; object: KubeObject }>;
}

/** What admission knows of one origin, kept up to date from its cache's events. */
export interface IndexedWorkload {
  kindName: string;
  /** `namespace/name`. */
  key: string;
  uid: string;
  origin: KubeObject;
  /** Placed, unfinished, with the queue that admitted it in its record. */
  admitted?: {
    cluster: string;
    queue: string;
    admittedAt: number;
    evicting: boolean;
    record: PlacementRecord;
  };
  /** Claimed, unfinished, unsuspended, unplaced, not given up: it waits to be placed. */
  pending: boolean;
  /** Its record as last read (for an eviction: written over). */
  record?: PlacementRecord;
  /** Its creationTimestamp, parsed once (every cycle orders by it). */
  createdAt: number;
  /** Queue choice, priority and demand, as of `factsVersion` (queues, classes and namespaces change them). */
  facts?: { version: number; choice: QueueChoice; priority: WorkloadPriority; demand: Resources };
}

/** One admission cycle's outcome, for logs and tests. */
export interface CycleReport {
  admitted: Array<{ uid: string; cluster: string; queue: string; outcome: string }>;
  evicted: Array<{ uid: string; reason: EvictionReason }>;
  /** Waiting reasons written (only the changed ones). */
  noted: Array<{ uid: string; message: string }>;
  statusWritten: string[];
}

const admittedBy = (queue: string, cluster: string, borrowed: Resources) => {
  const borrowing = Object.entries(borrowed).filter(([, amount]) => amount > 0);
  const note =
    borrowing.length > 0
      ? ` (borrowing ${borrowing.map(([r, a]) => `${formatResourceAmount(r, a)} ${r}`).join(', ')} from its cohort)`
      : '';
  return `admitted by queue ${queue}${note}; placed on ${cluster}`;
};

/**
 * Queue admission (issue 30). Every replica keeps the index of queued workloads from the origin
 * caches (as the placer keeps the placed load); the leader runs the cycles: a snapshot, the pure
 * `decideAdmission`, and its writes: placements of the admitted (at once, on the cluster the
 * decision reserved, the record naming the queue), evictions (the record marked preempted: the
 * reconcile deletes the mirror and, once the worker no longer holds it, places it again keeping
 * progress; until then it holds its quota, as evicting), and the waiting reasons.
 * Usage is never kept anywhere but in the records: after a restart it is what they say.
 * Without any DispatchQueue nothing here runs and placement is as it always was.
 */
export class QueueAdmission {
  private readonly options: QueueAdmissionOptions;
  private readonly index = new Map<string, IndexedWorkload>();
  /** Bumped when queues, PriorityClasses or namespaces change: every workload's facts are recomputed. */
  private factsVersion = 0;
  /** Admitted by a cycle, not yet seen placed in the cache: they hold quota (cf. the placer's assumed placements). */
  private readonly assumedAdmissions = new Map<string, { cluster: string; queue: string; at: number }>();
  /** Evictions written, not yet seen in the cache: not chosen again. */
  private readonly assumedEvictions = new Set<string>();
  /** Waiting reasons written, by UID, until the cache shows them: not written twice. */
  private readonly notedWaiting = new Map<string, string>();
  /** When this replica last wrote each workload's reason, and its gate. */
  private readonly notedAt = new Map<string, { gate: string; at: number }>();
  /** Per queue: the status last written and when. */
  private readonly writtenStatus = new Map<string, { json: string; at: number }>();
  /** The DispatchQueues parsed as of `factsVersion` (parsing every queue per call cost more than admission). */
  private parsed: { version: number; queues: ParsedQueues } | undefined;
  /** Waiting reasons being written (a cycle does not wait for them): they count against the budget. */
  private notesInFlight = 0;
  /** The queue statuses being written, if any (one round at a time). */
  private statusRound: Promise<string[]> | undefined;
  /**
   * Admitted workloads whose mirror is finished on their cluster (`uid@cluster`): their pods are
   * gone (a Job's terminal condition comes only once its pods have), so they hold no quota, ahead
   * of the origin's status catching up, which under load is most of a workload's time in quota.
   */
  private readonly finishedOnWorker = new Set<string>();
  /** Pending workloads whose placement task ended on `isQueued`: their queue owns them (see `released`). */
  private readonly leftToQueue = new Map<string, { kindName: string; key: string }>();
  private wasActive = false;
  /** When the scheduled cycle (timer) fires, in Date.now() terms. */
  private timerDue = 0;
  /**
   * No cycle starts before this (Date.now() terms): a cycle costs time in proportion to what
   * waits (10,000 waiting: about 50 ms), so the next one waits 20 times that, at most 2 s:
   * admission takes at most about 5 % of a core whatever the backlog, and a small one is not
   * delayed (a 1 ms cycle: 20 ms, inside the debounce).
   */
  private nextCycleNotBefore = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<{ report: CycleReport; followUp: Promise<void> } | undefined> | undefined;
  private again = false;
  private stopped = false;

  constructor(options: QueueAdmissionOptions) {
    this.options = options;
  }

  /** Whether any DispatchQueue exists: without one, admission does nothing. */
  get active(): boolean {
    return this.options.queues.list().length > 0;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The workloads admission knows (for tests and the summary). */
  entries(): IterableIterator<IndexedWorkload> {
    return this.index.values();
  }

  /** DispatchQueues, PriorityClasses or namespaces changed: queue choices and priorities may follow. */
  factsChanged(): void {
    this.factsVersion += 1;
    const active = this.active;
    // The first queue: the index is built from the caches (it is not kept while there are none).
    if (active && !this.wasActive) this.rebuild();
    if (!active) {
      this.index.clear();
      this.finishedOnWorker.clear();
      // The last queue went: what waited on one is placed as without queues.
      for (const { kindName, key } of this.leftToQueue.values()) this.options.released?.(kindName, key);
      this.leftToQueue.clear();
    }
    this.wasActive = active;
    this.cycleSoon();
  }

  /** An origin changed in its cache. */
  observe(kind: AdmittedKind, event: InformerEvent<KubeObject>): void {
    const uid = event.object.metadata?.uid;
    if (!uid) return;
    if (event.type === 'delete') {
      this.forget(uid);
      this.cycleSoon();
      return;
    }
    if (!this.wasActive) return;
    const before = this.index.get(uid);
    const after = this.indexed(kind, event.object);
    if (!after) {
      this.forget(uid);
      if (before) this.cycleSoon();
      return;
    }
    // Its queue, priority and demand follow from its spec, labels and namespace: a status or
    // annotation change (most events, such as its own waiting reason) keeps them.
    if (before?.facts && sameFactsInputs(before.origin, after.origin)) after.facts = before.facts;
    this.index.set(uid, after);
    if (!after.pending) this.leftToQueue.delete(uid);
    // Placed elsewhere, or not placed: a finished mirror of before says nothing of now.
    if (before?.admitted && before.admitted.cluster !== after.admitted?.cluster)
      this.finishedOnWorker.delete(`${uid}@${before.admitted.cluster}`);
    // The cache shows what was assumed: the record now says it.
    if (after.admitted || !after.pending) this.assumedAdmissions.delete(uid);
    if (after.admitted?.evicting || !after.admitted) this.assumedEvictions.delete(uid);
    const note = event.object.metadata?.annotations?.[unschedulableAnnotation];
    if (note !== undefined && this.notedWaiting.get(uid) === note) this.notedWaiting.delete(uid);
    if (!before || before.pending !== after.pending || !sameAdmission(before, after)) this.cycleSoon();
  }

  /** A mirror changed on a worker: a finished one gives its workload's quota back. */
  observeMirror(cluster: string, kindName: string, event: InformerEvent<KubeObject>): void {
    if (!this.wasActive || event.type === 'delete') return;
    const uid = event.object.metadata?.labels?.[originUidLabel];
    const entry = uid ? this.index.get(uid) : undefined;
    if (!entry?.admitted || entry.admitted.cluster !== cluster || entry.kindName !== kindName) return;
    const kind = this.options.kinds.get(kindName);
    if (!kind?.adapter.isFinished(event.object)) return;
    const key = `${entry.uid}@${cluster}`;
    if (this.finishedOnWorker.has(key)) return;
    this.finishedOnWorker.add(key);
    this.cycleSoon();
  }

  /** Capacity freed or a cluster changed: pending workloads may fit now. */
  capacityChanged(): void {
    this.cycleSoon();
  }

  /**
   * For the placement task: whether a queue takes this workload (or refuses it) and so decides
   * when and where it goes. True asks for a cycle.
   */
  isQueued(kind: AdmittedKind, origin: KubeObject): boolean {
    if (!this.wasActive) return false;
    const uid = origin.metadata?.uid;
    if (!uid) return false;
    const entry = this.index.get(uid) ?? this.indexed(kind, origin);
    if (!entry) return false;
    const facts = this.factsOf(entry, this.parsedQueues());
    if (facts.choice.kind === 'unqueued') return false;
    this.leftToQueue.set(uid, { kindName: entry.kindName, key: entry.key });
    this.cycleSoon();
    return true;
  }

  /**
   * Whether this workload is left to its queue (its placement task ended on `isQueued`) and its
   * queue still takes it as of the current queues: its reconcile need not enqueue a placement.
   */
  holds(uid: string): boolean {
    if (!this.wasActive || !this.leftToQueue.has(uid)) return false;
    const entry = this.index.get(uid);
    if (!entry?.pending || entry.facts?.version !== this.factsVersion) return false;
    return entry.facts.choice.kind !== 'unqueued';
  }

  private forget(uid: string): void {
    const admitted = this.index.get(uid)?.admitted;
    if (admitted) this.finishedOnWorker.delete(`${uid}@${admitted.cluster}`);
    this.index.delete(uid);
    this.assumedAdmissions.delete(uid);
    this.assumedEvictions.delete(uid);
    this.notedWaiting.delete(uid);
    this.notedAt.delete(uid);
    this.leftToQueue.delete(uid);
  }

  private rebuild(): void {
    this.index.clear();
    for (const kind of this.options.kinds.values()) {
      for (const origin of kind.origins.list()) {
        const entry = this.indexed(kind, origin);
        if (entry) this.index.set(entry.uid, entry);
      }
    }
  }

  /** Admitted or pending, or undefined when admission has nothing to do with it. */
  private indexed(kind: AdmittedKind, origin: KubeObject): IndexedWorkload | undefined {
    const { uid, namespace, name } = origin.metadata ?? {};
    if (!uid || !namespace || !name) return undefined;
    const parsed = placementRecordOf(origin, this.options.recordKeys);
    const record = parsed.kind === 'ok' ? parsed.record : undefined;
    const finished = kind.adapter.isFinished(origin);
    const base = {
      kindName: kind.adapter.name,
      key: `${namespace}/${name}`,
      uid,
      origin,
      record,
      createdAt: createdAtOf(origin),
    };
    if (record?.cluster && record.queue && !finished) {
      const placedAt = record.placedAt ? Date.parse(record.placedAt) : Number.NaN;
      return {
        ...base,
        pending: false,
        admitted: {
          cluster: record.cluster,
          queue: record.queue,
          admittedAt: Number.isNaN(placedAt) ? base.createdAt : placedAt,
          evicting: record.preempted !== undefined,
          record,
        },
      };
    }
    const need = placementNeed(
      origin,
      parsed,
      kind.adapter,
      { uid, managedBy: kind.managedBy },
      this.options.clock.now(),
    );
    if (need.kind !== 'needed') return undefined;
    return { ...base, pending: true };
  }

  private factsOf(entry: IndexedWorkload, queues: ParsedQueues): NonNullable<IndexedWorkload['facts']> {
    if (entry.facts?.version === this.factsVersion) return entry.facts;
    const kind = this.options.kinds.get(entry.kindName)!;
    const { functions, namespaces, priorityClasses } = this.options;
    const namespace = entry.origin.metadata!.namespace!;
    const labels = entry.origin.metadata?.labels;
    const choice = functions.queueFor(
      { namespace, ...(labels ? { labels } : {}) },
      namespaces.get(namespace)?.metadata?.labels,
      queues.specs,
      // An invalid queue still fences its namespaces: their workloads wait rather than run unqueued.
      [...queues.invalid.values()].map((i) => i.queue),
    );
    const priority = functions.workloadPriority(kind.adapter.podTemplates(entry.origin), priorityClasses);
    const demand = totalDemand(this.options.placer.demandOfOrigin(kind, entry.origin));
    entry.facts = { version: this.factsVersion, choice, priority, demand };
    return entry.facts;
  }

  /** Every DispatchQueue parsed: the usable specs, and the others with their object (for their status). */
  private parsedQueues(): ParsedQueues {
    if (this.parsed?.version === this.factsVersion) return this.parsed.queues;
    const specs: QueueSpec[] = [];
    const invalid = new Map<string, { queue: InvalidQueue; object: KubeObject }>();
    for (const object of this.options.queues.list()) {
      const parsed = this.options.functions.parseDispatchQueue(object);
      if (parsed.kind === 'ok') specs.push(parsed.spec);
      else invalid.set(parsed.name, { queue: parsed, object });
    }
    this.parsed = { version: this.factsVersion, queues: { specs, invalid } };
    return this.parsed.queues;
  }

  /** Asks for a cycle soon (changes within the debounce cost one). */
  cycleSoon(delayMs = this.options.debounceMs ?? 200): void {
    if (this.options.scheduleCycles === false) return;
    if (this.stopped || !this.options.leading() || !this.wasActive) return;
    // The earliest asked for wins: a refresh deferred by a minute must not hold back the cycle a
    // change asks for now (it once did: a reclaim waited 55 s for a note refresh's timer).
    const due = Math.max(Date.now() + delayMs, this.nextCycleNotBefore);
    delayMs = due - Date.now();
    if (this.timer && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // The scheduler waits for a cycle's decisions only: reasons and statuses follow on their own.
      void this.cycle({ followUp: false }).catch((err: unknown) => {
        this.options.log.warn({ err }, 'admission cycle failed; retrying');
        this.cycleSoon(1_000);
      });
    }, delayMs);
  }

  /**
   * One admission cycle (leader only); cycles never overlap: one asked for while another runs
   * follows it. Resolves with what it did (undefined when it did nothing), once its admissions
   * and evictions are written and, unless `followUp` is false, its waiting reasons and queue
   * statuses too (each wait bounded by `writeWaitMs`).
   */
  async cycle({ followUp = true }: { followUp?: boolean } = {}): Promise<CycleReport | undefined> {
    if (this.running) {
      this.again = true;
      return (await this.running)?.report;
    }
    this.running = this.runCycle();
    try {
      const ran = await this.running;
      if (ran && followUp) await this.boundedWait(ran.followUp, 'reasons and statuses');
      return ran?.report;
    } finally {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.cycleSoon();
      }
    }
  }

  private async runCycle(): Promise<{ report: CycleReport; followUp: Promise<void> } | undefined> {
    if (!this.options.leading() || !this.wasActive) return undefined;
    const { functions, clock, log, metrics } = this.options;
    const report: CycleReport = { admitted: [], evicted: [], noted: [], statusWritten: [] };
    const cycleStarted = performance.now();
    const parsedQueues = this.parsedQueues();
    const { specs, invalid } = parsedQueues;
    const admitted: AdmittedWorkload[] = [];
    const pending: QueuedWorkload[] = [];
    const refusedNotes: Array<{ entry: IndexedWorkload; message: string; gate: string }> = [];
    for (const entry of this.index.values()) {
      const facts = this.factsOf(entry, parsedQueues);
      const workload = {
        uid: entry.uid,
        label: `${entry.kindName} ${entry.key}`,
        namespace: entry.origin.metadata!.namespace!,
        priority: facts.priority.kind === 'ok' ? facts.priority.priority : 0,
        createdAt: entry.createdAt,
        demand: facts.demand,
      };
      const assumed = this.assumedAdmissions.get(entry.uid);
      if (entry.admitted) {
        const { cluster, queue, admittedAt, evicting } = entry.admitted;
        // Done on its worker: nothing of it runs, whatever its origin says yet.
        if (this.finishedOnWorker.has(`${entry.uid}@${cluster}`)) continue;
        admitted.push({
          ...workload,
          queue,
          cluster,
          admittedAt,
          evicting: evicting || this.assumedEvictions.has(entry.uid),
        });
      } else if (assumed) {
        admitted.push({
          ...workload,
          queue: assumed.queue,
          cluster: assumed.cluster,
          admittedAt: assumed.at,
        });
      } else if (entry.pending) {
        if (facts.choice.kind === 'unqueued') {
          if (this.leftToQueue.delete(entry.uid)) this.options.released?.(entry.kindName, entry.key);
          continue;
        }
        if (facts.choice.kind === 'refused')
          refusedNotes.push({ entry, message: facts.choice.message, gate: 'refused' });
        else if (facts.priority.kind === 'refused')
          refusedNotes.push({ entry, message: facts.priority.message, gate: 'refused' });
        else pending.push({ ...workload, queue: facts.choice.queue });
      }
    }
    const started = performance.now();
    const decision = functions.decideAdmission({
      queues: specs,
      admitted,
      pending,
      chooseCluster: (workload, assumed) => {
        const entry = this.index.get(workload.uid)!;
        return this.options.placer.chooseFor(this.options.kinds.get(entry.kindName)!, entry.origin, assumed);
      },
    });
    metrics?.admissionDecisionSeconds.observe((performance.now() - started) / 1000);
    const now = clock.now();
    // Reserved at once, before any await: the next cycle counts them whatever happens meanwhile.
    for (const admit of decision.admit) {
      this.assumedAdmissions.set(admit.uid, { cluster: admit.cluster, queue: admit.queue, at: now });
    }
    const writes: Promise<void>[] = [];
    for (const admit of decision.admit) {
      const entry = this.index.get(admit.uid);
      if (!entry) continue;
      writes.push(
        this.options.placer
          .placeAdmitted(entry.kindName, entry.key, entry.uid, {
            cluster: admit.cluster,
            queue: admit.queue,
            message: admittedBy(admit.queue, admit.cluster, admit.borrowed),
          })
          .then(
            (outcome) => {
              report.admitted.push({ uid: admit.uid, cluster: admit.cluster, queue: admit.queue, outcome });
              if (outcome === 'placed') {
                const since = waitingSince(entry.origin, entry.record)?.getTime() ?? entry.createdAt;
                metrics?.admissionWaitSeconds.observe(
                  { queue: admit.queue },
                  Math.max(0, now - since) / 1000,
                );
                log.info(
                  { kind: entry.kindName, job: entry.key, queue: admit.queue, cluster: admit.cluster },
                  'admitted by its queue',
                );
              } else this.unassume(admit.uid);
            },
            (err: unknown) => {
              this.unassume(admit.uid);
              log.warn({ kind: entry.kindName, job: entry.key, err }, 'placing an admitted workload failed');
            },
          ),
      );
    }
    for (const eviction of decision.evict) {
      const entry = this.index.get(eviction.uid);
      if (!entry?.admitted || entry.admitted.evicting || this.assumedEvictions.has(eviction.uid)) continue;
      this.assumedEvictions.add(eviction.uid);
      const { queue, record } = entry.admitted;
      const kind = this.options.kinds.get(entry.kindName)!;
      writes.push(
        this.options.placer
          .writeOn(kind, entry.origin, functions.planEviction(record, eviction.message))
          .then((result) => {
            if (result.conflicted) {
              this.assumedEvictions.delete(eviction.uid);
              this.cycleSoon(1_000);
              return;
            }
            report.evicted.push({ uid: eviction.uid, reason: eviction.reason });
            metrics?.queueEvictions.inc({ queue, reason: eviction.reason });
            log.info(
              { kind: entry.kindName, job: entry.key, queue, reason: eviction.reason },
              eviction.message,
            );
          })
          .catch((err: unknown) => {
            this.assumedEvictions.delete(eviction.uid);
            log.warn({ kind: entry.kindName, job: entry.key, err }, 'evicting a workload failed');
          }),
      );
    }
    const notes = [
      ...refusedNotes,
      ...[...decision.waiting].flatMap(([uid, verdict]) => {
        const entry = this.index.get(uid);
        return entry ? [{ entry, message: verdict.message, gate: verdict.gate }] : [];
      }),
    ];
    // Chosen now (so the next cycle does not choose them again), written once the decisions are.
    const chosenNotes = this.notesToWrite(notes, now);
    for (const { entry, message, gate } of chosenNotes) {
      this.notedWaiting.set(entry.uid, message);
      this.notedAt.set(entry.uid, { gate, at: now });
    }
    this.notesInFlight += chosenNotes.length;
    this.updateGauges(specs, decision.usage);
    const decided = Promise.all(writes);
    // What this cycle cost before its first await: the spacing of the next (see nextCycleNotBefore).
    this.nextCycleNotBefore = Date.now() + Math.min(2_000, 20 * (performance.now() - cycleStarted));
    // Admissions first: a cycle's hundred reasons and twenty statuses once held every admission
    // behind them (the next cycle waited for all its writes). They follow the decisions' writes,
    // and the next cycle does not wait for them.
    const followUp = decided
      .catch(() => {})
      .then(() =>
        Promise.all([
          this.writeNotes(chosenNotes, report),
          this.writeStatusRound(specs, invalid, decision.usage).then((written) => {
            report.statusWritten = written;
          }),
        ]),
      )
      .then(() => {});
    const outcome = await this.boundedWait(decided, 'admissions and evictions');
    log.debug(
      {
        pending: pending.length,
        admitted: report.admitted.length,
        evicted: report.evicted.length,
        writes: writes.length,
        notes: chosenNotes.length,
        outcome,
      },
      'admission cycle',
    );
    return { report, followUp };
  }

  /**
   * Waits for `writes` at most `writeWaitMs` (default 10 s): one request that hangs (a dead
   * connection under load) must not hold every queue's admission. What was written stays
   * assumed, so the next cycle neither admits nor evicts it twice.
   */
  private async boundedWait(writes: Promise<unknown>, what: string): Promise<'written' | 'still writing'> {
    const waitMs = this.options.writeWaitMs ?? 10_000;
    let waited: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      writes.then(
        () => 'written' as const,
        () => 'written' as const,
      ),
      new Promise<'still writing'>((resolve) => {
        waited = setTimeout(() => resolve('still writing'), waitMs);
      }),
    ]);
    clearTimeout(waited);
    if (outcome === 'still writing')
      // Their failures are logged where each write is made; nothing more to do when they end.
      this.options.log.warn(
        { waitedMs: waitMs, what },
        'an admission cycle’s writes are still running; going on',
      );
    return outcome;
  }

  private async writeNotes(
    notes: ReadonlyArray<{ entry: IndexedWorkload; message: string }>,
    report: CycleReport,
  ): Promise<void> {
    await Promise.all(
      notes.map(({ entry, message }) => {
        const kind = this.options.kinds.get(entry.kindName)!;
        return this.options.placer
          .writeOn(kind, entry.origin, [{ type: 'note-waiting', message }])
          .then(() => {
            report.noted.push({ uid: entry.uid, message });
          })
          .catch((err: unknown) => {
            this.notedWaiting.delete(entry.uid);
            this.notedAt.delete(entry.uid);
            this.options.log.warn(
              { kind: entry.kindName, job: entry.key, err },
              'noting why a workload waits failed',
            );
          })
          .finally(() => {
            this.notesInFlight -= 1;
          });
      }),
    );
  }

  /** One round of queue status writes at a time; a cycle meanwhile leaves them to a later one. */
  private writeStatusRound(
    specs: readonly QueueSpec[],
    invalid: ParsedQueues['invalid'],
    usage: ReadonlyMap<string, QueueUsage>,
  ): Promise<string[]> {
    if (this.statusRound) {
      this.cycleSoon(this.options.statusIntervalMs ?? 2_000);
      return Promise.resolve([]);
    }
    const round = this.writeStatuses(specs, invalid, usage).finally(() => {
      this.statusRound = undefined;
    });
    this.statusRound = round;
    return round;
  }

  /**
   * The waiting reasons to write this cycle: those that changed, a workload with none (or a new
   * gate) first, a same-gate refresh (only its figures moved) once `noteRefreshMs` has passed
   * since this replica wrote it; at most `notesPerCycle`. What is left asks for a later cycle.
   */
  private notesToWrite<T extends { entry: IndexedWorkload; message: string; gate: string }>(
    notes: readonly T[],
    now: number,
  ): T[] {
    // Those still being written count: a slow apiserver gets no more than the budget at once.
    const budget = Math.max(0, (this.options.notesPerCycle ?? 100) - this.notesInFlight);
    const refreshMs = this.options.noteRefreshMs ?? 60_000;
    const fresh: T[] = [];
    const refresh: T[] = [];
    let soonest: number | undefined;
    for (const note of notes) {
      const { entry, message, gate } = note;
      const current = entry.origin.metadata?.annotations?.[unschedulableAnnotation];
      if (current === message || this.notedWaiting.get(entry.uid) === message) continue;
      const last = this.notedAt.get(entry.uid);
      // Ours since (the cache may not show it yet) with the same gate: only its figures moved.
      if (!last || last.gate !== gate) fresh.push(note);
      else if (now - last.at >= refreshMs) refresh.push(note);
      else {
        const wait = refreshMs - (now - last.at);
        soonest = soonest === undefined ? wait : Math.min(soonest, wait);
      }
    }
    // Refreshes are cheap to defer (the gate is right, a figure is stale): a tenth of the budget.
    const chosen = [
      ...fresh.slice(0, budget),
      ...refresh.slice(
        0,
        Math.min(budget - Math.min(budget, fresh.length), Math.max(1, Math.floor(budget / 10))),
      ),
    ];
    if (chosen.length < fresh.length + refresh.length) this.cycleSoon(1_000);
    else if (soonest !== undefined) this.cycleSoon(soonest);
    return chosen;
  }

  private unassume(uid: string): void {
    this.assumedAdmissions.delete(uid);
    // Another look: what it reserved is free again, or it may be admitted elsewhere.
    this.cycleSoon(1_000);
  }

  /** Each queue's status, when it changed and at most every `statusIntervalMs`. */
  private async writeStatuses(
    specs: readonly QueueSpec[],
    invalid: ParsedQueues['invalid'],
    usage: ReadonlyMap<string, QueueUsage>,
  ): Promise<string[]> {
    const now = this.options.clock.now();
    const interval = this.options.statusIntervalMs ?? 2_000;
    const objects = new Map(this.options.queues.list().map((q) => [q.metadata?.name ?? '', q]));
    const desired: Array<[string, DispatchQueueStatus]> = [
      ...specs.map((spec): [string, DispatchQueueStatus] => [
        spec.name,
        this.statusOf(spec, usage.get(spec.name), objects.get(spec.name)),
      ]),
      ...[...invalid].map(([name, { queue, object }]): [string, DispatchQueueStatus] => [
        name,
        // The cached object, not the parse's: its status moves without a new parse.
        invalidStatus(queue.problems, objects.get(name) ?? object, now),
      ]),
    ];
    const written: string[] = [];
    const writes: Promise<void>[] = [];
    let soonest: number | undefined;
    for (const [name, status] of desired) {
      const json = JSON.stringify(comparable(status));
      const current = (objects.get(name) as { status?: DispatchQueueStatus } | undefined)?.status;
      const last = this.writtenStatus.get(name);
      if ((current && JSON.stringify(comparable(current)) === json) || last?.json === json) continue;
      if (last && now - last.at < interval) {
        const wait = interval - (now - last.at);
        soonest = soonest === undefined ? wait : Math.min(soonest, wait);
        continue;
      }
      // All at once: twenty queues one after another took seconds on a busy apiserver.
      writes.push(
        this.options.writeQueueStatus(name, status).then(
          () => {
            this.writtenStatus.set(name, { json, at: now });
            written.push(name);
          },
          (err: unknown) => {
            this.options.log.warn({ queue: name, err }, 'writing a DispatchQueue status failed');
          },
        ),
      );
    }
    await Promise.all(writes);
    written.sort();
    for (const name of this.writtenStatus.keys()) if (!objects.has(name)) this.writtenStatus.delete(name);
    if (soonest !== undefined) this.cycleSoon(soonest);
    return written;
  }

  private statusOf(
    spec: QueueSpec,
    usage: QueueUsage | undefined,
    object: KubeObject | undefined,
  ): DispatchQueueStatus {
    const used = usage?.used ?? {};
    const quantities = (resources: Resources, names: Iterable<string>) =>
      Object.fromEntries([...new Set(names)].map((r) => [r, formatResourceAmount(r, resources[r] ?? 0)]));
    const borrowedNames = Object.keys(usage?.borrowed ?? {}).filter((r) => (usage!.borrowed[r] ?? 0) > 0);
    return {
      pendingWorkloads: usage?.pending ?? 0,
      admittedWorkloads: usage?.admitted ?? 0,
      usage: quantities(used, Object.keys(spec.nominalQuota)),
      borrowed: quantities(usage?.borrowed ?? {}, borrowedNames),
      share: String(Math.round((usage?.share ?? 0) * 1000) / 1000),
      columns: this.options.functions.queueStatusColumns?.(spec.nominalQuota, used) ?? columnsOf(spec, used),
      conditions: [
        condition(object, 'True', 'Active', 'the queue admits workloads', this.options.clock.now()),
      ],
      ...(object?.metadata?.generation !== undefined
        ? { observedGeneration: object.metadata.generation }
        : {}),
    };
  }

  private updateGauges(specs: readonly QueueSpec[], usage: ReadonlyMap<string, QueueUsage>): void {
    const metrics = this.options.metrics;
    if (!metrics) return;
    metrics.resetGauges();
    for (const spec of specs) {
      const here = usage.get(spec.name);
      const queue = spec.name;
      metrics.queuePending.set({ queue }, here?.pending ?? 0);
      metrics.queueAdmitted.set({ queue }, here?.admitted ?? 0);
      for (const [resource, amount] of Object.entries(spec.nominalQuota))
        metrics.queueNominalQuota.set({ queue, resource }, amount);
      for (const [resource, amount] of Object.entries(here?.used ?? {}))
        metrics.queueUsage.set({ queue, resource }, amount);
      for (const [resource, amount] of Object.entries(here?.borrowed ?? {}))
        metrics.queueBorrowed.set({ queue, resource }, amount);
    }
  }
}

function createdAtOf(origin: KubeObject): number {
  const at = Date.parse(origin.metadata?.creationTimestamp ?? '');
  return Number.isNaN(at) ? 0 : at;
}

/** Whether what decides a workload's facts is unchanged: its spec (generation) and labels. */
function sameFactsInputs(a: KubeObject, b: KubeObject): boolean {
  const labels = (o: KubeObject) => JSON.stringify(o.metadata?.labels ?? {});
  return (
    a.metadata?.generation !== undefined &&
    a.metadata.generation === b.metadata?.generation &&
    labels(a) === labels(b)
  );
}

function sameAdmission(a: IndexedWorkload, b: IndexedWorkload): boolean {
  return (
    a.admitted?.cluster === b.admitted?.cluster &&
    a.admitted?.queue === b.admitted?.queue &&
    a.admitted?.evicting === b.admitted?.evicting
  );
}

/** A status without the times that change on every write, to tell whether anything else changed. */
function comparable(status: DispatchQueueStatus): unknown {
  return { ...status, conditions: status.conditions.map(({ lastTransitionTime: _t, ...rest }) => rest) };
}

function condition(
  object: KubeObject | undefined,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): DispatchQueueStatus['conditions'][number] {
  const previous = (object as { status?: DispatchQueueStatus } | undefined)?.status?.conditions?.find(
    (c) => c.type === 'Active',
  );
  return {
    type: 'Active',
    status,
    reason,
    message,
    // Kept while the status stays what it was: the time it last changed.
    lastTransitionTime:
      previous?.status === status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : new Date(now).toISOString(),
  };
}

function invalidStatus(problems: string[], object: KubeObject, now: number): DispatchQueueStatus {
  return {
    pendingWorkloads: 0,
    admittedWorkloads: 0,
    usage: {},
    borrowed: {},
    share: '0',
    columns: { cpu: '-', memory: '-', gpu: '-' },
    conditions: [condition(object, 'False', 'InvalidSpec', problems.join('; '), now)],
    ...(object.metadata?.generation !== undefined ? { observedGeneration: object.metadata.generation } : {}),
  };
}

/** `used/nominal` per column, `-` when the queue does not name the resource. */
function columnsOf(spec: QueueSpec, used: Resources): DispatchQueueStatus['columns'] {
  const column = (resource: string) =>
    spec.nominalQuota[resource] === undefined
      ? '-'
      : `${formatResourceAmount(resource, used[resource] ?? 0)}/${formatResourceAmount(resource, spec.nominalQuota[resource])}`;
  return { cpu: column('cpu'), memory: column('memory'), gpu: column('nvidia.com/gpu') };
}
