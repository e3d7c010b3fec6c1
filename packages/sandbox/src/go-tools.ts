// Go command-line tools the tests use on the project's own files, built once from the Go module
// proxy (scripts/build-go-tool.sh) into the cache, like the Kubernetes binaries: helm (lints,
// renders and installs deploy/helm/jobrelay) and promtool (checks and unit-tests the alerts).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobrelayCacheDir, withBuildLock } from './kube-binaries.ts';
import { pinnedVersions } from './pinned-versions.ts';

const buildScript = fileURLToPath(new URL('../scripts/build-go-tool.sh', import.meta.url));

interface GoTool {
  package: string;
  version: string;
  /** Set by the tool's own release build; without it `helm version` would say v4.3 (helm's Makefile sets it from the tag). */
  ldflags?: string;
  /** A ready binary instead of a build. */
  variable: string;
}

export const goTools = {
  helm: {
    package: 'helm.sh/helm/v4/cmd/helm',
    version: pinnedVersions.helm,
    ldflags: `-X helm.sh/helm/v4/internal/version.version=${pinnedVersions.helm}`,
    variable: 'JOBRELAY_HELM',
  },
  promtool: {
    package: 'github.com/prometheus/prometheus/cmd/promtool',
    version: pinnedVersions.prometheus,
    variable: 'JOBRELAY_PROMTOOL',
  },
} as const satisfies Record<string, GoTool>;

export type GoToolName = keyof typeof goTools;

/** The cache directory of a tool at its pin; the key covers the build script too. */
export function goToolCacheDir(name: GoToolName): string {
  const scriptHash = createHash('sha256').update(readFileSync(buildScript)).digest('hex').slice(0, 10);
  return join(jobrelayCacheDir(), `${name}-${goTools[name].version}-${scriptHash}`);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/**
 * The tool's binary: $JOBRELAY_HELM / $JOBRELAY_PROMTOOL if set, else the cache, built into
 * from the Go module proxy the first time (a few minutes). Concurrent callers wait for one build.
 */
export async function resolveGoTool(
  name: GoToolName,
  log: (line: string) => void = () => {},
): Promise<string> {
  const tool: GoTool = goTools[name];
  const explicit = process.env[tool.variable];
  if (explicit) {
    if (!isFile(explicit))
      throw new Error(
        `${tool.variable}=${explicit} is not a file: point it at a ${name} binary, or unset it to build ${name} ${tool.version}`,
      );
    return explicit;
  }
  const dir = goToolCacheDir(name);
  const binary = join(dir, name);
  if (isFile(binary)) return binary;
  await withBuildLock(`${dir}.build.lock`, async () => {
    if (isFile(binary)) return;
    log(`building ${name} ${tool.version} (${tool.package}) into ${dir}; once only, a few minutes`);
    await new Promise<void>((resolve, reject) => {
      const child = spawn('bash', [buildScript, dir], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...process.env,
          TOOL_PACKAGE: tool.package,
          TOOL_VERSION: tool.version,
          TOOL_LDFLAGS: tool.ldflags ?? '',
        },
      });
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve()
          : reject(new Error(`building ${name} failed (exit ${code}); the output above says why`)),
      );
    });
  });
  if (!isFile(binary)) throw new Error(`the ${name} build finished but ${binary} is missing`);
  return binary;
}
