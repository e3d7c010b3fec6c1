import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, two levels above this package's src/. */
export const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Where a sandbox keeps its state: JOBRELAY_SANDBOX_DIR, else `.sandbox` at the repo root. */
export function defaultSandboxDir(): string {
  return resolve(process.env.JOBRELAY_SANDBOX_DIR ?? join(repositoryRoot, '.sandbox'));
}

/**
 * Static-token users with a kubeconfig per cluster. admin/viewer/nobody: cluster-admin, the
 * built-in `view`, nothing. The rest are callers of the admin API (deploy/api), bound on the
 * management cluster by installApiAccess(): fleet-admin (jobrelay-admin) and team-a
 * (jobrelay-viewer in namespace team-a only).
 */
export type Identity = 'admin' | 'viewer' | 'nobody' | 'fleet-admin' | 'team-a';
export const userIdentities: readonly Identity[] = ['admin', 'viewer', 'nobody', 'fleet-admin', 'team-a'];

/**
 * jobrelay's own processes on the management cluster, as deploy/ creates them: ServiceAccounts
 * in jobrelay-system whose TokenRequest tokens the controller and the API run with, so that
 * the shipped RBAC is what every test and the demo exercise.
 */
export type ServiceAccountIdentity = 'jobrelay-controller' | 'jobrelay-api';
export const serviceAccountIdentities: readonly ServiceAccountIdentity[] = [
  'jobrelay-controller',
  'jobrelay-api',
];

/** Identities the sandbox's own components use; all cluster-admin, never handed to tests. */
export type ComponentIdentity = 'kube-controller-manager' | 'kube-scheduler' | 'kwok';

export class SandboxLayout {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  get stateFile(): string {
    return join(this.dir, 'state.json');
  }
  get pkiDir(): string {
    return join(this.dir, 'pki');
  }
  get tokensDir(): string {
    return join(this.dir, 'tokens');
  }
  get tokenAuthFile(): string {
    return join(this.dir, 'pki', 'tokens.csv');
  }
  get logsDir(): string {
    return join(this.dir, 'logs');
  }
  get etcdDataDir(): string {
    return join(this.dir, 'data', 'etcd');
  }
  get redisDataDir(): string {
    return join(this.dir, 'data', 'redis');
  }
  get componentsDir(): string {
    return join(this.dir, 'components');
  }

  tokenFile(identity: Identity | ComponentIdentity): string {
    return join(this.tokensDir, identity);
  }

  /** `.sandbox/<cluster>.kubeconfig` for admin, `.sandbox/<cluster>-<identity>.kubeconfig` otherwise. */
  kubeconfig(cluster: string, identity: Identity = 'admin'): string {
    return join(
      this.dir,
      identity === 'admin' ? `${cluster}.kubeconfig` : `${cluster}-${identity}.kubeconfig`,
    );
  }

  /** `.sandbox/<cluster>-sa-<name>.kubeconfig`: a ServiceAccount's TokenRequest token. */
  serviceAccountKubeconfig(cluster: string, serviceAccount: ServiceAccountIdentity): string {
    return join(this.dir, `${cluster}-sa-${serviceAccount}.kubeconfig`);
  }

  componentKubeconfig(cluster: string, component: ComponentIdentity): string {
    return join(this.componentsDir, `${cluster}-${component}.kubeconfig`);
  }

  /** kwok's second --config file: the ClusterLogs document pointing at simulatedLogFile. */
  get kwokLogsConfig(): string {
    return join(this.componentsDir, 'kwok-logs.yaml');
  }
  /** The log every simulated container shows, copied here from packages/sandbox/kwok. */
  get simulatedLogFile(): string {
    return join(this.componentsDir, 'simulated-container.log');
  }

  kwokWorkDir(cluster: string): string {
    return join(this.componentsDir, `${cluster}-kwok`);
  }

  logFile(processName: string): string {
    return join(this.logsDir, `${processName.replaceAll('/', '-')}.log`);
  }
}
