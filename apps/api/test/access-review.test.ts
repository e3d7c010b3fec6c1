import { describe, expect, it } from 'vitest';
import { audienceMatches, describePermission } from '../src/access-review.ts';

describe('describePermission', () => {
  it('names a permission as an admin would grant it', () => {
    expect(
      describePermission({
        verb: 'update',
        group: 'jobrelay.dev',
        resource: 'workerclusters',
        subresource: 'drain',
        name: 'w1',
      }),
    ).toBe('update workerclusters.jobrelay.dev/drain "w1"');
    expect(
      describePermission({ verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'a' }),
    ).toBe('get pods/log in namespace a');
    expect(describePermission({ verb: 'list', group: 'batch', resource: 'jobs' })).toBe('list jobs.batch');
    expect(describePermission({ verb: 'get', nonResourceURL: '/metrics' })).toBe('get /metrics');
  });
});

describe('audienceMatches', () => {
  it.each([
    { wanted: [], granted: undefined, matches: true },
    { wanted: [], granted: ['https://kubernetes.default.svc'], matches: true },
    { wanted: ['jobrelay-api'], granted: ['jobrelay-api'], matches: true },
    { wanted: ['jobrelay-api', 'other'], granted: ['other'], matches: true },
    // An authenticator that ignores audiences answers with none: not good enough.
    { wanted: ['jobrelay-api'], granted: undefined, matches: false },
    { wanted: ['jobrelay-api'], granted: [], matches: false },
    { wanted: ['jobrelay-api'], granted: ['https://kubernetes.default.svc'], matches: false },
  ])('wanted $wanted, granted $granted: $matches', ({ wanted, granted, matches }) => {
    expect(audienceMatches(wanted, granted)).toBe(matches);
  });
});
