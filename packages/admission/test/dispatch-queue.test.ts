import { labelsMatch } from '@jobrelay/resources';
import { describe, expect, it } from 'vitest';
import { parseDispatchQueue, queueStatusColumns } from '../src/dispatch-queue.ts';
import type { ParsedQueue, QueueSpec } from '../src/queue-model.ts';

const gib = 2 ** 30;

function queue(spec: Record<string, unknown>, name = 'research'): unknown {
  return { apiVersion: 'jobrelay.dev/v1alpha1', kind: 'DispatchQueue', metadata: { name }, spec };
}

function ok(parsed: ParsedQueue): QueueSpec {
  if (parsed.kind !== 'ok') throw new Error(`expected a usable queue, got: ${parsed.problems.join('; ')}`);
  return parsed.spec;
}

function problems(object: unknown): string[] {
  const parsed = parseDispatchQueue(object);
  if (parsed.kind !== 'invalid') throw new Error(`expected problems, got ${JSON.stringify(parsed.spec)}`);
  return parsed.problems;
}

const cpu4 = [{ name: 'cpu', nominalQuota: '4' }];

describe('parseDispatchQueue reads a queue', () => {
  it('with every quantity in the units placement counts demand in', () => {
    const spec = ok(
      parseDispatchQueue(
        queue({
          namespaceSelector: {
            matchLabels: { team: 'research' },
            matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['frozen'] }],
          },
          cohort: 'shared',
          weight: 2.5,
          queueingStrategy: 'StrictFIFO',
          resources: [
            { name: 'cpu', nominalQuota: '4', borrowingLimit: '500m', lendingLimit: 2 },
            { name: 'memory', nominalQuota: '64Gi', lendingLimit: '0' },
            { name: 'nvidia.com/gpu', nominalQuota: 8 },
            { name: 'workloads', nominalQuota: '10' },
          ],
          preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
        }),
      ),
    );
    expect(spec).toEqual({
      name: 'research',
      namespaceSelector: {
        requirements: [
          { key: 'team', operator: 'Equals', values: ['research'] },
          { key: 'tier', operator: 'NotIn', values: ['frozen'] },
        ],
      },
      cohort: 'shared',
      weight: 2.5,
      queueingStrategy: 'StrictFIFO',
      nominalQuota: { cpu: 4000, memory: 64 * gib, 'nvidia.com/gpu': 8, workloads: 10 },
      borrowingLimit: { cpu: 500 },
      lendingLimit: { cpu: 2000, memory: 0 },
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
    });
    const selector = spec.namespaceSelector!;
    expect(labelsMatch(selector, { team: 'research' })).toBe(true);
    expect(labelsMatch(selector, { team: 'research', tier: 'frozen' })).toBe(false);
    expect(labelsMatch(selector, { team: 'production' })).toBe(false);
  });

  it('with the defaults the CRD fills in, when the object skipped them', () => {
    expect(ok(parseDispatchQueue(queue({ resources: cpu4 })))).toEqual({
      name: 'research',
      nominalQuota: { cpu: 4000 },
      weight: 1,
      queueingStrategy: 'BestEffortFIFO',
      preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
    });
    // null is how some clients write an absent field.
    expect(
      ok(parseDispatchQueue(queue({ resources: cpu4, cohort: null, weight: null, preemption: null }))),
    ).toMatchObject({ weight: 1, preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' } });
    expect(
      ok(parseDispatchQueue(queue({ resources: cpu4, preemption: { withinQueue: 'LowerPriority' } })))
        .preemption,
    ).toEqual({
      withinQueue: 'LowerPriority',
      reclaimWithinCohort: 'Never',
    });
  });

  it('with an empty namespaceSelector selecting every namespace, and none selecting none', () => {
    const all = ok(parseDispatchQueue(queue({ resources: cpu4, namespaceSelector: {} })));
    expect(all.namespaceSelector).toEqual({ requirements: [] });
    expect(labelsMatch(all.namespaceSelector!, undefined)).toBe(true);
    expect(ok(parseDispatchQueue(queue({ resources: cpu4 }))).namespaceSelector).toBeUndefined();
  });

  it('with Exists and DoesNotExist expressions, which take no values', () => {
    const spec = ok(
      parseDispatchQueue(
        queue({
          resources: cpu4,
          namespaceSelector: {
            matchExpressions: [
              { key: 'example.com/gpu-team', operator: 'Exists' },
              { key: 'frozen', operator: 'DoesNotExist', values: [] },
            ],
          },
        }),
      ),
    );
    expect(labelsMatch(spec.namespaceSelector!, { 'example.com/gpu-team': '' })).toBe(true);
    expect(labelsMatch(spec.namespaceSelector!, { 'example.com/gpu-team': 'x', frozen: 'yes' })).toBe(false);
  });
});

describe('parseDispatchQueue refuses, naming the field', () => {
  it.each([
    {
      what: 'a lendingLimit above nominal',
      spec: { cohort: 'c', resources: [{ name: 'memory', nominalQuota: '8Gi', lendingLimit: '9Gi' }] },
      says: 'spec.resources[0].lendingLimit: 9Gi is above nominalQuota 8Gi; a queue lends at most its own quota',
    },
    {
      what: 'a negative nominal quota (string)',
      spec: { resources: [{ name: 'cpu', nominalQuota: '-1' }] },
      says: 'spec.resources[0].nominalQuota: -1 is negative; a quota is 0 or more',
    },
    {
      what: 'a negative borrowing limit (number)',
      spec: { cohort: 'c', resources: [{ name: 'cpu', nominalQuota: 4, borrowingLimit: -2 }] },
      says: 'spec.resources[0].borrowingLimit: -2 is negative; a quota is 0 or more',
    },
    {
      what: 'a quantity that is not one',
      spec: { resources: [{ name: 'cpu', nominalQuota: 'lots' }] },
      says: 'spec.resources[0].nominalQuota: "lots" is not a quantity such as 40, 500m or 64Gi',
    },
    {
      what: 'a quota too large to count exactly',
      spec: { resources: [{ name: 'memory', nominalQuota: '16Pi' }] },
      says: 'spec.resources[0].nominalQuota: 16Pi is too large to count exactly (at most 9007199254740991 units)',
    },
    {
      what: 'a missing nominal quota',
      spec: { resources: [{ name: 'cpu' }] },
      says: 'spec.resources[0].nominalQuota: required, a quantity such as 40, 500m or 64Gi',
    },
    {
      what: 'a fractional workload count',
      spec: { resources: [{ name: 'workloads', nominalQuota: '1.5' }] },
      says: 'spec.resources[0].nominalQuota: 1.5 is not a whole number; workloads counts workloads',
    },
    {
      what: 'a borrowingLimit without a cohort',
      spec: { resources: [{ name: 'cpu', nominalQuota: 4, borrowingLimit: 2 }] },
      says: 'spec.resources[0].borrowingLimit: needs spec.cohort; only queues of one cohort lend each other quota (set a cohort or remove borrowingLimit)',
    },
    {
      what: 'a lendingLimit without a cohort',
      spec: { resources: [{ name: 'cpu', nominalQuota: 4, lendingLimit: 2 }] },
      says: 'spec.resources[0].lendingLimit: needs spec.cohort; only queues of one cohort lend each other quota (set a cohort or remove lendingLimit)',
    },
    {
      what: 'an unknown queueing strategy',
      spec: { resources: cpu4, queueingStrategy: 'FIFO' },
      says: 'spec.queueingStrategy: "FIFO" is not one of "StrictFIFO", "BestEffortFIFO"',
    },
    {
      what: 'an unknown in-queue preemption',
      spec: { resources: cpu4, preemption: { withinQueue: 'Always' } },
      says: 'spec.preemption.withinQueue: "Always" is not one of "Never", "LowerPriority"',
    },
    {
      what: 'an unknown reclaim policy',
      spec: { resources: cpu4, preemption: { reclaimWithinCohort: 'Some' } },
      says: 'spec.preemption.reclaimWithinCohort: "Some" is not one of "Never", "LowerPriority", "Any"',
    },
    {
      what: 'a weight of 0',
      spec: { resources: cpu4, weight: 0 },
      says: 'spec.weight: 0 must be a number above 0 (queues of a cohort share in proportion to it)',
    },
    {
      what: 'a negative weight',
      spec: { resources: cpu4, weight: -1 },
      says: 'spec.weight: -1 must be a number above 0',
    },
    {
      what: 'a weight written as a string',
      spec: { resources: cpu4, weight: '2' },
      says: 'spec.weight: "2" must be a number above 0',
    },
    {
      what: 'a resource listed twice',
      spec: {
        resources: [...cpu4, { name: 'memory', nominalQuota: '1Gi' }, { name: 'cpu', nominalQuota: 8 }],
      },
      says: 'spec.resources[2].name: "cpu" is already listed at spec.resources[0]',
    },
    {
      what: 'a resource name that is not one',
      spec: { resources: [{ name: 'GPU cards', nominalQuota: 1 }] },
      says: 'spec.resources[0].name: "GPU cards" is not a resource name',
    },
    {
      what: 'no resources',
      spec: { resources: [] },
      says: 'spec.resources: required, at least one {name, nominalQuota}: a queue admits only what its quota covers',
    },
    {
      what: 'a cohort that is not a DNS label',
      spec: { resources: cpu4, cohort: 'Shared_Pool' },
      says: 'spec.cohort: "Shared_Pool" is not a DNS label',
    },
    {
      what: 'a selector label key with two slashes',
      spec: { resources: cpu4, namespaceSelector: { matchLabels: { 'a/b/c': 'x' } } },
      says: 'spec.namespaceSelector.matchLabels["a/b/c"]: invalid label key: a key is [prefix/]name with at most one "/"',
    },
    {
      what: 'a selector label value with a space',
      spec: { resources: cpu4, namespaceSelector: { matchLabels: { team: 'res earch' } } },
      says: 'spec.namespaceSelector.matchLabels["team"]: invalid label value "res earch"',
    },
    {
      what: 'In without values',
      spec: { resources: cpu4, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } },
      says: 'spec.namespaceSelector.matchExpressions[0].values: In needs at least one value',
    },
    {
      what: 'Exists with values',
      spec: {
        resources: cpu4,
        namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] },
      },
      says: 'spec.namespaceSelector.matchExpressions[0].values: Exists takes no values (found 1)',
    },
    {
      what: 'an operator a LabelSelector does not have',
      spec: {
        resources: cpu4,
        namespaceSelector: { matchExpressions: [{ key: 'gpus', operator: 'Gt', values: ['1'] }] },
      },
      says: 'spec.namespaceSelector.matchExpressions[0].operator: "Gt" is not one of "In", "NotIn", "Exists", "DoesNotExist"',
    },
    {
      what: 'a selector written as kubectl -l text',
      spec: { resources: cpu4, namespaceSelector: 'team=research' },
      says: 'spec.namespaceSelector: must be a label selector object (matchLabels, matchExpressions)',
    },
    {
      what: 'a misspelt selector field',
      spec: { resources: cpu4, namespaceSelector: { matchLabel: { team: 'research' } } },
      says: 'spec.namespaceSelector.matchLabel: unknown field; a label selector has matchLabels and matchExpressions',
    },
  ])('$what', ({ spec, says }) => {
    const found = problems(queue(spec));
    expect(
      found.some((problem) => problem.startsWith(says)),
      found.join('\n'),
    ).toBe(true);
  });

  it('every problem at once, so one edit fixes them all', () => {
    expect(
      problems({
        metadata: { name: 'Research.Team' },
        spec: {
          weight: 0,
          queueingStrategy: 'LIFO',
          resources: [
            { name: 'cpu', nominalQuota: '4', lendingLimit: '5', borrowingLimit: '1' },
            { name: 'cpu', nominalQuota: '8' },
          ],
        },
      }),
    ).toEqual([
      `metadata.name: "Research.Team" is not a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit); workloads name their queue in a label value`,
      'spec.weight: 0 must be a number above 0 (queues of a cohort share in proportion to it)',
      'spec.queueingStrategy: "LIFO" is not one of "StrictFIFO", "BestEffortFIFO"',
      'spec.resources[0].borrowingLimit: needs spec.cohort; only queues of one cohort lend each other quota (set a cohort or remove borrowingLimit)',
      'spec.resources[0].lendingLimit: needs spec.cohort; only queues of one cohort lend each other quota (set a cohort or remove lendingLimit)',
      'spec.resources[0].lendingLimit: 5 is above nominalQuota 4; a queue lends at most its own quota',
      'spec.resources[1].name: "cpu" is already listed at spec.resources[0]',
    ]);
  });

  it('what is not a DispatchQueue at all', () => {
    expect(parseDispatchQueue(null)).toEqual({
      kind: 'invalid',
      name: '',
      problems: ['a DispatchQueue is an object with metadata and spec, not null'],
    });
    expect(parseDispatchQueue({ metadata: { name: 'q' } })).toEqual({
      kind: 'invalid',
      name: 'q',
      problems: ['spec: required, an object (found undefined)'],
    });
    expect(problems({ spec: { resources: cpu4 } })).toEqual(['metadata.name: required']);
  });

  it('keeping the selector of an otherwise invalid queue, so its namespaces stay fenced', () => {
    const parsed = parseDispatchQueue(
      queue({ namespaceSelector: { matchLabels: { team: 'research' } }, resources: [], weight: -1 }),
    );
    expect(parsed).toMatchObject({
      kind: 'invalid',
      name: 'research',
      namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: ['research'] }] },
    });
    // A selector that does not parse cannot fence anything: it is left out.
    const unreadable = parseDispatchQueue(
      queue({ namespaceSelector: { matchLabels: { '': 'x' } }, resources: cpu4 }),
    );
    expect(unreadable.kind).toBe('invalid');
    expect(unreadable).not.toHaveProperty('namespaceSelector');
  });
});

describe('queueStatusColumns', () => {
  it('shows used/nominal of cpu, memory and GPUs as quantities', () => {
    expect(
      queueStatusColumns(
        { cpu: 40_000, memory: 64 * gib, 'nvidia.com/gpu': 8, workloads: 10 },
        { cpu: 4000, memory: 8 * gib, 'nvidia.com/gpu': 2, workloads: 3 },
      ),
    ).toEqual({ cpu: '4/40', memory: '8Gi/64Gi', gpu: '2/8' });
  });

  it('shows - for a resource the queue does not name, and 0 for one nothing holds', () => {
    expect(queueStatusColumns({ cpu: 4000 }, {})).toEqual({ cpu: '0/4', memory: '-', gpu: '-' });
    // Usage of a resource the queue does not name (never admitted by it) changes nothing.
    expect(queueStatusColumns({ memory: gib }, { cpu: 500 })).toEqual({
      cpu: '-',
      memory: '0/1Gi',
      gpu: '-',
    });
  });

  it('keeps fractions readable: millicores and mebibytes', () => {
    expect(
      queueStatusColumns({ cpu: 4500, memory: 1536 * 2 ** 20 }, { cpu: 250, memory: 512 * 2 ** 20 }),
    ).toEqual({
      cpu: '250m/4500m',
      memory: '512Mi/1536Mi',
      gpu: '-',
    });
  });

  it('sums the GPUs of several vendors into the one GPU column', () => {
    expect(queueStatusColumns({ 'nvidia.com/gpu': 8, 'amd.com/gpu': 4 }, { 'amd.com/gpu': 1 }).gpu).toBe(
      '1/12',
    );
  });
});
