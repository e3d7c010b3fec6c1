import { type LabelSelector, labelsMatch } from '@jobrelay/resources';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDispatchQueue } from '../src/dispatch-queue.ts';
import { type QueueSpec, queueNameLabel } from '../src/queue-model.ts';
import { type InvalidQueue, queueFor } from '../src/queue-selection.ts';

function team(name: string): LabelSelector {
  return { requirements: [{ key: 'team', operator: 'Equals', values: [name] }] };
}

function spec(name: string, namespaceSelector?: LabelSelector): QueueSpec {
  return {
    name,
    ...(namespaceSelector ? { namespaceSelector } : {}),
    nominalQuota: { cpu: 4000 },
    weight: 1,
    queueingStrategy: 'BestEffortFIFO',
    preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
  };
}

const research = spec('research', team('research'));
const researchGpu = spec('research-gpu', team('research'));
const production = spec('production', team('production'));
/** Written by an admin without a selector: it takes nobody. */
const orphan = spec('orphan');
const queues = [research, researchGpu, production, orphan];

const researchNs = { team: 'research' };
const productionNs = { team: 'production' };

function named(queue: string, namespace = 'team-a') {
  return { namespace, labels: { [queueNameLabel]: queue } };
}

describe('queueFor without the label', () => {
  it('takes the one queue that selects the namespace', () => {
    expect(queueFor({ namespace: 'prod' }, productionNs, queues)).toEqual({
      kind: 'queued',
      queue: 'production',
    });
  });

  it('leaves a workload no queue selects unqueued, as without queues', () => {
    expect(queueFor({ namespace: 'sandbox' }, { team: 'nobody' }, queues)).toEqual({ kind: 'unqueued' });
    expect(queueFor({ namespace: 'sandbox' }, undefined, queues)).toEqual({ kind: 'unqueued' });
    expect(queueFor({ namespace: 'sandbox', labels: { app: 'x' } }, researchNs, [])).toEqual({
      kind: 'unqueued',
    });
  });

  it('refuses when two queues select the namespace, naming them and the label to set', () => {
    expect(queueFor({ namespace: 'team-a' }, researchNs, queues)).toEqual({
      kind: 'refused',
      message: `2 queues take namespace team-a (research, research-gpu): set the label ${queueNameLabel} to one of research, research-gpu`,
    });
  });

  it('gives a queue without a namespaceSelector nothing', () => {
    expect(queueFor({ namespace: 'any' }, {}, [orphan])).toEqual({ kind: 'unqueued' });
  });

  it('gives a queue with an empty namespaceSelector every namespace', () => {
    const everyone = spec('everyone', { requirements: [] });
    expect(queueFor({ namespace: 'any' }, undefined, [everyone])).toEqual({
      kind: 'queued',
      queue: 'everyone',
    });
  });
});

describe('queueFor with the label jobrelay.dev/queue-name', () => {
  it('picks among the queues that select the namespace', () => {
    expect(queueFor(named('research-gpu'), researchNs, queues)).toEqual({
      kind: 'queued',
      queue: 'research-gpu',
    });
    expect(queueFor(named('research'), researchNs, queues)).toEqual({ kind: 'queued', queue: 'research' });
  });

  it('never reaches a queue that does not select the namespace, saying which it may use', () => {
    expect(queueFor(named('production'), researchNs, queues)).toEqual({
      kind: 'refused',
      message: `label ${queueNameLabel}=production: namespace team-a may not use a queue of that name (it may use: research, research-gpu)`,
    });
    // A queue without a selector cannot be named into either.
    expect(queueFor(named('orphan'), researchNs, queues)).toMatchObject({ kind: 'refused' });
  });

  it('refuses a queue that does not exist exactly as one it may not use: nobody learns other teams’ queues', () => {
    const missing = queueFor(named('no-such-queue'), researchNs, queues);
    const fenced = queueFor(named('production'), researchNs, queues);
    expect(missing.kind).toBe('refused');
    expect(fenced.kind).toBe('refused');
    if (missing.kind === 'refused' && fenced.kind === 'refused')
      expect(missing.message.replace('no-such-queue', 'X')).toBe(fenced.message.replace('production', 'X'));
  });

  it('says when the namespace may use no queue at all', () => {
    expect(queueFor(named('research', 'scratch'), { team: 'nobody' }, queues)).toEqual({
      kind: 'refused',
      message: `label ${queueNameLabel}=research: namespace scratch may not use a queue of that name (no queue takes namespace scratch)`,
    });
  });

  it('refuses an empty label rather than guessing', () => {
    expect(queueFor(named(''), productionNs, queues)).toEqual({
      kind: 'refused',
      message: `label ${queueNameLabel} is empty: set it to a queue's name or remove it (it may use: production)`,
    });
  });

  it('reads only the label itself, not what a label set inherits', () => {
    const labels = Object.create({ [queueNameLabel]: 'production' }) as Record<string, string>;
    expect(queueFor({ namespace: 'team-a', labels }, researchNs, [research])).toEqual({
      kind: 'queued',
      queue: 'research',
    });
  });
});

describe('queueFor with invalid queues', () => {
  function invalid(object: unknown): InvalidQueue {
    const parsed = parseDispatchQueue(object);
    if (parsed.kind !== 'invalid') throw new Error('expected an invalid queue');
    return parsed;
  }
  // An admin's typo (weight 0) must not let team research's workloads run past their quota.
  const brokenResearch = invalid({
    metadata: { name: 'research' },
    spec: {
      namespaceSelector: { matchLabels: { team: 'research' } },
      weight: 0,
      resources: [{ name: 'cpu', nominalQuota: 4 }],
    },
  });

  it('holds the workloads an invalid queue would take instead of letting them run unqueued', () => {
    expect(queueFor({ namespace: 'team-a' }, researchNs, [production], [brokenResearch])).toEqual({
      kind: 'refused',
      message:
        'the queue of namespace team-a: queue research has an invalid spec (its Active condition says why: kubectl get dispatchqueue research -o yaml); an admin must fix it',
    });
    expect(queueFor(named('research'), researchNs, [production], [brokenResearch])).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('queue research has an invalid spec'),
    });
  });

  it('counts an invalid queue as a choice: the author picks a usable one by label', () => {
    const refused = queueFor({ namespace: 'team-a' }, researchNs, [researchGpu], [brokenResearch]);
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(
        /^2 queues take namespace team-a \(research, research-gpu\): set the label jobrelay.dev\/queue-name to one of research-gpu; queue research has an invalid spec/,
      ),
    });
    expect(queueFor(named('research-gpu'), researchNs, [researchGpu], [brokenResearch])).toEqual({
      kind: 'queued',
      queue: 'research-gpu',
    });
  });

  it('leaves other namespaces alone', () => {
    expect(queueFor({ namespace: 'prod' }, productionNs, [production], [brokenResearch])).toEqual({
      kind: 'queued',
      queue: 'production',
    });
  });

  it('cannot fence with a selector that does not parse (the schema refuses most of those)', () => {
    const unreadable = invalid({
      metadata: { name: 'research' },
      spec: {
        namespaceSelector: { matchLabels: { 'a/b/c': 'x' } },
        resources: [{ name: 'cpu', nominalQuota: 4 }],
      },
    });
    expect(queueFor({ namespace: 'team-a' }, researchNs, [], [unreadable])).toEqual({ kind: 'unqueued' });
  });
});

describe('queueFor, for any queues, namespace and label', () => {
  const labelValue = fc.constantFrom('a', 'b', 'c');
  const selector = fc.option(
    fc.array(
      fc.record({ key: fc.constantFrom('team', 'tier'), value: labelValue }).map(({ key, value }) => ({
        key,
        operator: 'Equals' as const,
        values: [value],
      })),
      { maxLength: 2 },
    ),
    { nil: undefined },
  );
  const queueSet = fc.uniqueArray(fc.record({ name: fc.constantFrom('q1', 'q2', 'q3', 'q4'), selector }), {
    selector: (q) => q.name,
    maxLength: 4,
  });
  const namespaceLabels = fc.dictionary(fc.constantFrom('team', 'tier'), labelValue);
  const workloadLabels = fc.option(
    fc.record({ [queueNameLabel]: fc.constantFrom('q1', 'q2', 'q3', 'q4', 'q5', '') }),
    { nil: undefined },
  );

  it('queues a workload only into a queue whose selector selects its namespace, and the one it names', () => {
    fc.assert(
      fc.property(queueSet, namespaceLabels, workloadLabels, (raw, nsLabels, labels) => {
        const specs = raw.map((q) => spec(q.name, q.selector ? { requirements: q.selector } : undefined));
        const choice = queueFor({ namespace: 'ns', ...(labels ? { labels } : {}) }, nsLabels, specs);
        const selecting = specs.filter(
          (q) => q.namespaceSelector && labelsMatch(q.namespaceSelector, nsLabels),
        );
        if (choice.kind === 'queued') {
          const chosen = specs.find((q) => q.name === choice.queue)!;
          expect(chosen.namespaceSelector && labelsMatch(chosen.namespaceSelector, nsLabels)).toBe(true);
          if (labels) expect(choice.queue).toBe(labels[queueNameLabel]);
          else expect(selecting).toHaveLength(1);
        }
        // Unqueued only when no queue could take it and it named none.
        if (choice.kind === 'unqueued') {
          expect(labels).toBeUndefined();
          expect(selecting).toEqual([]);
        }
        if (choice.kind === 'refused') expect(choice.message.length).toBeGreaterThan(0);
      }),
    );
  });
});
