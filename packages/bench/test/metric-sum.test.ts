import { describe, expect, it } from 'vitest';
import { histogramMean, histogramQuantile, metricSum } from '../src/bench-fleet.ts';

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

const histogram = `# TYPE jobrelay_admission_decision_seconds histogram
jobrelay_admission_decision_seconds_bucket{le="0.001"} 0
jobrelay_admission_decision_seconds_bucket{le="0.005"} 50
jobrelay_admission_decision_seconds_bucket{le="0.01"} 90
jobrelay_admission_decision_seconds_bucket{le="0.05"} 100
jobrelay_admission_decision_seconds_bucket{le="+Inf"} 100
jobrelay_admission_decision_seconds_sum 0.6
jobrelay_admission_decision_seconds_count 100
`;

describe('histogramQuantile', () => {
  it('interpolates within the bucket the rank falls in, as histogram_quantile does', () => {
    // Rank 50 of 100 ends the (0.001, 0.005] bucket; rank 99 is 9/10 into (0.01, 0.05].
    expect(histogramQuantile(histogram, 'jobrelay_admission_decision_seconds', 0.5)).toBeCloseTo(0.005);
    expect(histogramQuantile(histogram, 'jobrelay_admission_decision_seconds', 0.99)).toBeCloseTo(0.046);
    expect(histogramQuantile(histogram, 'jobrelay_admission_decision_seconds', 0.25)).toBeCloseTo(0.003);
  });

  it('answers the highest finite bound in the +Inf bucket, and undefined without samples', () => {
    const over = histogram.replace('le="+Inf"} 100', 'le="+Inf"} 200').replace('_count 100', '_count 200');
    expect(histogramQuantile(over, 'jobrelay_admission_decision_seconds', 0.99)).toBe(0.05);
    expect(histogramQuantile(exposition, 'jobrelay_admission_decision_seconds', 0.5)).toBeUndefined();
  });
});

describe('histogramMean', () => {
  const byLane = `jobrelay_reconcile_duration_seconds_sum{lane="urgent"} 3
jobrelay_reconcile_duration_seconds_count{lane="urgent"} 30
jobrelay_reconcile_duration_seconds_sum{lane="changes"} 20
jobrelay_reconcile_duration_seconds_count{lane="changes"} 100
`;

  it("divides a series' sum by its count, or all series' together", () => {
    expect(histogramMean(histogram, 'jobrelay_admission_decision_seconds')).toBeCloseTo(0.006);
    expect(histogramMean(byLane, 'jobrelay_reconcile_duration_seconds', '{lane="urgent"}')).toBeCloseTo(0.1);
    expect(histogramMean(byLane, 'jobrelay_reconcile_duration_seconds', '{lane="changes"}')).toBeCloseTo(0.2);
    expect(histogramMean(byLane, 'jobrelay_reconcile_duration_seconds')).toBeCloseTo(23 / 130);
  });

  it('answers undefined for a series with no samples', () => {
    expect(histogramMean(byLane, 'jobrelay_reconcile_duration_seconds', '{lane="resync"}')).toBeUndefined();
  });
});
