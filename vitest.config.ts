import { defineConfig } from 'vitest/config';
import { laneFiles } from './e2e/lanes.ts';
import { LaneOrderSequencer } from './e2e/src/lane-sequencer.ts';

/**
 * One project per e2e lane (e2e/lanes.ts): scripts/test.sh runs the shared lanes at once, each
 * in its own vitest process against a fleet of its own (JOBRELAY_E2E_SANDBOX_DIR), then the
 * exclusive lane alone.
 */
const e2eLanes = Object.entries(laneFiles()).map(([name, include]) => ({
  test: {
    name,
    include,
    // Starts (or reuses) the lane's local clusters and Redis once for every file of the lane.
    globalSetup: ['e2e/src/global-setup.ts'],
    // A failed test prints its controllers' state and last warnings and errors.
    setupFiles: ['e2e/src/report-failures.ts'],
    // Real Job controllers with real backoff (10 s after a pod fails) take their time.
    testTimeout: 240_000,
    // A cold first run builds the Kubernetes binaries from source.
    hookTimeout: 60 * 60_000,
    // A lane's files share its fleet, one after another; tests inside a file may run concurrently.
    fileParallelism: false,
    // One process and one module graph for the lane's files: a fresh one per file cost 4-8 s
    // between files on a loaded machine (51-92 s a lane). Files keep no state in shared modules
    // but what beginTestFile (src/controller-process.ts) starts anew per file.
    isolate: false,
  },
}));

export default defineConfig({
  test: {
    // A lane's files in the order e2e/lanes.ts lists them.
    sequence: { sequencer: LaneOrderSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          // e2e/unit: the e2e harness's pure parts (no cluster needed); test/: rules about the
          // repository itself (how modules depend on each other, the e2e lanes).
          include: [
            'packages/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'e2e/unit/**/*.test.ts',
            'test/**/*.test.ts',
          ],
          // One module graph for every file of the tier: loading it anew per file cost 40 of the
          // tier's 72 s (21 s this way); the tests keep no state in modules (checked with files
          // in shuffled orders).
          isolate: false,
          // npm test runs this tier beside the e2e lanes on two busy cores: a fast-check property
          // that takes 1 s alone took 9 s there. A time limit is no assertion of a unit's speed.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          // The controller's and the registry's classes with the clock injected and every cluster
          // call answered in process at the client boundary: seconds, no Kubernetes, no Redis.
          name: 'middle',
          include: ['apps/*/middle/**/*.test.ts', 'packages/*/middle/**/*.test.ts'],
          isolate: false,
          // Fast on an idle machine (seconds for the lot); generous on a loaded one, where the
          // registry's tests wait for real sockets.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          // The e2e files that need no fleet (helm and promtool built from the Go module proxy and
          // cached, the Dockerfiles dry-run): they run with the unit tier. No globalSetup: no fleet.
          name: 'offline',
          include: ['e2e/offline/**/*.test.ts'],
          // Generous: helm and promtool run beside the unit tier on a loaded machine (a Dockerfile's dry
          // run, its `npm ci` for real, sets its own 5 minutes).
          testTimeout: 10 * 60_000,
          // A cold first run builds helm and promtool from the Go module proxy.
          hookTimeout: 30 * 60_000,
        },
      },
      ...e2eLanes,
    ],
  },
});
