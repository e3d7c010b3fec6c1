import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashOf, parseHashRoute } from '../src/hash-route.ts';

describe('parseHashRoute', () => {
  it('reads each page, and lands on the fleet for anything else', () => {
    expect(parseHashRoute('#/workloads')).toEqual({ view: 'workloads' });
    expect(parseHashRoute('#/workloads/raycluster/team-a/demo')).toEqual({
      view: 'workload',
      kind: 'raycluster',
      namespace: 'team-a',
      name: 'demo',
    });
    expect(parseHashRoute('#/pending')).toEqual({ view: 'pending' });
    expect(parseHashRoute('#/charts')).toEqual({ view: 'charts' });
    expect(parseHashRoute('#/queues')).toEqual({ view: 'queues' });
    expect(parseHashRoute('#/queues/research')).toEqual({ view: 'queue', name: 'research' });
    expect(parseHashRoute('#/queues/research/extra')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/nope')).toEqual({ view: 'fleet' });
    // The Job-only pages are gone: their addresses land on the fleet.
    expect(parseHashRoute('#/jobs/team-a/train-42')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/workloads/job/only-namespace')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/workloads/job/%E0%A4%A/x')).toEqual({
      view: 'workload',
      kind: 'job',
      namespace: '%E0%A4%A',
      name: 'x',
    });
  });

  it('reads back every queue route it writes', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (name) => {
        expect(parseHashRoute(hashOf({ view: 'queue', name }))).toEqual({ view: 'queue', name });
      }),
    );
  });

  it('reads back every workload route it writes', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        (kind, namespace, name) => {
          expect(parseHashRoute(hashOf({ view: 'workload', kind, namespace, name }))).toEqual({
            view: 'workload',
            kind,
            namespace,
            name,
          });
        },
      ),
    );
  });
});
