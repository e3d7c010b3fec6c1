import { describe, expect, it } from 'vitest';
import type { Caller, Permission } from '../src/access-review.ts';
import {
  closedEventFrame,
  closedLogLine,
  expiredProblem,
  minimumRecheckMs,
  permissionKey,
  recheckDecision,
  recheckGroups,
  recheckIntervalMs,
  slowReaderProblem,
  streamAdmission,
  streamOutcome,
} from '../src/stream-policy.ts';

const watchJobs: Permission = { verb: 'watch', group: 'batch', resource: 'jobs', namespace: 'team-a' };
const watchClusters: Permission = { verb: 'watch', group: 'jobrelay.dev', resource: 'workerclusters' };
const podLogs: Permission = { verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'a' };
const alice: Caller = { username: 'alice', groups: [] };

describe('recheckIntervalMs', () => {
  it.each([
    { cacheSeconds: 5, expected: 5_000 },
    { cacheSeconds: 10, expected: 10_000 },
    { cacheSeconds: 1, expected: 1_000 },
    // No reuse for requests: streams still are not re-checked more than once a second.
    { cacheSeconds: 0, expected: minimumRecheckMs },
  ])('--auth-cache-seconds $cacheSeconds re-checks every $expected ms', ({ cacheSeconds, expected }) => {
    expect(recheckIntervalMs(cacheSeconds)).toBe(expected);
  });
});

describe('streamAdmission', () => {
  const caps = { perIdentity: 16, total: 100 };
  it.each([
    { open: 0, total: 0, refused: undefined },
    { open: 15, total: 99, refused: undefined },
    { open: 16, total: 16, refused: '--max-streams-per-identity 16' },
    { open: 3, total: 100, refused: '--max-open-streams 100' },
  ])('$open open by the caller, $total in all: $refused', ({ open, total, refused }) => {
    const problem = streamAdmission('alice', open, total, caps);
    if (!refused) {
      expect(problem).toBeUndefined();
      return;
    }
    expect(problem?.status).toBe(429);
    expect(problem?.code).toBe('too-many-streams');
    expect(problem?.message).toContain(refused);
  });

  it('names the identity whose cap is full', () => {
    expect(streamAdmission('system:serviceaccount:a:b', 16, 16, caps)?.message).toMatch(
      /^system:serviceaccount:a:b already has 16 open streams/,
    );
  });
});

describe('recheckDecision', () => {
  it.each([
    { outcome: { kind: 'allowed' } as const, inARow: 1, keep: true, next: 0 },
    { outcome: { kind: 'unavailable' } as const, inARow: 0, keep: true, next: 1 },
    { outcome: { kind: 'unavailable' } as const, inARow: 1, keep: false, code: 'unavailable', status: 503 },
    {
      outcome: { kind: 'unauthenticated' } as const,
      inARow: 0,
      keep: false,
      code: 'unauthenticated',
      status: 401,
    },
    {
      outcome: { kind: 'forbidden', missing: watchJobs } as const,
      inARow: 0,
      keep: false,
      code: 'forbidden',
      status: 403,
    },
  ])('$outcome.kind after $inARow unavailable in a row', ({ outcome, inARow, keep, next, code, status }) => {
    const decision = recheckDecision(outcome, inARow, 'alice');
    expect(decision.keep).toBe(keep);
    if (decision.keep) expect(decision.unavailableInARow).toBe(next);
    else {
      expect(decision.problem.code).toBe(code);
      expect(decision.problem.status).toBe(status);
    }
  });

  it('a revoked right names the permission, as a refused request does', () => {
    const decision = recheckDecision({ kind: 'forbidden', missing: watchJobs }, 0, 'alice');
    expect(decision.keep).toBe(false);
    if (decision.keep) return;
    expect(decision.reason).toBe('forbidden');
    expect(decision.problem.toProblem('/api/v1/watch')).toMatchObject({
      status: 403,
      code: 'forbidden',
      detail: 'alice is not allowed to watch jobs.batch in namespace team-a any more; this stream is closed',
      missingPermission: { verb: 'watch', group: 'batch', resource: 'jobs', namespace: 'team-a' },
      instance: '/api/v1/watch',
    });
  });
});

describe('recheckGroups', () => {
  it('one group per token, each permission once, in first-seen order', () => {
    const streams = [
      { id: 1, token: 't1', permissions: [watchJobs, watchClusters] },
      { id: 2, token: 't2', permissions: [podLogs] },
      { id: 3, token: 't1', permissions: [watchClusters, { ...watchJobs }] },
    ];
    const groups = recheckGroups(streams);
    expect(groups.map((g) => [g.token, g.streams.map((s) => s.id), g.permissions])).toEqual([
      ['t1', [1, 3], [watchJobs, watchClusters]],
      ['t2', [2], [podLogs]],
    ]);
  });

  it('tells a namespaced permission from the same one in all namespaces', () => {
    const { namespace: _ns, ...everywhere } = watchJobs;
    expect(permissionKey(everywhere)).not.toBe(permissionKey(watchJobs));
  });
});

describe('streamOutcome', () => {
  const answers = (entries: Array<[Permission, boolean | 'unavailable']>) =>
    new Map(entries.map(([p, a]) => [permissionKey(p), a]));

  it.each([
    { name: 'token refused', caller: undefined, answers: [], kind: 'unauthenticated' },
    { name: 'TokenReview failed', caller: 'unavailable' as const, answers: [], kind: 'unavailable' },
    {
      name: 'every permission granted',
      caller: alice,
      answers: [
        [watchJobs, true],
        [watchClusters, true],
      ],
      kind: 'allowed',
    },
    {
      name: 'one denied after one unanswered',
      caller: alice,
      answers: [
        [watchJobs, 'unavailable'],
        [watchClusters, false],
      ],
      kind: 'forbidden',
    },
    {
      name: 'one unanswered',
      caller: alice,
      answers: [
        [watchJobs, true],
        [watchClusters, 'unavailable'],
      ],
      kind: 'unavailable',
    },
  ] as const)('$name: $kind', ({ caller, answers: entries, kind }) => {
    const outcome = streamOutcome(
      caller,
      [watchJobs, watchClusters],
      answers(entries as unknown as Array<[Permission, boolean]>),
    );
    expect(outcome.kind).toBe(kind);
  });

  it('names the first of its own permissions denied', () => {
    const outcome = streamOutcome(
      alice,
      [watchClusters, watchJobs],
      answers([
        [watchJobs, false],
        [watchClusters, false],
      ]),
    );
    expect(outcome).toEqual({ kind: 'forbidden', missing: watchClusters });
  });
});

describe('last words', () => {
  it('an event stream ends with event: closed carrying the problem', () => {
    const frame = closedEventFrame(expiredProblem(3600), '/api/v1/watch');
    expect(frame).toMatch(/^event: closed\ndata: \{.*\}\n\n$/);
    const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]!);
    expect(data).toEqual({
      type: 'https://jobrelay.dev/problems/stream-expired',
      title: 'Stream lifetime reached',
      status: 408,
      code: 'stream-expired',
      detail:
        'this stream reached the longest a stream stays open (--max-stream-seconds 3600); reconnect to go on',
      instance: '/api/v1/watch',
    });
  });

  it('a log stream ends with one line naming the code and why', () => {
    expect(closedLogLine(slowReaderProblem(2_000_000, 1_048_576))).toBe(
      '[jobrelay] stream closed (slow-reader): the client read too slowly: 2000000 bytes waited unsent, more than --stream-buffer-bytes 1048576; this stream is dropped, reconnect and read as it comes\n',
    );
  });
});
