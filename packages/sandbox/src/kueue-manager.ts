// Kueue's real controller manager (sigs.k8s.io/kueue) on one sandbox worker, on demand: many
// real workers run Kueue for their own users, and jobrelay must treat that worker's admission
// as a second gate. Not part of every sandbox (only the tests that need it start it), out of
// cluster, with its admission webhooks served on loopback and registered by URL. Built once
// from the Go module proxy (scripts/build-kueue-manager.sh).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { freeLoopbackPorts } from './free-ports.ts';
import { httpOk, waitFor } from './health-probes.ts';
import { jobrelayCacheDir, withBuildLock } from './kube-binaries.ts';
import { type KubeTarget, kubeRequest, serverSideApply, waitForServedResources } from './kube-http.ts';
import { isOurProcess, startDetached, stopProcess } from './local-process.ts';
import { pinnedVersions } from './pinned-versions.ts';
import { ensurePki } from './pki.ts';
import { SandboxLayout } from './sandbox-layout.ts';
import { readState, writeState } from './sandbox-state.ts';

const buildScript = fileURLToPath(new URL('../scripts/build-kueue-manager.sh', import.meta.url));

/**
 * Where v0.17 reads its metrics certificate whenever internal cert management is off: a
 * constant in cmd/kueue/main.go, with no flag or configuration field to move it.
 */
export const kueueMetricsCertDir = '/etc/kueue/metrics/certs';

export interface KueueManager {
  /** The kueue binary. */
  manager: string;
  /** Every CRD of the release (kueue.x-k8s.io_*.yaml). */
  crdDir: string;
  /** Holds webhooks.yaml, the release's webhook configurations. */
  manifestDir: string;
  version: string;
}

export class KueueManagerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KueueManagerNotFoundError';
  }
}

/** The cache directory for the pinned version; the key covers the build script too. */
export function kueueCacheDir(): string {
  const scriptHash = createHash('sha256').update(readFileSync(buildScript)).digest('hex').slice(0, 10);
  return join(jobrelayCacheDir(), `kueue-${pinnedVersions.kueue}-${scriptHash}`);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function crdFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.yaml')) : [];
}

function found(manager: string, root: string, version: string): KueueManager | undefined {
  const crdDir = join(root, 'crds');
  const manifestDir = join(root, 'manifests');
  return isFile(manager) && crdFiles(crdDir).length > 0 && isFile(join(manifestDir, 'webhooks.yaml'))
    ? { manager, crdDir, manifestDir, version }
    : undefined;
}

/**
 * The kueue binary and its manifests: JOBRELAY_KUEUE_MANAGER (a ready binary, with `crds/` and
 * `manifests/` one level up, as the build lays them out) if set, else the cache, built into
 * from the Go module proxy the first time (about 5 minutes). Concurrent callers wait for one build.
 */
export async function resolveKueueManager(log: (line: string) => void = () => {}): Promise<KueueManager> {
  const explicit = process.env.JOBRELAY_KUEUE_MANAGER;
  if (explicit) {
    if (!isFile(explicit)) {
      throw new KueueManagerNotFoundError(
        `JOBRELAY_KUEUE_MANAGER=${explicit} is not a file: point it at a kueue ${pinnedVersions.kueue} binary, or unset it to build one from the Go module proxy`,
      );
    }
    const manager = realpathSync(explicit);
    const ready = found(manager, join(dirname(manager), '..'), 'unknown (JOBRELAY_KUEUE_MANAGER)');
    if (!ready) {
      throw new KueueManagerNotFoundError(
        `no Kueue manifests (crds/*.yaml, manifests/webhooks.yaml) beside ${dirname(manager)}: run scripts/build-kueue-manager.sh once`,
      );
    }
    return ready;
  }
  const dir = kueueCacheDir();
  const cached = () => found(join(dir, 'bin', 'kueue'), dir, pinnedVersions.kueue);
  const ready = cached();
  if (ready) return ready;
  await withBuildLock(`${dir}.build.lock`, async () => {
    if (cached()) return; // another process built it meanwhile
    log(`building Kueue's manager ${pinnedVersions.kueue} into ${dir}; once only, about 5 minutes`);
    await runBuildScript(dir);
  });
  const built = cached();
  if (!built) throw new Error(`the Kueue build finished but ${dir} lacks bin/kueue, crds/ or manifests/`);
  return built;
}

function runBuildScript(outDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, outDir], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, KUEUE_VERSION: pinnedVersions.kueue },
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else if (code === 3)
        reject(
          new KueueManagerNotFoundError('Go is not installed: see the message above for the alternatives'),
        );
      else reject(new Error(`building Kueue's manager failed (exit ${code}); the output above says why`));
    });
  });
}

export interface KueuePorts {
  webhook: number;
  health: number;
  pprof: number;
  visibility: number;
}

/** The manager's configuration (config.kueue.x-k8s.io/v1beta2 Configuration) for one worker. */
export function kueueManagerConfig(ports: KueuePorts, certDir: string): string {
  return stringify({
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    // Its own rotation writes a Secret and patches caBundles for an in-cluster Service; out of
    // cluster the sandbox's serving certificate (IP 127.0.0.1, signed by the sandbox CA) is used.
    internalCertManagement: { enable: false },
    webhook: { host: '127.0.0.1', port: ports.webhook, certDir },
    health: { healthProbeBindAddress: `127.0.0.1:${ports.health}` },
    // "0": no metrics server (it would still need the certificate it reads at start-up).
    metrics: { bindAddress: '0' },
    pprofBindAddress: `127.0.0.1:${ports.pprof}`,
    // One manager and nothing to fail over to: no Lease traffic.
    leaderElection: { leaderElect: false },
    // Only Jobs that name a LocalQueue are Kueue's, as on most shared clusters.
    manageJobsWithoutQueueName: false,
    integrations: { frameworks: ['batch/job'] },
    // The on-demand visibility API is an aggregated apiserver, which the sandbox does not serve.
    featureGates: { VisibilityOnDemand: false },
  });
}

interface WebhookRule {
  apiGroups?: string[];
}
interface Webhook {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  rules?: WebhookRule[];
  namespaceSelector?: object;
}
interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  webhooks: Webhook[];
}

/** API groups whose webhooks a batch-Job-only Kueue serves: the Job's and Kueue's own objects. */
const servedGroups = new Set(['batch', 'kueue.x-k8s.io']);

/**
 * The release's webhook configurations as they run out of cluster: only the webhooks of
 * batch Jobs and Kueue's own objects (a webhook of a framework it does not run answers 404,
 * and with failurePolicy Fail every such object would be refused), named with the release's
 * `kueue-` prefix, each Service reference replaced by `https://127.0.0.1:<port><path>` and the
 * sandbox CA. `namespaceSelector` narrows the namespaced ones (Jobs) to the namespaces Kueue is
 * meant for: the rest of the shared test fleet never depends on this process.
 */
export function kueueWebhookConfigurations(
  manifestDir: string,
  port: number,
  caPem: string,
  namespaceSelector: object,
): WebhookConfiguration[] {
  const caBundle = Buffer.from(caPem).toString('base64');
  return parseAllDocuments(readFileSync(join(manifestDir, 'webhooks.yaml'), 'utf8'))
    .map((doc) => doc.toJS() as WebhookConfiguration | null)
    .filter((doc): doc is WebhookConfiguration => doc !== null)
    .map((configuration) => ({
      ...configuration,
      metadata: { name: `kueue-${configuration.metadata.name}` },
      webhooks: configuration.webhooks
        .filter((webhook) =>
          (webhook.rules ?? []).some((rule) =>
            (rule.apiGroups ?? []).some((group) => servedGroups.has(group)),
          ),
        )
        .map((webhook) => {
          const path = webhook.clientConfig.service?.path;
          if (!path) throw new Error(`a Kueue webhook without a service path: ${webhook.name}`);
          const batch = (webhook.rules ?? []).some((rule) => rule.apiGroups?.includes('batch'));
          return {
            ...webhook,
            clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
            ...(batch ? { namespaceSelector } : {}),
          };
        }),
    }));
}

function webhookPath(configuration: WebhookConfiguration): string {
  const plural =
    configuration.kind === 'MutatingWebhookConfiguration'
      ? 'mutatingwebhookconfigurations'
      : 'validatingwebhookconfigurations';
  return `/apis/admissionregistration.k8s.io/v1/${plural}/${configuration.metadata.name}`;
}

/**
 * v0.17 reads `kueueMetricsCertDir` at start-up and exits without it. It needs any valid pair
 * (metrics are not served here): the sandbox's serving pair is copied there when that path is
 * writable and holds none; otherwise the error says what an administrator can do.
 */
function ensureMetricsCertificate(servingCert: string, servingKey: string): void {
  const crt = join(kueueMetricsCertDir, 'tls.crt');
  const key = join(kueueMetricsCertDir, 'tls.key');
  if (isFile(crt) && isFile(key)) return;
  try {
    mkdirSync(kueueMetricsCertDir, { recursive: true });
    accessSync(kueueMetricsCertDir, constants.W_OK);
  } catch (err) {
    throw new Error(
      `Kueue ${pinnedVersions.kueue} reads a metrics certificate from ${kueueMetricsCertDir} (a fixed path, no flag moves it), ` +
        `and this user cannot create it (${(err as Error).message}). Once, as root: ` +
        `mkdir -p ${kueueMetricsCertDir} && cp <any cert> ${crt} && cp <its key> ${key} && chown -R $USER ${dirname(dirname(kueueMetricsCertDir))}`,
    );
  }
  copyFileSync(servingCert, crt);
  copyFileSync(servingKey, key);
}

export interface WorkerKueueOptions {
  /** The sandbox directory. */
  dir: string;
  /** The worker to run Kueue on. */
  cluster: string;
  /** Kueue's Job webhooks apply only to namespaces with these labels. */
  namespaceLabels: Record<string, string>;
  log?: (line: string) => void;
}

export interface WorkerKueue {
  cluster: string;
  /** Its process name in the sandbox state (`<cluster>/kueue`): `sandbox down` stops it too. */
  processName: string;
  version: string;
  logFile: string;
  /** Removes its webhook configurations (nothing may depend on it once gone), then stops it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts Kueue on one worker of a running sandbox: its CRDs (server-side applied, waited for
 * until served), its configuration and certificates, the manager process, then its webhooks
 * once it is ready (registered earlier, they would refuse Jobs while it starts), and waits
 * until it answers /readyz. Builds the binary first if the cache has none.
 */
export async function startKueueOnWorker(options: WorkerKueueOptions): Promise<WorkerKueue> {
  const log = options.log ?? (() => {});
  const kueue = await resolveKueueManager(log);
  const layout = new SandboxLayout(options.dir);
  const state = readState(layout.stateFile);
  if (!state) throw new Error(`no sandbox at ${layout.dir}: start one with \`npm run sandbox -- up\``);
  const cluster = state.clusters.find((c) => c.name === options.cluster);
  if (cluster?.role !== 'worker') throw new Error(`the sandbox has no worker ${options.cluster}`);
  const processName = `${cluster.name}/kueue`;
  const recorded = state.processes[processName];
  if (recorded && isOurProcess(recorded.pid, recorded.binary)) {
    throw new Error(`${processName} is already running (pid ${recorded.pid}): stop it first`);
  }
  const pkiDir = layout.pkiDir;
  const target: KubeTarget = {
    server: `https://127.0.0.1:${cluster.apiserverPort}`,
    caPem: readFileSync(join(pkiDir, 'ca.crt'), 'utf8'),
    token: readFileSync(layout.tokenFile('admin'), 'utf8').trim(),
  };
  const { servingCert, servingKey } = ensurePki(pkiDir);
  ensureMetricsCertificate(servingCert, servingKey);
  const certDir = join(layout.componentsDir, `${cluster.name}-kueue-webhook-tls`);
  mkdirSync(certDir, { recursive: true });
  copyFileSync(servingCert, join(certDir, 'tls.crt'));
  copyFileSync(servingKey, join(certDir, 'tls.key'));
  const [webhook, health, pprof, visibility] = (await freeLoopbackPorts(4)) as [
    number,
    number,
    number,
    number,
  ];
  const configFile = join(layout.componentsDir, `${cluster.name}-kueue-config.yaml`);
  writeFileSync(configFile, kueueManagerConfig({ webhook, health, pprof, visibility }, certDir));

  for (const file of crdFiles(kueue.crdDir)) {
    const name = (
      parseAllDocuments(readFileSync(join(kueue.crdDir, file), 'utf8'))[0]!.toJS() as {
        metadata: { name: string };
      }
    ).metadata.name;
    await serverSideApply(
      target,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      readFileSync(join(kueue.crdDir, file)),
    );
  }
  await waitForServedResources(
    target,
    'kueue.x-k8s.io/v1beta2',
    ['clusterqueues', 'localqueues', 'resourceflavors', 'workloads'],
    "Kueue's CRDs",
  );

  const logFile = layout.logFile(processName);
  const pid = startDetached({
    binary: kueue.manager,
    args: [
      `--kubeconfig=${layout.kubeconfig(cluster.name)}`,
      `--config=${configFile}`,
      `--visibility-server-port=${visibility}`,
    ],
    logFile,
  });
  const current = readState(layout.stateFile) ?? state;
  current.processes[processName] = { pid, binary: kueue.manager };
  writeState(layout.stateFile, current);

  const configurations = kueueWebhookConfigurations(kueue.manifestDir, webhook, target.caPem, {
    matchLabels: options.namespaceLabels,
  });
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      for (const configuration of configurations) {
        const removed = await kubeRequest(target, 'DELETE', webhookPath(configuration));
        if (removed.status !== 200 && removed.status !== 404) {
          throw new Error(`deleting ${configuration.metadata.name}: HTTP ${removed.status} ${removed.body}`);
        }
      }
      await stopProcess(pid, kueue.manager);
    })();
    return stopped;
  };
  try {
    await waitFor(
      `${processName} to be ready (log: ${logFile})`,
      async () => {
        if (!isOurProcess(pid, kueue.manager)) throw new Error(`${processName} exited; see ${logFile}`);
        return httpOk(`http://127.0.0.1:${health}/readyz`);
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    for (const configuration of configurations) {
      await serverSideApply(target, webhookPath(configuration), JSON.stringify(configuration));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log(`${processName} ${kueue.version} ready (webhooks on 127.0.0.1:${webhook})`);
  return { cluster: cluster.name, processName, version: kueue.version, logFile, stop };
}
