import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/batch-job/job-object.ts';
import { jobPodsAtOnce } from '../../src/batch-job/job-pods-at-once.ts';

describe('jobPodsAtOnce', () => {
  const template = { spec: { containers: [] } };
  const cases: [Partial<JobSpec>, number][] = [
    [{}, 1],
    [{ parallelism: 3 }, 3],
    [{ completions: 5 }, 1],
    [{ parallelism: 3, completions: 5 }, 3],
    [{ parallelism: 5, completions: 2 }, 2],
    [{ parallelism: 4, completions: 4 }, 4],
    [{ parallelism: 0 }, 0],
    [{ parallelism: 0, completions: 3 }, 0],
    [{ completions: 0 }, 0],
    [{ parallelism: -2 }, 0],
    [{ parallelism: 2, completions: -1 }, 0],
    // A suspended Job is the caller's business.
    [{ parallelism: 2, suspend: true }, 2],
    // Indexed Jobs follow the same rule.
    [{ parallelism: 10, completions: 3, completionMode: 'Indexed' }, 3],
  ];
  it.each(cases)('%j -> %d', (spec, expected) => {
    expect(jobPodsAtOnce({ template, ...spec })).toBe(expected);
  });

  it('treats null (as JSON can carry) like unset', () => {
    const spec = { template, parallelism: null, completions: null } as unknown as JobSpec;
    expect(jobPodsAtOnce(spec)).toBe(1);
  });

  it('is min(parallelism, completions), never negative', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: -5, max: 50 })),
        fc.option(fc.integer({ min: -5, max: 50 })),
        (p, c) => {
          const spec: JobSpec = {
            template,
            ...(p !== null && { parallelism: p }),
            ...(c !== null && { completions: c }),
          };
          const result = jobPodsAtOnce(spec);
          expect(result).toBeGreaterThanOrEqual(0);
          expect(result).toBeLessThanOrEqual(Math.max(0, p ?? 1));
          if (c !== null) expect(result).toBeLessThanOrEqual(Math.max(0, c));
        },
      ),
    );
  });
});
