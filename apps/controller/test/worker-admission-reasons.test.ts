// A Kueue Workload (as v0.17.0 writes it) read into the one line an origin shows for its held
// mirror. The conditions below are Kueue's own: a workload waiting for quota, one whose queue
// does not exist, one reserved but waiting for its admission checks, one evicted.

import { describe, expect, it } from 'vitest';
import { kueueHoldReason, workloadHoldReason } from '../src/worker-admission-reasons.ts';

const jobUid = '6f1c9a52-3f57-4c8e-9a1e-0d2f3b4c5d6e';
const insufficient =
  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 500m more needed";

function workload(
  conditions: Array<Record<string, string>>,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: {
      name: 'job-kq-c-1a2b3',
      namespace: 'team-a',
      labels: { 'kueue.x-k8s.io/job-uid': jobUid, 'kueue.x-k8s.io/queue-name': 'lq' },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'kq-c', uid: jobUid, controller: true }],
      ...metadata,
    },
    spec: { queueName: 'lq', podSets: [{ name: 'main', count: 1 }] },
    status: { conditions },
  };
}

const pending = {
  type: 'QuotaReserved',
  status: 'False',
  reason: 'Pending',
  message: insufficient,
  lastTransitionTime: '2026-12-03T10:00:00Z',
};

describe('workloadHoldReason', () => {
  it('waiting for quota: the QuotaReserved message', () => {
    expect(workloadHoldReason(workload([pending]))).toBe(insufficient);
  });

  it('an inadmissible queue: its message; the reason when there is no message', () => {
    expect(
      workloadHoldReason(
        workload([
          {
            type: 'QuotaReserved',
            status: 'False',
            reason: 'Inadmissible',
            message: "LocalQueue lq doesn't exist",
          },
        ]),
      ),
    ).toBe("LocalQueue lq doesn't exist");
    expect(
      workloadHoldReason(workload([{ type: 'QuotaReserved', status: 'False', reason: 'Pending' }])),
    ).toBe('Pending');
  });

  it('quota reserved, not admitted yet: the Admitted message', () => {
    expect(
      workloadHoldReason(
        workload([
          {
            type: 'QuotaReserved',
            status: 'True',
            reason: 'QuotaReserved',
            message: 'Quota reserved in ClusterQueue cq',
          },
          {
            type: 'Admitted',
            status: 'False',
            reason: 'NoChecks',
            message: 'The workload has not all admission checks ready',
          },
        ]),
      ),
    ).toBe('The workload has not all admission checks ready');
  });

  it('evicted: the Evicted message, unless the quota explains more now', () => {
    const evicted = {
      type: 'Evicted',
      status: 'True',
      reason: 'Preempted',
      message: 'Preempted to accommodate a workload (UID: 1) due to prioritization in the ClusterQueue',
    };
    expect(workloadHoldReason(workload([evicted]))).toBe(evicted.message);
    expect(workloadHoldReason(workload([evicted, pending]))).toBe(insufficient);
  });

  it('admitted, or nothing said yet: nothing', () => {
    expect(workloadHoldReason(workload([]))).toBeUndefined();
    expect(
      workloadHoldReason(
        workload([
          { type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved', message: 'Quota reserved' },
          { type: 'Admitted', status: 'True', reason: 'Admitted', message: 'The workload is admitted' },
        ]),
      ),
    ).toBeUndefined();
  });

  it('one line, at most 400 characters', () => {
    const long = `${'a'.repeat(300)}\n\n  ${'b'.repeat(300)}`;
    const said = workloadHoldReason(workload([{ ...pending, message: long }]))!;
    expect(said).not.toMatch(/\n/);
    expect(said).toHaveLength(400);
    expect(said.endsWith('…')).toBe(true);
  });
});

describe('kueueHoldReason', () => {
  it('names Kueue, from the Workload of that very job', () => {
    const list = { kind: 'WorkloadList', items: [workload([pending])] };
    expect(kueueHoldReason(list, jobUid)).toBe(`Kueue: ${insufficient}`);
  });

  it("ignores another job's Workload, one being deleted, and answers that are no list", () => {
    const other = workload([pending], {
      labels: { 'kueue.x-k8s.io/job-uid': 'other' },
      ownerReferences: [{ uid: 'other' }],
    });
    const deleting = workload([pending], { deletionTimestamp: '2026-12-03T10:00:00Z' });
    expect(kueueHoldReason({ items: [other, deleting] }, jobUid)).toBeUndefined();
    expect(kueueHoldReason({ items: [] }, jobUid)).toBeUndefined();
    expect(kueueHoldReason('not json', jobUid)).toBeUndefined();
    expect(kueueHoldReason(undefined, jobUid)).toBeUndefined();
    expect(kueueHoldReason({ items: [null, {}] }, jobUid)).toBeUndefined();
  });

  it('takes a Workload owned by the job without the label (a UID that is no label value)', () => {
    const unlabelled = workload([pending], { labels: {} });
    expect(kueueHoldReason({ items: [unlabelled] }, jobUid)).toBe(`Kueue: ${insufficient}`);
  });
});
