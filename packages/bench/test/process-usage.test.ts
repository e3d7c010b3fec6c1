import { describe, expect, it } from 'vitest';
import { mainThreadSchedule, processUsage, scheduleShares } from '../src/process-usage.ts';

describe('scheduleShares', () => {
  it('divides the time run and the time waited for a core by the wall time between readings', () => {
    const shares = scheduleShares({ runMs: 1_000, waitMs: 500 }, { runMs: 3_000, waitMs: 8_500 }, 10_000);
    expect(shares).toEqual({ running: 0.2, waitingForCpu: 0.8 });
  });
});

describe('mainThreadSchedule', () => {
  it("reads this process's main thread from /proc, growing as it runs", () => {
    const before = mainThreadSchedule(process.pid);
    let spin = 0;
    for (let i = 0; i < 5_000_000; i++) spin += i % 7;
    const after = mainThreadSchedule(process.pid);
    expect(spin).toBeGreaterThan(0);
    expect(after.runMs).toBeGreaterThan(before.runMs);
    expect(after.waitMs).toBeGreaterThanOrEqual(before.waitMs);
    // The main thread's run time is part of the whole process's CPU time.
    expect(after.runMs).toBeLessThanOrEqual(processUsage(process.pid).cpuMs + 20);
  });
});
