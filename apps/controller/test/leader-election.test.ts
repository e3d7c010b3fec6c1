import { describe, expect, it } from 'vitest';
import { type LeaseRecord, nextLeaseStep, type ObservedLease } from '../src/leader-election.ts';

const me = 'pod-a';
const renewed = new Date('2026-12-01T10:00:00.000Z');
const held = (holder: string, renewTime: Date | string = renewed): LeaseRecord => ({
  holderIdentity: holder,
  renewTime,
  leaseDurationSeconds: 15,
  leaseTransitions: 3,
});

/** Reads the Lease at each time in turn, carrying what was observed, as the elector does. */
function readAt(reads: Array<{ lease: LeaseRecord | undefined; nowMs: number }>) {
  let previous: ObservedLease | undefined;
  return reads.map(({ lease, nowMs }) => {
    const result = nextLeaseStep({ lease, previous, identity: me, nowMs });
    previous = result.observed;
    return result.step;
  });
}

describe('nextLeaseStep', () => {
  it('creates the Lease when there is none', () => {
    expect(readAt([{ lease: undefined, nowMs: 0 }])).toEqual([{ kind: 'create' }]);
  });

  it('takes a free Lease (released: no holder) as a new transition', () => {
    expect(readAt([{ lease: { ...held(''), leaseDurationSeconds: 1 }, nowMs: 0 }])).toEqual([
      { kind: 'take', transitions: 4 },
    ]);
  });

  it('renews its own Lease without counting a transition', () => {
    expect(readAt([{ lease: held(me), nowMs: 0 }])).toEqual([{ kind: 'take', transitions: 3 }]);
  });

  it('waits while another holder renews, however old its timestamps look', () => {
    // The holder's renewTime is an hour behind this process's clock: only change counts.
    const steps = readAt([
      { lease: held('pod-b', new Date('2026-12-01T09:00:00.000Z')), nowMs: 1_000_000 },
      { lease: held('pod-b', new Date('2026-12-01T09:00:02.000Z')), nowMs: 1_010_000 },
      { lease: held('pod-b', new Date('2026-12-01T09:00:04.000Z')), nowMs: 1_024_000 },
    ]);
    expect(steps).toEqual([
      { kind: 'wait', holder: 'pod-b', expiresInMs: 15_000 },
      { kind: 'wait', holder: 'pod-b', expiresInMs: 15_000 },
      { kind: 'wait', holder: 'pod-b', expiresInMs: 15_000 },
    ]);
  });

  it('takes over once the holder has not renewed for the lease duration, counted from first seeing it', () => {
    const lease = held('pod-b');
    const steps = readAt([
      { lease, nowMs: 5_000 },
      { lease, nowMs: 19_999 },
      { lease, nowMs: 20_000 },
    ]);
    expect(steps).toEqual([
      { kind: 'wait', holder: 'pod-b', expiresInMs: 15_000 },
      { kind: 'wait', holder: 'pod-b', expiresInMs: 1 },
      { kind: 'take', transitions: 4 },
    ]);
  });

  it('restarts the count when the holder changes, even to the same renew time', () => {
    const steps = readAt([
      { lease: held('pod-b'), nowMs: 0 },
      { lease: held('pod-c'), nowMs: 14_000 },
      { lease: held('pod-c'), nowMs: 20_000 },
    ]);
    expect(steps[2]).toEqual({ kind: 'wait', holder: 'pod-c', expiresInMs: 9_000 });
  });

  it('reads a renew time given as a string (as written) like the same Date', () => {
    const steps = readAt([
      { lease: held('pod-b', renewed), nowMs: 0 },
      { lease: held('pod-b', renewed.toISOString()), nowMs: 15_000 },
    ]);
    expect(steps[1]).toEqual({ kind: 'take', transitions: 4 });
  });
});
