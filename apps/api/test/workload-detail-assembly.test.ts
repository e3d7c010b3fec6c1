// How the API assembles a workload's detail from the origin, what its connection to the origin's
// cluster shows (lookUpMirror) and the origin's Events (workloadDetail): each case of the mirror
// (not placed, cluster unreachable, not seen yet, another origin's object, kind not served,
// removed after the retention, found), with the clock injected. The real adapters read the
// objects; the connection is only handed through. The e2e files prove the same against real
// clusters where the outcome does not depend on timing (api-routes.test.ts: a running Job's mirror).

import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject, rayClusterAdapter } from '@jobrelay/kinds';
import { formatPlacementRecord, type PlacementRecord, RecordKeyring } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { type ClusterSight, lookUpMirror } from '../src/fleet-view.ts';
import { trustRecordsSealedBy } from '../src/placement-trust.ts';
import { workloadDetail } from '../src/workload-detail.ts';

const keys = new RecordKeyring(Buffer.alloc(32, 7));
trustRecordsSealedBy(keys);

const identity = { namespace: 'team-a', name: 'train', uid: 'origin-1' };
const now = Date.parse('2026-12-01T10:10:00Z');
const placed: PlacementRecord = {
  cluster: 'w1',
  attempt: 1,
  placedAt: '2026-12-01T10:01:00Z',
  decision: 'placed on w1 by spread (score 90); 2/2 clusters feasible.',
  carried: { succeeded: 0, failed: 0 },
  excludedClusters: [],
};

function origin(annotations: Record<string, string> = {}, status: Job['status'] = {}): Job & KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      ...identity,
      creationTimestamp: '2026-12-01T10:00:00Z',
      annotations,
    },
    spec: { managedBy: 'jobrelay.dev/dispatcher', template: { spec: { containers: [{ name: 'main' }] } } },
    status,
  };
}

const placedOrigin = (status: Job['status'] = { active: 1 }) =>
  origin({ 'jobrelay.dev/placement': formatPlacementRecord(placed, identity, keys) }, status);

function mirror(originUid: string): KubeObject & { status: object } {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      namespace: identity.namespace,
      name: identity.name,
      uid: 'mirror-1',
      creationTimestamp: '2026-12-01T10:01:02Z',
      labels: { 'jobrelay.dev/origin-uid': originUid },
    },
    status: { active: 1, ready: 1 },
  };
}

/** What an Active connection shows; the connection itself is only handed through to the logs route. */
function sight(fields: Partial<Omit<ClusterSight, 'connection'>>): ClusterSight {
  return {
    active: true,
    serves: true,
    mirror: undefined,
    connection: {} as ClusterSight['connection'],
    ...fields,
  };
}

function detailOf(object: KubeObject, view: ClusterSight | undefined, events = null, preview = () => 'x') {
  const cluster = object.metadata?.annotations?.['jobrelay.dev/placement'] ? 'w1' : undefined;
  return workloadDetail(
    batchJobAdapter,
    object,
    lookUpMirror(batchJobAdapter, object, cluster, view),
    events,
    preview,
    now,
  );
}

describe('lookUpMirror and workloadDetail: a detail from origin, mirror and cluster', () => {
  it('a Job not placed yet: pending, why it waits from its record, else from a placement preview', () => {
    let previews = 0;
    const preview = () => {
      previews += 1;
      return '0/2 clusters available: 2 insufficient cpu.';
    };
    const said = detailOf(
      origin({ 'jobrelay.dev/unschedulable': '0/2 clusters available: 2 cordoned.' }),
      undefined,
      null,
      preview,
    );
    expect(said).toMatchObject({
      phase: 'pending',
      cluster: null,
      mirror: null,
      mirrorUnavailable: 'the Job is not placed on a cluster yet',
      waiting: { reason: '0/2 clusters available: 2 cordoned.', since: '2026-12-01T10:00:00.000Z' },
      podSelectors: [],
      placement: null,
      history: [],
    });
    expect(previews).toBe(0);
    expect(detailOf(origin(), undefined, null, preview).waiting?.reason).toBe(
      '0/2 clusters available: 2 insufficient cpu.',
    );
    expect(previews).toBe(1);
  });

  it.each([
    ['its cluster is not connected', undefined, 'cluster w1 is not reachable from the API now'],
    [
      'its cluster is not Active',
      sight({ active: false, mirror: mirror('origin-1') }),
      'cluster w1 is not reachable from the API now',
    ],
    [
      'its mirror is not seen yet',
      sight({}),
      'no mirror on w1 (not created yet, or removed after the Job finished)',
    ],
    [
      'the object of its name there is another origin’s',
      sight({ mirror: mirror('someone-else') }),
      'no mirror on w1 (not created yet, or removed after the Job finished)',
    ],
    [
      'its cluster does not serve the kind',
      sight({ serves: false }),
      'w1 does not serve batch/v1 Job: no mirror there',
    ],
  ] as const)('placed, but %s: placed (not running), no mirror shown, and why', (_case, view, why) => {
    const detail = detailOf(placedOrigin(), view);
    expect(detail).toMatchObject({
      phase: 'placed',
      cluster: 'w1',
      attempt: 1,
      mirror: null,
      mirrorUnavailable: why,
      waiting: null,
      podSelectors: [],
      status: { active: 1 },
    });
    // Without Events (or the right to list them) the record tells the placement.
    expect(detail.history).toEqual([
      {
        type: 'Normal',
        reason: 'Placed',
        message: placed.decision,
        at: placed.placedAt,
        count: 1,
        source: 'placement-record',
      },
    ]);
  });

  it('placed and its mirror seen: running, the mirror’s status as its kind reads it, and how its pods are found', () => {
    const detail = detailOf(placedOrigin(), sight({ mirror: mirror('origin-1') }));
    expect(detail).toMatchObject({
      phase: 'running',
      mirror: {
        cluster: 'w1',
        uid: 'mirror-1',
        createdAt: '2026-12-01T10:01:02Z',
        status: { active: 1, ready: 1 },
      },
      mirrorUnavailable: null,
      podSelectors: [
        { labelSelector: 'batch.kubernetes.io/controller-uid=mirror-1', description: "the Job's pods" },
      ],
    });
  });

  it('finished, its mirror removed after the retention: finished, the origin’s status kept, the mirror said gone', () => {
    const done = placedOrigin({
      succeeded: 1,
      conditions: [{ type: 'Complete', status: 'True', reason: 'CompletionsReached' }] as never,
    });
    const before = detailOf(done, sight({ mirror: mirror('origin-1') }));
    const after = detailOf(done, sight({ mirror: undefined }));
    expect(before).toMatchObject({ phase: 'finished', mirror: { uid: 'mirror-1' } });
    expect(after).toMatchObject({
      phase: 'finished',
      mirror: null,
      mirrorUnavailable: 'no mirror on w1 (not created yet, or removed after the Job finished)',
      status: { succeeded: 1 },
    });
  });

  it('the history keeps the Events, and adds the record’s placement only when no Placed Event tells it', () => {
    const events = [
      {
        type: 'Warning',
        reason: 'FailedPlacement',
        message: '0/2',
        at: '2026-12-01T10:00:30Z',
        count: 1,
        source: 'jobrelay',
      },
      {
        type: 'Normal',
        reason: 'Unrelated',
        message: 'x',
        at: '2026-12-01T10:00:40Z',
        count: 1,
        source: 'kubelet',
      },
    ];
    const detail = workloadDetail(
      batchJobAdapter,
      placedOrigin(),
      lookUpMirror(batchJobAdapter, placedOrigin(), 'w1', sight({})),
      events,
      () => 'x',
      now,
    );
    expect(detail.events).toEqual(events);
    expect(detail.history.map((e) => `${e.reason}:${e.source}`)).toEqual([
      'FailedPlacement:jobrelay',
      'Placed:placement-record',
    ]);
  });

  it('reads why a refused workload waits by the injected clock: the refusal until its retry, then why nothing fits', () => {
    const refused = formatPlacementRecord(
      {
        attempt: 1,
        carried: { succeeded: 0, failed: 0 },
        excludedClusters: [],
        refusals: 1,
        refusedBy: ['w1'],
        retryAfter: '2026-12-01T10:15:00Z',
        lastReplacedBecause: 'cluster w1 refused the mirror (HTTP 403): exceeded quota',
      } as PlacementRecord,
      identity,
      keys,
    );
    const object = origin({
      'jobrelay.dev/placement': refused,
      'jobrelay.dev/unschedulable': '0/2 clusters available: 2 cordoned.',
    });
    const at = (time: string) =>
      workloadDetail(
        batchJobAdapter,
        object,
        lookUpMirror(batchJobAdapter, object, undefined, undefined),
        null,
        () => 'preview',
        Date.parse(time),
      ).waiting?.reason;
    expect(at('2026-12-01T10:14:59Z')).toBe(
      'cluster w1 refused the mirror (HTTP 403): exceeded quota; placed again after 2026-12-01T10:15:00Z',
    );
    expect(at('2026-12-01T10:15:01Z')).toBe('0/2 clusters available: 2 cordoned.');
  });

  it('names the queue: the one a pending workload’s reason states with its place in it, else the one selected; an admitted one’s record', () => {
    const waiting = origin({
      'jobrelay.dev/unschedulable': 'queue research: cpu 40/40 in use (borrowing 0 of 8 allowed)',
    });
    const places = new Map([[waiting.metadata!.uid!, { queue: 'research', position: 3, of: 17 }]]);
    const detail = (object: KubeObject, select: () => string | undefined, placed = places) =>
      workloadDetail(
        batchJobAdapter,
        object,
        lookUpMirror(batchJobAdapter, object, undefined, undefined),
        null,
        () => 'x',
        now,
        select,
        placed,
      );
    expect(detail(waiting, () => 'other').queue).toEqual({ name: 'research', position: 3, of: 17 });
    const noRoom = origin({ 'jobrelay.dev/unschedulable': '0/2 clusters available: 2 insufficient cpu.' });
    expect(detail(noRoom, () => 'research').queue).toEqual({ name: 'research', position: 3, of: 17 });
    // Not yet looked at by the controller's order (no place): the queue without a position.
    expect(detail(noRoom, () => 'research', new Map()).queue).toEqual({
      name: 'research',
      position: null,
      of: null,
    });
    expect(detail(noRoom, () => undefined).queue).toBeNull();
    const admitted = origin({
      'jobrelay.dev/placement': formatPlacementRecord({ ...placed, queue: 'research' }, identity, keys),
    });
    expect(detail(admitted, () => 'other').queue).toEqual({ name: 'research', position: null, of: null });
  });

  it('says what another kind is: a RayCluster not served by its cluster', () => {
    const rc = { apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { ...identity } } as KubeObject;
    expect(lookUpMirror(rayClusterAdapter, rc, 'w2', sight({ serves: false }))).toEqual({
      kind: 'absent',
      cluster: 'w2',
      message: 'w2 does not serve ray.io/v1 RayCluster: no mirror there',
    });
  });
});
