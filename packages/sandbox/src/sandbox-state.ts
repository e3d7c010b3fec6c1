import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { freeLoopbackPorts } from './free-ports.ts';

/** A fake node the pod runner (KWOK) keeps Ready; sizes differ per worker so placement has something to weigh. */
export interface NodeShape {
  count: number;
  cpu: string;
  memory: string;
  gpus?: number;
}

export interface ClusterState {
  name: string;
  role: 'management' | 'worker';
  apiserverPort: number;
  controllerManagerPort: number;
  schedulerPort: number;
  kwokPort: number;
  /** KubeRay's ray-operator of this cluster: --metrics-addr and --health-probe-bind-address. */
  rayOperatorMetricsPort?: number;
  rayOperatorProbePort?: number;
  /** JobSet's manager of this cluster: its webhook server and health probes (jobset-manager.ts). */
  jobSetWebhookPort?: number;
  jobSetProbePort?: number;
  nodes: NodeShape;
}

export interface RecordedProcess {
  pid: number;
  /** The program's path, checked against /proc before any signal: pids get reused. */
  binary: string;
}

export interface SandboxState {
  formatVersion: 1;
  binariesDir: string;
  redisServer: string;
  etcd: { clientPort: number; peerPort: number };
  redis: { port: number };
  /** KubeRay's ray-operator (one per cluster) and the CRDs it needs (kuberay-operator.ts). */
  kuberay?: { operator: string; crdDir: string; version: string };
  /** The simulated Ray dashboards (ray-dashboard.ts): the HTTP proxy every operator uses. */
  rayDashboard?: { port: number };
  /** JobSet's manager (one per cluster) and its CRD and webhook manifests (jobset-manager.ts). */
  jobset?: { manager: string; manifestDir: string; version: string };
  clusters: ClusterState[];
  /** Process name (`etcd`, `redis`, `<cluster>/<component>`) to what was started. */
  processes: Record<string, RecordedProcess>;
  /** The admin API started for this sandbox (by the demo), so `env` can point at it. */
  api?: { url: string };
}

/**
 * The management cluster runs Jobs too (hybrid clusters: everything without our managedBy
 * stays there), so it gets a small node. Worker i takes shape i-1, cycling.
 */
export const managementNodes: NodeShape = { count: 1, cpu: '4', memory: '8Gi' };
export const workerNodeShapes: readonly NodeShape[] = [
  { count: 2, cpu: '4', memory: '16Gi' },
  { count: 2, cpu: '8', memory: '32Gi' },
  { count: 1, cpu: '16', memory: '64Gi', gpus: 4 },
];

export function workerName(index: number): string {
  return `worker-${index}`;
}

export function readState(file: string): SandboxState | undefined {
  if (!existsSync(file)) return undefined;
  const state = JSON.parse(readFileSync(file, 'utf8')) as SandboxState;
  if (state.formatVersion !== 1) {
    throw new Error(
      `${file} was written by another version of the sandbox: run \`npm run sandbox -- down\` first`,
    );
  }
  return state;
}

/** Atomic write: a reader never sees half a file, even if `up` is killed mid-way. */
export function writeState(file: string, state: SandboxState): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

function portsIn(state: SandboxState): Set<number> {
  const ports = [
    state.etcd.clientPort,
    state.etcd.peerPort,
    state.redis.port,
    state.rayDashboard?.port,
    ...state.clusters.flatMap((c) => [
      c.apiserverPort,
      c.controllerManagerPort,
      c.schedulerPort,
      c.kwokPort,
      c.rayOperatorMetricsPort,
      c.rayOperatorProbePort,
      c.jobSetWebhookPort,
      c.jobSetProbePort,
    ]),
  ];
  return new Set(ports.filter((port): port is number => port !== undefined));
}

async function newCluster(
  name: string,
  role: ClusterState['role'],
  nodes: NodeShape,
  taken: ReadonlySet<number>,
): Promise<ClusterState> {
  const [
    apiserverPort,
    controllerManagerPort,
    schedulerPort,
    kwokPort,
    metricsPort,
    probePort,
    webhookPort,
    jobSetProbePort,
  ] = await freeLoopbackPorts(8, taken);
  return {
    name,
    role,
    apiserverPort: apiserverPort!,
    controllerManagerPort: controllerManagerPort!,
    schedulerPort: schedulerPort!,
    kwokPort: kwokPort!,
    rayOperatorMetricsPort: metricsPort!,
    rayOperatorProbePort: probePort!,
    jobSetWebhookPort: webhookPort!,
    jobSetProbePort: jobSetProbePort!,
    nodes,
  };
}

/** The state for `workers` workers: the existing one extended (never shrunk), or a new one. */
export async function planState(
  existing: SandboxState | undefined,
  options: {
    workers: number;
    binariesDir: string;
    redisServer: string;
    /** Undefined: the fleet runs no KubeRay operators (a bench fleet of many workers). */
    kuberay: SandboxState['kuberay'];
    /** Undefined: the fleet runs no JobSet managers. */
    jobset: SandboxState['jobset'];
  },
): Promise<SandboxState> {
  const { workers, binariesDir, redisServer, kuberay, jobset } = options;
  let state = existing;
  if (!state) {
    const [clientPort, peerPort, redisPort] = await freeLoopbackPorts(3);
    state = {
      formatVersion: 1,
      binariesDir,
      redisServer,
      etcd: { clientPort: clientPort!, peerPort: peerPort! },
      redis: { port: redisPort! },
      clusters: [],
      processes: {},
    };
    state.clusters.push(await newCluster('management', 'management', managementNodes, portsIn(state)));
  }
  // Binaries may have been rebuilt elsewhere since: running processes keep theirs, restarts take the new ones.
  state.binariesDir = binariesDir;
  state.redisServer = redisServer;
  state.kuberay = kuberay;
  state.jobset = jobset;
  // A sandbox started before KubeRay was part of it gets the ports now; its running processes stay.
  if (!state.rayDashboard) {
    const [port] = await freeLoopbackPorts(1, portsIn(state));
    state.rayDashboard = { port: port! };
  }
  for (const cluster of state.clusters) {
    if (cluster.rayOperatorMetricsPort && cluster.rayOperatorProbePort) continue;
    const [metricsPort, probePort] = await freeLoopbackPorts(2, portsIn(state));
    cluster.rayOperatorMetricsPort = metricsPort!;
    cluster.rayOperatorProbePort = probePort!;
  }
  for (const cluster of state.clusters) {
    if (cluster.jobSetWebhookPort && cluster.jobSetProbePort) continue;
    const [webhookPort, probePort] = await freeLoopbackPorts(2, portsIn(state));
    cluster.jobSetWebhookPort = webhookPort!;
    cluster.jobSetProbePort = probePort!;
  }
  const existingWorkers = state.clusters.filter((c) => c.role === 'worker').length;
  for (let i = existingWorkers + 1; i <= workers; i++) {
    const shape = workerNodeShapes[(i - 1) % workerNodeShapes.length]!;
    state.clusters.push(await newCluster(workerName(i), 'worker', shape, portsIn(state)));
  }
  return state;
}
