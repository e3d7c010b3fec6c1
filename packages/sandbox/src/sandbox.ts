import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapCluster } from './cluster-bootstrap.ts';
import {
  apiserverUrl,
  type ProcessSpec,
  sandboxProcesses,
  type Tier,
  writeKwokLogsConfig,
} from './control-plane-processes.ts';
import { ensureTokens, readToken, writeKubeconfig } from './credentials.ts';
import { httpOk, waitFor } from './health-probes.ts';
import { resolveJobSetManager } from './jobset-manager.ts';
import { resolveKubeBinaries } from './kube-binaries.ts';
import { rayDashboardProxyUrl, resolveKuberayOperator } from './kuberay-operator.ts';
import { isOurProcess, startDetached, stopProcess } from './local-process.ts';
import { ensurePki } from './pki.ts';
import { findRedisServer } from './redis-server.ts';
import {
  defaultSandboxDir,
  type Identity,
  SandboxLayout,
  type ServiceAccountIdentity,
  userIdentities,
} from './sandbox-layout.ts';
import { type ClusterState, planState, readState, type SandboxState, writeState } from './sandbox-state.ts';

const tiers: readonly Tier[] = ['storage', 'apiserver', 'controllers', 'kuberay', 'jobset'];
/** An apiserver on a busy 2-core machine can take half a minute before /readyz passes. */
const processReadyTimeoutMs = 90_000;

export interface SandboxCluster {
  name: string;
  role: ClusterState['role'];
  server: string;
}

/** What tests, the demo and scripts need to reach a running sandbox. */
export interface Sandbox {
  dir: string;
  redisUrl: string;
  clusters: SandboxCluster[];
  management: SandboxCluster;
  workers: SandboxCluster[];
  caPem: string;
  /** Where etcd, kube-apiserver, kubectl, ... of this sandbox are. */
  binariesDir: string;
  kubeconfigPath(cluster: string, identity?: Identity): string;
  /**
   * The management cluster's kubeconfig for one of jobrelay's own ServiceAccounts (deploy/
   * creates them; registerSandboxWorkers mints the tokens): what the controller and the API run with.
   */
  serviceAccountKubeconfigPath(serviceAccount: ServiceAccountIdentity): string;
  token(identity: Identity): string;
  /** The admin API's URL once one was started for this sandbox (recordSandboxApi). */
  apiUrl?: string;
  /** KubeRay's ray-operator on every cluster; undefined for a sandbox started before it was part of it. */
  kuberay?: SandboxKuberay;
}

export interface SandboxKuberay {
  /** ray-operator's version (pinnedVersions.kuberay unless JOBRELAY_KUBERAY_OPERATOR). */
  version: string;
  /**
   * The simulated Ray dashboards' HTTP proxy as a cluster's operator uses it, the cluster
   * named as the proxy user: `curl -x <this> http://<head-svc>.<ns>.svc.cluster.local:8265/api/jobs/`.
   */
  dashboardProxy(cluster: string): string;
  /** The process name of a cluster's operator, for stopSandboxProcess: `<cluster>/ray-operator`. */
  operatorProcess(cluster: string): string;
  /** True when the cluster's operator is running (pid checked) and its /readyz answers 200. */
  operatorReady(cluster: string): Promise<boolean>;
}

export interface UpOptions {
  dir?: string;
  workers?: number;
  /**
   * Run KubeRay's operator and JobSet's manager beside every cluster (default true). A fleet
   * started without them (the benchmark's 20 workers) serves batch/v1 Jobs only and spares the
   * two cores 40 idle controllers; a sandbox once started keeps its choice.
   */
  thirdPartyOperators?: boolean;
  log?: (line: string) => void;
}

export interface UpResult {
  sandbox: Sandbox;
  /** Names of the processes this call started; empty when everything was already running. */
  started: string[];
}

function contextFor(layout: SandboxLayout, state: SandboxState) {
  return { state, layout, pki: ensurePki(layout.pkiDir) };
}

function logTail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  return `last lines of ${file}:\n${tail}`;
}

/**
 * Brings the sandbox to the wanted shape: starts whatever is not running (all of it the
 * first time), leaves running processes alone, adds workers when more are asked for.
 */
export async function sandboxUp(options: UpOptions = {}): Promise<UpResult> {
  const log = options.log ?? (() => {});
  const layout = new SandboxLayout(options.dir ?? defaultSandboxDir());
  const existing = readState(layout.stateFile);
  const workers = Math.max(
    options.workers ?? 2,
    existing?.clusters.filter((c) => c.role === 'worker').length ?? 0,
  );

  const redisServer = findRedisServer();
  const binaries = await resolveKubeBinaries(log);
  const operators = existing ? existing.kuberay !== undefined : options.thirdPartyOperators !== false;
  const kuberay = operators ? await resolveKuberayOperator(log) : undefined;
  const jobset = operators ? await resolveJobSetManager(log) : undefined;
  for (const dir of [layout.logsDir, layout.etcdDataDir, layout.redisDataDir, layout.componentsDir]) {
    mkdirSync(dir, { recursive: true });
  }
  const pki = ensurePki(layout.pkiDir);
  ensureTokens(layout);
  const state = await planState(existing, {
    workers,
    binariesDir: binaries.dir,
    redisServer,
    kuberay,
    jobset,
  });
  writeState(layout.stateFile, state);
  writeAllKubeconfigs(layout, state, readFileSync(pki.caCert, 'utf8'));
  for (const cluster of state.clusters) mkdirSync(layout.kwokWorkDir(cluster.name), { recursive: true });
  writeKwokLogsConfig(layout);

  const specs = sandboxProcesses(contextFor(layout, state));
  const started: string[] = [];
  // beforeStart steps need only the apiservers: they begin as soon as those are up, and run
  // while the controllers start (applying KubeRay's large CRDs to every cluster takes a while).
  const preparations = new Map<string, Promise<void>>();
  for (const tier of tiers) {
    const tierSpecs = specs.filter((spec) => spec.tier === tier);
    const toStart = tierSpecs.filter((spec) => !isOurProcess(state.processes[spec.name]?.pid, spec.binary));
    await Promise.all(toStart.map((spec) => preparations.get(spec.name) ?? spec.beforeStart?.()));
    for (const spec of toStart) {
      const pid = startRecorded(layout, state, spec);
      started.push(spec.name);
      log(`started ${spec.name} (pid ${pid})`);
    }
    await Promise.all(tierSpecs.map((spec) => waitUntilHealthy(layout, state, spec)));
    if (tier === 'apiserver') {
      await Promise.all(state.clusters.map((c) => bootstrapCluster(layout.kubeconfig(c.name), c)));
      for (const spec of specs) {
        if (!spec.beforeStart || isOurProcess(state.processes[spec.name]?.pid, spec.binary)) continue;
        const preparation = spec.beforeStart();
        preparation.catch(() => {}); // awaited (and its error thrown) at the spec's own tier
        preparations.set(spec.name, preparation);
      }
    }
  }
  // A process that died after its health check passed: another program answered on its port
  // (ports are picked free, then bound later, so a sandbox starting at the same moment can take
  // one). Running on without it would fail later in ways that are hard to trace.
  for (const spec of specs) {
    if (!isOurProcess(state.processes[spec.name]?.pid, spec.binary)) {
      throw new Error(
        `${spec.name} exited after it was started; run \`npm run sandbox -- up\` again (it restarts only what is missing)\n${logTail(layout.logFile(spec.name))}`,
      );
    }
  }
  return { sandbox: openSandbox(layout.dir), started };
}

function waitUntilHealthy(layout: SandboxLayout, state: SandboxState, spec: ProcessSpec): Promise<void> {
  const logFile = layout.logFile(spec.name);
  return waitFor(
    `${spec.name} to become healthy at ${spec.endpoint}`,
    async () => {
      if (!isOurProcess(state.processes[spec.name]?.pid, spec.binary)) {
        throw new Error(`${spec.name} exited during start-up\n${logTail(logFile)}`);
      }
      return spec.healthy();
    },
    { timeoutMs: processReadyTimeoutMs, onTimeout: () => logTail(logFile) },
  );
}

function writeAllKubeconfigs(layout: SandboxLayout, state: SandboxState, caPem: string): void {
  for (const cluster of state.clusters) {
    const server = apiserverUrl(cluster);
    for (const identity of userIdentities) {
      writeKubeconfig(layout.kubeconfig(cluster.name, identity), {
        clusterName: cluster.name,
        server,
        caPem,
        user: identity,
        token: readToken(layout, identity),
      });
    }
    for (const component of ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const) {
      writeKubeconfig(layout.componentKubeconfig(cluster.name, component), {
        clusterName: cluster.name,
        server,
        caPem,
        user: component,
        token: readToken(layout, component),
      });
    }
  }
}

/** A running (or at least recorded) sandbox; throws a clear error when there is none. */
export function openSandbox(dir: string = defaultSandboxDir()): Sandbox {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  if (!state) throw new Error(`no sandbox at ${layout.dir}: start one with \`npm run sandbox -- up\``);
  const clusters = state.clusters.map((c) => ({ name: c.name, role: c.role, server: apiserverUrl(c) }));
  return {
    dir: layout.dir,
    redisUrl: `redis://127.0.0.1:${state.redis.port}`,
    clusters,
    management: clusters.find((c) => c.role === 'management')!,
    workers: clusters.filter((c) => c.role === 'worker'),
    caPem: readFileSync(join(layout.pkiDir, 'ca.crt'), 'utf8'),
    binariesDir: state.binariesDir,
    kubeconfigPath: (cluster, identity = 'admin') => layout.kubeconfig(cluster, identity),
    serviceAccountKubeconfigPath: (serviceAccount) =>
      layout.serviceAccountKubeconfig(clusters.find((c) => c.role === 'management')!.name, serviceAccount),
    token: (identity) => readToken(layout, identity),
    ...(state.api ? { apiUrl: state.api.url } : {}),
    ...(state.kuberay && state.rayDashboard
      ? { kuberay: sandboxKuberay(layout, state.kuberay.version, state.rayDashboard.port) }
      : {}),
  };
}

function sandboxKuberay(layout: SandboxLayout, version: string, dashboardPort: number): SandboxKuberay {
  const operatorProcess = (cluster: string) => `${cluster}/ray-operator`;
  return {
    version,
    dashboardProxy: (cluster) => rayDashboardProxyUrl(dashboardPort, cluster),
    operatorProcess,
    operatorReady: async (cluster) => {
      // Read afresh: the operator may have been restarted since the sandbox was opened.
      const state = readState(layout.stateFile);
      const recorded = state?.processes[operatorProcess(cluster)];
      const port = state?.clusters.find((c) => c.name === cluster)?.rayOperatorProbePort;
      if (!recorded || !port || !isOurProcess(recorded.pid, recorded.binary)) return false;
      return httpOk(`http://127.0.0.1:${port}/readyz`);
    },
  };
}

/** Records where the admin API of this sandbox listens, for `env` (JOBRELAY_API_URL). */
export function recordSandboxApi(dir: string, url: string): void {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  if (!state) throw new Error(`no sandbox at ${layout.dir}: start one with \`npm run sandbox -- up\``);
  state.api = { url };
  writeState(layout.stateFile, state);
}

export interface ProcessStatus {
  name: string;
  cluster?: string;
  pid?: number;
  running: boolean;
  healthy: boolean;
  endpoint: string;
}

export async function sandboxStatus(dir: string = defaultSandboxDir()): Promise<ProcessStatus[] | undefined> {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  if (!state) return undefined;
  const specs = sandboxProcesses(contextFor(layout, state));
  const apps = Object.entries(state.processes)
    .filter(([name]) => name.startsWith(appPrefix))
    .map(([name, { pid, binary }]) => {
      const running = isOurProcess(pid, binary);
      return {
        name,
        pid: running ? pid : undefined,
        running,
        healthy: running,
        endpoint: `log: ${layout.logFile(name)}`,
      };
    });
  const controlPlane = await Promise.all(
    specs.map(async (spec) => {
      const pid = state.processes[spec.name]?.pid;
      const running = isOurProcess(pid, spec.binary);
      return {
        name: spec.name,
        cluster: spec.cluster,
        pid: running ? pid : undefined,
        running,
        healthy: running && (await spec.healthy()),
        endpoint: spec.endpoint,
      };
    }),
  );
  return [...controlPlane, ...apps];
}

const appPrefix = 'app/';

/**
 * The sandbox's running processes (jobrelay's own apps aside) by name, with their pids, as its
 * state records them: no health probe, so cheap enough to read while something is measured.
 */
export function sandboxProcessIds(dir: string = defaultSandboxDir()): Array<{ name: string; pid: number }> {
  const state = readState(new SandboxLayout(dir).stateFile);
  if (!state) return [];
  return Object.entries(state.processes)
    .filter(([name, { pid, binary }]) => !name.startsWith(appPrefix) && isOurProcess(pid, binary))
    .map(([name, { pid }]) => ({ name, pid }));
}

/**
 * Starts one of jobrelay's own processes (e.g. the controller, for the demo) under the
 * sandbox, so `status` lists it and `down` stops it. A running one is left alone.
 * Returns the pid, and whether this call started it.
 */
export function startSandboxApp(
  dir: string,
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { pid: number; started: boolean; logFile: string } {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  if (!state) throw new Error(`no sandbox at ${layout.dir}: start one with \`npm run sandbox -- up\``);
  const processName = `${appPrefix}${name}`;
  const logFile = layout.logFile(processName);
  const recorded = state.processes[processName];
  if (recorded && isOurProcess(recorded.pid, recorded.binary))
    return { pid: recorded.pid, started: false, logFile };
  const pid = startDetached({ binary: process.execPath, args, env, logFile });
  state.processes[processName] = { pid, binary: process.execPath };
  writeState(layout.stateFile, state);
  return { pid, started: true, logFile };
}

/** Stops one process by name (e.g. `worker-1/kube-apiserver`), to simulate a failure; `up` restarts it. */
export async function stopSandboxProcess(name: string, dir: string = defaultSandboxDir()): Promise<void> {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  const recorded = state?.processes[name];
  if (!state || !recorded) throw new Error(`no process named ${name} in the sandbox at ${layout.dir}`);
  await stopProcess(recorded.pid, recorded.binary);
}

/**
 * Starts one stopped process of the sandbox again (e.g. `etcd` or `worker-1/kube-apiserver`
 * after `stopSandboxProcess`), on its recorded ports and data, and waits until it is healthy.
 * Unlike `up`, it touches nothing else, so other processes may stay stopped or frozen meanwhile
 * (the chaos run restarts one part while another is down). A running one is left alone.
 */
export async function startSandboxProcess(name: string, dir: string = defaultSandboxDir()): Promise<void> {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  if (!state) throw new Error(`no sandbox at ${layout.dir}: start one with \`npm run sandbox -- up\``);
  const spec = sandboxProcesses(contextFor(layout, state)).find((candidate) => candidate.name === name);
  if (!spec) throw new Error(`no process named ${name} in the sandbox at ${layout.dir}`);
  if (isOurProcess(state.processes[name]?.pid, spec.binary)) return;
  startRecorded(layout, state, spec);
  await waitUntilHealthy(layout, state, spec);
}

/**
 * Starts one process of the sandbox and records its pid, in `state` and in the state file. The
 * file is read afresh first: another start (the chaos run restarts several parts at once) may
 * have recorded a process meanwhile.
 */
function startRecorded(layout: SandboxLayout, state: SandboxState, spec: ProcessSpec): number {
  const pid = startDetached({
    binary: spec.binary,
    args: spec.args,
    env: spec.env,
    logFile: layout.logFile(spec.name),
  });
  const recorded = { pid, binary: spec.binary };
  const current = readState(layout.stateFile) ?? state;
  current.processes[spec.name] = recorded;
  writeState(layout.stateFile, current);
  state.processes[spec.name] = recorded;
  return pid;
}

/** Stops every process the sandbox started (controllers first, storage last) and removes its state. */
export async function sandboxDown(dir: string = defaultSandboxDir()): Promise<string[]> {
  const layout = new SandboxLayout(dir);
  const state = readState(layout.stateFile);
  const stopped: string[] = [];
  if (state) {
    // Apps (the controller the demo started) first: they talk to everything else.
    for (const [name, { pid, binary }] of Object.entries(state.processes)) {
      if (!name.startsWith(appPrefix)) continue;
      if (isOurProcess(pid, binary)) stopped.push(name);
      await stopProcess(pid, binary);
    }
    const specs = sandboxProcesses(contextFor(layout, state));
    // Then what a test started on demand (Kueue on one worker, startKueueOnWorker) and did not
    // stop, a failed run's: it talks to an apiserver too.
    const specNames = new Set(specs.map((spec) => spec.name));
    for (const [name, { pid, binary }] of Object.entries(state.processes)) {
      if (name.startsWith(appPrefix) || specNames.has(name)) continue;
      if (isOurProcess(pid, binary)) stopped.push(name);
      await stopProcess(pid, binary);
    }
    for (const tier of [...tiers].reverse()) {
      await Promise.all(
        specs
          .filter((spec) => spec.tier === tier && state.processes[spec.name])
          .map(async (spec) => {
            const { pid, binary } = state.processes[spec.name]!;
            if (isOurProcess(pid, binary)) stopped.push(spec.name);
            await stopProcess(pid, binary);
          }),
      );
    }
  }
  rmSync(layout.dir, { recursive: true, force: true });
  return stopped;
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Shell exports for a running sandbox: `eval "$(npm run -s sandbox -- env)"`. */
export function sandboxEnv(sandbox: Sandbox): string {
  const lines = [
    `export JOBRELAY_SANDBOX_DIR=${shellQuote(sandbox.dir)}`,
    `export KUBECONFIG=${shellQuote(sandbox.kubeconfigPath(sandbox.management.name))}`,
    `export REDIS_URL=${shellQuote(sandbox.redisUrl)}`,
    // kubectl of the pinned version comes with the sandbox's binaries.
    `export PATH=${shellQuote(sandbox.binariesDir)}:"$PATH"`,
  ];
  for (const cluster of sandbox.clusters) {
    const variable = `JOBRELAY_${cluster.name.toUpperCase().replaceAll('-', '_')}_KUBECONFIG`;
    lines.push(`export ${variable}=${shellQuote(sandbox.kubeconfigPath(cluster.name))}`);
  }
  // The admin API's callers: its URL and a kubeconfig whose token a client can present to it.
  // Never the token itself: this output ends up in terminals, scrollback and CI logs.
  lines.push(
    `export JOBRELAY_FLEET_ADMIN_KUBECONFIG=${shellQuote(sandbox.kubeconfigPath(sandbox.management.name, 'fleet-admin'))}`,
  );
  if (sandbox.apiUrl) lines.push(`export JOBRELAY_API_URL=${shellQuote(sandbox.apiUrl)}`);
  return `${lines.join('\n')}\n`;
}
