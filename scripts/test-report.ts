// Reads vitest's JSON report(s) and prints what a developer needs at the end of `npm test`: the
// slowest files with their seconds, the times of its parts (--line=...), then one plain closing line (`N passed, N failed`) that
// CI reads. Several reports (one per lane) are summed as one run.
import { relative } from 'node:path';
import { fileSeconds, readVitestReport, type VitestReport } from './vitest-reports.ts';

const slowestShown = 15;
const args = process.argv.slice(2);
const lines = args.filter((arg) => arg.startsWith('--line=')).map((arg) => arg.slice('--line='.length));
const reports = args
  .filter((arg) => !arg.startsWith('--line='))
  // A lane that failed before writing its report is counted as failed by test.sh's exit status.
  .flatMap((path) => readVitestReport(path) ?? []);

const files = reports
  .flatMap((report) => report.testResults)
  .map((file) => ({
    name: relative(process.cwd(), file.name),
    seconds: fileSeconds(file),
    failed: file.status === 'failed',
  }))
  .sort((a, b) => b.seconds - a.seconds);

if (files.length > 0) {
  console.log(`\nThe ${Math.min(slowestShown, files.length)} slowest of ${files.length} test files:`);
  for (const file of files.slice(0, slowestShown))
    console.log(`${file.seconds.toFixed(1).padStart(8)} s  ${file.name}${file.failed ? '  (failed)' : ''}`);
}
for (const line of lines) console.log(line);

// CI shows only the end of the output: name every failure here, with the first line of its message.
const firstLine = (message: string | undefined) => (message ?? '').trim().split('\n')[0]?.slice(0, 300) ?? '';
const failures = reports.flatMap((report) =>
  report.testResults.flatMap((file) => {
    const name = relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    if (failedTests.length === 0 && file.status === 'failed') return [`${name}: ${firstLine(file.message)}`];
    return failedTests.map((test) => `${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  }),
);
if (failures.length > 0) {
  console.log(`\nFailed:`);
  for (const failure of failures) console.log(`  ${failure}`);
}
const sum = (pick: (report: VitestReport) => number | undefined) =>
  reports.reduce((total, report) => total + (pick(report) ?? 0), 0);
const skipped = sum((r) => r.numPendingTests) + sum((r) => r.numTodoTests);
console.log(
  `${sum((r) => r.numPassedTests)} passed, ${sum((r) => r.numFailedTests)} failed${skipped ? `, ${skipped} skipped` : ''}`,
);
