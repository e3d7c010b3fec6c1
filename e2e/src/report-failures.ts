// Set up before every e2e file: a failed test prints what the controllers it ran were doing.
// CI keeps the test run's output and nothing of the sandbox, so this is the evidence a failure
// there leaves (a controller that exited, a worker it could not reach, a write refused).
import { afterAll, beforeEach } from 'vitest';
import { beginTestFile, controllersReport, stopControllersOfThisFile } from './controller-process.ts';

// Executed again before each file, though the lane's modules are shared (isolate: false).
beginTestFile();
// Registered first, so it runs after the file's own afterAll hooks: whatever controller the file
// left running stops before the lane's next file starts.
afterAll(stopControllersOfThisFile);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const report of controllersReport()) console.log(report);
  });
});
