// The writes an admission cycle makes, each writer with what it remembers of its writes until
// the origin and queue caches show them:
// - DecisionWriter: the decision's admissions (placed at once on the cluster the decision
//   reserved, the record naming the queue) and evictions (the record marked `preempted`, a
//   `Preempted` Event); assumed until the cache shows them, they count in the next cycle's
//   snapshot, so nothing is admitted or evicted twice;
// - WaitingReasonWriter: why each workload waits (`jobrelay.dev/unschedulable`), only when it
//   changed, within a budget per cycle;
// - QueueStatusWriter: each DispatchQueue's status, when it changed, at most every interval;
// - updateQueueGauges: the queue gauges.
// QueueAdmission (queue-admission.ts) keeps the index, runs the cycles and calls these; nothing
// here decides anything.

import type {
  AdmissionDecision,
  DispatchQueueStatus,
  EvictionReason,
  QueueSpec,
  QueueUsage,
} from '@jobrelay/admission';
import type { KubeObject } from '@jobrelay/kinds';
import type { Clock } from '@jobrelay/kube';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import { type PlacementRecord, waitingSince } from '@jobrelay/placement';
import type { OriginAction } from '@jobrelay/planner';
import { formatResourceAmount, type Resources } from '@jobrelay/resources';
import type { Logger } from 'pino';
import type { QueueMetrics } from './controller-metrics.ts';
import type { OriginPlacer } from './place-origin-jobs.ts';
import type { AdmittedKind, IndexedWorkload, ParsedQueues } from './queued-workload-index.ts';

/** One admission cycle's outcome, for logs and tests. */
export interface CycleReport {
  admitted: Array<{ uid: string; cluster: string; queue: string; outcome: string }>;
  evicted: Array<{ uid: string; reason: EvictionReason }>;
  /** Waiting reasons written (only the changed ones). */
  noted: Array<{ uid: string; message: string }>;
  statusWritten: string[];
}

/** Asks the cycle loop for a cycle in `delayMs` (QueueAdmission.cycleSoon). */
type CycleSoon = (delayMs: number) => void;

const admittedBy = (queue: string, cluster: string, borrowed: Resources) => {
  const borrowing = Object.entries(borrowed).filter(([, amount]) => amount > 0);
  const note =
    borrowing.length > 0
      ? ` (borrowing ${borrowing.map(([r, a]) => `${formatResourceAmount(r, a)} ${r}`).join(', ')} from its cohort)`
      : '';
  return `admitted by queue ${queue}${note}; placed on ${cluster}`;
};

// ---------------------------------------------------------------------------------------------
// Admissions and evictions

export interface DecisionWriterOptions {
  kinds: ReadonlyMap<string, AdmittedKind>;
  placer: Pick<OriginPlacer, 'placeAdmitted' | 'writeOn'>;
  functions: {
    /** The actions that mark the record `preempted` and record a `Preempted` Event (its reconcile re-places it). */
    planEviction(record: PlacementRecord, message: string): OriginAction[];
  };
  log: Logger;
  metrics?: QueueMetrics;
}

/**
 * A decision's admissions and evictions: written, and remembered until the cache shows them (the
 * next cycle counts an assumed admission as admitted and an assumed eviction as evicting).
 */
export class DecisionWriter {
  private readonly options: DecisionWriterOptions;
  /** The index of queued workloads (QueueAdmission's): the decision names its entries by UID. */
  private readonly index: ReadonlyMap<string, IndexedWorkload>;
  private readonly cycleSoon: CycleSoon;
  /** Admitted by a cycle, not yet seen placed in the cache: they hold quota (cf. the placer's assumed placements). */
  private readonly assumedAdmissions = new Map<string, { cluster: string; queue: string; at: number }>();
  /** Evictions written, not yet seen in the cache: not chosen again. */
  private readonly assumedEvictions = new Set<string>();

  constructor(
    options: DecisionWriterOptions,
    index: ReadonlyMap<string, IndexedWorkload>,
    cycleSoon: CycleSoon,
  ) {
    this.options = options;
    this.index = index;
    this.cycleSoon = cycleSoon;
  }

  /** Admitted by a cycle and not yet seen placed: where, by which queue, and when. */
  assumedAdmission(uid: string): { cluster: string; queue: string; at: number } | undefined {
    return this.assumedAdmissions.get(uid);
  }

  /** Whether its eviction was written and is not yet seen in the cache. */
  evictionAssumed(uid: string): boolean {
    return this.assumedEvictions.has(uid);
  }

  /** Its origin changed in the cache: what was assumed of it and the record now says is forgotten. */
  seen(uid: string, after: IndexedWorkload): void {
    if (after.admitted || !after.pending) this.assumedAdmissions.delete(uid);
    if (after.admitted?.evicting || !after.admitted) this.assumedEvictions.delete(uid);
  }

  forget(uid: string): void {
    this.assumedAdmissions.delete(uid);
    this.assumedEvictions.delete(uid);
  }

  /**
   * Starts the decision's writes: each admitted placed, each evicted marked (unless it already
   * is, or its eviction is assumed). Returns them; the report gets what each did.
   */
  write(decision: AdmissionDecision, report: CycleReport, now: number): Promise<void>[] {
    const { functions, log, metrics } = this.options;
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
    return writes;
  }

  private unassume(uid: string): void {
    this.assumedAdmissions.delete(uid);
    // Another look: what it reserved is free again, or it may be admitted elsewhere.
    this.cycleSoon(1_000);
  }
}

// ---------------------------------------------------------------------------------------------
// Waiting reasons

export interface WaitingReasonWriterOptions {
  kinds: ReadonlyMap<string, AdmittedKind>;
  placer: Pick<OriginPlacer, 'writeOn'>;
  log: Logger;
  /** At most this many waiting reasons written per cycle (default 100); see QueueAdmissionOptions. */
  notesPerCycle?: number;
  /** A same-gate reason is rewritten at most this often (default 60 s); see QueueAdmissionOptions. */
  noteRefreshMs?: number;
}

/** Why a workload waits, as a cycle found it: the message and its gate (`quota`, `refused`, ...). */
export interface WaitingNote {
  entry: IndexedWorkload;
  message: string;
  gate: string;
}

/** The waiting reasons (`jobrelay.dev/unschedulable`): chosen within a budget, written, remembered. */
export class WaitingReasonWriter {
  private readonly options: WaitingReasonWriterOptions;
  private readonly cycleSoon: CycleSoon;
  /** Waiting reasons written, by UID, until the cache shows them: not written twice. */
  private readonly notedWaiting = new Map<string, string>();
  /** When this replica last wrote each workload's reason, and its gate. */
  private readonly notedAt = new Map<string, { gate: string; at: number }>();
  /** Waiting reasons being written (a cycle does not wait for them): they count against the budget. */
  private notesInFlight = 0;

  constructor(options: WaitingReasonWriterOptions, cycleSoon: CycleSoon) {
    this.options = options;
    this.cycleSoon = cycleSoon;
  }

  /** Its origin changed in the cache with this reason on it: once it shows ours, ours is forgotten. */
  seen(uid: string, note: string | undefined): void {
    if (note !== undefined && this.notedWaiting.get(uid) === note) this.notedWaiting.delete(uid);
  }

  forget(uid: string): void {
    this.notedWaiting.delete(uid);
    this.notedAt.delete(uid);
  }

  /** The reasons to write this cycle (`notesToWrite`), marked written at `now` and counted in flight. */
  choose<T extends WaitingNote>(notes: readonly T[], now: number): T[] {
    const chosenNotes = this.notesToWrite(notes, now);
    for (const { entry, message, gate } of chosenNotes) {
      this.notedWaiting.set(entry.uid, message);
      this.notedAt.set(entry.uid, { gate, at: now });
    }
    this.notesInFlight += chosenNotes.length;
    return chosenNotes;
  }

  async writeNotes(
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

  /**
   * The waiting reasons to write this cycle: those that changed, a workload with none (or a new
   * gate) first, a same-gate refresh (only its figures moved) once `noteRefreshMs` has passed
   * since this replica wrote it; at most `notesPerCycle`. What is left asks for a later cycle.
   */
  private notesToWrite<T extends WaitingNote>(notes: readonly T[], now: number): T[] {
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
}

// ---------------------------------------------------------------------------------------------
// Queue statuses

export interface QueueStatusWriterOptions {
  /** The DispatchQueue cache: each queue's status as it stands. */
  queues: { list(): KubeObject[] };
  functions: {
    /** `used/nominal` of cpu, memory and GPUs for `kubectl get dispatchqueues`. */
    queueStatusColumns?(nominal: Resources, used: Resources): DispatchQueueStatus['columns'];
  };
  /** Writes a DispatchQueue's `.status` (merge patch of the status subresource). */
  writeQueueStatus(name: string, status: DispatchQueueStatus): Promise<void>;
  clock: Clock;
  log: Logger;
  /** A queue's status is written at most this often (default 2 s). */
  statusIntervalMs?: number;
}

/** Each DispatchQueue's status: usage, borrowed, share, the `kubectl get dq` columns, `Active`. */
export class QueueStatusWriter {
  private readonly options: QueueStatusWriterOptions;
  private readonly cycleSoon: CycleSoon;
  /** Per queue: the status last written and when. */
  private readonly writtenStatus = new Map<string, { json: string; at: number }>();
  /** The queue statuses being written, if any (one round at a time). */
  private statusRound: Promise<string[]> | undefined;

  constructor(options: QueueStatusWriterOptions, cycleSoon: CycleSoon) {
    this.options = options;
    this.cycleSoon = cycleSoon;
  }

  /** One round of queue status writes at a time; a cycle meanwhile leaves them to a later one. */
  writeStatusRound(
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

// ---------------------------------------------------------------------------------------------
// Gauges

/** Each queue's gauges as of a cycle's decision, all reset first (a queue gone leaves none behind). */
export function updateQueueGauges(
  metrics: QueueMetrics | undefined,
  specs: readonly QueueSpec[],
  usage: ReadonlyMap<string, QueueUsage>,
): void {
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
