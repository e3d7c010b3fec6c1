// The one rule for a mirror found on a worker, as a table: reconcile, garbage collection and
// the cleanup of a returning worker all go through it.
import { nothingCarried, type ParsedPlacement } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { classifyMirror, isDeletable, type MirrorClass } from '../src/index.ts';
import { foreignJob, mirrorOf, originId, originJob, record } from '../test-support/snapshot-builders.ts';

const origin = originJob();
const placedOn = (cluster: string | undefined, attempt = 1): ParsedPlacement => ({
  kind: 'ok',
  record: { ...record({ attempt }), cluster, carried: nothingCarried },
});

const rows: Array<{
  name: string;
  mirror: ReturnType<typeof mirrorOf>;
  cluster: string;
  origin: { uid: string; placement: ParsedPlacement } | undefined;
  expected: MirrorClass['kind'];
  deletable: boolean;
}> = [
  {
    name: 'the current attempt on the recorded cluster',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: placedOn('worker-1') },
    expected: 'current',
    deletable: false,
  },
  {
    name: 'placed elsewhere now (a worker returning after its Job moved)',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: placedOn('worker-2', 2) },
    expected: 'stale',
    deletable: true,
  },
  {
    name: 'an older attempt on the same cluster',
    mirror: mirrorOf(origin, { attempt: 1 }),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: placedOn('worker-1', 3) },
    expected: 'stale',
    deletable: true,
  },
  {
    name: 'waiting for a new placement',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: placedOn(undefined, 2) },
    expected: 'stale',
    deletable: true,
  },
  {
    name: 'the origin has no placement record at all',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: { kind: 'none' } },
    expected: 'stale',
    deletable: true,
  },
  {
    name: 'the origin was deleted',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: undefined,
    expected: 'orphan',
    deletable: true,
  },
  {
    name: 'a newer origin of the same name',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-2', placement: placedOn('worker-1') },
    expected: 'orphan',
    deletable: true,
  },
  {
    name: 'the placement record is sealed with a key jobrelay does not hold',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: { kind: 'unverifiable', keyId: '0123456789abcdef' } },
    expected: 'undecided',
    deletable: false,
  },
  {
    name: 'the placement record was not written by jobrelay (names no current mirror)',
    mirror: mirrorOf(origin),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: { kind: 'untrusted', problem: 'it carries no seal' } },
    expected: 'stale',
    deletable: true,
  },
  {
    name: 'not created by jobrelay',
    mirror: foreignJob(origin),
    cluster: 'worker-1',
    origin: undefined,
    expected: 'foreign',
    deletable: false,
  },
  {
    name: 'another installation’s mirror',
    mirror: mirrorOf(origin, { originId: 'mgmt-2' }),
    cluster: 'worker-1',
    origin: { uid: 'uid-1', placement: placedOn('worker-2') },
    expected: 'foreign',
    deletable: false,
  },
];

describe('classifyMirror', () => {
  it.each(rows)('$name: $expected', ({ mirror, cluster, origin: context, expected, deletable }) => {
    const mirrorClass = classifyMirror(mirror, { originId, cluster, origin: context });
    expect(mirrorClass.kind).toBe(expected);
    expect(isDeletable(mirrorClass)).toBe(deletable);
  });
});
