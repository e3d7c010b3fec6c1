import { formatPlacementRecord, parsePlacementRecord, RecordKeyring } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { type Job, jobPhase, jobSummary } from '../src/job-views.ts';
import { trustRecordsSealedBy } from '../src/placement-trust.ts';

// The API believes only records sealed for the workload they are on, as the controller writes them.
const keys = new RecordKeyring(Buffer.alloc(32, 4));
trustRecordsSealedBy(keys);

/** A record's text sealed for the Job `job()` builds. */
function sealed(text: string): string {
  const parsed = parsePlacementRecord(text);
  if (parsed.kind !== 'ok') throw new Error('not a record');
  return formatPlacementRecord(parsed.record, { namespace: 'ns', name: 'j', uid: 'u1' }, keys);
}

function job(overrides: {
  annotations?: Record<string, string>;
  status?: Job['status'];
  suspend?: boolean;
}): Job {
  return {
    metadata: {
      namespace: 'ns',
      name: 'j',
      uid: 'u1',
      creationTimestamp: '2026-12-01T10:00:00Z',
      annotations: overrides.annotations ?? {},
    },
    spec: { managedBy: 'jobrelay.dev/dispatcher', suspend: overrides.suspend ?? false, template: {} },
    status: overrides.status ?? {},
  };
}

const unsealedPlaced = JSON.stringify({
  cluster: 'w1',
  attempt: 2,
  placedAt: '2026-12-01T10:01:00Z',
  carried: { succeeded: 0, failed: 0 },
  excludedClusters: [],
});
const placed = sealed(unsealedPlaced);

describe('jobPhase and jobSummary', () => {
  it('shows a record jobrelay did not seal for this Job as no placement at all', () => {
    const forged = job({ annotations: { 'jobrelay.dev/placement': unsealedPlaced } });
    expect(jobPhase(forged)).toBe('pending');
    expect(jobSummary(forged)).toMatchObject({ cluster: null, attempt: null });
    const copied = { ...job({ annotations: { 'jobrelay.dev/placement': placed } }) };
    copied.metadata = { ...copied.metadata, uid: 'u2' };
    expect(jobSummary(copied)).toMatchObject({ phase: 'pending', cluster: null });
    expect(jobSummary(job({ annotations: { 'jobrelay.dev/placement': placed } }))).toMatchObject({
      phase: 'running',
      cluster: 'w1',
    });
  });

  it('pending while unplaced, with since when and why it waits', () => {
    const waiting = job({
      annotations: { 'jobrelay.dev/unschedulable': '0/1 clusters available: 1 cordoned.' },
    });
    expect(jobPhase(waiting)).toBe('pending');
    expect(jobSummary(waiting)).toMatchObject({
      phase: 'pending',
      cluster: null,
      waitingSince: '2026-12-01T10:00:00.000Z',
      reason: '0/1 clusters available: 1 cordoned.',
    });
  });

  it('says why a Job whose mirror was refused waits: the refusal until its retry, then why nothing fits', () => {
    const refusedRecord = (retryAfter: string, extra: Record<string, unknown> = {}) =>
      sealed(
        JSON.stringify({
          attempt: 1,
          carried: { succeeded: 0, failed: 0 },
          excludedClusters: [],
          refusals: 1,
          refusedBy: ['w1'],
          retryAfter,
          lastReplacedBecause: 'cluster w1 refused the mirror Job (HTTP 403): exceeded quota',
          ...extra,
        }),
      );
    const unschedulable = { 'jobrelay.dev/unschedulable': '0/1 clusters available: 1 cordoned.' };
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(
      jobSummary(job({ annotations: { ...unschedulable, 'jobrelay.dev/placement': refusedRecord(soon) } }))
        .reason,
    ).toBe(`cluster w1 refused the mirror Job (HTTP 403): exceeded quota; placed again after ${soon}`);
    const past = '2026-12-01T10:00:05Z';
    expect(
      jobSummary(job({ annotations: { ...unschedulable, 'jobrelay.dev/placement': refusedRecord(past) } }))
        .reason,
    ).toBe('0/1 clusters available: 1 cordoned.');
    const gaveUp = job({
      annotations: {
        'jobrelay.dev/placement': refusedRecord(past, { gaveUp: 'its mirror was refused 3 times' }),
      },
    });
    expect(jobSummary(gaveUp)).toMatchObject({
      phase: 'pending',
      reason: 'jobrelay gave up on it: its mirror was refused 3 times',
    });
  });

  it('running once placed; succeeded or failed by the terminal condition; suspended by spec', () => {
    expect(jobSummary(job({ annotations: { 'jobrelay.dev/placement': placed } }))).toMatchObject({
      phase: 'running',
      cluster: 'w1',
      attempt: 2,
      placedAt: '2026-12-01T10:01:00Z',
      waitingSince: null,
      reason: null,
    });
    const done = (type: string, reason: string) =>
      job({
        annotations: { 'jobrelay.dev/placement': placed },
        status: { conditions: [{ type, status: 'True', reason }] },
      });
    expect(jobSummary(done('Complete', 'CompletionsReached'))).toMatchObject({
      phase: 'succeeded',
      reason: 'CompletionsReached',
    });
    expect(jobSummary(done('Failed', 'BackoffLimitExceeded'))).toMatchObject({
      phase: 'failed',
      reason: 'BackoffLimitExceeded',
    });
    expect(jobPhase(job({ suspend: true }))).toBe('suspended');
    // A damaged placement annotation is not a placement.
    expect(jobPhase(job({ annotations: { 'jobrelay.dev/placement': '{not json' } }))).toBe('pending');
  });
});
