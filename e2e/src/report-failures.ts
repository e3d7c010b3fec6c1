// Set up before every e2e file: a failed test prints what the controllers it ran were doing.
// CI keeps the test run's output and nothing of the sandbox, so this is the evidence a failure
// there leaves (a controller that exited, a worker it could not reach, a write refused).
import { beforeEach } from 'vitest';
import { beginTestFile, controllersReport } from './controller-process.ts';

// Executed again before each file, though the lane's modules are shared (isolate: false).
beginTestFile();

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const report of controllersReport()) console.log(report);
  });
});
