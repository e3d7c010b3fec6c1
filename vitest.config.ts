import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // e2e/unit: the e2e harness's pure parts (no cluster needed); test/: rules about the
          // repository itself (how modules depend on each other).
          include: [
            'packages/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'e2e/unit/**/*.test.ts',
            'test/**/*.test.ts',
          ],
        },
      },
      {
        test: {
          // The controller's and the registry's classes with the clock injected and every cluster
          // call answered in process at the client boundary: seconds, no Kubernetes, no Redis.
          name: 'middle',
          include: ['apps/*/middle/**/*.test.ts', 'packages/*/middle/**/*.test.ts'],
          // Fast on an idle machine (seconds for the lot); generous on a loaded one, where the
          // registry's tests wait for real sockets.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/test/**/*.test.ts'],
          // Starts (or reuses) the local clusters and Redis once for every e2e file.
          globalSetup: ['e2e/src/global-setup.ts'],
          // A failed test prints its controllers' state and last warnings and errors.
          setupFiles: ['e2e/src/report-failures.ts'],
          // Real Job controllers with real backoff (10 s after a pod fails) take their time.
          testTimeout: 240_000,
          // A cold first run builds the Kubernetes binaries from source.
          hookTimeout: 60 * 60_000,
          // Files share one fleet on a 2-core machine; tests inside a file may run concurrently.
          fileParallelism: false,
        },
      },
    ],
  },
});
