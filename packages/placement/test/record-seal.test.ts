import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatPlacementRecord,
  type PlacementRecord,
  parsePlacementRecord,
  readPlacementRecord,
} from '../src/placement-record.ts';
import { recordKeyringFromSecretData } from '../src/record-key-secret.ts';
import { canonicalJson, RecordKeyring } from '../src/record-seal.ts';

const keys = new RecordKeyring(Buffer.alloc(32, 1));
const train = { namespace: 'team-a', name: 'train', uid: 'uid-train' };
const placed: PlacementRecord = {
  cluster: 'worker-1',
  attempt: 2,
  placedAt: '2026-12-03T10:00:00Z',
  carried: { succeeded: 1, failed: 0 },
  excludedClusters: [],
};

/** The annotation's JSON with `change` applied, its seal kept as it was. */
function edited(text: string, change: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(text) as Record<string, unknown>;
  change(json);
  return JSON.stringify(json);
}

describe('placement record seals', () => {
  const sealed = formatPlacementRecord(placed, train, keys);

  it('reads back a record sealed for this workload', () => {
    expect(readPlacementRecord(sealed, train, keys)).toEqual({ kind: 'ok', record: placed });
  });

  it.each([
    {
      name: 'unsealed (written by hand)',
      text: JSON.stringify(placed),
      problem: 'it carries no seal',
    },
    {
      name: 'with more progress carried',
      text: edited(sealed, (json) => {
        json.carried = { succeeded: 3, failed: 0 };
      }),
      problem: /does not match/,
    },
    {
      name: 'with its carried progress emptied (nothing carried, so the work runs again)',
      text: edited(sealed, (json) => {
        json.carried = null;
      }),
      problem: /does not match/,
    },
    {
      name: 'with a field added inside its carried progress, which only the kind reads',
      text: edited(sealed, (json) => {
        json.carried = { succeeded: 1, failed: 0, completedIndexes: '0-3' };
      }),
      problem: /does not match/,
    },
    {
      name: 'moved to a cordoned cluster',
      text: edited(sealed, (json) => {
        json.cluster = 'worker-2';
      }),
      problem: /does not match/,
    },
    {
      name: 'with its seal from another record of the same workload',
      text: edited(sealed, (json) => {
        json.seal = JSON.parse(formatPlacementRecord({ ...placed, attempt: 1 }, train, keys)).seal;
      }),
      problem: /does not match/,
    },
    {
      name: 'with a malformed seal',
      text: edited(sealed, (json) => {
        json.seal = 'v1.trust-me';
      }),
      problem: 'its seal is malformed',
    },
  ])('is untrusted $name', ({ text, problem }) => {
    const read = readPlacementRecord(text, train, keys);
    expect(read).toMatchObject({ kind: 'untrusted', problem, claimedAttempt: 2 });
  });

  it('is untrusted on another workload: a copy of a valid record does not work', () => {
    for (const other of [
      { ...train, uid: 'uid-other' },
      { ...train, name: 'other' },
      { ...train, namespace: 'team-b' },
    ]) {
      expect(readPlacementRecord(sealed, other, keys)).toMatchObject({
        kind: 'untrusted',
        problem: /does not match this workload/,
      });
    }
  });

  it('is untrusted when sealed with a key of the same id format but other bytes', () => {
    const forger = new RecordKeyring(Buffer.alloc(32, 2));
    const forged = formatPlacementRecord(placed, train, forger);
    // A forger's key has its own id: nothing it seals is verifiable here.
    expect(readPlacementRecord(forged, train, keys)).toEqual({
      kind: 'unverifiable',
      keyId: forger.currentKeyId,
    });
    // And pretending to be sealed with our key id fails the MAC.
    const pretending = edited(forged, (json) => {
      json.seal = String(json.seal).replace(forger.currentKeyId, keys.currentKeyId);
    });
    expect(readPlacementRecord(pretending, train, keys)).toMatchObject({ kind: 'untrusted' });
  });

  it('verifies records sealed with a previous key, and seals new ones with the current key', () => {
    const old = new RecordKeyring(Buffer.alloc(32, 3));
    const rotated = new RecordKeyring(Buffer.alloc(32, 4), [Buffer.alloc(32, 3)]);
    const before = formatPlacementRecord(placed, train, old);
    expect(readPlacementRecord(before, train, rotated)).toEqual({ kind: 'ok', record: placed });
    const after = formatPlacementRecord(placed, train, rotated);
    expect(JSON.parse(after).seal).toContain(rotated.currentKeyId);
    expect(readPlacementRecord(after, train, old)).toMatchObject({ kind: 'unverifiable' });
  });

  it('does not believe an absurd attempt, even to number past it', () => {
    const huge = edited(sealed, (json) => {
      json.attempt = 2 ** 40;
    });
    const read = readPlacementRecord(huge, train, keys);
    expect(read.kind).toBe('untrusted');
    expect(read).not.toHaveProperty('claimedAttempt');
  });

  it('ignores fields it does not know, which change nothing it acts on', () => {
    const extra = edited(sealed, (json) => {
      json.note = 'hello';
    });
    expect(readPlacementRecord(extra, train, keys)).toEqual({ kind: 'ok', record: placed });
  });

  it('parsePlacementRecord reads without checking (for people), so it never says unverifiable', () => {
    expect(parsePlacementRecord(JSON.stringify(placed))).toEqual({ kind: 'ok', record: placed });
  });
});

describe('record keys', () => {
  it('refuses a key shorter than 32 bytes', () => {
    expect(() => new RecordKeyring(Buffer.alloc(16))).toThrow(/at least 32 bytes, this one holds 16/);
  });

  it('reads the current and previous keys from a Secret, naming what is wrong without a value', () => {
    const current = Buffer.alloc(32, 9).toString('base64');
    const previous = Buffer.alloc(32, 8).toString('base64');
    const keyring = recordKeyringFromSecretData({ key: current, 'previous-1': previous }, 'ns/s');
    const old = new RecordKeyring(Buffer.alloc(32, 8));
    expect(readPlacementRecord(formatPlacementRecord(placed, train, old), train, keyring).kind).toBe('ok');
    expect(() => recordKeyringFromSecretData({}, 'ns/s')).toThrow('Secret ns/s has no data key "key"');
    expect(() => recordKeyringFromSecretData({ key: 'c2hvcnQ=' }, 'ns/s')).toThrow(
      'Secret ns/s: a record key must hold at least 32 bytes, this one holds 5',
    );
  });

  it('names keys by an id that is not the key', () => {
    const key = Buffer.alloc(32, 5);
    const keyring = new RecordKeyring(key);
    expect(keyring.currentKeyId).toMatch(/^[0-9a-f]{16}$/);
    expect(key.toString('hex')).not.toContain(keyring.currentKeyId);
  });
});

describe('canonicalJson', () => {
  it('gives equal text for equal values whatever the key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(value));
      }),
    );
  });
});

// A record the controller did not write is never taken as the controller's. The forger knows
// every valid record of every workload (it may copy them), may change any field, move a seal,
// or make up one; it does not hold the key.
describe('no record jobrelay did not seal for this workload reads as ok (property)', () => {
  const subjects = fc.record({
    namespace: fc.constantFrom('team-a', 'team-b'),
    name: fc.constantFrom('train', 'eval'),
    uid: fc.constantFrom('uid-1', 'uid-2', 'uid-3'),
  });
  const records = fc.record(
    {
      cluster: fc.constantFrom('worker-1', 'worker-2'),
      attempt: fc.integer({ min: 1, max: 5 }),
      carried: fc.record({ succeeded: fc.nat(5), failed: fc.nat(5) }),
      excludedClusters: fc.array(fc.constantFrom('worker-1', 'worker-2'), { maxLength: 2 }),
      gaveUp: fc.string({ maxLength: 4 }),
    },
    { requiredKeys: ['attempt', 'carried', 'excludedClusters'] },
  );

  it('holds for copies, edits and made-up seals', () => {
    fc.assert(
      fc.property(
        records,
        subjects,
        records,
        subjects,
        fc.constantFrom('copy', 'edit-record', 'made-up-seal', 'unsealed'),
        fc.string(),
        (genuine, genuineSubject, forged, target, how, noise) => {
          const sealed = JSON.parse(formatPlacementRecord(genuine, genuineSubject, keys)) as {
            seal: string;
          };
          const text =
            how === 'copy'
              ? JSON.stringify(sealed)
              : how === 'edit-record'
                ? JSON.stringify({ ...forged, seal: sealed.seal })
                : how === 'made-up-seal'
                  ? JSON.stringify({ ...forged, seal: `v1.${keys.currentKeyId}.${noise}` })
                  : JSON.stringify(forged);
          const read = readPlacementRecord(text, target, keys);
          const identical =
            canonicalJson(genuineSubject) === canonicalJson(target) &&
            (how === 'copy' || (how === 'edit-record' && canonicalJson(forged) === canonicalJson(genuine)));
          if (read.kind === 'ok') expect(identical).toBe(true);
          else expect(identical).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
    // Generous: 2,000 seals on a machine shared with running clusters.
  }, 120_000);
});
