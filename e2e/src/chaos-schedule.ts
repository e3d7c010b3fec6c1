// The chaos run's faults, decided from a seed before anything runs: which fault, when, for how
// long and where. Pure, so a seed names one schedule on every machine and a failing seed can be
// kept as a regression test (e2e/unit/chaos-schedule.test.ts holds its rules).
import { seededRandom } from './job-mix.ts';

export const faultKinds = [
  /** SIGKILL of one controller replica (either one), started again after `durationMs`. */
  'kill-controller',
  /** SIGKILL of the replica holding the leader Lease, started again after `durationMs`. */
  'kill-leader',
  /** Redis stopped, then started again after `durationMs` (its queue is lost or replayed). */
  'redis-restart',
  /** FLUSHALL on Redis: every placement task gone at once. */
  'redis-flushall',
  /** A worker's apiserver frozen (SIGSTOP) for at most a third of the lost timeout, then SIGCONT. */
  'apiserver-hang-short',
  /** A worker's apiserver frozen for longer than the lost timeout: its Jobs move, then it returns. */
  'apiserver-hang-long',
  /** A worker's apiserver stopped for longer than the lost timeout, then started again. */
  'apiserver-down',
  /** etcd (shared by every apiserver) stopped, then started again after `durationMs`. */
  'etcd-restart',
] as const;

export type FaultKind = (typeof faultKinds)[number];

export interface PlannedFault {
  kind: FaultKind;
  /** When it starts, in ms from the start of the run. */
  atMs: number;
  /** How long until it is healed (0 for FLUSHALL). */
  durationMs: number;
  /** The worker cluster, for the apiserver faults. */
  worker?: string;
  /** The controller replica (0 or 1) a `kill-controller` kills; `kill-leader` finds its own. */
  replica?: number;
}

export interface FaultScheduleOptions {
  seed: number;
  /** Faults start within [5 %, 80 %] of this window. */
  windowMs: number;
  workers: readonly string[];
  /** The controller's --worker-lost-timeout-seconds, in ms: hangs are sized around it. */
  lostTimeoutMs: number;
  /** How many of each kind. */
  counts: Partial<Record<FaultKind, number>>;
}

/** Faults that make a worker unreachable: never two on one worker at once. */
const workerFaults: ReadonlySet<FaultKind> = new Set([
  'apiserver-hang-short',
  'apiserver-hang-long',
  'apiserver-down',
]);
/** Faults that make a worker lost: at most one at a time, so a moved Job always has somewhere to go. */
const lostFaults: ReadonlySet<FaultKind> = new Set(['apiserver-hang-long', 'apiserver-down']);

function overlaps(a: PlannedFault, b: PlannedFault, marginMs: number): boolean {
  return a.atMs < b.atMs + b.durationMs + marginMs && b.atMs < a.atMs + a.durationMs + marginMs;
}

/** Whether `fault` may join `planned` (see the rules above; one restart of a process at a time). */
export function compatible(
  fault: PlannedFault,
  planned: readonly PlannedFault[],
  lostTimeoutMs: number,
): boolean {
  return planned.every((other) => {
    const sameWorker =
      workerFaults.has(fault.kind) && workerFaults.has(other.kind) && fault.worker === other.worker;
    if (sameWorker && overlaps(fault, other, 2_000)) return false;
    // A lost worker is cleaned up when it returns; the next one is lost only after that.
    if (lostFaults.has(fault.kind) && lostFaults.has(other.kind) && overlaps(fault, other, lostTimeoutMs))
      return false;
    const sameProcess =
      fault.kind === other.kind ||
      (fault.kind.startsWith('redis') && other.kind.startsWith('redis')) ||
      (fault.kind.startsWith('kill') && other.kind.startsWith('kill'));
    return !(sameProcess && overlaps(fault, other, 1_000));
  });
}

function durationFor(kind: FaultKind, lostTimeoutMs: number, between: (min: number, max: number) => number) {
  switch (kind) {
    case 'kill-controller':
    case 'kill-leader':
      return between(500, 4_000);
    case 'redis-restart':
    case 'etcd-restart':
      return between(1_000, 4_000);
    case 'redis-flushall':
      return 0;
    case 'apiserver-hang-short':
      // A third of the lost timeout at most: after a freeze, the next health check waits out the
      // probe's timeout (5 s) and the reconnect backoff, so a worker frozen 7 s of a 15 s lost
      // timeout read not Active for 16 s and was lost (docs/reliability.md).
      return between(2_000, Math.max(2_000, lostTimeoutMs / 3));
    case 'apiserver-hang-long':
    case 'apiserver-down':
      return between(lostTimeoutMs + 5_000, lostTimeoutMs + 15_000);
  }
}

/**
 * The faults of one run, ordered by start. Each is drawn at a random moment and kept if it
 * breaks no rule of `compatible`; after 200 draws without a place it fails with the kind named
 * (the window is too short for the counts asked).
 */
export function planFaults(options: FaultScheduleOptions): PlannedFault[] {
  const random = seededRandom(options.seed ^ 0x5eed);
  const between = (min: number, max: number) => Math.round(min + random() * (max - min));
  // Replicas come from a stream of their own, so that choosing them moves no fault's time.
  const replicaRandom = seededRandom(options.seed ^ 0x0c1a);
  const planned: PlannedFault[] = [];
  for (const kind of faultKinds) {
    for (let n = 0; n < (options.counts[kind] ?? 0); n++) {
      let placed = false;
      for (let draw = 0; draw < 200 && !placed; draw++) {
        const fault: PlannedFault = {
          kind,
          atMs: between(options.windowMs * 0.05, options.windowMs * 0.8),
          durationMs: durationFor(kind, options.lostTimeoutMs, between),
          ...(workerFaults.has(kind)
            ? { worker: options.workers[between(0, options.workers.length - 1)]! }
            : {}),
        };
        if (compatible(fault, planned, options.lostTimeoutMs)) {
          if (kind === 'kill-controller') fault.replica = replicaRandom() < 0.5 ? 0 : 1;
          planned.push(fault);
          placed = true;
        }
      }
      if (!placed) {
        throw new Error(
          `no room for ${kind} #${n + 1} in a ${options.windowMs / 1000} s window: lengthen the run or ask for fewer faults`,
        );
      }
    }
  }
  return planned.sort((a, b) => a.atMs - b.atMs);
}

/**
 * The faults of `npm run chaos`: `controllerKills` SIGKILLs of a replica, a third of them of the
 * leader, and two or three of every other kind.
 */
export function fullRunCounts(controllerKills: number): Partial<Record<FaultKind, number>> {
  return {
    'kill-controller': controllerKills - Math.floor(controllerKills / 3),
    'kill-leader': Math.floor(controllerKills / 3),
    'redis-restart': 2,
    'redis-flushall': 2,
    'apiserver-hang-short': 3,
    'apiserver-hang-long': 2,
    'apiserver-down': 2,
    'etcd-restart': 2,
  };
}
