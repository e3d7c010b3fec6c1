// Properties of decideAdmission over seeded random snapshots: several queues alone and in two
// cohorts, every kind of limit, mixed priorities and ages, and clusters of fixed capacity.
// Each property is checked against the oracle of admission-test-model.ts, not against the code.

import type { Resources } from '@jobrelay/resources';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePendingOrder, decideAdmission } from '../src/decide-admission.ts';
import type {
  AdmissionDecision,
  AdmissionSnapshot,
  AdmittedWorkload,
  QueuedWorkload,
  QueueSpec,
} from '../src/queue-model.ts';
import {
  addUp,
  capacityModel,
  cores,
  fitsQuota,
  gibibytes,
  heldBy,
  quotaHolds,
  takeAway,
  usageByQueue,
} from './admission-test-model.ts';

const gpu = 'example.com/gpu';
const clusterNames = ['east', 'north', 'west'];

const limitArbitrary = fc.record(
  {
    cpu: fc.integer({ min: 0, max: 8 }).map(cores),
    memory: fc.integer({ min: 0, max: 16 }).map(gibibytes),
    [gpu]: fc.integer({ min: 0, max: 4 }),
    workloads: fc.integer({ min: 0, max: 6 }),
  },
  { requiredKeys: [] },
);

const queueArbitrary = (name: string) =>
  fc.record({
    name: fc.constant(name),
    nominalQuota: fc.record(
      {
        cpu: fc.integer({ min: 0, max: 12 }).map(cores),
        memory: fc.integer({ min: 0, max: 32 }).map(gibibytes),
        [gpu]: fc.integer({ min: 0, max: 4 }),
        workloads: fc.integer({ min: 1, max: 10 }),
      },
      { requiredKeys: ['cpu'] },
    ),
    cohort: fc.option(fc.constantFrom('lab', 'plant'), { nil: undefined, freq: 4 }),
    borrowingLimit: fc.option(limitArbitrary, { nil: undefined }),
    lendingLimit: fc.option(limitArbitrary, { nil: undefined }),
    weight: fc.constantFrom(1, 2, 3),
    queueingStrategy: fc.constantFrom('StrictFIFO' as const, 'BestEffortFIFO' as const),
    preemption: fc.record({
      withinQueue: fc.constantFrom('Never' as const, 'LowerPriority' as const),
      reclaimWithinCohort: fc.constantFrom('Never' as const, 'LowerPriority' as const, 'Any' as const),
    }),
  });

const cpuDemand = fc.integer({ min: 1, max: 8 }).map((n) => n * 500);

/** `favourite` takes extra: admitted workloads crowd into q0, which then borrows from the others. */
const workloadArbitrary = (queueCount: number, favourite: number) =>
  fc.record({
    queue: fc.oneof(
      { weight: 20, arbitrary: fc.integer({ min: 0, max: queueCount - 1 }).map((i) => `q${i}`) },
      { weight: favourite, arbitrary: fc.constant('q0') },
      { weight: 1, arbitrary: fc.constant('missing') },
    ),
    priority: fc.constantFrom(0, 10, 100),
    createdAt: fc.integer({ min: 0, max: 5 }),
    // Mostly cpu alone, so that many fit their queues and preemption has victims to choose from.
    demand: fc.oneof(
      { weight: 6, arbitrary: fc.record({ cpu: cpuDemand }) },
      {
        weight: 2,
        arbitrary: fc.record({ cpu: cpuDemand, memory: fc.integer({ min: 1, max: 8 }).map(gibibytes) }),
      },
      { weight: 1, arbitrary: fc.record({ cpu: cpuDemand, [gpu]: fc.integer({ min: 1, max: 2 }) }) },
    ),
    cluster: fc.constantFrom(...clusterNames),
    admittedAt: fc.integer({ min: 0, max: 5 }),
    // Now and then, one chosen as a victim before and not gone yet.
    evicting: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  });

/** A snapshot whose admitted workloads keep every quota rule, as a running system's do. */
/**
 * Half the snapshots are crowded: one cohort, no lending limits, q0 borrowing as much as the
 * others lend, so that reclaiming nominal quota is common rather than a rare coincidence.
 */
const snapshotArbitrary = fc
  .tuple(fc.integer({ min: 1, max: 5 }), fc.boolean())
  .chain(([queueCount, crowded]) =>
    fc.record({
      queues: fc
        .tuple(...Array.from({ length: queueCount }, (_, i) => queueArbitrary(`q${i}`)))
        .map((queues) => (crowded ? queues.map(crowd) : queues)),
      admitted: fc.array(workloadArbitrary(queueCount, 30), { maxLength: 30 }),
      pending: fc.array(workloadArbitrary(queueCount, 0), { maxLength: 24 }),
      capacity: fc.tuple(
        ...clusterNames.map(() =>
          fc.record({
            cpu: fc.integer({ min: 2, max: 24 }).map(cores),
            memory: fc.integer({ min: 4, max: 64 }).map(gibibytes),
            [gpu]: fc.integer({ min: 0, max: 4 }),
          }),
        ),
      ),
    }),
  )
  .map(({ queues, admitted, pending, capacity }): AdmissionSnapshot => {
    const specs: QueueSpec[] = queues.map((queue) => stripUndefined(queue) as QueueSpec);
    const holding: AdmittedWorkload[] = [];
    admitted.forEach((candidate, i) => {
      const workload: AdmittedWorkload = {
        uid: `admitted-${i}`,
        label: `Kind team/admitted-${i}`,
        namespace: 'team',
        queue: candidate.queue,
        priority: candidate.priority,
        createdAt: candidate.createdAt,
        demand: candidate.demand,
        cluster: candidate.cluster,
        admittedAt: candidate.admittedAt,
        ...(candidate.evicting ? { evicting: true } : {}),
      };
      const named = Object.keys(workload.demand).every((r) =>
        specs.some((s) => s.name === workload.queue && r in s.nominalQuota),
      );
      if (named && fitsQuota(specs, usageByQueue(holding), workload)) holding.push(workload);
    });
    const waiting: QueuedWorkload[] = pending.map((candidate, i) => ({
      uid: `pending-${i}`,
      label: `Kind team/pending-${i}`,
      namespace: 'team',
      queue: candidate.queue,
      priority: candidate.priority,
      createdAt: candidate.createdAt,
      demand: candidate.demand,
    }));
    const clusters = Object.fromEntries(clusterNames.map((name, i) => [name, capacity[i]!]));
    return {
      queues: specs,
      admitted: holding,
      pending: waiting,
      chooseCluster: capacityModel(clusters, holding),
    };
  });

function crowd<T extends Omit<QueueSpec, 'nominalQuota'>>(queue: T): T {
  const lender = queue.name !== 'q0';
  return {
    ...queue,
    cohort: 'lab',
    lendingLimit: undefined,
    borrowingLimit: lender ? queue.borrowingLimit : undefined,
    preemption: lender ? { ...queue.preemption, reclaimWithinCohort: 'Any' } : queue.preemption,
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** What every queue holds after the decision: the snapshot's admitted plus the admissions. */
function finalHolders(snapshot: AdmissionSnapshot, decision: AdmissionDecision): QueuedWorkload[] {
  const admitted = new Set(decision.admit.map((a) => a.uid));
  return [...snapshot.admitted, ...snapshot.pending.filter((w) => admitted.has(w.uid))];
}

function finalAssumed(snapshot: AdmissionSnapshot, decision: AdmissionDecision): Map<string, Resources> {
  const assumed = new Map<string, Resources>();
  const byUid = new Map(snapshot.pending.map((w) => [w.uid, w]));
  for (const a of decision.admit)
    assumed.set(a.cluster, addUp(assumed.get(a.cluster), byUid.get(a.uid)!.demand));
  return assumed;
}

const runs = { seed: 20261203, numRuns: 300 };

describe('decideAdmission properties', () => {
  it('keeps every queue under nominal + borrowing limit and every cohort within its pool and lending limits', () => {
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        expect(quotaHolds(snapshot.queues, usageByQueue(finalHolders(snapshot, decision)))).toBe(true);
      }),
      runs,
    );
  });

  it('answers for every pending workload exactly once: admitted, or a verdict with its place in line', () => {
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        const admitted = decision.admit.map((a) => a.uid);
        expect(new Set(admitted).size).toBe(admitted.length);
        for (const workload of snapshot.pending) {
          const verdict = decision.waiting.get(workload.uid);
          expect(admitted.includes(workload.uid)).toBe(verdict === undefined);
          if (!verdict) continue;
          const line = snapshot.pending.filter((w) => w.queue === workload.queue).sort(comparePendingOrder);
          expect(verdict.of).toBe(line.length);
          expect(line[verdict.position - 1]?.uid).toBe(workload.uid);
          expect(verdict.message.length).toBeGreaterThan(0);
        }
        expect(decision.waiting.size).toBe(snapshot.pending.length - admitted.length);
      }),
      runs,
    );
  });

  it('leaves nothing waiting that fits its quota and a cluster (work-conserving), StrictFIFO order aside', () => {
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        const usage = usageByQueue(finalHolders(snapshot, decision));
        const assumed = finalAssumed(snapshot, decision);
        for (const workload of snapshot.pending) {
          const verdict = decision.waiting.get(workload.uid);
          if (!verdict) continue;
          const spec = snapshot.queues.find((q) => q.name === workload.queue);
          if (verdict.gate === 'order') {
            expect(spec?.queueingStrategy).toBe('StrictFIFO');
            continue;
          }
          // Inadmissible: no such queue, or a resource it does not name, or too much even with
          // nothing else admitted anywhere.
          const alone = spec !== undefined && fitsQuota(snapshot.queues, new Map(), workload);
          expect(verdict.gate === 'inadmissible').toBe(!alone);
          const fitsCluster = snapshot.chooseCluster(workload, assumed).kind === 'fits';
          expect(fitsQuota(snapshot.queues, usage, workload) && fitsCluster).toBe(false);
          if (verdict.gate === 'quota' || verdict.gate === 'preempting') {
            expect(fitsQuota(snapshot.queues, usage, workload)).toBe(false);
          }
        }
      }),
      runs,
    );
  });

  it('never admits a lower-priority workload of a queue while a higher-priority one that fits waits', () => {
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        const usage = usageByQueue(finalHolders(snapshot, decision));
        const assumed = finalAssumed(snapshot, decision);
        const admitted = new Set(decision.admit.map((a) => a.uid));
        for (const high of snapshot.pending) {
          if (admitted.has(high.uid)) continue;
          const passedBy = snapshot.pending.some(
            (low) => admitted.has(low.uid) && low.queue === high.queue && low.priority < high.priority,
          );
          if (!passedBy) continue;
          const fits =
            fitsQuota(snapshot.queues, usage, high) && snapshot.chooseCluster(high, assumed).kind === 'fits';
          expect(fits).toBe(false);
        }
      }),
      runs,
    );
  });

  it('StrictFIFO admits a prefix of its queue’s order, inadmissible workloads aside', () => {
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        const admitted = new Set(decision.admit.map((a) => a.uid));
        for (const spec of snapshot.queues.filter((q) => q.queueingStrategy === 'StrictFIFO')) {
          const line = snapshot.pending
            .filter((w) => w.queue === spec.name && decision.waiting.get(w.uid)?.gate !== 'inadmissible')
            .sort(comparePendingOrder);
          const firstWaiting = line.findIndex((w) => !admitted.has(w.uid));
          if (firstWaiting < 0) continue;
          expect(line.slice(firstWaiting).filter((w) => admitted.has(w.uid))).toEqual([]);
          for (const behind of line.slice(firstWaiting + 1))
            expect(decision.waiting.get(behind.uid)?.gate).toBe('order');
        }
      }),
      runs,
    );
  });

  it('preempts only to reclaim nominal quota or for higher priority in the queue, one workload per queue, minimally', () => {
    const victimsByReason = { InQueuePreemption: 0, ReclaimNominalQuota: 0 };
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        const byUid = new Map<string, QueuedWorkload>(
          [...snapshot.admitted, ...snapshot.pending].map((w) => [w.uid, w]),
        );
        const specOf = (queue: string) => snapshot.queues.find((q) => q.name === queue)!;
        // The search's view: final usage with evicting workloads gone, then, queue by queue in
        // name order, each preempting workload admitted and its victims gone.
        let usage = usageByQueue(
          finalHolders(snapshot, decision).filter((w) => !(w as AdmittedWorkload).evicting),
        );
        const preempting = snapshot.pending
          .filter((w) => decision.waiting.get(w.uid)?.gate === 'preempting')
          .sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
        expect(new Set(preempting.map((w) => w.queue)).size).toBe(preempting.length);
        expect(new Set(decision.evict.map((e) => e.uid)).size).toBe(decision.evict.length);
        for (const workload of preempting) {
          const spec = specOf(workload.queue);
          const victims = decision.evict.filter((e) => e.for === workload.uid);
          for (const eviction of victims) {
            victimsByReason[eviction.reason] += 1;
            const victim = byUid.get(eviction.uid) as AdmittedWorkload;
            expect(snapshot.admitted.includes(victim)).toBe(true);
            expect(victim.evicting).toBeUndefined();
            if (eviction.reason === 'InQueuePreemption') {
              expect(spec.preemption.withinQueue).toBe('LowerPriority');
              expect(victim.queue).toBe(workload.queue);
              expect(victim.priority).toBeLessThan(workload.priority);
            } else {
              expect(eviction.reason).toBe('ReclaimNominalQuota');
              expect(spec.preemption.reclaimWithinCohort).not.toBe('Never');
              expect(victim.queue).not.toBe(workload.queue);
              expect(specOf(victim.queue).cohort).toBe(spec.cohort);
              // Only from a queue above its nominal quota in something the workload asks for.
              const victimSpec = specOf(victim.queue);
              const held = heldBy(workload);
              const borrowing = Object.keys(victimSpec.nominalQuota).some(
                (r) =>
                  (held[r] ?? 0) > 0 &&
                  (usage.get(victim.queue)?.[r] ?? 0) > (victimSpec.nominalQuota[r] ?? 0),
              );
              expect(borrowing).toBe(true);
              if (spec.preemption.reclaimWithinCohort === 'LowerPriority') {
                expect(victim.priority).toBeLessThan(workload.priority);
              }
            }
          }
          let without = usage;
          for (const eviction of victims) {
            const victim = byUid.get(eviction.uid)!;
            without = new Map(without).set(victim.queue, takeAway(without.get(victim.queue), heldBy(victim)));
          }
          expect(fitsQuota(snapshot.queues, without, workload)).toBe(true);
          for (const eviction of victims) {
            const victim = byUid.get(eviction.uid)!;
            const spared = new Map(without).set(
              victim.queue,
              addUp(without.get(victim.queue), heldBy(victim)),
            );
            expect(fitsQuota(snapshot.queues, spared, workload)).toBe(false);
          }
          usage = new Map(without).set(workload.queue, addUp(without.get(workload.queue), heldBy(workload)));
        }
        expect(decision.evict.every((e) => preempting.some((w) => w.uid === e.for))).toBe(true);
      }),
      runs,
    );
    // Guards against a generator that never makes preemption happen. Reclaim needs a lender
    // whose workload fits its own nominal quota while a borrower holds it: rarer by nature.
    expect(victimsByReason.InQueuePreemption).toBeGreaterThan(20);
    expect(victimsByReason.ReclaimNominalQuota).toBeGreaterThan(4);
  });

  it('preempts within a queue whenever evicting all its lower-priority workloads would make room', () => {
    let checked = 0;
    fc.assert(
      fc.property(snapshotArbitrary, (snapshot) => {
        const decision = decideAdmission(snapshot);
        // Where no workload of the queue's cohort (or of the queue, alone) preempts, every search
        // there saw the same state: final usage with the evicting gone.
        const specOf = (queue: string) => snapshot.queues.find((q) => q.name === queue);
        const together = (a: QueueSpec, b: QueueSpec) =>
          a === b || (a.cohort !== undefined && a.cohort === b.cohort);
        const preemptingIn = snapshot.pending
          .filter((w) => decision.waiting.get(w.uid)?.gate === 'preempting')
          .map((w) => specOf(w.queue)!);
        const holders = finalHolders(snapshot, decision).filter((w) => !(w as AdmittedWorkload).evicting);
        for (const workload of snapshot.pending) {
          const spec = specOf(workload.queue);
          if (spec?.preemption.withinQueue !== 'LowerPriority') continue;
          if (preemptingIn.some((other) => together(other, spec))) continue;
          if (decision.waiting.get(workload.uid)?.gate !== 'quota') continue;
          const lower = new Set(
            snapshot.admitted
              .filter((a) => a.queue === workload.queue && a.priority < workload.priority)
              .map((a) => a.uid),
          );
          if (lower.size > 0) checked += 1;
          const usage = usageByQueue(holders.filter((w) => !lower.has(w.uid)));
          expect(fitsQuota(snapshot.queues, usage, workload)).toBe(false);
        }
      }),
      // Rarer than the others by nature (a search that found nothing): more runs.
      { ...runs, numRuns: 1000 },
    );
    expect(checked).toBeGreaterThan(10);
  });

  it('is deterministic: the same snapshot, in any order, gives the same decision', () => {
    fc.assert(
      fc.property(snapshotArbitrary, fc.integer({ min: 0, max: 1000 }), (snapshot, rotation) => {
        const first = decideAdmission(snapshot);
        expect(decideAdmission(snapshot)).toEqual(first);
        const rotate = <T>(items: readonly T[]) => {
          const k = items.length === 0 ? 0 : rotation % items.length;
          return [...items.slice(k), ...items.slice(0, k)];
        };
        const reordered = {
          ...snapshot,
          queues: rotate(snapshot.queues),
          admitted: rotate(snapshot.admitted),
          pending: [...rotate(snapshot.pending)].reverse(),
        };
        expect(decideAdmission(reordered)).toEqual(first);
      }),
      runs,
    );
  });
});
