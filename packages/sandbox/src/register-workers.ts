import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  loadAllYaml,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { installApiAccess } from './api-access.ts';
import { applyObjects, kustomizationManifests, systemNamespace } from './apply-objects.ts';
import { kubeconfigYaml } from './credentials.ts';
import { waitFor } from './health-probes.ts';
import type { Sandbox } from './sandbox.ts';
import { repositoryRoot, serviceAccountIdentities } from './sandbox-layout.ts';

const crdDir = join(repositoryRoot, 'deploy', 'crds');
const workerManifestDir = join(repositoryRoot, 'deploy', 'worker');
const controllerManifestDir = join(repositoryRoot, 'deploy', 'controller');
/** The identity deploy/worker creates on each worker: registered kubeconfigs authenticate as it. */
export const dispatcherServiceAccount = 'jobrelay-dispatcher';
/** Sandbox worker tokens outlive any fleet (the apiservers set no maximum). */
const tokenLifetimeSeconds = 365 * 24 * 60 * 60;

function isConflict(err: unknown): boolean {
  return (err as { code?: number }).code === 409;
}

/** Installs (or updates) jobrelay's CRDs from deploy/crds and waits until they are served. */
export async function installCrds(kubeConfig: KubeConfig): Promise<void> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  // Typed objects (loadAllYaml), not plain YAML: the client serializes a body by its model's
  // property names, so plain `x-kubernetes-validations` (its JSON name) would be dropped silently,
  // and with it every CEL rule of the CRD.
  const crds = readdirSync(crdDir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap(
      (file) => loadAllYaml(readFileSync(join(crdDir, file), 'utf8')) as Array<KubernetesObject | null>,
    )
    .filter((doc): doc is V1CustomResourceDefinition => doc?.kind === 'CustomResourceDefinition');
  for (const crd of crds) {
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (err) {
      if (!isConflict(err)) throw err;
      const existing = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      await api.replaceCustomResourceDefinition({
        name: crd.metadata!.name!,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } },
      });
    }
    await waitFor(
      `CRD ${crd.metadata!.name} to be established`,
      async () => {
        const current = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
        return (
          current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false
        );
      },
      { timeoutMs: 30_000 },
    );
  }
}

function loadKubeConfig(path: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}

/** The objects `kubectl apply -k deploy/worker` applies, in order (its kustomization adds nothing else). */
export function workerManifests(): KubernetesObject[] {
  return kustomizationManifests(workerManifestDir);
}

/** deploy/controller's RBAC (its ServiceAccount, roles and bindings), as `kubectl apply -k deploy/controller` applies it. */
export function controllerAccessManifests(): KubernetesObject[] {
  return kustomizationManifests(controllerManifestDir).filter((o) =>
    ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind ?? ''),
  );
}

/**
 * A kubeconfig for a ServiceAccount of a sandbox cluster: a TokenRequest token (as
 * `kubectl create token` mints) and the cluster's CA, inline. Never the admin identity.
 */
export async function serviceAccountKubeconfig(
  sandbox: Sandbox,
  cluster: string,
  serviceAccount = dispatcherServiceAccount,
  namespace = systemNamespace,
): Promise<string> {
  const core = loadKubeConfig(sandbox.kubeconfigPath(cluster)).makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: tokenLifetimeSeconds } },
  });
  const token = request.status?.token;
  if (!token)
    throw new Error(`the TokenRequest for ${namespace}/${serviceAccount} on ${cluster} returned no token`);
  const server = sandbox.clusters.find((c) => c.name === cluster)?.server;
  if (!server) throw new Error(`no cluster ${cluster} in the sandbox`);
  return kubeconfigYaml({
    clusterName: cluster,
    server,
    caPem: sandbox.caPem,
    user: `${namespace}-${serviceAccount}`,
    token,
  });
}

/**
 * Registers the sandbox's workers with jobrelay on the management cluster, as an admin
 * would with the shipped manifests: the CRDs; on each worker deploy/worker (the
 * jobrelay-dispatcher ServiceAccount and its ClusterRole); then per worker a kubeconfig
 * for that ServiceAccount in a Secret in jobrelay-system and a WorkerCluster pointing at it.
 * So every test and the demo run with the permissions that ship, not an admin's. Also
 * installs the admin API's RBAC and the sandbox identities' bindings (installApiAccess).
 * Idempotent (each call mints fresh tokens).
 */
export async function registerSandboxWorkers(
  sandbox: Sandbox,
  workers = sandbox.workers.map((w) => w.name),
): Promise<void> {
  const kubeConfig = loadKubeConfig(sandbox.kubeconfigPath(sandbox.management.name));
  await installCrds(kubeConfig);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await core.createNamespace({ body: { metadata: { name: systemNamespace } } });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  await installApiAccess(sandbox);
  // The controller's and the API's identities exactly as deploy/ ships them; they run with
  // these ServiceAccounts' tokens, so a permission missing from deploy/ fails a test.
  await applyObjects(kubeConfig, controllerAccessManifests());
  for (const serviceAccount of serviceAccountIdentities) {
    const path = sandbox.serviceAccountKubeconfigPath(serviceAccount);
    writeFileSync(path, await serviceAccountKubeconfig(sandbox, sandbox.management.name, serviceAccount), {
      mode: 0o600,
    });
  }
  const manifests = workerManifests();
  for (const worker of workers) {
    await applyObjects(loadKubeConfig(sandbox.kubeconfigPath(worker)), manifests);
    const kubeconfig = await serviceAccountKubeconfig(sandbox, worker);
    const secretName = `${worker}-kubeconfig`;
    const secret = {
      metadata: {
        name: secretName,
        namespace: systemNamespace,
        labels: { 'jobrelay.dev/worker-cluster': worker },
      },
      type: 'Opaque',
      stringData: { kubeconfig },
    };
    try {
      await core.createNamespacedSecret({ namespace: systemNamespace, body: secret });
    } catch (err) {
      if (!isConflict(err)) throw err;
      await core.replaceNamespacedSecret({ name: secretName, namespace: systemNamespace, body: secret });
    }
    try {
      await custom.createClusterCustomObject({
        group: 'jobrelay.dev',
        version: 'v1alpha1',
        plural: 'workerclusters',
        body: {
          apiVersion: 'jobrelay.dev/v1alpha1',
          kind: 'WorkerCluster',
          metadata: { name: worker, labels: { 'jobrelay.dev/sandbox': 'true' } },
          spec: { kubeconfigSecretRef: { name: secretName } },
        },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}
