// Fair sharing over time, in a pure discrete-time simulation: each step, workloads that ran their
// duration finish, evicted ones leave (and wait again), then one decision is taken and carried
// out. Three flooded queues of weights 1, 1 and 2 borrow everything from an idle lender; the
// lender then comes back and takes its nominal quota back by preemption.

import { describe, expect, it } from 'vitest';
import { decideAdmission } from '../src/decide-admission.ts';
import type { AdmittedWorkload, QueuedWorkload, QueueSpec } from '../src/queue-model.ts';
import { anyCluster, cores, pendingWorkload, queueSpec } from './admission-test-model.ts';

const duration = 10;
const lenderReturnsAt = 105;
const steps = 160;
const lenderQuota = cores(40);

const queues: QueueSpec[] = [
  queueSpec('team-a', { cohort: 'lab', nominalQuota: { cpu: 0 }, weight: 1 }),
  queueSpec('team-b', { cohort: 'lab', nominalQuota: { cpu: 0 }, weight: 1 }),
  queueSpec('team-c', { cohort: 'lab', nominalQuota: { cpu: 0 }, weight: 2 }),
  queueSpec('owner', {
    cohort: 'lab',
    nominalQuota: { cpu: lenderQuota },
    preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Any' },
  }),
];

interface Running extends AdmittedWorkload {
  finishesAt: number;
}

interface Trace {
  /** Per step, per queue: the cpu its admitted workloads hold after that step's decision. */
  held: Array<Map<string, number>>;
  reclaimed: number;
}

function simulate(): Trace {
  const flood = (queue: string) =>
    Array.from({ length: 1000 }, (_, i) =>
      pendingWorkload(
        `${queue}-${i}`,
        queue,
        { cpu: cores(1) },
        { createdAt: i, label: `Kind ${queue}/w-${i}` },
      ),
    );
  let pending: QueuedWorkload[] = ['team-a', 'team-b', 'team-c'].flatMap(flood);
  let running: Running[] = [];
  const trace: Trace = { held: [], reclaimed: 0 };

  for (let now = 0; now < steps; now += 1) {
    if (now === lenderReturnsAt) {
      pending.push(
        ...[0, 1, 2, 3].map((i) =>
          pendingWorkload(`owner-${i}`, 'owner', { cpu: cores(10) }, { createdAt: now + i }),
        ),
      );
    }
    // Evicted workloads left during the last step and wait again; finished ones are done.
    const evicted = running.filter((w) => w.evicting);
    pending.push(...evicted.map(({ cluster, admittedAt, evicting, finishesAt, ...workload }) => workload));
    running = running.filter((w) => !w.evicting && w.finishesAt > now);

    const decision = decideAdmission({ queues, admitted: running, pending, chooseCluster: anyCluster });

    const admitted = new Map(decision.admit.map((a) => [a.uid, a]));
    for (const workload of pending.filter((w) => admitted.has(w.uid))) {
      running.push({
        ...workload,
        cluster: admitted.get(workload.uid)!.cluster,
        admittedAt: now,
        finishesAt: now + duration,
      });
    }
    pending = pending.filter((w) => !admitted.has(w.uid));
    const victims = new Set(decision.evict.map((e) => e.uid));
    running = running.map((w) => (victims.has(w.uid) ? { ...w, evicting: true } : w));
    trace.reclaimed += decision.evict.filter((e) => e.reason === 'ReclaimNominalQuota').length;

    const held = new Map<string, number>();
    for (const w of running) held.set(w.queue, (held.get(w.queue) ?? 0) + (w.demand.cpu ?? 0));
    trace.held.push(held);
  }
  return trace;
}

describe('fair sharing over time', () => {
  const trace = simulate();

  it('gives flooded queues capacity in proportion to their weights, using all an idle queue lends', () => {
    const window = trace.held.slice(0, lenderReturnsAt);
    const cpuSteps = (queue: string) => window.reduce((sum, held) => sum + (held.get(queue) ?? 0), 0);
    const total = cpuSteps('team-a') + cpuSteps('team-b') + cpuSteps('team-c');
    // Work-conserving: the idle owner's whole quota is in use at every step.
    expect(total).toBe(lenderQuota * window.length);
    for (const [queue, expected] of [
      ['team-a', 0.25],
      ['team-b', 0.25],
      ['team-c', 0.5],
    ] as const) {
      const share = cpuSteps(queue) / total;
      expect(Math.abs(share - expected)).toBeLessThanOrEqual(expected * 0.1);
    }
  });

  it('lets a returning idle queue reclaim its nominal quota by preemption, before borrowers finish', () => {
    expect(trace.reclaimed).toBeGreaterThan(0);
    // Borrowers admitted at the last round (step 100) would run until 110; reclaiming is faster.
    const reclaimedBy = trace.held.findIndex(
      (held, step) => step >= lenderReturnsAt && held.get('owner') === lenderQuota,
    );
    expect(reclaimedBy).toBeGreaterThanOrEqual(lenderReturnsAt);
    expect(reclaimedBy).toBeLessThan(lenderReturnsAt + 5);
    const borrowersThen = ['team-a', 'team-b', 'team-c'].reduce(
      (sum, queue) => sum + (trace.held[reclaimedBy]!.get(queue) ?? 0),
      0,
    );
    expect(borrowersThen).toBe(0);
  });

  it('returns the quota to the borrowers, in proportion again, once the owner is idle', () => {
    const after = trace.held.slice(lenderReturnsAt + 2 * duration);
    expect(after.every((held) => !held.has('owner'))).toBe(true);
    const last = after.at(-1)!;
    expect([last.get('team-a'), last.get('team-b'), last.get('team-c')]).toEqual([
      cores(10),
      cores(10),
      cores(20),
    ]);
  });
});
