import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { httpOk, redisPing } from './health-probes.ts';
import { jobSetProcesses } from './jobset-manager.ts';
import { kuberayProcesses } from './kuberay-operator.ts';
import type { RequiredBinary } from './pinned-versions.ts';
import type { SandboxPki } from './pki.ts';
import type { SandboxLayout } from './sandbox-layout.ts';
import type { ClusterState, SandboxState } from './sandbox-state.ts';

/** KWOK stage documents: how fake pods run, succeed and fail as their annotations ask. */
export const kwokStagesFile = fileURLToPath(new URL('../kwok/stages.yaml', import.meta.url));
/** What `kubectl logs` shows for every simulated container (CRI log format, fixed timestamps). */
export const simulatedLogSource = fileURLToPath(
  new URL('../kwok/simulated-container-log.txt', import.meta.url),
);

/** The lines `kubectl logs` returns for every simulated container: each CRI line's message after "<time> <stream> F ". */
export function simulatedLogLines(): string[] {
  return readFileSync(simulatedLogSource, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => line.split(' ').slice(3).join(' '));
}

/**
 * kwok's second --config: one ClusterLogs (no selector: every pod, no containers: every
 * container) pointing at the sandbox's copy of the simulated log. Written at each `up`
 * because kwok needs an absolute path; the copy keeps a follow's file watch inside the
 * sandbox directory instead of the source tree.
 */
export function writeKwokLogsConfig(layout: SandboxLayout): void {
  copyFileSync(simulatedLogSource, layout.simulatedLogFile);
  writeFileSync(
    layout.kwokLogsConfig,
    stringify({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'ClusterLogs',
      metadata: { name: 'sandbox-simulated-log' },
      spec: { logs: [{ logsFile: layout.simulatedLogFile }] },
    }),
  );
}

/**
 * Start order: a process starts only after every process of an earlier tier is healthy.
 * `kuberay`: the simulated Ray dashboards and KubeRay's operators, after the cluster itself;
 * `jobset`: JobSet's managers (their CRD and webhooks are installed while the others start).
 */
export type Tier = 'storage' | 'apiserver' | 'controllers' | 'kuberay' | 'jobset';

export interface ProcessSpec {
  /** `etcd`, `redis`, or `<cluster>/<component>`. */
  name: string;
  tier: Tier;
  cluster?: string;
  binary: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** What `status` prints as the endpoint. */
  endpoint: string;
  healthy: () => Promise<boolean>;
  /** Run before each start of the process (e.g. the CRDs an operator needs). */
  beforeStart?: () => Promise<void>;
}

export interface ProcessContext {
  state: SandboxState;
  layout: SandboxLayout;
  pki: SandboxPki;
}

function binary(state: SandboxState, name: RequiredBinary): string {
  return join(state.binariesDir, name);
}

export function apiserverUrl(cluster: ClusterState): string {
  return `https://127.0.0.1:${cluster.apiserverPort}`;
}

/** Every process of the sandbox, derived only from the state, so `up` can restart any one of them. */
export function sandboxProcesses(ctx: ProcessContext): ProcessSpec[] {
  const { state, layout } = ctx;
  const etcdUrl = `http://127.0.0.1:${state.etcd.clientPort}`;
  const peerUrl = `http://127.0.0.1:${state.etcd.peerPort}`;
  const specs: ProcessSpec[] = [
    {
      name: 'etcd',
      tier: 'storage',
      binary: binary(state, 'etcd'),
      // One etcd for every cluster, each apiserver under its own --etcd-prefix.
      args: [
        '--name=sandbox',
        `--data-dir=${layout.etcdDataDir}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=sandbox=${peerUrl}`,
        // A throwaway store: durability costs fsyncs that slow every write in tests.
        '--unsafe-no-fsync',
        '--quota-backend-bytes=8589934592',
        '--log-level=warn',
      ],
      endpoint: etcdUrl,
      healthy: () => httpOk(`${etcdUrl}/health`),
    },
    {
      name: 'redis',
      tier: 'storage',
      binary: state.redisServer,
      // The placement queue only: Kubernetes is the source of truth, so no persistence.
      args: [
        '--bind',
        '127.0.0.1',
        '--port',
        String(state.redis.port),
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        layout.redisDataDir,
      ],
      endpoint: `redis://127.0.0.1:${state.redis.port}`,
      healthy: () => redisPing(state.redis.port),
    },
  ];
  for (const cluster of state.clusters) specs.push(...clusterProcesses(ctx, cluster, etcdUrl));
  specs.push(...kuberayProcesses(state, layout).map((spec) => ({ ...spec, tier: 'kuberay' as const })));
  specs.push(
    ...jobSetProcesses(state, layout, ctx.pki).map((spec) => ({ ...spec, tier: 'jobset' as const })),
  );
  return specs;
}

function clusterProcesses(ctx: ProcessContext, cluster: ClusterState, etcdUrl: string): ProcessSpec[] {
  const { layout, pki, state } = ctx;
  const ca = readFileSync(pki.caCert, 'utf8');
  const adminToken = readFileSync(layout.tokenFile('admin'), 'utf8').trim();
  const server = apiserverUrl(cluster);
  const componentKubeconfigArgs = (component: 'kube-controller-manager' | 'kube-scheduler') => {
    const kubeconfig = layout.componentKubeconfig(cluster.name, component);
    return [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
    ];
  };
  const componentHealth = (port: number) => () => httpOk(`https://127.0.0.1:${port}/healthz`);
  return [
    {
      name: `${cluster.name}/kube-apiserver`,
      tier: 'apiserver',
      cluster: cluster.name,
      binary: binary(state, 'kube-apiserver'),
      args: [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=/${cluster.name}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${cluster.apiserverPort}`,
        // RBAC is what makes the viewer and nobody identities mean something.
        '--authorization-mode=Node,RBAC',
        '--allow-privileged=true',
        // No kubernetes Service endpoints to reconcile: nothing in-cluster talks to it.
        '--endpoint-reconciler-type=none',
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range=10.0.0.0/24',
        `--token-auth-file=${layout.tokenAuthFile}`,
        // Pod logs: the apiserver calls the node's "kubelet", which is kwok's server at the
        // node's InternalIP (127.0.0.1) and daemonEndpoints port (kwok's --node-port). The
        // Hostname address (the node's name) would be tried first and does not resolve.
        '--kubelet-preferred-address-types=InternalIP',
        // kwok serves the sandbox's certificate there, so the connection is verified.
        `--kubelet-certificate-authority=${pki.caCert}`,
        '--profiling=false',
        // Namespace opt-in (the chart's MutatingAdmissionPolicy) on the management cluster:
        // beta in 1.34 and 1.35, and off unless both the gate and the API version are on.
        ...(cluster.role === 'management'
          ? [
              '--feature-gates=MutatingAdmissionPolicy=true',
              '--runtime-config=admissionregistration.k8s.io/v1beta1=true',
            ]
          : []),
      ],
      endpoint: server,
      healthy: () => httpOk(`${server}/readyz`, { ca, bearerToken: adminToken }),
    },
    {
      name: `${cluster.name}/kube-controller-manager`,
      tier: 'controllers',
      cluster: cluster.name,
      binary: binary(state, 'kube-controller-manager'),
      args: [
        ...componentKubeconfigArgs('kube-controller-manager'),
        '--bind-address=127.0.0.1',
        `--secure-port=${cluster.controllerManagerPort}`,
        `--root-ca-file=${pki.caCert}`,
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        '--leader-elect=false',
        '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
        // The defaults (20/30) throttle the Job controller when tests create many Jobs at once.
        '--kube-api-qps=200',
        '--kube-api-burst=400',
        '--concurrent-job-syncs=20',
        '--profiling=false',
      ],
      endpoint: `https://127.0.0.1:${cluster.controllerManagerPort}`,
      healthy: componentHealth(cluster.controllerManagerPort),
    },
    {
      name: `${cluster.name}/kube-scheduler`,
      tier: 'controllers',
      cluster: cluster.name,
      binary: binary(state, 'kube-scheduler'),
      // KWOK only runs pods that already have spec.nodeName: the real scheduler binds them.
      args: [
        ...componentKubeconfigArgs('kube-scheduler'),
        '--bind-address=127.0.0.1',
        `--secure-port=${cluster.schedulerPort}`,
        '--leader-elect=false',
        '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
        '--profiling=false',
      ],
      endpoint: `https://127.0.0.1:${cluster.schedulerPort}`,
      healthy: componentHealth(cluster.schedulerPort),
    },
    {
      name: `${cluster.name}/kwok`,
      tier: 'controllers',
      cluster: cluster.name,
      binary: binary(state, 'kwok'),
      args: [
        `--kubeconfig=${layout.componentKubeconfig(cluster.name, 'kwok')}`,
        '--manage-all-nodes=true',
        `--config=${kwokStagesFile}`,
        // ClusterLogs: every container's log is the simulated one (writeKwokLogsConfig).
        `--config=${layout.kwokLogsConfig}`,
        // The kubelet-like server (healthz, container logs). TLS and plain HTTP share the port.
        `--server-address=127.0.0.1:${cluster.kwokPort}`,
        // Written into each node's status.daemonEndpoints.kubeletEndpoint.Port (node-initialize
        // stage): where the apiserver connects for logs.
        `--node-port=${cluster.kwokPort}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        // Node leases like a real kubelet's.
        '--node-lease-duration-seconds=40',
        // The default /24 of pod IPs runs out when many finished pods are kept.
        '--cidr=10.128.0.0/16',
        // Nodes need an InternalIP, or pods get an empty hostIP; the apiserver reaches the
        // node's kwok server for pod logs at this address.
        '--node-ip=127.0.0.1',
      ],
      // KWOK also reads $KWOK_WORKDIR/kwok.yaml (default ~/.kwok): keep a user's own config out.
      env: {
        ...process.env,
        KWOK_WORKDIR: layout.kwokWorkDir(cluster.name),
        HOME: layout.kwokWorkDir(cluster.name),
      },
      endpoint: `http://127.0.0.1:${cluster.kwokPort}`,
      healthy: () => httpOk(`http://127.0.0.1:${cluster.kwokPort}/healthz`),
    },
  ];
}
