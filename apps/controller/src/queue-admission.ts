// Queue admission's index and loop: QueueAdmission keeps the index of queued workloads from the
// origins as the shared index read them (ClaimedOriginIndex; what each one is:
// queued-workload-index.ts), and the leader runs the admission cycles over it (debounced, spaced
// by their cost, never two at once): a snapshot, the pure `decideAdmission`, then the decision
// handed to the writers (queue-admission-writers.ts: admissions and evictions, waiting reasons,
// queue statuses, gauges).

import type {
  AdmissionDecision,
  AdmissionSnapshot,
  AdmittedWorkload,
  DispatchQueueStatus,
  InvalidQueue,
  ParsedQueue,
  PriorityClassLookup,
  QueueChoice,
  QueuedWorkload,
  QueueSelectionInput,
  QueueSpec,
  WorkloadPriority,
} from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock, InformerEvent } from '@jobrelay/kube';
import { originUidLabel, placementAttemptAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import {
  type PlacementRecord,
  type RecordKeyring,
  totalDemand,
  type WorkloadPodTemplate,
} from '@jobrelay/placement';
import type { OriginAction } from '@jobrelay/planner';
import type { Resources } from '@jobrelay/resources';
import type { Logger } from 'pino';
import { type ClaimedOriginIndex, readClaimedOrigin } from './claimed-origin-index.ts';
import type { ClaimedOriginEvent, ControllerEventSubscriber, ControllerPart } from './controller-events.ts';
import type { QueueMetrics } from './controller-metrics.ts';
import type { OriginPlacer } from './place-origin-jobs.ts';
import {
  type CycleReport,
  DecisionWriter,
  QueueStatusWriter,
  updateQueueGauges,
  WaitingReasonWriter,
} from './queue-admission-writers.ts';
import {
  type AdmittedKind,
  type IndexedWorkload,
  indexedWorkload,
  type ParsedQueues,
  sameAdmission,
  sameFactsInputs,
} from './queued-workload-index.ts';

export type { CycleReport } from './queue-admission-writers.ts';
export type { AdmittedKind, IndexedWorkload } from './queued-workload-index.ts';

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

export interface QueueAdmissionOptions {
  kinds: ReadonlyMap<string, AdmittedKind>;
  /** The origins as the shared index read them: the index is built from it when the first queue appears. */
  claimed: Pick<ClaimedOriginIndex, 'list'>;
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
export class QueueAdmission implements ControllerPart {
  private readonly options: QueueAdmissionOptions;
  private readonly index = new Map<string, IndexedWorkload>();
  /** Bumped when queues, PriorityClasses or namespaces change: every workload's facts are recomputed. */
  private factsVersion = 0;
  /** The decision's admissions and evictions, assumed until the cache shows them. */
  private readonly decisions: DecisionWriter;
  /** Why each workload waits, within a budget per cycle. */
  private readonly reasons: WaitingReasonWriter;
  /** Each queue's status, when it changed. */
  private readonly statuses: QueueStatusWriter;
  /** The DispatchQueues parsed as of `factsVersion` (parsing every queue per call cost more than admission). */
  private parsed: { version: number; queues: ParsedQueues } | undefined;
  /**
   * Admitted attempts whose mirror is finished on their cluster (`attemptKey`): their pods are
   * gone (a Job's terminal condition comes only once its pods have), so they hold no quota, ahead
   * of the origin's status catching up, which under load is most of a workload's time in quota.
   * Keyed by the attempt, not only the cluster: an earlier attempt's mirror on the same cluster
   * (preempted or moved away and placed back) finishing says nothing of the current one.
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
    const cycleSoon = (delayMs: number) => this.cycleSoon(delayMs);
    this.decisions = new DecisionWriter(options, this.index, cycleSoon);
    this.reasons = new WaitingReasonWriter(options, cycleSoon);
    this.statuses = new QueueStatusWriter(options, cycleSoon);
  }

  /** Whether any DispatchQueue exists: without one, admission does nothing. */
  get active(): boolean {
    return this.options.queues.list().length > 0;
  }

  readonly name = 'queue admission';
  /**
   * Its index follows the origins (as the shared index read them) and their mirrors; a cycle
   * runs when what it decides by changed: a namespace's labels (the queue they select), a queue's
   * spec or a priority, a worker's availability or capacity.
   */
  readonly watches = [
    'claimedOrigin',
    'mirror',
    'managementNamespace',
    'workerAvailability',
    'workerCapacity',
    'queueRules',
  ] as const;
  readonly writes = [
    'origins: placement records of admitted workloads, evictions, waiting reasons',
    'DispatchQueue status',
  ];

  subscribe(events: ControllerEventSubscriber): void {
    events.on('claimedOrigin', (event) => this.observe(event));
    events.on('mirror', (cluster, kind, event) => this.observeMirror(cluster, kind, event));
    events.on('managementNamespace', () => this.factsChanged());
    events.on('queueRules', () => this.factsChanged());
    events.on('workerAvailability', () => this.capacityChanged());
    events.on('workerCapacity', () => this.capacityChanged());
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

  /** An origin changed in its cache (its record read by the shared index). */
  observe(event: ClaimedOriginEvent<AdmittedKind>): void {
    if (event.type === 'delete') {
      this.forget(event.uid);
      this.cycleSoon();
      return;
    }
    if (!this.wasActive) return;
    const { uid, origin } = event.claimed;
    const before = this.index.get(uid);
    const after = indexedWorkload(event.claimed, this.options);
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
    // Another attempt, or not placed: a finished mirror of before says nothing of now.
    if (
      before?.admitted &&
      attemptKey(uid, before.admitted) !== (after.admitted && attemptKey(uid, after.admitted))
    )
      this.finishedOnWorker.delete(attemptKey(uid, before.admitted));
    // The cache shows what was assumed: the record now says it.
    this.decisions.seen(uid, after);
    this.reasons.seen(uid, origin.metadata?.annotations?.[unschedulableAnnotation]);
    if (!before || before.pending !== after.pending || !sameAdmission(before, after)) this.cycleSoon();
  }

  /** A mirror changed on a worker: a finished one gives its workload's quota back. */
  observeMirror(cluster: string, kindName: string, event: InformerEvent<KubeObject>): void {
    if (!this.wasActive || event.type === 'delete') return;
    const uid = event.object.metadata?.labels?.[originUidLabel];
    const entry = uid ? this.index.get(uid) : undefined;
    if (!entry?.admitted || entry.admitted.cluster !== cluster || entry.kindName !== kindName) return;
    // Only the admitted attempt's own mirror: a late event of an earlier attempt's (or a mirror
    // that names no attempt) frees nothing; the quota stays held until the origin shows it done.
    const attempt = Number(event.object.metadata?.annotations?.[placementAttemptAnnotation]);
    if (attempt !== entry.admitted.record.attempt) return;
    const kind = this.options.kinds.get(kindName);
    if (!kind?.adapter.isFinished(event.object)) return;
    const key = attemptKey(entry.uid, entry.admitted);
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
    const entry =
      this.index.get(uid) ??
      indexedWorkload(readClaimedOrigin(kind, origin, this.options.recordKeys), this.options);
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
    if (admitted) this.finishedOnWorker.delete(attemptKey(uid, admitted));
    this.index.delete(uid);
    this.decisions.forget(uid);
    this.reasons.forget(uid);
    this.leftToQueue.delete(uid);
  }

  private rebuild(): void {
    this.index.clear();
    for (const kind of this.options.kinds.values()) {
      for (const claimed of this.options.claimed.list(kind.adapter.name)) {
        const entry = indexedWorkload(claimed, this.options);
        if (entry) this.index.set(entry.uid, entry);
      }
    }
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
      const assumed = this.decisions.assumedAdmission(entry.uid);
      if (entry.admitted) {
        const { cluster, queue, admittedAt, evicting } = entry.admitted;
        // Done on its worker: nothing of it runs, whatever its origin says yet.
        if (this.finishedOnWorker.has(attemptKey(entry.uid, entry.admitted))) continue;
        admitted.push({
          ...workload,
          queue,
          cluster,
          admittedAt,
          evicting: evicting || this.decisions.evictionAssumed(entry.uid),
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
    const writes = this.decisions.write(decision, report, now);
    const notes = [
      ...refusedNotes,
      ...[...decision.waiting].flatMap(([uid, verdict]) => {
        const entry = this.index.get(uid);
        return entry ? [{ entry, message: verdict.message, gate: verdict.gate }] : [];
      }),
    ];
    // Chosen now (so the next cycle does not choose them again), written once the decisions are.
    const chosenNotes = this.reasons.choose(notes, now);
    updateQueueGauges(metrics, specs, decision.usage);
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
          this.reasons.writeNotes(chosenNotes, report),
          this.statuses.writeStatusRound(specs, invalid, decision.usage).then((written) => {
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
}

/** One admitted attempt of a workload on its cluster: `uid@cluster#attempt`. */
function attemptKey(uid: string, admitted: NonNullable<IndexedWorkload['admitted']>): string {
  return `${uid}@${admitted.cluster}#${admitted.record.attempt}`;
}
