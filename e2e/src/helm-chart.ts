// What both tests of deploy/helm/jobrelay use: the chart's folder, and a real helm (built from
// the Go module proxy once, then cached; pinnedVersions.helm) run in a scratch directory of the
// test file's own. e2e/offline/helm-chart.test.ts lints and renders the chart without a
// cluster; e2e/test/helm-chart.test.ts installs it into the sandbox's management cluster.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryRoot, resolveGoTool } from '@jobrelay/sandbox';
import { afterAll, beforeAll } from 'vitest';

export const chartDir = join(repositoryRoot, 'deploy/helm/jobrelay');

export interface HelmRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface FileHelm {
  /**
   * The test file's scratch directory: helm's HOME and caches, and the files its tests write
   * (settings, kubeconfigs). Removed by the file's last afterAll.
   */
  scratch: string;
  /** helm with `args`, against `kubeconfig` if given; its HOME and caches in `scratch`. */
  runHelm(args: string[], kubeconfig?: string): HelmRun;
}

/**
 * helm for the calling test file; call it at the file's top level. Makes the file's scratch
 * directory now, finds (or builds) helm in a beforeAll, and removes the directory in an afterAll
 * of the file, which runs after every describe's own afterAll (an installed release's uninstall,
 * whose HOME is here, and its controller, reading its settings and kubeconfig here, are done).
 */
export function helmForThisFile(): FileHelm {
  const scratch = mkdtempSync(join(tmpdir(), 'jobrelay-helm-'));
  let helm: string;

  beforeAll(async () => {
    helm = await resolveGoTool('helm', (line) => console.log(`[helm] ${line}`));
  }, 30 * 60_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  return {
    scratch,
    runHelm(args, kubeconfig) {
      const result = spawnSync(helm, args, {
        encoding: 'utf8',
        // helm keeps caches and repositories under these; none of them belong in the user's home.
        env: {
          PATH: process.env.PATH,
          // Its kube client's discovery cache ($HOME/.kube/cache) too.
          HOME: scratch,
          HELM_CACHE_HOME: join(scratch, 'cache'),
          HELM_CONFIG_HOME: join(scratch, 'config'),
          HELM_DATA_HOME: join(scratch, 'data'),
          ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
        },
      });
      return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
    },
  };
}
