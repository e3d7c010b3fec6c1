// placementNeed and planPlacement: every decision a placement task makes, as actions the
// executor carries out (the same executor, and the same write bookkeeping, as a reconcile's).

import type { Job } from '@jobrelay/kinds';
import { type RayCluster, rayClusterAdapter } from '@jobrelay/kinds';
import { defaultManagedBy, unschedulableAnnotation } from '@jobrelay/mirror';
import { nothingCarried, type ParsedPlacement } from '@jobrelay/placement';
import { describe, expect, it } from 'vitest';
import { eventReasons, placementNeed, planPlacement } from '../src/index.ts';
import { adapter, now, originJob, record, seconds } from '../test-support/snapshot-builders.ts';

const task = { uid: 'uid-1', managedBy: defaultManagedBy };
const ok = (overrides: Parameters<typeof record>[0] = {}): ParsedPlacement => ({
  kind: 'ok',
  record: record(overrides),
});
const placedOn = { kind: 'placed' as const, cluster: 'worker-2', message: 'placed on worker-2 by spread' };
const fitsNowhere = { kind: 'unschedulable' as const, message: '0/3 clusters available: 3 cordoned' };
const waiting = (secondsWaited: number) =>
  record({ cluster: undefined, attempt: 2, waitingSince: seconds(-secondsWaited) });

function created(job: Job, secondsAgo: number): Job {
  return { ...job, metadata: { ...job.metadata, creationTimestamp: seconds(-secondsAgo) } };
}

describe('placementNeed', () => {
  const cases: { name: string; origin: Job; placement: ParsedPlacement; want: string }[] = [
    { name: 'a fresh workload', origin: originJob(), placement: { kind: 'none' }, want: 'needed' },
    {
      name: 'one waiting for a cluster again',
      origin: originJob(),
      placement: ok({ cluster: undefined, attempt: 2 }),
      want: 'needed',
    },
    {
      name: 'one whose refusal delay is over',
      origin: originJob(),
      placement: ok({ cluster: undefined, retryAfter: seconds(-1) }),
      want: 'needed',
    },
    {
      name: 'another object of that name',
      origin: originJob({ uid: 'uid-2' }),
      placement: { kind: 'none' },
      want: 'another object of that name',
    },
    {
      name: 'no longer ours',
      origin: originJob({ spec: { managedBy: 'someone.else/x', template: {} } }),
      placement: { kind: 'none' },
      want: 'no longer claimed by jobrelay',
    },
    {
      name: 'being deleted',
      origin: { ...originJob(), metadata: { ...originJob().metadata, deletionTimestamp: seconds(-1) } },
      placement: { kind: 'none' },
      want: 'being deleted',
    },
    {
      name: 'finished',
      origin: originJob({ status: { conditions: [{ type: 'Complete', status: 'True' }] } }),
      placement: { kind: 'none' },
      want: 'finished',
    },
    {
      name: 'suspended',
      origin: originJob({ spec: { suspend: true, template: {} } }),
      placement: { kind: 'none' },
      want: 'suspended',
    },
    {
      name: 'a record jobrelay did not write',
      origin: originJob(),
      placement: { kind: 'untrusted', problem: 'no seal' },
      want: 'its placement record is replaced by its reconcile first',
    },
    {
      name: 'a record sealed with a key jobrelay does not hold',
      origin: originJob(),
      placement: { kind: 'unverifiable', keyId: 'k9' },
      want: 'its placement record is replaced by its reconcile first',
    },
    { name: 'placed already', origin: originJob(), placement: ok(), want: 'already placed on worker-1' },
    {
      name: 'given up on',
      origin: originJob(),
      placement: ok({ cluster: undefined, gaveUp: 'refused 3 times' }),
      want: 'jobrelay gave up on it',
    },
    {
      name: 'waiting out a refusal',
      origin: originJob(),
      placement: ok({ cluster: undefined, retryAfter: seconds(5) }),
      want: 'waiting out a refusal',
    },
  ];
  it.each(cases)('$name: $want', ({ origin, placement, want }) => {
    const need = placementNeed(origin, placement, adapter, task, now);
    expect(need.kind === 'needed' ? 'needed' : need.why).toBe(want);
  });

  it('hands the record to place from', () => {
    const waiting = ok({ cluster: undefined, attempt: 3, lastReplacedBecause: 'drained' });
    expect(placementNeed(originJob(), waiting, adapter, task, now)).toEqual({
      kind: 'needed',
      previous: record({ cluster: undefined, attempt: 3, lastReplacedBecause: 'drained' }),
    });
  });
});

describe('planPlacement', () => {
  const settings = { placementTimeoutSeconds: 0 };

  it('placed, first time: a record of attempt 1 naming the cluster and the decision, nothing else', () => {
    expect(planPlacement(originJob(), undefined, placedOn, adapter, settings, now)).toEqual({
      outcome: 'placed',
      actions: [
        {
          type: 'patch-placement',
          record: {
            attempt: 1,
            carried: nothingCarried,
            excludedClusters: [],
            cluster: 'worker-2',
            placedAt: seconds(0),
            decision: placedOn.message,
          },
        },
      ],
    });
  });

  it('placed again: the attempt, carried progress, exclusions and refusals stay; the waiting marks go', () => {
    const carried = { succeeded: 2, failed: 0 };
    const previous = record({
      cluster: undefined,
      attempt: 3,
      carried,
      excludedClusters: ['worker-1'],
      refusals: 1,
      refusedBy: ['worker-3'],
      waitingSince: seconds(-30),
      retryAfter: seconds(-1),
      mirrorUid: 'old',
      lastReplacedBecause: 'drained',
    });
    const [write] = planPlacement(originJob(), previous, placedOn, adapter, settings, now).actions;
    expect(write).toEqual({
      type: 'patch-placement',
      record: {
        attempt: 3,
        carried,
        excludedClusters: ['worker-1'],
        refusals: 1,
        refusedBy: ['worker-3'],
        lastReplacedBecause: 'drained',
        cluster: 'worker-2',
        placedAt: seconds(0),
        decision: placedOn.message,
      },
    });
  });

  it('placed, with --record-dispatch-events: the Normal Placed Event after the record', () => {
    const plan = planPlacement(
      originJob(),
      undefined,
      placedOn,
      adapter,
      { ...settings, recordDispatchEvents: true },
      now,
    );
    expect(plan.actions.map((a) => a.type)).toEqual(['patch-placement', 'record-event']);
    expect(plan.actions[1]).toEqual({
      type: 'record-event',
      eventType: 'Normal',
      reason: eventReasons.placed,
      action: 'Place',
      note: placedOn.message,
    });
  });

  it('fits nowhere: a FailedPlacement Event and the reason on the workload', () => {
    expect(planPlacement(originJob(), undefined, fitsNowhere, adapter, settings, now)).toEqual({
      outcome: 'unschedulable',
      actions: [
        {
          type: 'record-event',
          eventType: 'Warning',
          reason: eventReasons.failedPlacement,
          action: 'Place',
          note: fitsNowhere.message,
        },
        { type: 'note-waiting', message: fitsNowhere.message },
      ],
    });
  });

  it('fits nowhere for the same reason as noted: the Event only, no write', () => {
    const noted = originJob();
    noted.metadata!.annotations = { [unschedulableAnnotation]: fitsNowhere.message };
    const plan = planPlacement(noted, undefined, fitsNowhere, adapter, settings, now);
    expect(plan.actions.map((a) => a.type)).toEqual(['record-event']);
  });

  describe('the placement timeout', () => {
    const timeout = { placementTimeoutSeconds: 60 };

    it('waited less than the timeout (since the record says it started waiting): waits on', () => {
      // Created long ago: the record's waitingSince (this attempt's) is what counts.
      const plan = planPlacement(created(originJob(), 600), waiting(59), fitsNowhere, adapter, timeout, now);
      expect(plan.outcome).toBe('unschedulable');
    });

    it('waited the timeout: FailedPlacement, the gave-up status (PlacementTimeout), its Event', () => {
      const plan = planPlacement(originJob(), waiting(60), fitsNowhere, adapter, timeout, now);
      expect(plan.outcome).toBe('gave-up');
      expect(plan.actions.map((a) => (a.type === 'record-event' ? a.reason : a.type))).toEqual([
        eventReasons.failedPlacement,
        'write-status',
        eventReasons.placementTimeout,
      ]);
      const write = plan.actions[1] as Extract<(typeof plan.actions)[number], { type: 'write-status' }>;
      expect(write.purpose).toBe('gave-up');
      const failed = (write.status as Job['status'])!.conditions!.find((c) => c.type === 'Failed');
      expect(failed).toMatchObject({
        reason: eventReasons.placementTimeout,
        message: `no cluster fit for 60s: ${fitsNowhere.message}`,
      });
    });

    it('without a record, counts from the workload creation', () => {
      expect(
        planPlacement(created(originJob(), 59), undefined, fitsNowhere, adapter, timeout, now).outcome,
      ).toBe('unschedulable');
      expect(
        planPlacement(created(originJob(), 61), undefined, fitsNowhere, adapter, timeout, now).outcome,
      ).toBe('gave-up');
    });

    it('a timeout of 0 waits forever', () => {
      const plan = planPlacement(
        created(originJob(), 86_400),
        undefined,
        fitsNowhere,
        adapter,
        settings,
        now,
      );
      expect(plan.outcome).toBe('unschedulable');
    });

    it('a kind without a terminal failure keeps waiting, and says why', () => {
      const ray = {
        apiVersion: 'ray.io/v1',
        kind: 'RayCluster',
        metadata: {
          name: 'ray',
          namespace: 'team-a',
          uid: 'rc-1',
          resourceVersion: '5',
          creationTimestamp: seconds(-600),
        },
        spec: { managedBy: 'kueue.x-k8s.io/multikueue', headGroupSpec: { rayStartParams: {}, template: {} } },
      } as unknown as RayCluster;
      const plan = planPlacement(ray, undefined, fitsNowhere, rayClusterAdapter, timeout, now);
      expect(plan.outcome).toBe('unschedulable');
      expect(plan.actions.map((a) => a.type)).toEqual(['record-event', 'note-waiting']);
    });

    it('a gave-up status the kind refuses is not written: refused, and it waits on', () => {
      // A finished-looking origin whose status breaks the rules once Failed is added (Complete and Failed).
      const completeAlready = originJob({
        status: { succeeded: 3, conditions: [{ type: 'Complete', status: 'True' }] },
      });
      const plan = planPlacement(created(completeAlready, 61), undefined, fitsNowhere, adapter, timeout, now);
      expect(plan.outcome).toBe('unschedulable');
      expect(plan.actions.map((a) => (a.type === 'record-event' ? a.reason : a.type))).toEqual([
        eventReasons.failedPlacement,
        'refuse-status',
        eventReasons.statusRefused,
        'note-waiting',
      ]);
    });
  });
});
