// Preemption: when a workload does not fit its queue's quota, which admitted workloads to evict
// so that it can. Two policies per queue, as Kueue's: withinQueue (LowerPriority: evict lower-
// priority workloads of the same queue) and reclaimWithinCohort (Any or LowerPriority: evict
// workloads of other queues of the cohort that borrow, to get back the queue's nominal quota).
// Victims go lowest priority first, then the most recently admitted, and the set is minimal: no
// victim in it could be spared. It runs after the admission loop (decide-admission.ts) against
// the final usage, on a copy of each cohort's usage (a simulation), so the victims it picks are
// enough even with that decision's admissions counted.

import type { Eviction } from './queue-model.ts';
import {
  type AdmittedEntry,
  blockingResource,
  type CohortState,
  compareText,
  displayName,
  hold,
  type PendingEntry,
  pushTo,
  type QueueState,
  type Verdicts,
  verdict,
} from './quota-state.ts';

/** Usage of one cohort as a preemption search sees it: the real one with the evicting freed. */
interface CohortSimulation {
  used: Map<QueueState, number[]>;
  aboveGuaranteed: number[];
}

/**
 * The evictions for the workloads that did not fit their quota (each queue's `outOfQuota`, queues
 * by name; per queue, the first that finds room), and a `preempting` verdict for each
 * workload they make room for.
 */
export function preempt(
  queues: Map<string, QueueState>,
  admitted: AdmittedEntry[],
  waiting: Verdicts,
): Eviction[] {
  const simulations = new Map<CohortState, CohortSimulation>();
  const evictingByCohort = new Map<CohortState, number>();
  for (const queue of queues.values()) {
    if (simulations.has(queue.cohort)) continue;
    simulations.set(queue.cohort, {
      used: new Map(queue.cohort.members.map((member) => [member, [...member.used]])),
      aboveGuaranteed: [...queue.cohort.aboveGuaranteed],
    });
  }
  // Victims chosen earlier (evicting) count as gone: a second decision must not pick more for
  // the same need while the first ones are still on their way out.
  const candidates: AdmittedEntry[] = [];
  for (const entry of admitted) {
    if (entry.workload.evicting) {
      const simulation = simulations.get(entry.queue.cohort)!;
      hold(entry.queue, simulation.used.get(entry.queue)!, simulation.aboveGuaranteed, entry.held, -1);
      evictingByCohort.set(entry.queue.cohort, (evictingByCohort.get(entry.queue.cohort) ?? 0) + 1);
    } else candidates.push(entry);
  }
  // Lowest priority first, then the most recently admitted (it lost the least work).
  candidates.sort(
    (a, b) =>
      a.workload.priority - b.workload.priority ||
      b.workload.admittedAt - a.workload.admittedAt ||
      compareText(a.workload.uid, b.workload.uid),
  );
  const groupedByQueue = new Map<QueueState, AdmittedEntry[]>();
  const groupedByCohort = new Map<CohortState, AdmittedEntry[]>();
  for (const entry of candidates) {
    pushTo(groupedByQueue, entry.queue, entry);
    pushTo(groupedByCohort, entry.queue.cohort, entry);
  }
  const byQueue = new Map([...groupedByQueue].map(([queue, entries]) => [queue, indexVictims(entries)]));
  const byCohort = new Map([...groupedByCohort].map(([cohort, entries]) => [cohort, indexVictims(entries)]));

  const evict: Eviction[] = [];
  const taken = new Set<string>();
  // Queues take their turn by name, whatever order the snapshot listed them in.
  const byName = [...queues.values()].sort((a, b) => compareText(a.spec.name, b.spec.name));
  for (const queue of byName) {
    const { withinQueue, reclaimWithinCohort } = queue.spec.preemption;
    if (withinQueue === 'Never' && (reclaimWithinCohort === 'Never' || !queue.cohort.inCohort)) continue;
    const simulation = simulations.get(queue.cohort)!;
    const failed: PendingEntry[] = [];
    for (const entry of queue.outOfQuota) {
      // A larger workload of no higher priority than one that found no room finds none either:
      // its candidate victims are a subset and it needs more.
      if (failed.some((f) => f.workload.priority >= entry.workload.priority && dominates(entry.held, f.held)))
        continue;
      const found = preemptFor(entry, queue, simulation, byQueue, byCohort, taken, evictingByCohort);
      if (!found) {
        failed.push(entry);
        continue;
      }
      for (const victim of found.victims) {
        taken.add(victim.workload.uid);
        // Another workload of the cohort may find room in what this one's victims free beyond its need.
        evictingByCohort.set(queue.cohort, (evictingByCohort.get(queue.cohort) ?? 0) + 1);
        evict.push({
          uid: victim.workload.uid,
          reason: found.reason,
          for: entry.workload.uid,
          message: `preempted to admit ${displayName(entry.workload)} (priority ${entry.workload.priority}) of queue ${queue.spec.name}`,
        });
      }
      waiting.set(entry.workload.uid, verdict(entry, 'preempting', found.message));
      // The room is spoken for: later searches in the cohort see this workload as admitted.
      hold(queue, simulation.used.get(queue)!, simulation.aboveGuaranteed, entry.held, 1);
      break;
    }
  }
  return evict;
}

/** Candidate victims in eviction order, with running sums of what they hold for a quick bound. */
interface VictimIndex {
  entries: AdmittedEntry[];
  /** prefix[k]: what the first k entries hold together. */
  prefix: number[][];
}

function indexVictims(entries: AdmittedEntry[]): VictimIndex {
  const width = entries[0]?.held.length ?? 0;
  const prefix: number[][] = [new Array<number>(width).fill(0)];
  for (const entry of entries) prefix.push(prefix.at(-1)!.map((sum, i) => sum + entry.held[i]!));
  return { entries, prefix };
}

const noVictims: VictimIndex = { entries: [], prefix: [[]] };

/** What all candidates of priority below `priority` (all when undefined) hold together. */
function heldBelow(index: VictimIndex, priority: number | undefined, width: number): number[] {
  let count = index.entries.length;
  if (priority !== undefined) {
    // Entries are sorted by priority ascending: binary search for the first at or above it.
    let low = 0;
    let high = index.entries.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (index.entries[middle]!.workload.priority < priority) low = middle + 1;
      else high = middle;
    }
    count = low;
  }
  return count === 0 ? new Array<number>(width).fill(0) : index.prefix[count]!;
}

function dominates(a: number[], b: number[]): boolean {
  return a.every((value, i) => value >= b[i]!);
}

interface Preemption {
  victims: AdmittedEntry[];
  reason: Eviction['reason'];
  message: string;
}

function preemptFor(
  entry: PendingEntry,
  queue: QueueState,
  simulation: CohortSimulation,
  byQueue: Map<QueueState, VictimIndex>,
  byCohort: Map<CohortState, VictimIndex>,
  taken: Set<string>,
  evictingByCohort: Map<CohortState, number>,
): Preemption | undefined {
  const own = simulation.used.get(queue)!;
  const fits = () => blockingResource(queue, own, simulation.aboveGuaranteed, entry.held) < 0;
  if (fits()) {
    const count = evictingByCohort.get(queue.cohort) ?? 0;
    return {
      victims: [],
      reason: 'InQueuePreemption',
      message: `waiting for ${count} evicted ${plural(count, 'workload')} to release quota`,
    };
  }
  const { withinQueue, reclaimWithinCohort } = queue.spec.preemption;
  const priority = entry.workload.priority;
  const reclaimable =
    queue.cohort.inCohort &&
    reclaimWithinCohort !== 'Never' &&
    entry.held.every((wanted, i) => wanted <= 0 || !queue.named[i] || own[i]! + wanted <= queue.nominal[i]!);
  const width = entry.held.length;
  const below = reclaimWithinCohort === 'LowerPriority' ? priority : undefined;
  const cohortVictims = byCohort.get(queue.cohort) ?? noVictims;
  const ownVictims = byQueue.get(queue) ?? noVictims;
  // Quick bounds before any search (most workloads that do not fit find no room either): even
  // if every candidate left, would it fit? Victims already taken count as candidates here, so
  // the bound only ever errs on the side of searching.
  const reclaimBound = () => {
    const others = heldBelow(cohortVictims, below, width);
    const mine = heldBelow(ownVictims, below, width);
    const relaxed = simulation.aboveGuaranteed.map((sum, i) => sum - (others[i]! - mine[i]!));
    return blockingResource(queue, own, relaxed, entry.held) < 0;
  };
  const inQueueBound = () => {
    const ownAfter = [...own];
    const aboveAfter = [...simulation.aboveGuaranteed];
    hold(queue, ownAfter, aboveAfter, heldBelow(ownVictims, priority, width), -1);
    return blockingResource(queue, ownAfter, aboveAfter, entry.held) < 0;
  };
  if (reclaimable && reclaimBound()) {
    const victims = greedyVictims(entry, queue, simulation, cohortVictims.entries, (victim) => {
      if (victim.queue === queue || taken.has(victim.workload.uid)) return false;
      if (reclaimWithinCohort === 'LowerPriority' && victim.workload.priority >= priority) return false;
      // Only while its queue is above nominal in something this workload needs: a lender is
      // never made to give up what it is guaranteed.
      const used = simulation.used.get(victim.queue)!;
      return entry.held.some(
        (wanted, i) => wanted > 0 && victim.queue.named[i] && used[i]! > victim.queue.nominal[i]!,
      );
    });
    if (victims) {
      const owners = [...new Set(victims.map((victim) => victim.queue.spec.name))].sort().join(', ');
      return {
        victims,
        reason: 'ReclaimNominalQuota',
        message: `preempting ${victims.length} ${plural(victims.length, 'workload')} of ${owners} to reclaim nominal quota`,
      };
    }
  }
  if (withinQueue === 'LowerPriority' && inQueueBound()) {
    const victims = greedyVictims(
      entry,
      queue,
      simulation,
      ownVictims.entries,
      (victim) => victim.workload.priority < priority && !taken.has(victim.workload.uid),
    );
    if (victims) {
      return {
        victims,
        reason: 'InQueuePreemption',
        message: `preempting ${victims.length} lower-priority ${plural(victims.length, 'workload')} of queue ${queue.spec.name}`,
      };
    }
  }
  return undefined;
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${noun}s`;
}

/**
 * Takes candidates in order until the workload fits, then gives back (last taken first) every
 * one it still fits without: no victim in the answer could be spared. Leaves the simulation
 * with the victims returned when it finds a set, untouched when it does not.
 */
function greedyVictims(
  entry: PendingEntry,
  queue: QueueState,
  simulation: CohortSimulation,
  candidates: AdmittedEntry[],
  eligible: (victim: AdmittedEntry) => boolean,
): AdmittedEntry[] | undefined {
  const own = simulation.used.get(queue)!;
  const fits = () => blockingResource(queue, own, simulation.aboveGuaranteed, entry.held) < 0;
  const release = (victim: AdmittedEntry, sign: 1 | -1) =>
    hold(victim.queue, simulation.used.get(victim.queue)!, simulation.aboveGuaranteed, victim.held, sign);
  const chosen: AdmittedEntry[] = [];
  let fitting = false;
  for (const victim of candidates) {
    if (!eligible(victim)) continue;
    release(victim, -1);
    chosen.push(victim);
    if (fits()) {
      fitting = true;
      break;
    }
  }
  if (!fitting) {
    for (const victim of chosen) release(victim, 1);
    return undefined;
  }
  const kept: AdmittedEntry[] = [];
  for (let i = chosen.length - 1; i >= 0; i -= 1) {
    const victim = chosen[i]!;
    release(victim, 1);
    if (fits()) continue;
    release(victim, -1);
    kept.push(victim);
  }
  return kept.reverse();
}
