// vitest's JSON report, as scripts/test.sh keeps one per part in .test-results/: what the
// closing report and the lane balancer read from it.
import { readFileSync } from 'node:fs';

export interface VitestAssertionResult {
  fullName: string;
  status: string;
  failureMessages?: string[];
}

export interface VitestFileResult {
  name: string;
  startTime: number;
  endTime: number;
  status: string;
  /** Set when the file itself failed (an error outside any test, a failed hook). */
  message?: string;
  assertionResults?: VitestAssertionResult[];
}

export interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests?: number;
  numTodoTests?: number;
  testResults: VitestFileResult[];
}

/**
 * The report at `path`, or undefined when there is none (a part that never ran writes none) or
 * the file is no vitest report: the closing line must print whatever else lies beside them.
 */
export function readVitestReport(path: string): VitestReport | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const report = parsed as Partial<VitestReport> | null;
  return report && Array.isArray(report.testResults) && typeof report.numPassedTests === 'number'
    ? (report as VitestReport)
    : undefined;
}

/** How long one file took, from its start to its end. */
export function fileSeconds(result: VitestFileResult): number {
  return (result.endTime - result.startTime) / 1000;
}
