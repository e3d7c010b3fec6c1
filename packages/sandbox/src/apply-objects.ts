import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';

/** Where jobrelay keeps its own objects (worker kubeconfig Secrets, the API's ServiceAccount). */
export const systemNamespace = 'jobrelay-system';

/** Server-side applies objects as `kubectl apply --server-side` does: idempotent, our fields win. */
export async function applyObjects(kubeConfig: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  for (const object of objects) {
    await api.patch(object, undefined, undefined, 'jobrelay-sandbox', true, PatchStrategy.ServerSideApply);
  }
}

/**
 * The objects `kubectl apply -k <dir>` applies, in order, for a kustomization that only lists
 * local resource files (as deploy/'s do); a resource that is a directory (../crds) is skipped:
 * its objects are installed on their own (installCrds).
 */
export function kustomizationManifests(dir: string): KubernetesObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources?: string[];
  };
  return (kustomization.resources ?? [])
    .filter((file) => file.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
        .map((doc) => doc.toJS() as KubernetesObject | null)
        .filter((object): object is KubernetesObject => Boolean(object?.kind)),
    );
}
