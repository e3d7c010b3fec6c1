import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processExists } from './local-process.ts';
import { pinnedVersions, type RequiredBinary, requiredBinaries } from './pinned-versions.ts';

export type KubeBinaries = Record<RequiredBinary, string> & { dir: string };

const buildScript = fileURLToPath(new URL('../scripts/build-kube-binaries.sh', import.meta.url));

export class MissingBinariesError extends Error {
  constructor(dir: string, missing: string[], source: string) {
    super(
      `${source} points at ${dir}, which lacks ${missing.join(', ')}. ` +
        `Put all of ${requiredBinaries.join(', ')} there, or unset ${source} to build them from the Go module proxy.`,
    );
    this.name = 'MissingBinariesError';
  }
}

export function jobrelayCacheDir(): string {
  return process.env.JOBRELAY_CACHE_DIR ?? join(homedir(), '.cache', 'jobrelay');
}

/**
 * The cache directory for the pinned versions. The key also covers the build script, so a
 * change to how binaries are built rebuilds them too.
 */
export function binaryCacheDir(): string {
  const scriptHash = createHash('sha256').update(readFileSync(buildScript)).digest('hex').slice(0, 10);
  const { kubernetes, etcd, kwok } = pinnedVersions;
  return join(jobrelayCacheDir(), `kube-${kubernetes}-etcd-${etcd}-kwok-${kwok}-${scriptHash}`, 'bin');
}

function binariesIn(dir: string): { binaries: KubeBinaries; missing: string[] } {
  const binaries = { dir } as KubeBinaries;
  const missing: string[] = [];
  for (const name of requiredBinaries) {
    const path = join(dir, name);
    binaries[name] = path;
    if (!existsSync(path) || !statSync(path).isFile()) missing.push(name);
  }
  return { binaries, missing };
}

/**
 * Finds the control-plane binaries: a directory of ready binaries if one is given
 * (JOBRELAY_KUBE_BINARIES, else KUBEBUILDER_ASSETS), otherwise the cache, building into it
 * from the Go module proxy the first time. Concurrent callers wait for one build.
 */
export async function resolveKubeBinaries(log: (line: string) => void = () => {}): Promise<KubeBinaries> {
  for (const variable of ['JOBRELAY_KUBE_BINARIES', 'KUBEBUILDER_ASSETS'] as const) {
    const dir = process.env[variable];
    if (!dir) continue;
    const { binaries, missing } = binariesIn(dir);
    if (missing.length > 0) throw new MissingBinariesError(dir, missing, variable);
    return binaries;
  }
  const dir = binaryCacheDir();
  const cached = binariesIn(dir);
  if (cached.missing.length === 0) return cached.binaries;

  await withBuildLock(join(dir, '..', 'build.lock'), async () => {
    if (binariesIn(dir).missing.length === 0) return; // another process built them meanwhile
    log(`building ${requiredBinaries.join(', ')} (${describePins()}) into ${dir}; once only, a few minutes`);
    await runBuildScript(dir);
  });
  const built = binariesIn(dir);
  if (built.missing.length > 0) {
    throw new Error(`the build finished but ${built.missing.join(', ')} are missing from ${dir}`);
  }
  return built.binaries;
}

export function describePins(): string {
  const { kubernetes, etcd, kwok } = pinnedVersions;
  return `Kubernetes ${kubernetes}, etcd ${etcd}, KWOK ${kwok}`;
}

function runBuildScript(outDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, outDir], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        KUBERNETES_VERSION: pinnedVersions.kubernetes,
        ETCD_VERSION: pinnedVersions.etcd,
        KWOK_VERSION: pinnedVersions.kwok,
      },
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else if (code === 3)
        reject(new Error('Go is not installed: see the message above for the alternatives'));
      else
        reject(
          new Error(`building the Kubernetes binaries failed (exit ${code}); the output above says why`),
        );
    });
  });
}

/** A directory lock (mkdir is atomic); a lock left by a dead process is taken over. */
export async function withBuildLock(lockDir: string, body: () => Promise<void>): Promise<void> {
  mkdirSync(join(lockDir, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      const holder = Number(readFileSafe(join(lockDir, 'pid')));
      if (holder && !processExists(holder)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    writeFileSync(join(lockDir, 'pid'), String(process.pid));
    await body();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
