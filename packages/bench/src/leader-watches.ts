// The leader's watches and nothing else, as a process of its own (the fleet scenario's bound on
// its ratio, issue 31): every stream a leading controller holds on the management cluster and
// on each worker, each object parsed, viewed, interned and cached by the controller's own
// informer code, and no decision, queue or write. A replay of the dispatcher's API calls beside
// it runs at the highest rate a dispatcher that watches what jobrelay watches could reach on
// this machine if deciding and queueing cost it nothing.
//
// Run by the benchmark: node leader-watches.ts --management KUBECONFIG --worker NAME=KUBECONFIG...
// It prints one line, `synced`, once every watch has listed, and stops on SIGTERM.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  mirrorSelectorFor,
  namespaceInformer,
  WorkerCapacity,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from '@jobrelay/clusters';
import {
  apiVersionOf,
  batchJobAdapter,
  claimedOriginInformer,
  collectionPath,
  type KubeObject,
} from '@jobrelay/kinds';
import { defaultOriginId, ResilientInformer } from '@jobrelay/kube';
import { defaultManagedBy } from '@jobrelay/mirror';
import type { Sandbox } from '@jobrelay/sandbox';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { processUsage } from './process-usage.ts';

/** The watch-only process, started by `startLeaderWatches`. */
export interface LeaderWatches {
  pid: number;
  cpuMs(): number;
  stop(): Promise<void>;
}

let started = 0;

/**
 * Starts the leader's watches in a process of their own (with the controller's node flags and
 * malloc settings, so they cost what they cost in the controller) and waits until every one has
 * listed.
 */
export async function startLeaderWatches(
  sandbox: Sandbox,
  options: { logDir: string; nodeFlags: readonly string[]; environment: Readonly<Record<string, string>> },
): Promise<LeaderWatches> {
  mkdirSync(options.logDir, { recursive: true });
  const logFile = join(options.logDir, `leader-watches-${process.pid}-${++started}.log`);
  const child = spawn(
    process.execPath,
    [
      ...options.nodeFlags,
      new URL(import.meta.url).pathname,
      `--management=${sandbox.kubeconfigPath(sandbox.management.name)}`,
      ...sandbox.workers.map((w) => `--worker=${w.name}=${sandbox.kubeconfigPath(w.name)}`),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.environment } },
  );
  child.stderr.pipe(createWriteStream(logFile));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    // One that never syncs is stopped, not left watching beside the rest of the run.
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the leader's watches did not sync within 300 s; see ${logFile}`));
    }, 300_000);
    child.stdout.on('data', (chunk: Buffer) => {
      if (!chunk.toString().includes('synced')) return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the leader's watches exited (${child.exitCode}); see ${logFile}`));
    });
  });
  const pid = child.pid!;
  return {
    pid,
    cpuMs: () => processUsage(pid).cpuMs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { management: { type: 'string' }, worker: { type: 'string', multiple: true } },
  });
  if (!values.management) throw new Error('--management KUBECONFIG is required');
  const log = pino({ level: 'warn' }, process.stderr);
  const kubeConfigAt = (path: string) => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(path);
    return kubeConfig;
  };
  const management = kubeConfigAt(values.management);
  const { resource } = batchJobAdapter;
  const nothing = () => {};
  // The management cluster's, as the controller's: every Job (managedBy cannot be selected on),
  // jobrelay's kept; its namespaces; the WorkerClusters.
  const informers: Array<{ start(): void; waitForSync(): Promise<void>; stop(): Promise<void> }> = [
    claimedOriginInformer({
      adapter: batchJobAdapter,
      managedBy: defaultManagedBy,
      kubeConfig: management,
      name: 'origin Jobs',
      log,
      onEvent: nothing,
    }),
    namespaceInformer({ name: 'management namespaces', kubeConfig: management, log, onEvent: nothing }),
    new ResilientInformer<KubeObject>({
      name: 'WorkerClusters',
      kubeConfig: management,
      apiVersion: `${workerClusterGroup}/${workerClusterVersion}`,
      kind: 'WorkerCluster',
      path: `/apis/${workerClusterGroup}/${workerClusterVersion}/${workerClusterPlural}`,
      log,
      onEvent: nothing,
    }),
  ];
  const mirrorSelector = mirrorSelectorFor(await defaultOriginId(management));
  // Each worker's, as the leading registry's: its mirrors, namespaces, nodes and pods.
  for (const worker of values.worker ?? []) {
    const [cluster, path] = [worker.slice(0, worker.indexOf('=')), worker.slice(worker.indexOf('=') + 1)];
    if (!cluster || !path) throw new Error(`--worker ${worker}: expected NAME=KUBECONFIG`);
    const kubeConfig = kubeConfigAt(path);
    informers.push(
      new ResilientInformer<KubeObject>({
        name: `${cluster} mirrors`,
        kubeConfig,
        apiVersion: apiVersionOf(resource),
        kind: resource.kind,
        path: collectionPath(resource),
        labelSelector: mirrorSelector,
        view: (mirror) => batchJobAdapter.mirrorCacheView!(mirror),
        log,
        onEvent: nothing,
      }),
      namespaceInformer({ name: `${cluster} namespaces`, kubeConfig, log, onEvent: nothing }),
      new WorkerCapacity({ cluster, kubeConfig, log, onChange: nothing }),
    );
  }
  for (const informer of informers) informer.start();
  await Promise.all(informers.map((informer) => informer.waitForSync()));
  process.stdout.write('synced\n');
  process.once('SIGTERM', () => {
    void Promise.all(informers.map((informer) => informer.stop())).then(() => process.exit(0));
  });
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
