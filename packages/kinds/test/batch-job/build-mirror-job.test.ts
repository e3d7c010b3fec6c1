import {
  mirrorOwnership,
  originLabel,
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import { buildMirrorJob } from '../../src/batch-job/build-mirror-job.ts';
import type { Job } from '../../src/batch-job/job-object.ts';
import { mirrorSpecUpdate } from '../../src/batch-job/mirror-spec-update.ts';

/** An origin Job as the management cluster's apiserver returns it: defaulted and generated fields set. */
function originJob(overrides: Partial<Job['spec']> = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'train',
      namespace: 'team-a',
      uid: 'origin-uid-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
      finalizers: ['example.com/keep'],
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cron-uid' }],
      labels: {
        app: 'train',
        'controller-uid': 'origin-uid-1',
        'batch.kubernetes.io/controller-uid': 'origin-uid-1',
      },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        team: 'a',
        [placementAnnotation]: '{"attempt":2,"cluster":"worker-1","carried":{}}',
        [unschedulableAnnotation]: 'no cluster fits yet',
      },
    },
    spec: {
      managedBy: 'jobrelay.dev/dispatcher',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'origin-uid-1' } },
      manualSelector: false,
      ttlSecondsAfterFinished: 60,
      completions: 5,
      parallelism: 2,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      template: {
        metadata: {
          labels: {
            'controller-uid': 'origin-uid-1',
            'batch.kubernetes.io/controller-uid': 'origin-uid-1',
            'job-name': 'train',
            'batch.kubernetes.io/job-name': 'train',
            app: 'train',
          },
          annotations: { 'sandbox.jobrelay.dev/run-seconds': '3' },
        },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] },
      },
      ...overrides,
    },
    status: { active: 2, startTime: '2026-01-01T00:00:01Z' },
  };
}

describe('buildMirrorJob', () => {
  const mirror = buildMirrorJob(originJob(), { originId: 'mgmt-1', attempt: 2 });

  it('keeps namespace and name and adds the origin labels and attempt', () => {
    expect(mirror.metadata?.name).toBe('train');
    expect(mirror.metadata?.namespace).toBe('team-a');
    expect(mirror.metadata?.labels).toEqual({
      app: 'train',
      [originLabel]: 'mgmt-1',
      [originUidLabel]: 'origin-uid-1',
    });
    expect(mirror.metadata?.annotations).toEqual({ team: 'a', [placementAttemptAnnotation]: '2' });
  });

  it('drops metadata that belongs to the origin object', () => {
    for (const field of [
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'managedFields',
      'finalizers',
      'ownerReferences',
    ]) {
      expect(mirror.metadata).not.toHaveProperty(field);
    }
    expect(mirror).not.toHaveProperty('status');
  });

  it('drops selector, manualSelector, managedBy and ttlSecondsAfterFinished from the spec', () => {
    for (const field of ['selector', 'manualSelector', 'managedBy', 'ttlSecondsAfterFinished']) {
      expect(mirror.spec).not.toHaveProperty(field);
    }
  });

  it('drops the generated controller-uid template labels but keeps job-name (same name on the worker)', () => {
    expect(mirror.spec?.template.metadata?.labels).toEqual({
      'job-name': 'train',
      'batch.kubernetes.io/job-name': 'train',
      app: 'train',
    });
    expect(mirror.spec?.template.metadata?.annotations).toEqual({ 'sandbox.jobrelay.dev/run-seconds': '3' });
  });

  it('copies everything else of the spec as it is', () => {
    expect(mirror.spec).toMatchObject({
      completions: 5,
      parallelism: 2,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
    });
    expect(mirror.spec?.template.spec).toEqual(originJob().spec?.template.spec);
  });

  it('does not share objects with the origin', () => {
    const origin = originJob();
    const built = buildMirrorJob(origin, { originId: 'mgmt-1', attempt: 1 });
    built.spec!.template.spec!.containers[0]!.image = 'changed';
    expect(origin.spec?.template.spec?.containers[0]?.image).toBe('busybox');
  });

  it('refuses an origin that was never stored', () => {
    const unsaved = originJob();
    delete unsaved.metadata!.uid;
    expect(() => buildMirrorJob(unsaved, { originId: 'mgmt-1', attempt: 1 })).toThrow(/uid/);
  });
});

describe('mirrorOwnership', () => {
  const mirror = buildMirrorJob(originJob(), { originId: 'mgmt-1', attempt: 3 });

  it('recognises our mirror of this origin, with its attempt', () => {
    expect(mirrorOwnership(mirror, 'mgmt-1', 'origin-uid-1')).toEqual({ kind: 'this-origin', attempt: 3 });
  });

  it('calls our mirror of an earlier origin object of the same name other-origin', () => {
    expect(mirrorOwnership(mirror, 'mgmt-1', 'origin-uid-2')).toEqual({
      kind: 'other-origin',
      originUid: 'origin-uid-1',
    });
  });

  it('treats another installation’s mirror as foreign', () => {
    expect(mirrorOwnership(mirror, 'mgmt-2', 'origin-uid-1')).toMatchObject({ kind: 'foreign' });
  });

  it('treats a Job without our labels as foreign', () => {
    const foreign: Job = { metadata: { name: 'train', namespace: 'team-a', labels: { app: 'train' } } };
    expect(mirrorOwnership(foreign, 'mgmt-1', 'origin-uid-1')).toEqual({
      kind: 'foreign',
      owner: 'not created by jobrelay',
    });
  });
});

describe('mirrorSpecUpdate', () => {
  const mirror = buildMirrorJob(originJob(), { originId: 'mgmt-1', attempt: 1 });

  it('is undefined when the mutable fields agree', () => {
    expect(mirrorSpecUpdate(originJob(), mirror)).toBeUndefined();
  });

  it('propagates suspend, parallelism, activeDeadlineSeconds and backoffLimit', () => {
    const changed = originJob({ suspend: true, parallelism: 4, activeDeadlineSeconds: 30, backoffLimit: 2 });
    expect(mirrorSpecUpdate(changed, mirror)).toEqual({
      suspend: true,
      parallelism: 4,
      activeDeadlineSeconds: 30,
      backoffLimit: 2,
    });
  });

  it('resumes: suspend false is sent explicitly', () => {
    const suspendedMirror = buildMirrorJob(originJob({ suspend: true }), { originId: 'mgmt-1', attempt: 1 });
    expect(mirrorSpecUpdate(originJob({ suspend: false }), suspendedMirror)).toEqual({ suspend: false });
  });

  it('never sends immutable fields', () => {
    const changed = originJob({ completions: 9, completionMode: 'Indexed', podFailurePolicy: { rules: [] } });
    expect(mirrorSpecUpdate(changed, mirror)).toBeUndefined();
  });

  it('scales an Indexed Job only with completions equal to parallelism', () => {
    const indexed = { completionMode: 'Indexed' as const, completions: 4, parallelism: 4 };
    const indexedMirror = buildMirrorJob(originJob(indexed), { originId: 'mgmt-1', attempt: 1 });
    expect(
      mirrorSpecUpdate(originJob({ ...indexed, completions: 2, parallelism: 2 }), indexedMirror),
    ).toEqual({
      completions: 2,
      parallelism: 2,
    });
  });
});
