#!/usr/bin/env node
// `npm run sandbox -- <command>`: real local Kubernetes clusters and Redis on loopback.
import { parseArgs } from 'node:util';
import { goTools, resolveGoTool } from './go-tools.ts';
import { resolveJobSetManager } from './jobset-manager.ts';
import { describePins, resolveKubeBinaries } from './kube-binaries.ts';
import { resolveKuberayOperator } from './kuberay-operator.ts';
import { resolveKueueManager } from './kueue-manager.ts';
import { registerSandboxWorkers } from './register-workers.ts';
import { openSandbox, sandboxDown, sandboxEnv, sandboxStatus, sandboxUp } from './sandbox.ts';
import { defaultSandboxDir } from './sandbox-layout.ts';

const usage = `usage: npm run sandbox -- <command> [options]

commands:
  up [--workers N]   start one management and N worker clusters (default 2), Redis, KubeRay's
                     ray-operator and JobSet's manager (with its webhooks) on every cluster and
                     the simulated Ray dashboards;
                     starts only what is not already running
  status             list clusters, endpoints, pids and health
  env                print shell exports (KUBECONFIG, REDIS_URL, ...): eval "$(npm run -s sandbox -- env)"
  down               stop every process the sandbox started and remove its state
  register-workers   register every worker with jobrelay on the management cluster: CRDs;
                     deploy/worker on each worker; a kubeconfig of its jobrelay-dispatcher
                     ServiceAccount (not admin) in a Secret in jobrelay-system; WorkerCluster objects;
                     deploy/api and deploy/controller's RBAC, kubeconfigs of the jobrelay-controller and
                     jobrelay-api ServiceAccounts, and the fleet-admin, viewer, team-a bindings
  binaries           build the pinned Kubernetes binaries, KubeRay's ray-operator, JobSet's and Kueue's managers, helm and
                     promtool now (once; cached)
                     and print where they are

The sandbox lives in ${defaultSandboxDir()} (JOBRELAY_SANDBOX_DIR overrides).`;

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

async function printStatus(dir: string): Promise<boolean> {
  const rows = await sandboxStatus(dir);
  if (!rows) {
    process.stdout.write(`no sandbox at ${dir}\n`);
    return false;
  }
  const table = [['PROCESS', 'PID', 'HEALTH', 'ENDPOINT']];
  for (const row of rows) {
    table.push([
      row.name,
      row.pid ? String(row.pid) : '-',
      row.healthy ? 'healthy' : row.running ? 'unhealthy' : 'stopped',
      row.endpoint,
    ]);
  }
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const row of table)
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  const sandbox = openSandbox(dir);
  process.stdout.write(
    `\nkubeconfigs (admin): ${sandbox.clusters.map((c) => sandbox.kubeconfigPath(c.name)).join(' ')}\n`,
  );
  process.stdout.write(`redis: ${sandbox.redisUrl}\n`);
  return rows.every((row) => row.healthy);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { workers: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command] = positionals;
  const dir = defaultSandboxDir();
  if (values.help || !command) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  switch (command) {
    case 'up': {
      const workers = values.workers === undefined ? 2 : Number(values.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 10) {
        fail(`--workers must be a whole number from 1 to 10, got ${JSON.stringify(values.workers)}`);
      }
      const started = Date.now();
      const result = await sandboxUp({ dir, workers, log: (line) => process.stderr.write(`${line}\n`) });
      process.stdout.write(
        result.started.length === 0
          ? 'sandbox already running: nothing to start\n\n'
          : `sandbox ready in ${((Date.now() - started) / 1000).toFixed(1)}s (started ${result.started.length} processes)\n\n`,
      );
      await printStatus(dir);
      process.stdout.write(`\nuse it:  eval "$(npm run -s sandbox -- env)"; kubectl get nodes\n`);
      return;
    }
    case 'status':
      process.exitCode = (await printStatus(dir)) ? 0 : 1;
      return;
    case 'env':
      process.stdout.write(sandboxEnv(openSandbox(dir)));
      return;
    case 'down': {
      const stopped = await sandboxDown(dir);
      process.stdout.write(stopped.length ? `stopped ${stopped.join(', ')}\n` : 'nothing was running\n');
      process.stdout.write(`removed ${dir}\n`);
      return;
    }
    case 'register-workers': {
      const sandbox = openSandbox(dir);
      await registerSandboxWorkers(sandbox);
      process.stdout.write(`registered ${sandbox.workers.map((w) => w.name).join(', ')} as WorkerClusters\n`);
      return;
    }
    case 'binaries': {
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const binaries = await resolveKubeBinaries(log);
      process.stdout.write(`${describePins()}: ${binaries.dir}\n`);
      const kuberay = await resolveKuberayOperator(log);
      process.stdout.write(
        `KubeRay ray-operator ${kuberay.version}: ${kuberay.operator} (CRDs in ${kuberay.crdDir})\n`,
      );
      const jobset = await resolveJobSetManager(log);
      process.stdout.write(
        `JobSet manager ${jobset.version}: ${jobset.manager} (CRD and webhooks in ${jobset.manifestDir})\n`,
      );
      // Not part of a sandbox: started on demand on one worker by the tests that need it.
      const kueue = await resolveKueueManager(log);
      process.stdout.write(
        `Kueue manager ${kueue.version}: ${kueue.manager} (CRDs in ${kueue.crdDir}, webhooks in ${kueue.manifestDir})\n`,
      );
      for (const name of Object.keys(goTools) as Array<keyof typeof goTools>)
        process.stdout.write(`${name} ${goTools[name].version}: ${await resolveGoTool(name, log)}\n`);
      return;
    }
    default:
      fail(`unknown command ${JSON.stringify(command)}\n\n${usage}`);
  }
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
