import { describe, expect, it } from 'vitest';
import {
  formatPlacementRecord,
  nothingCarried,
  type PlacementRecord,
  parsePlacementRecord,
  readPlacementRecord,
  type WorkloadProgress,
} from '../src/placement-record.ts';
import { RecordKeyring } from '../src/record-seal.ts';

const keys = new RecordKeyring(Buffer.alloc(32, 1));
const subject = { namespace: 'team-a', name: 'train', uid: 'uid-train' };

/** A placement record for tests, built up one fact at a time. */
class PlacementRecordBuilder {
  private record: PlacementRecord = { attempt: 1, carried: nothingCarried, excludedClusters: [] };

  static firstAttempt(): PlacementRecordBuilder {
    return new PlacementRecordBuilder();
  }

  placedOn(cluster: string, placedAt = '2025-03-01T10:00:00Z'): this {
    this.record = { ...this.record, cluster, placedAt };
    return this;
  }

  /** Why this cluster, as the placement worker writes it with the cluster. */
  decidedBecause(decision: string): this {
    this.record = { ...this.record, decision };
    return this;
  }

  /** The mirror's UID, as versions before 0.2 recorded it (still read back, used by none). */
  withMirror(mirrorUid: string): this {
    this.record = { ...this.record, mirrorUid };
    return this;
  }

  replacedBecause(why: string, carried: WorkloadProgress): this {
    const {
      cluster: _cluster,
      placedAt: _placedAt,
      decision: _decision,
      mirrorUid: _mirrorUid,
      ...rest
    } = this.record;
    this.record = { ...rest, attempt: this.record.attempt + 1, carried, lastReplacedBecause: why };
    return this;
  }

  excluding(...clusters: string[]): this {
    this.record = { ...this.record, excludedClusters: [...this.record.excludedClusters, ...clusters] };
    return this;
  }

  /** A worker's apiserver refused its mirror; `retryAfter` or `gaveUp` as the planner writes them. */
  refusedBy(cluster: string, then: { retryAfter: string } | { gaveUp: string }): this {
    const { cluster: _cluster, placedAt: _placedAt, decision: _decision, ...rest } = this.record;
    this.record = {
      ...rest,
      refusals: (rest.refusals ?? 0) + 1,
      refusedBy: [...new Set([...(rest.refusedBy ?? []), cluster])],
      ...then,
    };
    return this;
  }

  build(): PlacementRecord {
    return structuredClone(this.record);
  }
}

const placement = () => PlacementRecordBuilder.firstAttempt();

describe('placement record', () => {
  it.each([
    { name: 'waiting for a first placement', record: placement().build() },
    { name: 'placed', record: placement().placedOn('worker-1').build() },
    {
      name: 'placed, with the decision that chose the cluster',
      record: placement()
        .placedOn('worker-1')
        .decidedBecause('placed on worker-1 by spread (score 97); 3/3 clusters feasible.')
        .build(),
    },
    {
      name: 'placed with its mirror (written before 0.2)',
      record: placement().placedOn('worker-1').withMirror('uid-1').build(),
    },
    {
      name: 'waiting again after a lost worker, with carried progress',
      record: placement()
        .placedOn('worker-1')
        .withMirror('uid-1')
        .replacedBecause('worker-1 was lost', {
          succeeded: 3,
          failed: 1,
          completedIndexes: '0-2',
          failedIndexes: '5',
        })
        .excluding('worker-2')
        .build(),
    },
    {
      name: 'placed on a second attempt',
      record: placement()
        .placedOn('worker-1')
        .replacedBecause('worker-1 was lost', { succeeded: 1, failed: 0 })
        .placedOn('worker-3', '2025-03-01T11:00:00Z')
        .build(),
    },
    {
      name: 'waiting out the delay after a refusal',
      record: placement()
        .placedOn('worker-1')
        .refusedBy('worker-1', { retryAfter: '2025-03-01T10:00:05Z' })
        .build(),
    },
    {
      name: 'given up on after refusals',
      record: placement()
        .placedOn('worker-1')
        .refusedBy('worker-1', { retryAfter: '2025-03-01T10:00:05Z' })
        .placedOn('worker-2')
        .refusedBy('worker-2', { gaveUp: 'its mirror was refused 2 times' })
        .build(),
    },
  ])('round-trips a record $name', ({ record }) => {
    const text = formatPlacementRecord(record, subject, keys);
    expect(readPlacementRecord(text, subject, keys)).toEqual({ kind: 'ok', record });
    expect(formatPlacementRecord(record, subject, keys)).toBe(text);
  });

  it('keeps every field through the round trip', () => {
    const record = placement()
      .placedOn('worker-1')
      .replacedBecause('worker-1 was lost', { succeeded: 2, failed: 1, completedIndexes: '0,1' })
      .placedOn('worker-2')
      .decidedBecause('placed on worker-2 by binpack (score 40); 2/3 clusters feasible.')
      .withMirror('uid-2')
      .excluding('worker-9')
      .build();
    const parsed = readPlacementRecord(formatPlacementRecord(record, subject, keys), subject, keys);
    expect(parsed.kind).toBe('ok');
    if (parsed.kind !== 'ok') return;
    expect(parsed.record).toStrictEqual({
      attempt: 2,
      cluster: 'worker-2',
      placedAt: '2025-03-01T10:00:00Z',
      decision: 'placed on worker-2 by binpack (score 40); 2/3 clusters feasible.',
      mirrorUid: 'uid-2',
      carried: { succeeded: 2, failed: 1, completedIndexes: '0,1' },
      excludedClusters: ['worker-9'],
      lastReplacedBecause: 'worker-1 was lost',
    });
  });

  it.each([
    { name: 'absent', annotation: undefined },
    { name: 'empty', annotation: '' },
  ])('is none when the annotation is $name', ({ annotation }) => {
    expect(parsePlacementRecord(annotation)).toEqual({ kind: 'none' });
  });

  it.each(['{', 'cluster=worker-1', '{"attempt": 1,}', "{'attempt': 1}"])(
    'is untrusted for non-JSON %j',
    (text) => {
      expect(parsePlacementRecord(text)).toEqual({ kind: 'untrusted', problem: 'it is not JSON' });
      expect(readPlacementRecord(text, subject, keys)).toEqual({
        kind: 'untrusted',
        problem: 'it is not JSON',
      });
    },
  );

  const valid = { attempt: 1, carried: { succeeded: 0, failed: 0 }, excludedClusters: [] };

  it.each([
    { name: 'null', json: null, paths: ['(root)'] },
    { name: 'an array', json: [valid], paths: ['(root)'] },
    { name: 'a string', json: 'worker-1', paths: ['(root)'] },
    { name: 'an empty object', json: {}, paths: ['attempt', 'carried', 'excludedClusters'] },
    { name: 'attempt 0', json: { ...valid, attempt: 0 }, paths: ['attempt'] },
    { name: 'a fractional attempt', json: { ...valid, attempt: 1.5 }, paths: ['attempt'] },
    { name: 'an empty cluster', json: { ...valid, cluster: '' }, paths: ['cluster'] },
    { name: 'no carried progress at all', json: { attempt: 1, excludedClusters: [] }, paths: ['carried'] },
    { name: 'a decision that is not text', json: { ...valid, decision: 97 }, paths: ['decision'] },
    {
      name: 'a non-string excluded cluster',
      json: { ...valid, excludedClusters: ['worker-1', 7] },
      paths: ['excludedClusters.1'],
    },
  ])('is untrusted for $name, naming each bad path', ({ json, paths }) => {
    const parsed = parsePlacementRecord(JSON.stringify(json));
    expect(parsed.kind).toBe('untrusted');
    if (parsed.kind !== 'untrusted') return;
    const problemPaths = parsed.problem.split('; ').map((problem) => problem.split(': ')[0]);
    expect(problemPaths).toEqual(paths);
  });

  it('says what is wrong, not only where', () => {
    const parsed = parsePlacementRecord(JSON.stringify({ ...valid, excludedClusters: 'worker-1' }));
    expect(parsed).toEqual({
      kind: 'untrusted',
      claimedAttempt: 1,
      problem: expect.stringMatching(/^excludedClusters: .*expected array, received string/),
    });
  });

  // Progress belongs to the workload's kind: the record seals and returns it, whatever its shape.
  it.each<{ name: string; carried: WorkloadProgress }>([
    { name: 'nothing carried', carried: null },
    {
      name: "a Job's counters and index sets",
      carried: { succeeded: 2, failed: 1, completedIndexes: '0,1' },
    },
    { name: 'a shape only its kind knows', carried: { steps: [3, 4], checkpoint: 's3://bucket/step-4' } },
    { name: 'a plain number', carried: 7 },
  ])('stores carried progress unread and hands it back: $name', ({ carried }) => {
    const record = placement().replacedBecause('worker-1 was lost', carried).build();
    const parsed = readPlacementRecord(formatPlacementRecord(record, subject, keys), subject, keys);
    expect(parsed).toEqual({ kind: 'ok', record: expect.objectContaining({ carried }) });
  });

  it('refuses to format a record that would not read back', () => {
    const broken = { ...placement().build(), attempt: 0 };
    expect(() => formatPlacementRecord(broken, subject, keys)).toThrow(/attempt/);
  });
});
