// Property: a placement record jobrelay did not seal for this very workload is never acted on.
// Whatever a Job author writes into jobrelay.dev/placement (a made-up record, a valid record of
// another workload, a valid record of this one with a field changed), reading it and planning
// from it creates nothing, seeds nothing, writes no status and asks for no placement from it:
// the only things planned are deleting the workload's mirrors, saying why, and a fresh record
// that carries exactly what the workload's own status shows.
import {
  formatPlacementRecord,
  type PlacementRecord,
  RecordKeyring,
  readPlacementRecord,
} from '@jobrelay/placement';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planOrigin } from '../src/index.ts';
import {
  adapter,
  cluster,
  config,
  mirrorOf,
  now,
  originJob,
  present,
} from '../test-support/snapshot-builders.ts';

const keys = new RecordKeyring(Buffer.alloc(32, 42));
const origin = originJob();
const subject = { namespace: 'team-a', name: 'train', uid: origin.metadata!.uid! };

const records: fc.Arbitrary<PlacementRecord> = fc.record(
  {
    cluster: fc.constantFrom('worker-1', 'worker-2', 'worker-3'),
    attempt: fc.integer({ min: 1, max: 6 }),
    carried: fc.record({ succeeded: fc.nat(3), failed: fc.nat(3) }),
    excludedClusters: fc.array(fc.constantFrom('worker-1', 'worker-2'), { maxLength: 2 }),
    gaveUp: fc.constant('forged'),
    retryAfter: fc.constant('2099-01-01T00:00:00Z'),
  },
  { requiredKeys: ['attempt', 'carried', 'excludedClusters'] },
);

/** Annotation text jobrelay did not seal for `subject`, made up the ways a forger can. */
const forgedText = fc.oneof(
  // Made up, unsealed.
  records.map((r) => JSON.stringify(r)),
  // A valid record of another workload, copied.
  fc
    .tuple(records, fc.constantFrom('uid-other', 'uid-2'))
    .map(([r, uid]) => formatPlacementRecord(r, { ...subject, uid }, keys)),
  // A valid record of this workload with a field changed, its seal kept.
  fc.tuple(records, records).map(([genuine, forged]) => {
    const sealed = JSON.parse(formatPlacementRecord(genuine, subject, keys)) as { seal: string };
    const text = JSON.stringify({ ...forged, seal: sealed.seal });
    return JSON.stringify(genuine) === JSON.stringify(forged) ? JSON.stringify(forged) : text;
  }),
  // A seal made up under jobrelay's key id, or under a key nobody holds.
  fc
    .tuple(records, fc.string({ minLength: 43, maxLength: 43 }))
    .map(([r, noise]) => JSON.stringify({ ...r, seal: `v1.${keys.currentKeyId}.${noise}` })),
  // Not a record at all.
  fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
);

const clusters = fc.array(
  fc.record({
    name: fc.constantFrom('worker-1', 'worker-2', 'worker-3'),
    attempt: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    active: fc.boolean(),
  }),
  { maxLength: 3 },
);

describe('a record jobrelay did not seal for this workload', () => {
  it('is never acted on (property)', () => {
    fc.assert(
      fc.property(
        forgedText.filter((text) => text !== ''),
        clusters,
        fc.record({ succeeded: fc.nat(2), failed: fc.nat(2) }),
        (text, seen, status) => {
          const placement = readPlacementRecord(text, subject, keys);
          expect(placement.kind).not.toBe('ok');
          const withStatus = originJob({ status: status });
          const unique = [...new Map(seen.map((c) => [c.name, c])).values()];
          const snapshot = present(
            withStatus,
            placement,
            unique.map((c) =>
              cluster(c.name, {
                active: c.active,
                ...(c.attempt !== undefined ? { mirror: mirrorOf(withStatus, { attempt: c.attempt }) } : {}),
              }),
            ),
          );
          const actions = planOrigin(snapshot, adapter, config, now);
          for (const action of actions) {
            expect(['delete-mirror', 'record-event', 'patch-placement']).toContain(action.type);
          }
          const fresh = actions.flatMap((a) => (a.type === 'patch-placement' ? [a.record] : []));
          if (placement.kind === 'unverifiable') {
            expect(actions.map((a) => a.type)).toEqual(['record-event']);
            return;
          }
          expect(fresh).toHaveLength(1);
          const [record] = fresh as [PlacementRecord];
          expect(record.cluster).toBeUndefined();
          expect(record.carried).toEqual(adapter.progress.of(withStatus));
          expect(record.gaveUp).toBeUndefined();
          expect(record.retryAfter).toBeUndefined();
          expect(record.excludedClusters).toEqual([]);
          for (const c of unique)
            if (c.attempt !== undefined && c.active) expect(record.attempt).toBeGreaterThan(c.attempt);
        },
      ),
      { numRuns: 1_500 },
    );
    // Generous: 1,500 plans on a machine shared with running clusters; the property is what is tested.
  }, 120_000);
});
