import { describe, expect, it } from 'vitest';
import { metricSum } from '../src/bench-fleet.ts';

const exposition = `# HELP jobrelay_placements_total Placement tasks run, by outcome.
# TYPE jobrelay_placements_total counter
jobrelay_placements_total{outcome="placed"} 2000
jobrelay_placements_total{outcome="not-needed"} 37
jobrelay_placements_total_created{outcome="placed"} 1796128599
jobrelay_reconciles_total 8000
`;

describe('metricSum', () => {
  it('sums every labelled sample of one metric and nothing of a metric that shares its prefix', () => {
    expect(metricSum(exposition, 'jobrelay_placements_total')).toBe(2037);
  });

  it('reads an unlabelled sample, and 0 for a metric that is absent', () => {
    expect(metricSum(exposition, 'jobrelay_reconciles_total')).toBe(8000);
    expect(metricSum(exposition, 'jobrelay_mirror_operations_total')).toBe(0);
  });
});
