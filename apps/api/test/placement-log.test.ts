import { describe, expect, it } from 'vitest';
import { PlacementLog } from '../src/placement-log.ts';

const now = Date.parse('2026-12-01T12:00:00Z');
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

describe('PlacementLog', () => {
  it('counts each placement once per (Job, attempt), in the minute it happened, oldest minute first', () => {
    const log = new PlacementLog();
    log.add('a', 1, 'w1', ago(30), now);
    log.add('a', 1, 'w1', ago(30), now); // the same record seen again
    log.add('a', 2, 'w2', ago(90), now); // re-placed: another placement
    log.add('b', 1, 'w1', ago(150), now);
    log.add('c', 1, 'w1', ago(700), now); // older than the window
    log.add('d', 1, 'w1', 'not a time', now);
    const perMinute = log.perMinute(now);
    expect(perMinute.get('w1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0, 1]);
    expect(perMinute.get('w2')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(log.rate(now).get('w1')).toBe(0.4);
  });

  it('forgets placements once they leave the window', () => {
    const log = new PlacementLog();
    log.add('a', 1, 'w1', ago(30), now);
    expect(log.perMinute(now + 11 * 60_000).get('w1')).toBeUndefined();
  });
});
