// Fair sharing across a cohort and the queueing strategies, moved down from
// e2e/test/queue-fairness.test.ts (issue 43): what those cases proved is jobrelay's own admission
// (QueueAdmission's index and cycle, the real decideAdmission, the placer writing the admitted
// Jobs' records, the waiting reasons), not what a Job controller or an apiserver does. Here they
// run over the real classes (admission-harness.ts) with the DispatchQueues as the apiserver
// returns them and the clock injected. Time goes in turns of one second: the Jobs whose run is
// over complete (as their status sync writes it), the caches catch up, one admission cycle runs,
// the caches catch up with its writes, and what each queue holds is sampled from the placement
// records by the e2e sampler's rule (placed by a queue and not finished). A turn stands for one
// second held, so cpu-seconds are counted exactly rather than from samples 400 ms apart.

import { unschedulableAnnotation } from '@jobrelay/mirror';
import { placementRecordOf } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import type { CycleReport } from '../src/queue-admission.ts';
import {
  type AdmissionWorld,
  admissionWorld,
  dispatchQueue,
  finish,
  job,
  recordOf,
} from './admission-harness.ts';
import { TestClock } from './executor-harness.ts';

/** Millicores held per queue over one turn (one second of the clock), from the turn's start. */
interface Sample {
  at: number;
  held: Map<string, number>;
}

/**
 * Drives admission turn by turn over Jobs it creates, each running a given number of the
 * clock's seconds once placed, and checks every registered quota after every turn (a queue or a
 * cohort's sum: the most cpu they may hold together).
 */
class Turnover {
  readonly samples: Sample[] = [];
  readonly violations: string[] = [];
  private readonly limits: Array<{ queues: string[]; millicores: number }> = [];
  /** By `namespace/name`: what the test asked for, so usage is counted apart from the controller's own parsing. */
  private readonly jobs = new Map<
    string,
    { namespace: string; name: string; millicores: number; runMs: number }
  >();

  private readonly a: AdmissionWorld;

  constructor(a: AdmissionWorld) {
    this.a = a;
  }

  limit(queues: string[], cpu: number): void {
    this.limits.push({ queues, millicores: cpu * 1000 });
  }

  /** A Job of `cpu` cores created now, running `runSeconds` once placed. */
  create(namespace: string, name: string, options: { cpu: number; runSeconds: number }): void {
    this.a.world.management.put(job(name, this.a.clock, 0, { namespace, cpu: String(options.cpu) }));
    this.jobs.set(`${namespace}/${name}`, {
      namespace,
      name,
      millicores: options.cpu * 1000,
      runMs: options.runSeconds * 1000,
    });
  }

  /** The record of a Job placed by a queue and not finished: it holds its queue's quota. */
  private holding(namespace: string, name: string) {
    const stored = this.a.stored(name, namespace);
    const parsed = placementRecordOf(stored, this.a.world.keys);
    const record = parsed.kind === 'ok' ? parsed.record : undefined;
    if (record?.cluster === undefined || record.queue === undefined || finished(this.a, name, namespace))
      return undefined;
    return record;
  }

  async turn(): Promise<CycleReport | undefined> {
    const now = this.a.clock.now();
    for (const { namespace, name, runMs } of this.jobs.values()) {
      const placedAt = this.holding(namespace, name)?.placedAt;
      if (placedAt !== undefined && Date.parse(placedAt) + runMs <= now) finish(this.a, name, namespace);
    }
    this.a.sync();
    const report = await this.a.admission.cycle();
    this.a.sync();
    this.sample(now);
    this.a.clock.advance(1_000);
    return report;
  }

  private sample(at: number): void {
    const held = new Map<string, number>();
    for (const { namespace, name, millicores } of this.jobs.values()) {
      const queue = this.holding(namespace, name)?.queue;
      if (queue !== undefined) held.set(queue, (held.get(queue) ?? 0) + millicores);
    }
    this.samples.push({ at, held });
    for (const { queues, millicores: most } of this.limits) {
      const sum = queues.reduce((s, q) => s + (held.get(q) ?? 0), 0);
      if (sum > most)
        this.violations.push(`${new Date(at).toISOString()}: ${queues.join('+')} held ${sum}m > ${most}m`);
    }
  }

  /** Every Job created has finished (its run over after its queue placed it). */
  allFinished(): boolean {
    return [...this.jobs.values()].every(({ namespace, name }) => finished(this.a, name, namespace));
  }
}

function finished(a: AdmissionWorld, name: string, namespace: string): boolean {
  return (
    a.stored(name, namespace).status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ??
    false
  );
}

/** Namespaces labelled as the apiserver labels every namespace: by their own name. */
function namedNamespaces(names: string[]): Record<string, Record<string, string>> {
  return Object.fromEntries(names.map((name) => [name, { 'kubernetes.io/metadata.name': name }]));
}

/** A cpu-only DispatchQueue for the one namespace `namespace`, as the e2e file created them. */
function queueFor(
  name: string,
  namespace: string,
  options: {
    cpu: number;
    cohort?: string;
    weight?: number;
    queueingStrategy?: 'StrictFIFO' | 'BestEffortFIFO';
    reclaimWithinCohort?: 'Never' | 'LowerPriority' | 'Any';
  },
) {
  return dispatchQueue(name, {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    resources: [{ name: 'cpu', nominalQuota: String(options.cpu) }],
    ...(options.cohort ? { cohort: options.cohort } : {}),
    ...(options.weight ? { weight: options.weight } : {}),
    ...(options.queueingStrategy ? { queueingStrategy: options.queueingStrategy } : {}),
    ...(options.reclaimWithinCohort
      ? { preemption: { reclaimWithinCohort: options.reclaimWithinCohort } }
      : {}),
  });
}

describe('fair sharing across a cohort', () => {
  it('flooded tenants of weights 1, 1, 2 share the idle lender quota 25/25/50', async () => {
    /** The cohort's capacity: the lender's nominal quota, in cpu (each flood Job asks for 1). */
    const poolCpu = 8;
    const tenants = [
      { key: 'a', weight: 1 },
      { key: 'b', weight: 1 },
      { key: 'c', weight: 2 },
    ] as const;
    const namespaceOf = (key: string) => `fair-${key}`;
    const queueOf = (key: string) => `tenant-${key}`;
    // The tenants own nothing (nominal 0): all they run is borrowed from the lender, so their
    // shares are the fair-sharing rule alone, not their own quotas. Nor the workers': the
    // placer's two hold 8 cpu each (admission-harness.ts), twice the pool.
    const a = admissionWorld({
      clock: new TestClock(),
      namespaces: namedNamespaces(['fair-lender', ...tenants.map((t) => namespaceOf(t.key))]),
      queues: [
        queueFor('lender', 'fair-lender', { cpu: poolCpu, cohort: 'lab', reclaimWithinCohort: 'Any' }),
        ...tenants.map((t) =>
          queueFor(queueOf(t.key), namespaceOf(t.key), { cpu: 0, cohort: 'lab', weight: t.weight }),
        ),
      ],
    });
    const turnover = new Turnover(a);
    const tenantQueues = tenants.map((t) => queueOf(t.key));
    const cohortQueues = ['lender', ...tenantQueues];
    turnover.limit(cohortQueues, poolCpu);
    for (const queue of tenantQueues) turnover.limit([queue], poolCpu);

    // 45 per unit of weight, as in the e2e file: no tenant runs dry before the window ends. The
    // same Jobs for all, created interleaved, so no tenant is ahead by arriving first. They run
    // 3 to 7 s (5 s on average, the e2e Jobs' length): unequal, so slots free a few at a time
    // and each one freed is a choice between tenants, rather than all eight turning over in step.
    const perWeight = 45;
    for (let i = 0; i < perWeight * 2; i += 1)
      for (const t of tenants)
        if (i < perWeight * t.weight)
          turnover.create(namespaceOf(t.key), `flood-${t.key}-${i}`, { cpu: 1, runSeconds: 3 + (i % 5) });

    // Warm-up, as in the e2e file: a few turnovers first, so the window sees slots freed a few at
    // a time as the unequal runs end, not the first admissions, made all at once.
    const warmUpTurns = 12;
    const windowTurns = 60;
    for (let i = 0; i < warmUpTurns + windowTurns; i += 1) await turnover.turn();
    const inWindow = turnover.samples.slice(warmUpTurns);
    expect(inWindow).toHaveLength(windowTurns);

    // Each sample holds for one second: a sample's millicores / 1000 are its cpu-seconds.
    const used = tenantQueues.map((q) => inWindow.reduce((sum, s) => sum + (s.held.get(q) ?? 0) / 1000, 0));
    const total = used.reduce((x, y) => x + y, 0);
    const shares = used.map((u) => u / total);

    // Still flooded at the end of the window: every tenant had Jobs waiting throughout.
    for (const t of tenants) {
      const waiting = [...a.world.management.objects.values()].filter(
        (j) =>
          j.metadata?.namespace === namespaceOf(t.key) &&
          recordOf(a, j.metadata.name!, namespaceOf(t.key))?.cluster === undefined &&
          !finished(a, j.metadata.name!, namespaceOf(t.key)),
      );
      expect(waiting.length, `tenant ${t.key} still has Jobs waiting`).toBeGreaterThan(0);
    }
    // Work-conserving: the idle lender's whole quota was in use every second of the window (the
    // e2e file asked for more than 70 %, what a real controller's turnover reached).
    expect(total).toBe(poolCpu * windowTurns);
    const weightSum = tenants.reduce((s, t) => s + t.weight, 0);
    tenants.forEach((t, i) => {
      const expected = t.weight / weightSum;
      expect(
        Math.abs(shares[i]! - expected),
        `tenant ${t.key}: ${shares[i]} vs ${expected}`,
      ).toBeLessThanOrEqual(expected * 0.1);
    });
    // Stronger than the e2e file could ask of sampled real time: at every turn of the window each
    // tenant holds exactly its weighted part of the pool (2, 2 and 4 cpu), not only on average.
    for (const sample of inWindow)
      expect(
        tenantQueues.map((q) => sample.held.get(q) ?? 0),
        `held at ${new Date(sample.at).toISOString()}`,
      ).toEqual(tenants.map((t) => (poolCpu * 1000 * t.weight) / weightSum));
    const cohortMost = Math.max(
      ...inWindow.map((s) => cohortQueues.reduce((sum, q) => sum + (s.held.get(q) ?? 0), 0)),
    );
    expect(cohortMost).toBe(poolCpu * 1000);
    // Never over: neither the cohort nor any tenant, at any turn from the first.
    expect(turnover.violations).toEqual([]);
  });
});

describe('queueing strategy', () => {
  it('a StrictFIFO head that does not fit blocks a smaller Job; BestEffortFIFO lets it go', async () => {
    const strict = { namespace: 'fifo-strict', queue: 'strict' };
    const besteffort = { namespace: 'fifo-best', queue: 'besteffort' };
    const pair = [strict, besteffort];
    const a = admissionWorld({
      clock: new TestClock(),
      namespaces: namedNamespaces(pair.map((p) => p.namespace)),
      queues: [
        queueFor(strict.queue, strict.namespace, { cpu: 2, queueingStrategy: 'StrictFIFO' }),
        queueFor(besteffort.queue, besteffort.namespace, { cpu: 2, queueingStrategy: 'BestEffortFIFO' }),
      ],
    });
    const turnover = new Turnover(a);
    for (const p of pair) turnover.limit([p.queue], 2);
    const record = (p: { namespace: string }, name: string) => recordOf(a, name, p.namespace);
    const reason = (p: { namespace: string }, name: string) =>
      a.stored(name, p.namespace).metadata?.annotations?.[unschedulableAnnotation];

    // 1 of the 2 cpu held for a while: the big Job (2 cpu) does not fit, the small one (1) would.
    const fillerSeconds = 20;
    const bigSeconds = 2;
    for (const p of pair) turnover.create(p.namespace, 'filler', { cpu: 1, runSeconds: fillerSeconds });
    await turnover.turn();
    for (const p of pair) expect(record(p, 'filler')?.cluster, `${p.queue} filler admitted`).toBeDefined();
    for (const p of pair) turnover.create(p.namespace, 'big', { cpu: 2, runSeconds: bigSeconds });
    await turnover.turn();
    // A turn later: the small one is strictly younger, so it is behind the big one in its queue.
    for (const p of pair) turnover.create(p.namespace, 'small', { cpu: 1, runSeconds: 2 });
    await turnover.turn();

    expect(reason(strict, 'small')).toBe(`queue ${strict.queue}: StrictFIFO, behind ${strict.namespace}/big`);
    expect(record(besteffort, 'small')?.cluster).toBeDefined();
    expect(record(besteffort, 'small')?.queue).toBe(besteffort.queue);
    // Meanwhile the big Jobs wait on quota (the reason written when each first waited, beside its
    // filler) and the strict small one is still not placed.
    for (const p of pair) {
      expect(record(p, 'big')?.cluster).toBeUndefined();
      expect(reason(p, 'big')).toBe(`queue ${p.queue}: cpu 1/2 in use`);
    }
    expect(record(strict, 'small')?.cluster).toBeUndefined();

    // All run their course, each admitted by its own queue; bounded, so a Job never admitted
    // fails the test rather than hanging it.
    for (let i = 0; i < 60 && !turnover.allFinished(); i += 1) await turnover.turn();
    expect(turnover.allFinished()).toBe(true);
    for (const p of pair)
      for (const name of ['filler', 'big', 'small']) expect(record(p, name)?.queue).toBe(p.queue);
    const placedAt = (p: { namespace: string }, name: string) => Date.parse(record(p, name)!.placedAt!);
    // The strict small one was placed only after its head, and not beside it: once the big one
    // had run (it takes the queue's 2 cpu).
    expect(placedAt(strict, 'small')).toBeGreaterThanOrEqual(placedAt(strict, 'big') + bigSeconds * 1000);
    // The best-effort small one went before its big one, which waited for the filler.
    expect(placedAt(besteffort, 'small')).toBeLessThan(placedAt(besteffort, 'big'));
    expect(turnover.violations).toEqual([]);
  });
});
