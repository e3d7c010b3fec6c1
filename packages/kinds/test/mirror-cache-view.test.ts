// The caches of mirrors keep only a view of each (mirrorCacheView): whatever the controller and
// the API decide from a mirror must come out the same from the view as from the whole object.
import type { Job } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import { batchJobAdapter } from '../src/batch-job/batch-job-adapter.ts';

const noProgress = { succeeded: 0, failed: 0 };
const now = new Date('2026-12-01T10:00:00Z');

function origin(spec: Partial<Job['spec']> = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'train', namespace: 'team-a', uid: 'origin-uid', resourceVersion: '7', generation: 1 },
    spec: {
      managedBy: 'jobrelay.dev/dispatcher',
      parallelism: 3,
      completions: 6,
      completionMode: 'Indexed',
      backoffLimitPerIndex: 1,
      template: {
        metadata: { labels: { app: 'train' } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'busybox',
              env: [{ name: 'A', value: 'b' }],
              resources: { requests: { cpu: '1', memory: '1Gi' } },
            },
          ],
        },
      },
      ...spec,
    },
    status: { startTime: '2026-12-01T09:59:00Z' },
  };
}

/** A mirror as a worker returns it: built from the origin, with its own UID and a status. */
function mirrorOf(job: Job, attempt: number, status: Job['status']): Job {
  // A second attempt continues from the first one's progress (carried in its annotations).
  const carried =
    attempt > 1 ? { succeeded: 2, failed: 1, completedIndexes: '0,2', failedIndexes: '1' } : noProgress;
  const mirror = batchJobAdapter.buildMirror(job, { originId: 'mgmt', attempt, carried, now });
  return { ...mirror, metadata: { ...mirror.metadata, uid: 'mirror-uid', resourceVersion: '3' }, status };
}

const running: Job['status'] = {
  startTime: '2026-12-01T09:59:01Z',
  active: 3,
  ready: 2,
  terminating: 0,
  succeeded: 1,
  failed: 1,
  completedIndexes: '0',
  failedIndexes: '1',
  uncountedTerminatedPods: {},
};

describe("the batch Job adapter's mirror cache view", () => {
  it('leaves the pod template out of the cache', () => {
    const view = batchJobAdapter.mirrorCacheView!(structuredClone(mirrorOf(origin(), 1, running)));
    expect(view.spec?.template).toEqual({});
    expect(view.spec?.parallelism).toBe(3);
    expect(view.metadata?.labels).toEqual(mirrorOf(origin(), 1, running).metadata?.labels);
  });

  const cases: Array<[string, Job, number, Job['status']]> = [
    ['a running mirror', origin(), 1, running],
    ['a re-placed mirror waiting for its seed', origin(), 2, {}],
    [
      'a re-placed mirror seeded and running',
      origin(),
      2,
      { ...running, succeeded: 3, completedIndexes: '0,2,3' },
    ],
    ['a suspended origin with a changed parallelism', origin({ suspend: true, parallelism: 1 }), 1, running],
    [
      'a finished mirror',
      origin(),
      1,
      {
        ...running,
        active: 0,
        ready: 0,
        succeeded: 6,
        completedIndexes: '0-5',
        failedIndexes: '',
        completionTime: '2026-12-01T09:59:30Z',
        conditions: [
          {
            type: 'SuccessCriteriaMet',
            status: 'True',
            lastTransitionTime: '2026-12-01T09:59:30Z',
          },
          { type: 'Complete', status: 'True', lastTransitionTime: '2026-12-01T09:59:30Z' },
        ],
      },
    ],
  ];
  for (const [name, job, attempt, status] of cases) {
    it(`decides the same from the view as from the whole mirror: ${name}`, () => {
      const whole = mirrorOf(job, attempt, status);
      const view = batchJobAdapter.mirrorCacheView!(structuredClone(whole));
      const carried = { succeeded: 2, failed: 1 };
      expect(batchJobAdapter.originStatus(job, view, carried, now)).toEqual(
        batchJobAdapter.originStatus(job, whole, carried, now),
      );
      expect(batchJobAdapter.mirrorSpecUpdate(job, view)).toEqual(
        batchJobAdapter.mirrorSpecUpdate(job, whole),
      );
      expect(batchJobAdapter.statusOf(view)).toEqual(batchJobAdapter.statusOf(whole));
      expect(batchJobAdapter.isFinished(view)).toBe(batchJobAdapter.isFinished(whole));
      expect(batchJobAdapter.finishedAt(view)).toEqual(batchJobAdapter.finishedAt(whole));
      expect(batchJobAdapter.mirrorStatusSeed!(view)).toEqual(batchJobAdapter.mirrorStatusSeed!(whole));
      expect(batchJobAdapter.mirrorBookkeepingProblem(job, view, { attempt, carried })).toEqual(
        batchJobAdapter.mirrorBookkeepingProblem(job, whole, { attempt, carried }),
      );
      expect(batchJobAdapter.podsOf!(view)).toEqual(batchJobAdapter.podsOf!(whole));
    });
  }
});
