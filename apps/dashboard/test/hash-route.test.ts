import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashOf, parseHashRoute } from '../src/hash-route.ts';

describe('parseHashRoute', () => {
  it('reads each page, and lands on the fleet for anything else', () => {
    expect(parseHashRoute('#/jobs')).toEqual({ view: 'jobs' });
    expect(parseHashRoute('#/jobs/team-a/train-42')).toEqual({
      view: 'job',
      namespace: 'team-a',
      name: 'train-42',
    });
    expect(parseHashRoute('#/pending')).toEqual({ view: 'pending' });
    expect(parseHashRoute('#/charts')).toEqual({ view: 'charts' });
    expect(parseHashRoute('')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/nope')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/jobs/only-namespace')).toEqual({ view: 'fleet' });
    expect(parseHashRoute('#/jobs/%E0%A4%A/x')).toEqual({ view: 'job', namespace: '%E0%A4%A', name: 'x' });
  });

  it('reads back every Job route it writes', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (namespace, name) => {
        expect(parseHashRoute(hashOf({ view: 'job', namespace, name }))).toEqual({
          view: 'job',
          namespace,
          name,
        });
      }),
    );
  });
});
