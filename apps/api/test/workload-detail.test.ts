import type { PlacementRecord } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { type EventView, placementHistory, placementRecordSource } from '../src/workload-detail.ts';

const decision = 'placed on worker-2 by spread (score 97; worker-1 92); 3/3 clusters feasible.';

/** Attempt 2 on worker-2, placed at 10:05 after worker-1 was lost. */
const record: PlacementRecord = {
  cluster: 'worker-2',
  attempt: 2,
  placedAt: '2026-12-01T10:05:00.000Z',
  decision,
  carried: { succeeded: 1, failed: 0 },
  excludedClusters: [],
};

function event(reason: string, at: string | null, message = `${reason} message`): EventView {
  return {
    type: reason === 'Replacing' ? 'Warning' : 'Normal',
    reason,
    message,
    at,
    count: 1,
    source: 'jobrelay',
  };
}

const firstPlaced = event('Placed', '2026-12-01T10:00:00.000Z', 'placed on worker-1 by spread (score 90)');
const replacing = event('Replacing', '2026-12-01T10:04:59.000Z');
const fromRecord: EventView = {
  type: 'Normal',
  reason: 'Placed',
  message: decision,
  at: '2026-12-01T10:05:00.000Z',
  count: 1,
  source: placementRecordSource,
};

describe('placementHistory', () => {
  const rows: Array<{
    name: string;
    events: EventView[] | null;
    record: PlacementRecord | undefined;
    expected: EventView[];
  }> = [
    {
      name: 'no Events (dispatch Events off): the current placement, read from the record',
      events: [],
      record,
      expected: [fromRecord],
    },
    {
      name: 'only an earlier attempt’s Placed Event: the record’s placement after it, in time order',
      events: [firstPlaced, replacing, event('MirrorAdopted', '2026-12-01T10:06:00.000Z')],
      record,
      expected: [firstPlaced, replacing, fromRecord, event('MirrorAdopted', '2026-12-01T10:06:00.000Z')],
    },
    {
      name: 'a Placed Event for this placement (dispatch Events on): that Event, nothing added',
      events: [replacing, event('Placed', '2026-12-01T10:05:00.004Z', decision)],
      record,
      expected: [replacing, event('Placed', '2026-12-01T10:05:00.004Z', decision)],
    },
    {
      name: 'a Placed Event with the recorded decision, first seen before (a series): that Event',
      events: [event('Placed', '2026-12-01T09:58:00.000Z', decision)],
      record,
      expected: [event('Placed', '2026-12-01T09:58:00.000Z', decision)],
    },
    {
      name: 'a record without a decision (written before 0.2): Placed Events at or after placedAt count',
      events: [event('Placed', '2026-12-01T10:05:00.000Z', 'placed on worker-2')],
      record: { ...record, decision: undefined },
      expected: [event('Placed', '2026-12-01T10:05:00.000Z', 'placed on worker-2')],
    },
    {
      name: 'a record without a decision and no Event: where and which attempt',
      events: [],
      record: { ...record, decision: undefined },
      expected: [{ ...fromRecord, message: 'placed on worker-2 (attempt 2)' }],
    },
    {
      name: 'a record that does not say when: last, undated',
      events: [firstPlaced, replacing],
      record: { ...record, placedAt: undefined },
      expected: [firstPlaced, replacing, { ...fromRecord, at: null }],
    },
    {
      name: 'a caller who may not list Events: the record’s placement all the same',
      events: null,
      record,
      expected: [fromRecord],
    },
    {
      name: 'waiting for a cluster again: the Events only, nothing placed to tell',
      events: [firstPlaced, replacing],
      record: { attempt: 2, carried: { succeeded: 1, failed: 0 }, excludedClusters: [] },
      expected: [firstPlaced, replacing],
    },
    {
      name: 'no record at all: the Events only',
      events: null,
      record: undefined,
      expected: [],
    },
    {
      name: 'Events that are not about placement stay out',
      events: [
        event('StatusRefused', '2026-12-01T10:07:00.000Z'),
        event('Placed', '2026-12-01T10:05:01.000Z'),
      ],
      record,
      expected: [event('Placed', '2026-12-01T10:05:01.000Z')],
    },
  ];

  it.each(rows)('$name', ({ events, record: placement, expected }) => {
    expect(placementHistory(events, placement)).toEqual(expected);
  });
});
