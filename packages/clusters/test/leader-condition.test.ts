import { describe, expect, it } from 'vitest';
import { withLeaderCondition } from '../src/worker-cluster-status.ts';

const reachable = { active: true, reason: 'Connected', message: 'connected' } as const;
const written = (status: 'True' | 'False' | 'Unknown', reason?: string, message?: string) => ({
  status: {
    conditions: [{ type: 'Active', status, reason, message, lastTransitionTime: '2026-12-01T00:00:00Z' }],
  },
});

describe('withLeaderCondition (a non-writing replica’s view of a cluster it reaches)', () => {
  it('keeps its own view while no leader has written a condition', () => {
    expect(withLeaderCondition(reachable, {})).toEqual(reachable);
  });

  it('keeps its own view when the leader found the cluster Active too', () => {
    expect(withLeaderCondition(reachable, written('True', 'Connected'))).toEqual(reachable);
  });

  it('takes the cluster as not Active when the leader wrote so, with the leader’s reason', () => {
    expect(withLeaderCondition(reachable, written('False', 'Unreachable', 'timed out after 5 s'))).toEqual({
      active: false,
      reason: 'Unreachable',
      message: 'timed out after 5 s (as the leader found it; this replica reaches it)',
    });
  });

  it('says Unreachable for a reason it does not know, and treats Unknown as not Active', () => {
    expect(withLeaderCondition(reachable, written('Unknown', 'SomethingNew')).reason).toBe('Unreachable');
    expect(withLeaderCondition(reachable, written('Unknown', 'SomethingNew')).active).toBe(false);
  });

  it('never makes a cluster it cannot reach Active', () => {
    const own = {
      active: false,
      reason: 'TLSError',
      message: 'certificate signed by unknown authority',
    } as const;
    expect(withLeaderCondition(own, written('True', 'Connected'))).toEqual(own);
  });
});
