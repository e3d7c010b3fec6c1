// The chaos run's short variant (npm run chaos runs 500 Jobs; docs/reliability.md): a fixed seed,
// 40 Jobs of every mode without mid-run steps and 2 Ray workloads, and at least one fault of every kind, several at
// once, against two controller replicas. The Jobs go through two DispatchQueues of one cohort, with
// PriorityClasses: some wait on their quota, some are preempted. Every invariant figure must be 0,
// and no quota is exceeded at any sampled instant.
import { describe, expect, it } from 'vitest';
import { runChaos } from '../src/chaos-run.ts';
import { shortChaos } from '../src/chaos-short.ts';
import { testSandbox } from '../src/kube-test-helpers.ts';

describe('chaos (short)', () => {
  it(
    'loses no Job, never runs two mirrors of one, writes no rejected status, leaves no mirror, ends every Job as the control run did, and never exceeds a quota',
    async () => {
      // The control run comes from this test run's shared lane (e2e/test/chaos-control.test.ts)
      // when it ran one for this mix; else runChaos runs its own first.
      const report = await runChaos({
        sandbox: testSandbox(),
        ...shortChaos,
        log: (line) => console.log(`[chaos] ${line}`),
      });
      console.log(JSON.stringify({ ...report, faults: report.faults.length }, null, 1));
      // Each fault with its recovery: the figure maxRecoverySeconds is the worst of.
      for (const fault of report.faults)
        console.log(
          `[chaos] ${(fault.atMs / 1000).toFixed(0)} s ${fault.kind}${fault.worker ? ` ${fault.worker}` : ''}: ${(fault.durationMs / 1000).toFixed(1)} s, recovered in ${fault.recoverySeconds?.toFixed(1) ?? 'never'} s`,
        );
      expect(report.faults.filter((f) => f.error)).toEqual([]);
      expect(report.faultsInjected).toBe(9);
      expect(report.rayWorkloads).toBe(2);
      expect(report.lostJobs).toEqual([]);
      expect(report.duplicates).toEqual([]);
      expect(report.rejectedStatusWrites).toBe(0);
      expect(report.refusedStatusWrites).toBe(0);
      expect(report.orphans).toEqual([]);
      expect(report.wrong).toEqual([]);
      expect(report.maxRecoverySeconds).toBeLessThan(120);
      // The queues: quota checked all along, never exceeded, never bypassed; Jobs really waited
      // on their queue, and some were preempted and still ended as the control run did (above).
      for (const over of report.runningOverQuota)
        console.log(
          `[chaos] running over quota at ${(over.atMs / 1000).toFixed(1)} s: ${over.queue} ${over.used}/${over.limit} cpu (current ${over.current}, terminating ${over.terminating}, stale ${over.stale})`,
        );
      expect(report.quotaSamples).toBeGreaterThan(0);
      // The check by the running pods saw pods (it is not vacuous).
      expect(Object.keys(report.maxRunningCpu)).not.toEqual([]);
      expect(report.quotaExceeded).toEqual([]);
      expect(report.placedWithoutQueue).toEqual([]);
      expect(report.queueWaits).toBeGreaterThan(0);
      expect(report.preemptions).toBeGreaterThan(0);
    },
    20 * 60_000,
  );
});
