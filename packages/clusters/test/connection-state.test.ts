// The connection state machine as a table: each row a state, an event and a time, and the
// state the registry must be in afterwards.
import { describe, expect, it } from 'vitest';
import {
  attemptDue,
  type BackoffConfig,
  backoffMs,
  type ConnectionEvent,
  type ConnectionState,
  initialConnectionState,
  nextConnectionState,
  olderRegistration,
  type RegistrationClaim,
} from '../src/connection-state.ts';
import { activeReasons } from '../src/worker-cluster.ts';

const backoff: BackoffConfig = { initialMs: 1_000, maxMs: 60_000 };
const t0 = 1_000_000;

/** A state built from the initial one. */
function state(overrides: Partial<ConnectionState> = {}): ConnectionState {
  return { ...initialConnectionState(), ...overrides };
}

const active = state({
  active: true,
  reason: activeReasons.connected,
  message: 'connected to https://worker:6443 (v1.35.0)',
  activeSince: t0 - 60_000,
});
const unreachable: ConnectionEvent = {
  type: 'disconnected',
  reason: activeReasons.unreachable,
  message: 'cannot reach https://worker:6443 (ECONNREFUSED)',
};
/** Failing since t0 - 10 s, after `attempts` failures; the last at t0 - 1 s. */
function failing(attempts: number, overrides: Partial<ConnectionState> = {}): ConnectionState {
  return state({
    reason: activeReasons.unreachable,
    message: 'cannot reach https://worker:6443 (ECONNREFUSED)',
    attempts,
    nextAttemptAt: t0 - 1_000 + backoffMs(attempts, backoff),
    inactiveSince: t0 - 10_000,
    ...overrides,
  });
}

interface Row {
  name: string;
  current: ConnectionState;
  event: ConnectionEvent;
  now: number;
  expected: ConnectionState | undefined;
}

const rows: Row[] = [
  // A first attempt.
  {
    name: 'a new registration that fails: inactive since now, first retry after the initial backoff',
    current: initialConnectionState(),
    event: {
      type: 'disconnected',
      reason: activeReasons.secretNotFound,
      message: 'Secret jobrelay-system/w not found',
    },
    now: t0,
    expected: state({
      reason: activeReasons.secretNotFound,
      message: 'Secret jobrelay-system/w not found',
      attempts: 1,
      nextAttemptAt: t0 + 1_000,
      inactiveSince: t0,
    }),
  },
  {
    name: 'a new registration that connects: Active, claimed now, never inactive',
    current: initialConnectionState(),
    event: { type: 'connected', message: 'connected to https://worker:6443 (v1.35.0)' },
    now: t0,
    expected: state({
      active: true,
      reason: activeReasons.connected,
      message: 'connected to https://worker:6443 (v1.35.0)',
      activeSince: t0,
    }),
  },
  // Losing an Active cluster.
  {
    name: 'an Active cluster that fails a check: inactive since now, keeps its claim (the connection stays open)',
    current: active,
    event: unreachable,
    now: t0,
    expected: {
      ...active,
      active: false,
      reason: activeReasons.unreachable,
      message: 'cannot reach https://worker:6443 (ECONNREFUSED)',
      attempts: 1,
      nextAttemptAt: t0 + 1_000,
      inactiveSince: t0,
    },
  },
  // Backoff.
  {
    name: 'the second failure in a row waits twice as long',
    current: failing(1),
    event: unreachable,
    now: t0,
    expected: failing(2, { nextAttemptAt: t0 + 2_000 }),
  },
  {
    name: 'the fourth waits 8 s',
    current: failing(3),
    event: unreachable,
    now: t0,
    expected: failing(4, { nextAttemptAt: t0 + 8_000 }),
  },
  {
    name: 'the wait is capped (2^9 s > 60 s)',
    current: failing(9),
    event: unreachable,
    now: t0,
    expected: failing(10, { nextAttemptAt: t0 + 60_000 }),
  },
  {
    name: 'inactiveSince is kept across failures, whatever the reason; a new reason restarts the backoff',
    current: failing(2),
    event: { type: 'disconnected', reason: activeReasons.unauthorized, message: 'rejected (HTTP 401)' },
    now: t0,
    expected: failing(1, {
      reason: activeReasons.unauthorized,
      message: 'rejected (HTTP 401)',
      nextAttemptAt: t0 + 1_000,
    }),
  },
  // Reconnecting.
  {
    name: 'a failing cluster that connects: Active, attempts and backoff reset, inactiveSince cleared',
    current: failing(5, { activeSince: t0 - 60_000 }),
    event: { type: 'connected', message: 'connected to https://worker:6443 (v1.35.0)' },
    now: t0,
    expected: { ...active, activeSince: t0 - 60_000 },
  },
  {
    name: 'connecting again keeps the first claim on the cluster',
    current: active,
    event: {
      type: 'connected',
      message: 'connected to https://worker:6443 (v1.35.0); does not serve RayJob (ray.io/v1)',
    },
    now: t0,
    expected: {
      ...active,
      message: 'connected to https://worker:6443 (v1.35.0); does not serve RayJob (ray.io/v1)',
    },
  },
  // Spec changes.
  {
    name: 'a spec change during the backoff: the next attempt is due now',
    current: failing(4),
    event: { type: 'spec-changed' },
    now: t0,
    expected: failing(4, { nextAttemptAt: t0 }),
  },
  {
    name: 'a spec change of an Active cluster changes nothing',
    current: active,
    event: { type: 'spec-changed' },
    now: t0,
    expected: active,
  },
  {
    name: 'a spec change after the backoff passed keeps the earlier due time',
    current: failing(1, { nextAttemptAt: t0 - 500 }),
    event: { type: 'spec-changed' },
    now: t0,
    expected: failing(1, { nextAttemptAt: t0 - 500 }),
  },
  // Checks and cleanup.
  {
    name: 'checks passed: the registration claims the cluster now, still not Active',
    current: failing(2),
    event: { type: 'checks-passed' },
    now: t0,
    expected: failing(2, { activeSince: t0 }),
  },
  {
    name: 'checks passed again: the older claim stands',
    current: failing(2, { activeSince: t0 - 5_000 }),
    event: { type: 'checks-passed' },
    now: t0,
    expected: failing(2, { activeSince: t0 - 5_000 }),
  },
  {
    name: 'the cleanup before activation fails: backoff, the condition unchanged, still not inactive-since if never lost',
    current: state({ activeSince: t0 }),
    event: { type: 'cleanup-failed' },
    now: t0,
    expected: state({ activeSince: t0, attempts: 1, nextAttemptAt: t0 + 1_000 }),
  },
  {
    name: 'the cleanup fails on a cluster coming back: inactiveSince and the last reason kept, backoff doubles',
    current: failing(2, { activeSince: t0 }),
    event: { type: 'cleanup-failed' },
    now: t0,
    expected: failing(3, { activeSince: t0, nextAttemptAt: t0 + 4_000 }),
  },
  // Closing and removal.
  {
    name: 'the connection is closed (new Secret, duplicate): its claim goes, nothing else changes',
    current: failing(2, { activeSince: t0 - 5_000 }),
    event: { type: 'closed' },
    now: t0,
    expected: failing(2),
  },
  {
    name: 'closing an Active connection leaves the condition to the next event',
    current: active,
    event: { type: 'closed' },
    now: t0,
    expected: { ...active, activeSince: undefined },
  },
  {
    name: 'a duplicate registration (after closing): inactive, DuplicateCluster, unclaimed',
    current: state({ activeSince: undefined }),
    event: {
      type: 'disconnected',
      reason: activeReasons.duplicateCluster,
      message:
        'https://worker:6443 is the same cluster as WorkerCluster w1; delete one of the two registrations',
    },
    now: t0,
    expected: state({
      reason: activeReasons.duplicateCluster,
      message:
        'https://worker:6443 is the same cluster as WorkerCluster w1; delete one of the two registrations',
      attempts: 1,
      nextAttemptAt: t0 + 1_000,
      inactiveSince: t0,
    }),
  },
  {
    name: 'removed: no state any more',
    current: active,
    event: { type: 'removed' },
    now: t0,
    expected: undefined,
  },
  {
    name: 'removed while failing: no state any more',
    current: failing(3),
    event: { type: 'removed' },
    now: t0,
    expected: undefined,
  },
];

describe('nextConnectionState', () => {
  it.each(rows)('$name', ({ current, event, now, expected }) => {
    const before = structuredClone(current);
    expect(nextConnectionState(current, event, now, backoff)).toEqual(expected);
    expect(current, 'the current state is not modified').toEqual(before);
  });

  it('with unreachableMaxMs, retries a worker that does not answer at least that often, and nothing else', () => {
    const capped: BackoffConfig = { ...backoff, unreachableMaxMs: 4_000 };
    // The 7th failure in a row would wait 64 s (capped at 60 s) under the plain backoff.
    expect(nextConnectionState(failing(6), unreachable, t0, capped).nextAttemptAt).toBe(t0 + 4_000);
    expect(nextConnectionState(failing(6), unreachable, t0, backoff).nextAttemptAt).toBe(t0 + 60_000);
    // Below the cap the backoff is as before.
    expect(nextConnectionState(failing(1), unreachable, t0, capped).nextAttemptAt).toBe(t0 + 2_000);
    // A configuration error keeps the plain backoff: retrying soon fixes nothing.
    const forbidden: ConnectionEvent = {
      type: 'disconnected',
      reason: activeReasons.forbidden,
      message: 'jobrelay-dispatcher may not list jobs',
    };
    const forbiddenSixTimes = failing(6, { reason: activeReasons.forbidden });
    expect(nextConnectionState(forbiddenSixTimes, forbidden, t0, capped).nextAttemptAt).toBe(t0 + 60_000);
    expect(nextConnectionState(failing(6), { type: 'cleanup-failed' }, t0, capped).nextAttemptAt).toBe(
      t0 + 60_000,
    );
  });

  it('starts the backoff afresh when the reason changes: a 403 after an outage is retried in 1 s, not 60', () => {
    // A restarted worker apiserver answers 403 until its authorizer has synced.
    const forbidden: ConnectionEvent = {
      type: 'disconnected',
      reason: activeReasons.forbidden,
      message: 'jobrelay-dispatcher may not list jobs',
    };
    const next = nextConnectionState(failing(8), forbidden, t0, backoff);
    expect(next).toMatchObject({ attempts: 1, nextAttemptAt: t0 + 1_000, inactiveSince: t0 - 10_000 });
    expect(nextConnectionState(next, forbidden, t0 + 1_000, backoff)).toMatchObject({
      attempts: 2,
      nextAttemptAt: t0 + 3_000,
    });
  });

  it('checks a failing cluster at once when this replica takes the lead, keeping when it was lost', () => {
    const backedOff = failing(7, { nextAttemptAt: t0 + 50_000 });
    const next = nextConnectionState(backedOff, { type: 'took-the-lead' }, t0, backoff);
    expect(attemptDue(next, t0)).toBe(true);
    expect(next).toEqual({ ...backedOff, nextAttemptAt: t0 });
  });

  it('follows a worker through an outage: lost, retried with backoff, a spec change, back', () => {
    const events: Array<[number, ConnectionEvent]> = [
      [t0, unreachable],
      [t0 + 1_000, unreachable],
      [t0 + 3_000, unreachable],
      [t0 + 4_000, { type: 'spec-changed' }],
      [t0 + 4_000, { type: 'checks-passed' }],
      [t0 + 4_000, { type: 'cleanup-failed' }],
      [t0 + 12_000, { type: 'checks-passed' }],
      [t0 + 12_000, { type: 'connected', message: 'back' }],
    ];
    const seen: Array<Pick<ConnectionState, 'active' | 'attempts' | 'nextAttemptAt' | 'inactiveSince'>> = [];
    let current = active;
    for (const [now, event] of events) {
      if (event.type === 'removed') throw new Error('not in this scenario');
      // Every attempt (a failure, or checks that pass) starts when one is due.
      if (event.type === 'disconnected' || event.type === 'checks-passed')
        expect(attemptDue(current, now), `due at +${now - t0} ms`).toBe(true);
      current = nextConnectionState(current, event, now, backoff);
      const { active: isActive, attempts, nextAttemptAt, inactiveSince } = current;
      seen.push({ active: isActive, attempts, nextAttemptAt, inactiveSince });
    }
    expect(seen).toEqual([
      { active: false, attempts: 1, nextAttemptAt: t0 + 1_000, inactiveSince: t0 },
      { active: false, attempts: 2, nextAttemptAt: t0 + 3_000, inactiveSince: t0 },
      { active: false, attempts: 3, nextAttemptAt: t0 + 7_000, inactiveSince: t0 },
      // The spec change makes the next attempt due at once (it would have waited until +7 s).
      { active: false, attempts: 3, nextAttemptAt: t0 + 4_000, inactiveSince: t0 },
      { active: false, attempts: 3, nextAttemptAt: t0 + 4_000, inactiveSince: t0 },
      { active: false, attempts: 4, nextAttemptAt: t0 + 12_000, inactiveSince: t0 },
      { active: false, attempts: 4, nextAttemptAt: t0 + 12_000, inactiveSince: t0 },
      { active: true, attempts: 0, nextAttemptAt: 0, inactiveSince: undefined },
    ]);
    // Claimed since before the outage: a failed check never closed the connection.
    expect(current.activeSince).toBe(active.activeSince);
  });
});

describe('attemptDue', () => {
  it.each([
    { name: 'a new registration', current: initialConnectionState(), now: t0, due: true },
    { name: 'an Active cluster, on every tick', current: active, now: t0, due: true },
    { name: 'a failing cluster before its backoff passed', current: failing(2), now: t0, due: false },
    { name: 'a failing cluster when its backoff passes', current: failing(2), now: t0 + 1_000, due: true },
    {
      name: 'a failing cluster right after a spec change',
      current: nextConnectionState(failing(6), { type: 'spec-changed' }, t0, backoff),
      now: t0,
      due: true,
    },
  ])('$name: $due', ({ current, now, due }) => {
    expect(attemptDue(current, now)).toBe(due);
  });
});

describe('backoffMs', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [6, 32_000],
    [7, 60_000],
    [40, 60_000],
  ])('after %i failures: %i ms', (attempts, ms) => {
    expect(backoffMs(attempts, backoff)).toBe(ms);
  });
});

describe('olderRegistration', () => {
  const claim = (name: string, clusterUid: string | undefined, activeSince: number | undefined) =>
    ({ name, clusterUid, activeSince }) satisfies RegistrationClaim;
  it.each([
    {
      name: 'another registration of the same cluster, claimed earlier: it wins',
      self: claim('b', 'uid-1', t0),
      others: [claim('a', 'uid-1', t0 - 1)],
      older: 'a',
    },
    {
      name: 'one claimed later: self stays',
      self: claim('a', 'uid-1', t0 - 1),
      others: [claim('b', 'uid-1', t0)],
      older: undefined,
    },
    {
      name: 'self not claimed yet, the other claimed: the other wins',
      self: claim('b', 'uid-1', undefined),
      others: [claim('a', 'uid-1', t0)],
      older: 'a',
    },
    {
      name: 'neither claimed (both refused or closed): no twin yet, the first to pass its checks claims',
      self: claim('b', 'uid-1', undefined),
      others: [claim('a', 'uid-1', undefined)],
      older: undefined,
    },
    {
      name: 'another cluster',
      self: claim('b', 'uid-1', t0),
      others: [claim('a', 'uid-2', t0 - 1)],
      older: undefined,
    },
    {
      name: 'an identity that may not read kube-system: duplicates go undetected',
      self: claim('b', undefined, t0),
      others: [claim('a', undefined, t0 - 1)],
      older: undefined,
    },
    {
      name: 'itself, in the list of every registration',
      self: claim('a', 'uid-1', t0),
      others: [claim('a', 'uid-1', t0 - 1)],
      older: undefined,
    },
    {
      name: 'the first older one among several',
      self: claim('c', 'uid-1', t0),
      others: [claim('x', 'uid-2', 1), claim('a', 'uid-1', t0 + 5), claim('b', 'uid-1', t0 - 5)],
      older: 'b',
    },
  ])('$name', ({ self, others, older }) => {
    expect(olderRegistration(self, others)?.name).toBe(older);
  });
});
