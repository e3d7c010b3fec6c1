import { join } from 'node:path';
import type { BenchSettings } from '@jobrelay/bench';
import { controllerEnvironment, controllerNodeFlags } from '@jobrelay/controller/node-flags';
import type { Sandbox } from '@jobrelay/sandbox';

/** The benchmark's settings for a CI guard (`name` prefixes its log lines and names its log directory). */
export function guardSettings(sandbox: Sandbox, name: string): BenchSettings {
  return {
    concurrency: 16,
    controllerRuntime: { nodeFlags: controllerNodeFlags, environment: controllerEnvironment },
    workerQps: 50,
    workerBurst: 100,
    controllerArgs: ['--reconcile-concurrency=16'],
    nodeArgs: [],
    logDir: join(sandbox.dir, 'logs', name),
    log: (line) => console.log(`[${name}] ${line}`),
  };
}
