// KubeRay's real ray-operator in the sandbox: one process per cluster, out of cluster, its
// Ray dashboard requests answered by the simulated dashboards (ray-dashboard.ts) through
// HTTP_PROXY. Built once from the Go module proxy (scripts/build-kuberay-operator.sh).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpOk } from './health-probes.ts';
import { jobrelayCacheDir, withBuildLock } from './kube-binaries.ts';
import { type KubeTarget, kubeGetJson, serverSideApply, waitForServedResources } from './kube-http.ts';
import { isOurProcess } from './local-process.ts';
import { pinnedVersions } from './pinned-versions.ts';
import type { SandboxLayout } from './sandbox-layout.ts';
import type { ClusterState, SandboxState } from './sandbox-state.ts';

const buildScript = fileURLToPath(new URL('../scripts/build-kuberay-operator.sh', import.meta.url));
/** The simulated dashboards' process entry point (run by Node, which strips the types). */
export const rayDashboardMain = fileURLToPath(new URL('./ray-dashboard-main.ts', import.meta.url));

/** The CRDs the operator needs: it runs RayCluster, RayJob and RayService controllers, always. */
export const kuberayCrdFiles = [
  'ray.io_rayclusters.yaml',
  'ray.io_rayjobs.yaml',
  'ray.io_rayservices.yaml',
] as const;

/**
 * `spec.managedBy` values the RayCluster and RayJob CRDs accept (a CEL rule refuses any other
 * at create). The operator reconciles only objects without managedBy or with its own value.
 */
export const kuberayManagedBy = {
  operator: 'ray.io/kuberay-operator',
  multiKueue: 'kueue.x-k8s.io/multikueue',
} as const;

export interface KuberayOperator {
  /** The ray-operator binary. */
  operator: string;
  /** Holds kuberayCrdFiles. */
  crdDir: string;
  version: string;
}

export class KuberayOperatorNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KuberayOperatorNotFoundError';
  }
}

/** The cache directory for the pinned version; the key covers the build script too. */
export function kuberayCacheDir(): string {
  const scriptHash = createHash('sha256').update(readFileSync(buildScript)).digest('hex').slice(0, 10);
  return join(jobrelayCacheDir(), `kuberay-operator-${pinnedVersions.kuberay}-${scriptHash}`);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function hasCrds(dir: string): boolean {
  return kuberayCrdFiles.every((file) => isFile(join(dir, file)));
}

function cached(dir: string): KuberayOperator | undefined {
  const operator = join(dir, 'bin', 'ray-operator');
  const crdDir = join(dir, 'crds');
  return isFile(operator) && hasCrds(crdDir)
    ? { operator, crdDir, version: pinnedVersions.kuberay }
    : undefined;
}

/**
 * The operator binary and its CRDs: JOBRELAY_KUBERAY_OPERATOR (a ready binary; its CRDs in
 * JOBRELAY_KUBERAY_CRDS, else `crds/` next to it or one level up) if set, else the cache,
 * built into from the Go module proxy the first time (about 80 s). Concurrent callers wait
 * for one build.
 */
export async function resolveKuberayOperator(
  log: (line: string) => void = () => {},
): Promise<KuberayOperator> {
  const explicit = process.env.JOBRELAY_KUBERAY_OPERATOR;
  if (explicit) {
    if (!isFile(explicit)) {
      throw new KuberayOperatorNotFoundError(
        `JOBRELAY_KUBERAY_OPERATOR=${explicit} is not a file: point it at a ray-operator ${pinnedVersions.kuberay} binary, or unset it to build one from the Go module proxy`,
      );
    }
    const operator = realpathSync(explicit);
    const candidates = [
      process.env.JOBRELAY_KUBERAY_CRDS,
      join(dirname(operator), 'crds'),
      join(dirname(operator), '..', 'crds'),
    ].filter((dir): dir is string => Boolean(dir));
    const crdDir = candidates.find(hasCrds);
    if (!crdDir) {
      throw new KuberayOperatorNotFoundError(
        `no KubeRay CRDs (${kuberayCrdFiles.join(', ')}) in ${candidates.join(' or ')}: ` +
          'copy them from the ray-operator module (config/crd/bases) there, or set JOBRELAY_KUBERAY_CRDS',
      );
    }
    return { operator, crdDir, version: 'unknown (JOBRELAY_KUBERAY_OPERATOR)' };
  }
  const dir = kuberayCacheDir();
  const ready = cached(dir);
  if (ready) return ready;
  await withBuildLock(`${dir}.build.lock`, async () => {
    if (cached(dir)) return; // another process built it meanwhile
    log(`building KubeRay ray-operator ${pinnedVersions.kuberay} into ${dir}; once only, about 80 s`);
    await runBuildScript(dir);
  });
  const built = cached(dir);
  if (!built) throw new Error(`the KubeRay build finished but ${dir} lacks bin/ray-operator or crds/`);
  return built;
}

function runBuildScript(outDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, outDir], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, KUBERAY_VERSION: pinnedVersions.kuberay },
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else if (code === 3)
        reject(
          new KuberayOperatorNotFoundError('Go is not installed: see the message above for the alternatives'),
        );
      else
        reject(new Error(`building KubeRay's ray-operator failed (exit ${code}); the output above says why`));
    });
  });
}

/**
 * Server-side applies KubeRay's CRDs (`kubectl apply --server-side`: they are too large for
 * the last-applied annotation) and waits until each is Established: an operator started
 * before that logs "no matches for kind" and, for RayService, exits after two minutes.
 * The YAML files are sent as they are (see kubeRequest for why not through client-node).
 * On a fresh cluster of a busy 2-core machine an apiserver takes 10-20 s to establish them.
 */
export async function installKuberayCrds(target: KubeTarget, crdDir: string): Promise<void> {
  const crds = kuberayCrdFiles.map((file) => {
    const plural = file.replace(/^ray\.io_/, '').replace(/\.yaml$/, '');
    return { file, plural, path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.ray.io` };
  });
  await Promise.all(
    crds.map(({ file, path }) => serverSideApply(target, path, readFileSync(join(crdDir, file)))),
  );
  await waitForServedResources(
    target,
    'ray.io/v1',
    crds.map(({ plural }) => plural),
    "KubeRay's CRDs",
  );
  for (const { path } of crds) {
    const crd = await kubeGetJson<{ status?: { conditions?: { type: string; status: string }[] } }>(
      target,
      path,
    );
    if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
      throw new Error(`${path} is served on ${target.server} but not Established`);
    }
  }
}

/** HTTP_PROXY for a cluster's operator: the simulated dashboards, the cluster named as the proxy user. */
export function rayDashboardProxyUrl(port: number, cluster: string): string {
  return `http://${encodeURIComponent(cluster)}@127.0.0.1:${port}`;
}

/** Variables that would send the operator's requests elsewhere (a machine's own proxy). */
const proxyVariables = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY'];

/**
 * The operator's environment: the parent's, without any proxy setting, plus HTTP_PROXY to
 * the simulated dashboards. Dashboard URLs are plain http to *.svc.cluster.local; the
 * apiserver is https on 127.0.0.1, which NO_PROXY (and Go's rule for loopback) keeps direct.
 */
export function rayOperatorEnv(
  base: NodeJS.ProcessEnv,
  dashboardPort: number,
  cluster: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (!proxyVariables.includes(key.toUpperCase())) env[key] = value;
  }
  env.HTTP_PROXY = rayDashboardProxyUrl(dashboardPort, cluster);
  env.NO_PROXY = '127.0.0.1,localhost';
  return env;
}

/** ray-operator's flags for one cluster. */
export function rayOperatorArgs(kubeconfig: string, cluster: ClusterState): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--metrics-addr=127.0.0.1:${cluster.rayOperatorMetricsPort}`,
    `--health-probe-bind-address=127.0.0.1:${cluster.rayOperatorProbePort}`,
    // One operator per cluster and nothing to fail over to: no Lease traffic.
    '--enable-leader-election=false',
    // The default, said out loud: one reconcile at a time per controller (2-core machines).
    '--reconcile-concurrency=1',
    // Readable logs (the default is JSON).
    '--log-stdout-encoder=console',
  ];
}

export const rayDashboardProcess = 'ray-dashboard';

export interface KuberayProcessSpec {
  name: string;
  cluster?: string;
  binary: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  endpoint: string;
  healthy: () => Promise<boolean>;
  beforeStart?: () => Promise<void>;
}

/**
 * The simulated dashboards (process `ray-dashboard`) and one `<cluster>/ray-operator` per
 * cluster. Empty for a sandbox state written before KubeRay was part of the sandbox.
 */
export function kuberayProcesses(state: SandboxState, layout: SandboxLayout): KuberayProcessSpec[] {
  const { kuberay, rayDashboard } = state;
  if (!kuberay || !rayDashboard) return [];
  const dashboardUrl = `http://127.0.0.1:${rayDashboard.port}`;
  // The Node that started it, while it runs: `up`, `status` and tests may run under another
  // Node (the machine's, or the one scripts/with-node.sh caches), and must still recognise it.
  const recorded = state.processes[rayDashboardProcess];
  const node = recorded && isOurProcess(recorded.pid, recorded.binary) ? recorded.binary : process.execPath;
  const specs: KuberayProcessSpec[] = [
    {
      name: rayDashboardProcess,
      binary: node,
      // realpath: Node refuses to strip types of a file reached through node_modules.
      args: [
        realpathSync(rayDashboardMain),
        '--port',
        String(rayDashboard.port),
        '--sandbox-dir',
        layout.dir,
      ],
      env: { ...process.env },
      endpoint: `${dashboardUrl} (HTTP proxy)`,
      healthy: () => httpOk(`${dashboardUrl}/healthz`),
    },
  ];
  for (const cluster of state.clusters) {
    if (!cluster.rayOperatorMetricsPort || !cluster.rayOperatorProbePort) continue;
    const kubeconfig = layout.kubeconfig(cluster.name);
    const probeUrl = `http://127.0.0.1:${cluster.rayOperatorProbePort}`;
    specs.push({
      name: `${cluster.name}/ray-operator`,
      cluster: cluster.name,
      binary: kuberay.operator,
      args: rayOperatorArgs(kubeconfig, cluster),
      env: rayOperatorEnv(process.env, rayDashboard.port, cluster.name),
      endpoint: probeUrl,
      healthy: () => httpOk(`${probeUrl}/readyz`),
      beforeStart: () =>
        installKuberayCrds(
          {
            server: `https://127.0.0.1:${cluster.apiserverPort}`,
            caPem: readFileSync(join(layout.pkiDir, 'ca.crt'), 'utf8'),
            token: readFileSync(layout.tokenFile('admin'), 'utf8').trim(),
          },
          kuberay.crdDir,
        ),
    });
  }
  return specs;
}
