// A finished origin while its mirror is retained: the mirror's controller may go on writing
// its status after the terminal condition (JobSet v0.9.1 counts its Jobs' pods down after
// Failed), and the origin keeps taking it under the kind's rules until the mirror goes.

import type { Job, JobStatus } from '@jobrelay/kinds';
import {
  batchJobAdapter,
  type GenericWorkload,
  genericAdapter,
  genericKindConfig,
  jobSetKind,
} from '@jobrelay/kinds';
import { nothingCarried } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { type OriginAction, planOrigin } from '../src/index.ts';
import {
  cluster,
  config,
  mirrorOf,
  now,
  originJob,
  present,
  record,
  seconds,
} from '../test-support/snapshot-builders.ts';

const parsed = genericKindConfig(jobSetKind);
if (!parsed.ok) throw new Error(parsed.problem);
const jobSetAdapter = genericAdapter(parsed.configs[0]!);

const types = (actions: OriginAction<object>[]) => actions.map((a) => a.type);

describe('a finished JobSet (generic kind) whose mirror is retained', () => {
  const failedAt = seconds(-10);
  const failed = (workers: { active: number; ready: number }) => ({
    restarts: 1,
    terminalState: 'Failed',
    conditions: [
      {
        type: 'Failed',
        status: 'True',
        reason: 'ReachedMaxRestarts',
        message: 'jobset failed due to reaching max number of restarts',
        lastTransitionTime: failedAt,
      },
    ],
    replicatedJobsStatus: [
      { name: 'leader', ready: 0, succeeded: 0, failed: 1, active: 0, suspended: 0 },
      {
        name: 'workers',
        ready: workers.ready,
        succeeded: 0,
        failed: 0,
        active: workers.active,
        suspended: 0,
      },
    ],
  });

  function jobSet(status?: GenericWorkload['status']): GenericWorkload {
    return {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      metadata: { name: 'train', namespace: 'team-a', uid: 'uid-1', resourceVersion: '9', generation: 1 },
      spec: { managedBy: 'jobrelay.dev/dispatcher', replicatedJobs: [] },
      ...(status ? { status } : {}),
    } as GenericWorkload;
  }

  function mirrorOfJobSet(origin: GenericWorkload, status?: GenericWorkload['status']): GenericWorkload {
    const body = jobSetAdapter.buildMirror(origin, {
      originId: config.originId,
      attempt: 1,
      carried: nothingCarried,
      now: new Date(now),
    });
    return { ...body, metadata: { ...body.metadata, uid: 'mirror-uid-1' }, ...(status ? { status } : {}) };
  }

  const plan = (origin: GenericWorkload, mirror: GenericWorkload, at = now) =>
    planOrigin(
      {
        kind: 'present',
        key: 'team-a/train',
        origin,
        placement: { kind: 'ok', record: record() },
        clusters: [{ ...cluster('worker-1'), mirror }],
      },
      jobSetAdapter,
      config,
      at,
    );

  it('takes the status its mirror was given after the terminal condition, and keeps the mirror', () => {
    const origin = jobSet(failed({ active: 2, ready: 2 }));
    const mirror = mirrorOfJobSet(origin, failed({ active: 0, ready: 0 }));
    expect(plan(origin, mirror)).toEqual([
      { type: 'write-status', status: failed({ active: 0, ready: 0 }), purpose: 'sync' },
      { type: 'requeue', afterMs: 20_000 },
    ]);
  });

  it('writes nothing when the origin already has its mirror’s status', () => {
    const origin = jobSet(failed({ active: 0, ready: 0 }));
    const mirror = mirrorOfJobSet(origin, failed({ active: 0, ready: 0 }));
    expect(plan(origin, mirror)).toEqual([{ type: 'requeue', afterMs: 20_000 }]);
  });

  it('takes the last status before it deletes the mirror at the end of the retention', () => {
    const origin = jobSet(failed({ active: 2, ready: 2 }));
    const mirror = mirrorOfJobSet(origin, failed({ active: 0, ready: 0 }));
    expect(types(plan(origin, mirror, now + 30_000))).toEqual(['write-status', 'delete-mirror']);
  });

  it('never takes the status of a mirror that has not finished', () => {
    const origin = jobSet(failed({ active: 2, ready: 2 }));
    const running = { restarts: 1, replicatedJobsStatus: [] };
    expect(plan(origin, mirrorOfJobSet(origin, running))).toEqual([{ type: 'requeue', afterMs: 20_000 }]);
  });
});

describe('a finished Job whose mirror is retained: the Job API rules still guard the origin', () => {
  const completedAt = seconds(-10);
  const complete = (overrides: JobStatus = {}): JobStatus => ({
    succeeded: 3,
    failed: 0,
    ready: 0,
    startTime: seconds(-100),
    completionTime: completedAt,
    conditions: [
      { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: completedAt },
      { type: 'Complete', status: 'True', lastTransitionTime: completedAt },
    ],
    ...overrides,
  });
  const plan = (origin: Job, mirror: Job) =>
    planOrigin(present(origin, record(), [cluster('worker-1', { mirror })]), batchJobAdapter, config, now);

  it('takes a change the Job API allows after completion (no pod ready any more)', () => {
    const origin = originJob({ status: complete({ ready: 1 }) });
    const mirror = mirrorOf(origin, { status: complete({ ready: 0 }) });
    const actions = plan(origin, mirror);
    expect(types(actions)).toEqual(['write-status', 'requeue']);
  });

  it('keeps its terminal condition, completion time and counts when its mirror finished otherwise', () => {
    // Complete on the management cluster (decided there), Failed on the worker: a finished
    // Job's terminal condition never changes.
    const origin = originJob({ status: complete() });
    const mirror = mirrorOf(origin, {
      status: complete({
        succeeded: 0,
        failed: 1,
        conditions: [
          { type: 'FailureTarget', status: 'True', lastTransitionTime: completedAt },
          { type: 'Failed', status: 'True', lastTransitionTime: completedAt },
        ],
      }),
    });
    const [write, ...rest] = plan(origin, mirror);
    expect(rest).toEqual([{ type: 'requeue', afterMs: 20_000 }]);
    expect(write).toMatchObject({ type: 'write-status', purpose: 'sync' });
    const written = (write as { status: JobStatus }).status;
    expect(written.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual([
      'SuccessCriteriaMet=True',
      'Complete=True',
    ]);
    expect(written.completionTime).toEqual(completedAt);
    expect(written.succeeded).toBe(3);
  });
});
