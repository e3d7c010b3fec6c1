// planOrigin with a kind that has none of the Job's optional capabilities (RayCluster: no
// counters to carry, no continuation seed, no suspended status of its own, never finished):
// the planner checks for capabilities, never for a kind.
import { type RayCluster, rayClusterAdapter } from '@jobrelay/kinds';
import { nothingCarried, type PlacementRecord } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { type OriginAction, planOrigin } from '../src/index.ts';
import { cluster, config, now } from '../test-support/snapshot-builders.ts';

const adapter = rayClusterAdapter;

function origin(overrides: Partial<RayCluster['spec']> = {}, status?: RayCluster['status']): RayCluster {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: { name: 'ray', namespace: 'team-a', uid: 'rc-1', resourceVersion: '5', generation: 1 },
    spec: {
      managedBy: 'kueue.x-k8s.io/multikueue',
      headGroupSpec: {
        rayStartParams: {},
        template: { spec: { containers: [{ name: 'head', image: 'ray' }] } },
      },
      workerGroupSpecs: [],
      ...overrides,
    },
    ...(status ? { status } : {}),
  } as RayCluster;
}

function mirrorOf(of: RayCluster, attempt = 1, status?: RayCluster['status']): RayCluster {
  const body = adapter.buildMirror(of, {
    originId: config.originId,
    attempt,
    carried: nothingCarried,
    now: new Date(now),
  });
  return { ...body, metadata: { ...body.metadata, uid: `mirror-${attempt}` }, ...(status ? { status } : {}) };
}

const placed = (overrides: Partial<PlacementRecord> = {}): PlacementRecord => ({
  cluster: 'worker-1',
  attempt: 1,
  carried: nothingCarried,
  excludedClusters: [],
  ...overrides,
});

const plan = (o: RayCluster, record: PlacementRecord | undefined, clusters: ReturnType<typeof cluster>[]) =>
  planOrigin(
    {
      kind: 'present',
      key: 'team-a/ray',
      origin: o,
      placement: record ? { kind: 'ok', record } : { kind: 'none' },
      clusters: clusters as never,
    },
    adapter,
    config,
    now,
  );
const types = (actions: OriginAction<RayCluster>[]) => actions.map((a) => a.type);

describe('planOrigin for a RayCluster', () => {
  it('writes nothing for one created suspended (the kind has no status of its own for it), and places nothing', () => {
    expect(plan(origin({ suspend: true }), undefined, [cluster('worker-1')])).toEqual([]);
  });

  it('moves off a draining worker with nothing to carry', () => {
    const o = origin({}, { state: 'ready' });
    const actions = plan(o, placed(), [cluster('worker-1', { drain: true, mirror: mirrorOf(o) as never })]);
    expect(types(actions)).toEqual(['patch-placement', 'record-event', 'enqueue-placement']);
    const patch = actions[0] as Extract<OriginAction<RayCluster>, { type: 'patch-placement' }>;
    expect(patch.record.carried).toEqual(nothingCarried);
  });

  it('never reads the carried progress of a kind that keeps none: whatever it holds, the mirror syncs', () => {
    const o = origin();
    const mirror = mirrorOf(o, 1, { state: 'ready', observedGeneration: 1 });
    const actions = plan(o, placed({ carried: { anything: ['a kind', 'of its own'] } }), [
      cluster('worker-1', { mirror: mirror as never }),
    ]);
    expect(types(actions)).toEqual(['write-status']);
  });

  it('syncs the mirror’s status up without a seed step, and never retires a running cluster', () => {
    const o = origin();
    const mirror = mirrorOf(o, 1, { state: 'ready', readyWorkerReplicas: 0, observedGeneration: 1 });
    const actions = plan(o, placed(), [cluster('worker-1', { mirror: mirror as never })]);
    expect(types(actions)).toEqual(['write-status']);
    expect((actions[0] as { status: RayCluster['status'] }).status?.state).toBe('ready');
  });

  it('suspends its mirror when the origin is suspended', () => {
    const running = origin();
    const o = origin({ suspend: true });
    const actions = plan(o, placed(), [cluster('worker-1', { mirror: mirrorOf(running) as never })]);
    expect(actions.find((a) => a.type === 'patch-mirror-spec')).toMatchObject({ patch: { suspend: true } });
  });

  describe('a spec change its cluster’s podRestrictions refuse', () => {
    const privilegedGroup = {
      groupName: 'gpu',
      replicas: 1,
      template: { spec: { containers: [{ name: 'ray-worker', securityContext: { privileged: true } }] } },
    };
    const restricted = { podRestrictions: { refusePrivileged: true } };

    it('is held back, with a Warning naming what the cluster refuses, while the status still syncs', () => {
      const running = origin();
      const o = origin({ workerGroupSpecs: [privilegedGroup] });
      const mirror = mirrorOf(running, 1, { state: 'ready' });
      const actions = plan(o, placed(), [cluster('worker-1', { mirror: mirror as never, ...restricted })]);
      expect(types(actions)).toEqual(['record-event', 'write-status']);
      expect(actions[0]).toMatchObject({
        eventType: 'Warning',
        reason: 'SpecChangeRefused',
        note: 'its spec change is not sent to worker-1, which refuses privileged pods (container ray-worker in the worker group gpu)',
      });
    });

    it('goes down where the cluster restricts nothing', () => {
      const o = origin({ workerGroupSpecs: [privilegedGroup] });
      const actions = plan(o, placed(), [cluster('worker-1', { mirror: mirrorOf(origin()) as never })]);
      expect(types(actions)).toContain('patch-mirror-spec');
    });

    it('goes down when the mirror already asked the same before its cluster restricted it (a suspend)', () => {
      const running = origin({ workerGroupSpecs: [privilegedGroup] });
      const o = origin({ workerGroupSpecs: [privilegedGroup], suspend: true });
      const actions = plan(o, placed(), [
        cluster('worker-1', { mirror: mirrorOf(running) as never, ...restricted }),
      ]);
      expect(actions.find((a) => a.type === 'patch-mirror-spec')).toMatchObject({ patch: { suspend: true } });
    });

    it('is held back when the cluster’s podRestrictions cannot be read', () => {
      const o = origin({ suspend: true });
      const actions = plan(o, placed(), [
        cluster('worker-1', {
          mirror: mirrorOf(origin()) as never,
          podRestrictions: { refusePrivileged: 'yes' },
        }),
      ]);
      expect(types(actions)).not.toContain('patch-mirror-spec');
      expect((actions[0] as { note: string }).note).toBe(
        'its spec change is not sent to worker-1, whose podRestrictions cannot be read (spec.podRestrictions.refusePrivileged: must be true or false)',
      );
    });
  });

  it('leaves a kind with no failed state unplaced when its mirror is refused too often, and says how to retry', () => {
    const o = origin();
    const actions = plan(o, placed({ refusals: 2, refusedBy: ['worker-2'] }), [cluster('worker-1')]);
    const create = actions[0] as Extract<OriginAction<RayCluster>, { type: 'create-mirror' }>;
    const branch = create.onRefused({ code: 422, message: 'spec.unknownField: Invalid value' });
    expect(types(branch)).toEqual(['patch-placement', 'record-event']);
    const note = (branch[1] as { note: string }).note;
    expect(note).toContain('the RayCluster stays unplaced');
    expect(note).toContain('remove annotation jobrelay.dev/placement');
    expect((branch[0] as { record: PlacementRecord }).record.gaveUp).toContain('HTTP 422');
  });
});
