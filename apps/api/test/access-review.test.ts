import { describe, expect, it } from 'vitest';
import { describePermission } from '../src/access-review.ts';

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
