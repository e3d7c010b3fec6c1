import { join } from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { applyObjects, kustomizationManifests, systemNamespace } from './apply-objects.ts';
import type { Sandbox } from './sandbox.ts';
import { repositoryRoot } from './sandbox-layout.ts';

const apiManifestDir = join(repositoryRoot, 'deploy', 'api');
/** The namespace the `team-a` identity may read in, and nowhere else. */
export const teamNamespace = 'team-a';

/** The objects `kubectl apply -k deploy/api` applies, in order (its kustomization adds nothing else). */
export function apiManifests(): KubernetesObject[] {
  return kustomizationManifests(apiManifestDir);
}

const rbacGroup = 'rbac.authorization.k8s.io';

function user(name: string) {
  return [{ apiGroup: rbacGroup, kind: 'User', name }];
}

function clusterRoleBinding(name: string, clusterRole: string, userName: string): KubernetesObject {
  return {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { 'jobrelay.dev/sandbox': 'true' } },
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: clusterRole },
    subjects: user(userName),
  } as KubernetesObject;
}

function roleBinding(
  name: string,
  namespace: string,
  role: { kind: 'Role' | 'ClusterRole'; name: string },
  userName: string,
): KubernetesObject {
  return {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'RoleBinding',
    metadata: { name, namespace, labels: { 'jobrelay.dev/sandbox': 'true' } },
    roleRef: { apiGroup: rbacGroup, ...role },
    subjects: user(userName),
  } as KubernetesObject;
}

/**
 * The sandbox identities' bindings to deploy/api's roles. They live here, not in deploy/api:
 * they bind the sandbox's static-token users, which a real cluster does not have. The API
 * process itself runs with its ServiceAccount's token (serviceAccountKubeconfig), bound by
 * deploy/api's own bindings.
 */
export function sandboxApiBindings(): KubernetesObject[] {
  return [
    clusterRoleBinding('sandbox-fleet-admin', 'jobrelay-admin', 'fleet-admin'),
    roleBinding(
      'sandbox-fleet-admin-credentials',
      systemNamespace,
      { kind: 'ClusterRole', name: 'jobrelay-admin-credentials' },
      'fleet-admin',
    ),
    // Next to the built-in `view` the viewer has since bootstrap (which has no WorkerClusters).
    clusterRoleBinding('sandbox-viewer-jobrelay', 'jobrelay-viewer', 'viewer'),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: teamNamespace } },
    // A RoleBinding: team-a reads Jobs, logs and Events of its namespace only. The role's
    // workerclusters rule grants nothing this way (WorkerClusters are cluster-scoped).
    roleBinding('sandbox-team-a', teamNamespace, { kind: 'ClusterRole', name: 'jobrelay-viewer' }, 'team-a'),
  ];
}

/**
 * Installs the admin API's RBAC on the management cluster as an admin would
 * (`kubectl apply -k deploy/api`, server-side) and binds the sandbox identities to it:
 * fleet-admin → jobrelay-admin (+ jobrelay-admin-credentials in jobrelay-system), viewer →
 * jobrelay-viewer, team-a → jobrelay-viewer in namespace team-a only. Expects jobrelay-system
 * to exist (registerSandboxWorkers creates it first). Idempotent.
 */
export async function installApiAccess(sandbox: Sandbox): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name));
  // The identity and its permissions only: the sandbox runs the API as a local process (the
  // demo, the tests), not as deploy/api's Deployment, whose image is not built here.
  const access = apiManifests().filter((o) => o.kind !== 'Deployment' && o.kind !== 'Service');
  await applyObjects(kubeConfig, [...access, ...sandboxApiBindings()]);
}

/**
 * The admin API's command line against a sandbox, as production runs it: its own identity (the
 * `jobrelay-api` ServiceAccount and deploy/api's RBAC) and the sandbox's Redis. Node and its
 * flags come first, from the caller.
 */
export function apiCommandLine(sandbox: Sandbox, address = '127.0.0.1:0'): string[] {
  return [
    join(repositoryRoot, 'apps/api/src/main.ts'),
    `--kubeconfig=${sandbox.serviceAccountKubeconfigPath('jobrelay-api')}`,
    `--redis-url=${sandbox.redisUrl}`,
    `--address=${address}`,
  ];
}
