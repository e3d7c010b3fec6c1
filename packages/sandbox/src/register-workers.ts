import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { waitFor } from './health-probes.ts';
import type { Sandbox } from './sandbox.ts';
import { repositoryRoot } from './sandbox-layout.ts';

const crdDir = join(repositoryRoot, 'deploy', 'crds');
export const systemNamespace = 'jobrelay-system';

function isConflict(err: unknown): boolean {
  return (err as { code?: number }).code === 409;
}

/** Installs (or updates) jobrelay's CRDs from deploy/crds and waits until they are served. */
export async function installCrds(kubeConfig: KubeConfig): Promise<void> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const crds = readdirSync(crdDir)
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(join(crdDir, file), 'utf8')).map((doc) => doc.toJS()))
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

/**
 * Registers the sandbox's workers with jobrelay on the management cluster, as an admin
 * would: the CRDs, then per worker a kubeconfig Secret in jobrelay-system and a
 * WorkerCluster pointing at it. Idempotent.
 */
export async function registerSandboxWorkers(
  sandbox: Sandbox,
  workers = sandbox.workers.map((w) => w.name),
): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name));
  await installCrds(kubeConfig);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await core.createNamespace({ body: { metadata: { name: systemNamespace } } });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  for (const worker of workers) {
    const secretName = `${worker}-kubeconfig`;
    const secret = {
      metadata: {
        name: secretName,
        namespace: systemNamespace,
        labels: { 'jobrelay.dev/worker-cluster': worker },
      },
      type: 'Opaque',
      stringData: { kubeconfig: readFileSync(sandbox.kubeconfigPath(worker), 'utf8') },
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
