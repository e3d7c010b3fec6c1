import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  registerSandboxWorkers,
  repositoryRoot,
  resolveKueueManager,
  sandboxDown,
  sandboxUp,
} from '@jobrelay/sandbox';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    sandboxDir: string;
  }
}

/**
 * Brings up the e2e fleet (its own directory, so a running demo is never disturbed) and
 * stops it afterwards — unless it was already there before the run, which is how a
 * developer keeps a warm fleet between runs (`JOBRELAY_E2E_SANDBOX_DIR`, or start it once
 * with `JOBRELAY_SANDBOX_DIR=.sandbox-e2e npm run sandbox -- up`).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = process.env.JOBRELAY_E2E_SANDBOX_DIR ?? join(repositoryRoot, '.sandbox-e2e');
  const wasRunning = existsSync(join(dir, 'state.json'));
  const began = Date.now();
  // Kueue runs only on demand (e2e/test/worker-kueue.test.ts starts it on one worker), but is
  // built here, once and cached like the fleet's binaries, so no test waits minutes for Go.
  await resolveKueueManager((line) => console.log(`[sandbox] ${line}`));
  const { sandbox, started } = await sandboxUp({
    dir,
    workers: 3,
    log: (line) => console.log(`[sandbox] ${line}`),
  });
  // Dispatch tests need jobrelay's CRDs and the workers registered, as an admin would.
  await registerSandboxWorkers(sandbox);
  console.log(
    `[sandbox] e2e fleet ready in ${((Date.now() - began) / 1000).toFixed(1)}s at ${dir} (${started.length} processes started)`,
  );
  project.provide('sandboxDir', dir);
  return async () => {
    if (!wasRunning) await sandboxDown(dir);
  };
}
