import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, two levels above this package's src/. */
export const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Where a sandbox keeps its state: JOBRELAY_SANDBOX_DIR, else `.sandbox` at the repo root. */
export function defaultSandboxDir(): string {
  return resolve(process.env.JOBRELAY_SANDBOX_DIR ?? join(repositoryRoot, '.sandbox'));
}

export type Identity = 'admin' | 'viewer' | 'nobody';
export const userIdentities: readonly Identity[] = ['admin', 'viewer', 'nobody'];

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

  componentKubeconfig(cluster: string, component: ComponentIdentity): string {
    return join(this.componentsDir, `${cluster}-${component}.kubeconfig`);
  }

  kwokWorkDir(cluster: string): string {
    return join(this.componentsDir, `${cluster}-kwok`);
  }

  logFile(processName: string): string {
    return join(this.logsDir, `${processName.replaceAll('/', '-')}.log`);
  }
}
