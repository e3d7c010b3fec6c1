import { batchJobAdapter } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import {
  chaosJobBody,
  chaosQueues,
  cpuMillis,
  jobCpuDemandMillis,
  maxJobCpuMillis,
  queueLimits,
  quotaScale,
} from '../src/chaos-queues.ts';
import { chaosMix } from '../src/chaos-run.ts';
import { generateJobMix } from '../src/job-mix.ts';

const seed = 20261201;

describe('the chaos run’s queueing', () => {
  it('leaves the seed’s mix as it was and adds lanes, cpu and classes from its own stream', () => {
    const mix = chaosMix(seed, 40);
    const plain = generateJobMix(seed, 80).filter((j) => !j.step);
    expect(mix.map((j) => [j.name, j.spec, j.pod])).toEqual(
      plain.slice(0, 40).map((j) => [j.name, j.spec, j.pod]),
    );
    expect(chaosMix(seed, 40)).toEqual(mix);
    expect(new Set(mix.map((j) => j.lane))).toEqual(new Set(['a', 'b']));
    expect(new Set(mix.map((j) => j.priorityClassName ?? 'none')).size).toBe(3);
  });

  it('keeps every Job within one queue’s nominal quota, so none waits forever', () => {
    const { queues } = chaosQueues('x');
    for (const s of [1, 7, seed, 20261202]) {
      for (const job of chaosMix(s, 200)) {
        const demand = jobCpuDemandMillis(chaosJobBody(job));
        expect(demand, job.summary).toBeLessThanOrEqual(maxJobCpuMillis);
        expect(demand).toBeLessThanOrEqual(queues[job.lane].nominal);
      }
    }
  });

  it('counts a Job’s demand as the controller’s batch Job adapter does', () => {
    for (const job of chaosMix(seed, 200)) {
      const body = chaosJobBody(job, 'jobrelay.dev/dispatcher');
      const groups = batchJobAdapter.podDemand(JSON.parse(JSON.stringify(body)));
      const controller = groups.reduce((sum, g) => sum + (g.requests.cpu ?? 0) * g.count, 0);
      expect(jobCpuDemandMillis(body), job.summary).toBe(controller);
    }
  });

  it('limits a queue to nominal plus borrowing, capped by what the cohort lends; a cohort to its nominal', () => {
    const { queues, cohort } = chaosQueues('x');
    const limits = queueLimits(Object.values(queues));
    expect(limits.queue.get(queues.a.name)).toBe(1000);
    expect(limits.queue.get(queues.b.name)).toBe(1000);
    expect(limits.cohort.get(cohort)).toBe(1500);
  });

  it('sizes the queues to the arrival rate: the short variant’s as they are, the full run’s larger', () => {
    expect(quotaScale(40, 150_000)).toBe(1);
    expect(quotaScale(10, 150_000)).toBe(1);
    const full = chaosQueues('x', quotaScale(500, 600_000));
    expect(full.queues.a.nominal).toBe(2350);
    expect(full.queues.a.borrowingLimit).toBe(800);
  });

  it('reads the cpu quantities the run writes', () => {
    expect(cpuMillis('250m')).toBe(250);
    expect(cpuMillis('1')).toBe(1000);
    expect(cpuMillis('1.5')).toBe(1500);
    expect(cpuMillis(undefined)).toBe(0);
    expect(() => cpuMillis('1Gi')).toThrow();
  });
});
