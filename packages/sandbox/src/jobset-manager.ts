// JobSet's real controller manager (sigs.k8s.io/jobset) in the sandbox: one process per
// cluster, out of cluster, with its admission webhooks served on loopback and registered
// with the cluster by URL. Built once from the Go module proxy (scripts/build-jobset-manager.sh).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { httpOk } from './health-probes.ts';
import { jobrelayCacheDir, withBuildLock } from './kube-binaries.ts';
import { type KubeTarget, serverSideApply, waitForServedResources } from './kube-http.ts';
import { jobSetModuleSum, pinnedVersions } from './pinned-versions.ts';
import type { SandboxPki } from './pki.ts';
import type { SandboxLayout } from './sandbox-layout.ts';
import type { ClusterState, SandboxState } from './sandbox-state.ts';

const buildScript = fileURLToPath(new URL('../scripts/build-jobset-manager.sh', import.meta.url));

/** What the build puts in `manifests/`: the CRD, the webhook configurations and the release's patches of them. */
export const jobSetManifestFiles = {
  crd: 'jobset.x-k8s.io_jobsets.yaml',
  webhooks: 'webhooks.yaml',
  patches: ['mutating-patch.yaml', 'validating-patch.yaml'],
} as const;

export interface JobSetManager {
  /** The jobset-manager binary. */
  manager: string;
  /** Holds jobSetManifestFiles. */
  manifestDir: string;
  version: string;
}

export class JobSetManagerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobSetManagerNotFoundError';
  }
}

/** The cache directory for the pinned version; the key covers the build script too. */
export function jobSetCacheDir(): string {
  const scriptHash = createHash('sha256').update(readFileSync(buildScript)).digest('hex').slice(0, 10);
  return join(jobrelayCacheDir(), `jobset-${pinnedVersions.jobset}-${scriptHash}`);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function hasManifests(dir: string): boolean {
  const { crd, webhooks, patches } = jobSetManifestFiles;
  return [crd, webhooks, ...patches].every((file) => isFile(join(dir, file)));
}

function cached(dir: string): JobSetManager | undefined {
  const manager = join(dir, 'bin', 'jobset-manager');
  const manifestDir = join(dir, 'manifests');
  return isFile(manager) && hasManifests(manifestDir)
    ? { manager, manifestDir, version: pinnedVersions.jobset }
    : undefined;
}

/**
 * The manager binary and its manifests: JOBRELAY_JOBSET_MANAGER (a ready binary; manifests in
 * `manifests/` next to it or one level up) if set, else the cache, built into from the Go
 * module proxy the first time (a few minutes). Concurrent callers wait for one build.
 */
export async function resolveJobSetManager(log: (line: string) => void = () => {}): Promise<JobSetManager> {
  const explicit = process.env.JOBRELAY_JOBSET_MANAGER;
  if (explicit) {
    if (!isFile(explicit)) {
      throw new JobSetManagerNotFoundError(
        `JOBRELAY_JOBSET_MANAGER=${explicit} is not a file: point it at a jobset-manager ${pinnedVersions.jobset} binary, or unset it to build one from the Go module proxy`,
      );
    }
    const manager = realpathSync(explicit);
    const candidates = [join(dirname(manager), 'manifests'), join(dirname(manager), '..', 'manifests')];
    const manifestDir = candidates.find(hasManifests);
    if (!manifestDir) {
      const { crd, webhooks, patches } = jobSetManifestFiles;
      throw new JobSetManagerNotFoundError(
        `no JobSet manifests (${[crd, webhooks, ...patches].join(', ')}) in ${candidates.join(' or ')}: ` +
          'run scripts/build-jobset-manager.sh once, or copy them there from the jobset module (config/components)',
      );
    }
    return { manager, manifestDir, version: 'unknown (JOBRELAY_JOBSET_MANAGER)' };
  }
  const dir = jobSetCacheDir();
  const ready = cached(dir);
  if (ready) return ready;
  await withBuildLock(`${dir}.build.lock`, async () => {
    if (cached(dir)) return; // another process built it meanwhile
    log(`building JobSet's manager ${pinnedVersions.jobset} into ${dir}; once only, a few minutes`);
    await runBuildScript(dir);
  });
  const built = cached(dir);
  if (!built) throw new Error(`the JobSet build finished but ${dir} lacks bin/jobset-manager or manifests/`);
  return built;
}

function runBuildScript(outDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, outDir], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, JOBSET_VERSION: pinnedVersions.jobset, JOBSET_MODULE_SUM: jobSetModuleSum },
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else if (code === 3)
        reject(
          new JobSetManagerNotFoundError('Go is not installed: see the message above for the alternatives'),
        );
      else reject(new Error(`building JobSet's manager failed (exit ${code}); the output above says why`));
    });
  });
}

/** The manager's configuration file (config.jobset.x-k8s.io/v1alpha1 Configuration) for one cluster. */
export function jobSetManagerConfig(cluster: ClusterState, certDir: string): string {
  return stringify({
    apiVersion: 'config.jobset.x-k8s.io/v1alpha1',
    kind: 'Configuration',
    // Its own certificate rotation writes a Secret and patches the webhooks' caBundle for an
    // in-cluster Service; out of cluster the sandbox's serving certificate (IP 127.0.0.1) is used.
    internalCertManagement: { enable: false },
    webhook: { host: '127.0.0.1', port: cluster.jobSetWebhookPort, certDir },
    metrics: { bindAddress: '0' },
    health: { healthProbeBindAddress: `127.0.0.1:${cluster.jobSetProbePort}` },
    // One manager per cluster and nothing to fail over to: no Lease traffic.
    leaderElection: { leaderElect: false },
  });
}

interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  webhooks: Array<{ clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }>;
}

/**
 * The release's webhook configurations as they run out of cluster: the kustomization's patches
 * applied (its pod webhooks only for pods labelled `jobset.sigs.k8s.io/jobset-name`, so no
 * other pod of the cluster depends on this process), named with the release's `jobset-`
 * prefix, each Service reference replaced by `https://127.0.0.1:<port><path>` and the sandbox CA.
 */
export function jobSetWebhookConfigurations(
  manifestDir: string,
  port: number,
  caPem: string,
): WebhookConfiguration[] {
  const configurations = parseAllDocuments(
    readFileSync(join(manifestDir, jobSetManifestFiles.webhooks), 'utf8'),
  )
    .map((doc) => doc.toJS() as WebhookConfiguration | null)
    .filter((doc): doc is WebhookConfiguration => doc !== null);
  const patchFor = {
    MutatingWebhookConfiguration: 'mutating-patch.yaml',
    ValidatingWebhookConfiguration: 'validating-patch.yaml',
  } as Record<string, string>;
  const caBundle = Buffer.from(caPem).toString('base64');
  return configurations.map((configuration) => {
    const patchFile = patchFor[configuration.kind];
    if (!patchFile) throw new Error(`unexpected ${configuration.kind} in ${jobSetManifestFiles.webhooks}`);
    const ops = parseAllDocuments(readFileSync(join(manifestDir, patchFile), 'utf8'))[0]!.toJS() as Array<{
      op: string;
      path: string;
      value: WebhookConfiguration['webhooks'][number];
    }>;
    const webhooks = [...configuration.webhooks];
    for (const { op, path, value } of ops) {
      const index = /^\/webhooks\/(\d+)$/.exec(path)?.[1];
      // The only kind of patch the release has; anything else is a new release to look at.
      if (op !== 'replace' || index === undefined || Number(index) >= webhooks.length) {
        throw new Error(
          `${patchFile}: cannot apply "${op} ${path}": only replace /webhooks/<n> is understood`,
        );
      }
      webhooks[Number(index)] = value;
    }
    return {
      ...configuration,
      metadata: { name: `jobset-${configuration.metadata.name}` },
      webhooks: webhooks.map((webhook) => {
        const path = webhook.clientConfig.service?.path;
        if (!path)
          throw new Error(`a JobSet webhook without a service path in ${jobSetManifestFiles.webhooks}`);
        return { ...webhook, clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle } };
      }),
    };
  });
}

function plural(kind: string): string {
  return kind === 'MutatingWebhookConfiguration'
    ? 'mutatingwebhookconfigurations'
    : 'validatingwebhookconfigurations';
}

/**
 * What a cluster needs before its manager starts: the CRD (server-side applied, waited for
 * until served: the manager exits on a kind it cannot watch), the certificate directory and
 * configuration file, and the webhook configurations pointing at the manager's port.
 */
export async function installJobSet(
  target: KubeTarget,
  jobset: Pick<JobSetManager, 'manifestDir'>,
  files: { certDir: string; servingCert: string; servingKey: string; configFile: string },
  cluster: ClusterState,
): Promise<void> {
  mkdirSync(files.certDir, { recursive: true });
  copyFileSync(files.servingCert, join(files.certDir, 'tls.crt'));
  copyFileSync(files.servingKey, join(files.certDir, 'tls.key'));
  writeFileSync(files.configFile, jobSetManagerConfig(cluster, files.certDir));
  await serverSideApply(
    target,
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io',
    readFileSync(join(jobset.manifestDir, jobSetManifestFiles.crd)),
  );
  for (const configuration of jobSetWebhookConfigurations(
    jobset.manifestDir,
    cluster.jobSetWebhookPort!,
    target.caPem,
  )) {
    await serverSideApply(
      target,
      `/apis/admissionregistration.k8s.io/v1/${plural(configuration.kind)}/${configuration.metadata.name}`,
      JSON.stringify(configuration),
    );
  }
  await waitForServedResources(target, 'jobset.x-k8s.io/v1alpha2', ['jobsets'], 'the JobSet CRD');
}

export interface JobSetProcessSpec {
  name: string;
  cluster: string;
  binary: string;
  args: string[];
  endpoint: string;
  healthy: () => Promise<boolean>;
  beforeStart: () => Promise<void>;
}

/** One `<cluster>/jobset-manager` per cluster; none for a sandbox state written before JobSet was part of it. */
export function jobSetProcesses(
  state: SandboxState,
  layout: SandboxLayout,
  pki: SandboxPki,
): JobSetProcessSpec[] {
  const { jobset } = state;
  if (!jobset) return [];
  const specs: JobSetProcessSpec[] = [];
  for (const cluster of state.clusters) {
    if (!cluster.jobSetWebhookPort || !cluster.jobSetProbePort) continue;
    const probeUrl = `http://127.0.0.1:${cluster.jobSetProbePort}`;
    const configFile = join(layout.componentsDir, `${cluster.name}-jobset-config.yaml`);
    specs.push({
      name: `${cluster.name}/jobset-manager`,
      cluster: cluster.name,
      binary: jobset.manager,
      args: [`--kubeconfig=${layout.kubeconfig(cluster.name)}`, `--config=${configFile}`],
      endpoint: probeUrl,
      healthy: () => httpOk(`${probeUrl}/readyz`),
      beforeStart: () =>
        installJobSet(
          {
            server: `https://127.0.0.1:${cluster.apiserverPort}`,
            caPem: readFileSync(pki.caCert, 'utf8'),
            token: readFileSync(layout.tokenFile('admin'), 'utf8').trim(),
          },
          jobset,
          {
            certDir: join(layout.componentsDir, `${cluster.name}-jobset-webhook-tls`),
            servingCert: pki.servingCert,
            servingKey: pki.servingKey,
            configFile,
          },
          cluster,
        ),
    });
  }
  return specs;
}
