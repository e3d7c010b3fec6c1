import {
  mirrorOwnership,
  originLabel,
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
  suspendSentAnnotation,
  unschedulableAnnotation,
} from '@jobrelay/mirror';
import { describe, expect, it } from 'vitest';
import { buildMirrorJob } from '../../src/batch-job/build-mirror-job.ts';
import type { Job } from '../../src/batch-job/job-object.ts';
import {
  mirrorHeldByWorker,
  mirrorSpecUpdate,
  mirrorSuspendRecordUpdate,
} from '../../src/batch-job/mirror-spec-update.ts';

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
    expect(mirror.metadata?.annotations).toEqual({
      team: 'a',
      [placementAttemptAnnotation]: '2',
      [suspendSentAnnotation]: 'false',
    });
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

/**
 * A worker's own admission (Kueue's Job webhook suspends a Job that names a LocalQueue, and
 * Kueue resumes it once its ClusterQueue admits it) is a second gate: only the origin's
 * suspend transitions go down, never a standing value over that worker's hold.
 */
describe('suspend: only the origin’s transitions go down', () => {
  const built = buildMirrorJob(originJob(), { originId: 'mgmt-1', attempt: 1 });
  /** The mirror as the worker's admission left it: suspended, its controller saying so. */
  const heldByWorker: Job = {
    ...built,
    spec: { ...built.spec!, suspend: true },
    status: {
      conditions: [
        {
          type: 'Suspended',
          status: 'True',
          reason: 'JobSuspended',
          message: 'Job suspended',
          lastProbeTime: '2026-01-01T00:00:02Z',
          lastTransitionTime: '2026-01-01T00:00:02Z',
        },
      ],
    },
  };
  const withSent = (job: Job, sent: string | undefined): Job => {
    const annotations = { ...job.metadata?.annotations };
    if (sent === undefined) delete annotations[suspendSentAnnotation];
    else annotations[suspendSentAnnotation] = sent;
    return { ...job, metadata: { ...job.metadata, annotations } };
  };

  it('records what it built the mirror with', () => {
    expect(built.metadata?.annotations?.[suspendSentAnnotation]).toBe('false');
    const suspended = buildMirrorJob(originJob({ suspend: true }), { originId: 'mgmt-1', attempt: 1 });
    expect(suspended.metadata?.annotations?.[suspendSentAnnotation]).toBe('true');
  });

  it('an author’s value for the record on the origin never reaches the mirror', () => {
    const forged = originJob();
    forged.metadata!.annotations = { ...forged.metadata!.annotations, [suspendSentAnnotation]: 'true' };
    const mirror = buildMirrorJob(forged, { originId: 'mgmt-1', attempt: 1 });
    expect(mirror.metadata?.annotations?.[suspendSentAnnotation]).toBe('false');
  });

  it('leaves a mirror its worker holds suspended alone while the origin runs', () => {
    expect(mirrorSpecUpdate(originJob(), heldByWorker)).toBeUndefined();
    expect(mirrorSuspendRecordUpdate(originJob(), heldByWorker)).toBeUndefined();
  });

  it('says the worker holds it, with the reason its controller gives', () => {
    expect(mirrorHeldByWorker(originJob(), heldByWorker)).toBe(
      'its Job is suspended there (JobSuspended: Job suspended)',
    );
    const beforeItsController = { ...heldByWorker, status: {} };
    expect(mirrorHeldByWorker(originJob(), beforeItsController)).toBe('its Job is suspended there');
  });

  it('is not held when it runs, when the origin is suspended, or while jobrelay itself holds it', () => {
    expect(mirrorHeldByWorker(originJob(), built)).toBeUndefined();
    expect(mirrorHeldByWorker(originJob({ suspend: true }), withSent(heldByWorker, 'true'))).toBeUndefined();
    // jobrelay suspended it last (the origin was suspended, then resumed: that transition is due).
    expect(mirrorHeldByWorker(originJob(), withSent(heldByWorker, 'true'))).toBeUndefined();
  });

  it('sends a suspend of the origin once, over the worker’s hold too, with its record', () => {
    const suspendedOrigin = originJob({ suspend: true });
    expect(mirrorSpecUpdate(suspendedOrigin, heldByWorker)).toEqual({ suspend: true });
    expect(mirrorSuspendRecordUpdate(suspendedOrigin, heldByWorker)).toEqual({
      [suspendSentAnnotation]: 'true',
    });
    // Sent: nothing more, whatever the mirror's suspend is now.
    const sent = withSent(heldByWorker, 'true');
    expect(mirrorSpecUpdate(suspendedOrigin, sent)).toBeUndefined();
    expect(
      mirrorSpecUpdate(suspendedOrigin, { ...sent, spec: { ...sent.spec!, suspend: false } }),
    ).toBeUndefined();
  });

  it('sends the origin’s resume once; the worker may hold the mirror again afterwards', () => {
    const suspendedByJobrelay = withSent({ ...built, spec: { ...built.spec!, suspend: true } }, 'true');
    expect(mirrorSpecUpdate(originJob(), suspendedByJobrelay)).toEqual({ suspend: false });
    expect(mirrorSuspendRecordUpdate(originJob(), suspendedByJobrelay)).toEqual({
      [suspendSentAnnotation]: 'false',
    });
    // The worker's admission suspended it again after the resume went down: its hold stands.
    expect(mirrorSpecUpdate(originJob(), withSent(suspendedByJobrelay, 'false'))).toBeUndefined();
  });

  it('brings a mirror built before the record to the origin’s value once, and records it', () => {
    const legacy = withSent({ ...built, spec: { ...built.spec!, suspend: true } }, undefined);
    expect(mirrorSpecUpdate(originJob(), legacy)).toEqual({ suspend: false });
    expect(mirrorSuspendRecordUpdate(originJob(), legacy)).toEqual({ [suspendSentAnnotation]: 'false' });
    const agreeing = withSent(built, undefined);
    expect(mirrorSpecUpdate(originJob(), agreeing)).toBeUndefined();
    expect(mirrorSuspendRecordUpdate(originJob(), agreeing)).toEqual({ [suspendSentAnnotation]: 'false' });
  });
});
