import type { PlacementTask } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { placementTaskKind } from '../src/placement-task-kind.ts';

const dispatched = new Map([
  ['job', 'the Job kind'],
  ['rayjob', 'the RayJob kind'],
]);
const task = (kind: unknown): PlacementTask =>
  ({
    namespace: 'team-a',
    name: 'train',
    uid: 'uid-1',
    ...(kind === undefined ? {} : { kind }),
  }) as PlacementTask;

describe('the kind of a placement task', () => {
  it('is the dispatched kind it names', () => {
    expect(placementTaskKind(task('rayjob'), dispatched)).toEqual({
      kind: 'known',
      dispatched: 'the RayJob kind',
    });
  });

  it.each<[string, unknown, string]>([
    [
      'no kind (queued by a version before kinds): never taken for a Job',
      undefined,
      "placement task for team-a/train names no kind: dropped (the workload's reconcile queues it again, with its kind)",
    ],
    [
      'an empty kind',
      '',
      "placement task for team-a/train names no kind: dropped (the workload's reconcile queues it again, with its kind)",
    ],
    [
      'a kind that is not text',
      7,
      "placement task for team-a/train names no kind: dropped (the workload's reconcile queues it again, with its kind)",
    ],
    [
      'a kind this controller does not dispatch',
      'raycluster',
      'placement task for team-a/train names kind "raycluster", which this controller does not dispatch (--kinds job,rayjob): dropped',
    ],
  ])('is refused with a message for %s', (_name, kind, message) => {
    expect(placementTaskKind(task(kind), dispatched)).toEqual({ kind: 'refused', message });
  });
});
