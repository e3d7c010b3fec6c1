import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  kuberayCacheDir,
  kuberayCrdFiles,
  kuberayProcesses,
  rayDashboardProxyUrl,
  rayOperatorArgs,
  rayOperatorEnv,
  resolveKuberayOperator,
} from '../src/kuberay-operator.ts';
import { pinnedVersions } from '../src/pinned-versions.ts';
import { rayJobSimulation } from '../src/ray-dashboard.ts';
import { sandboxRayCluster, sandboxRayJob } from '../src/ray-manifests.ts';
import { SandboxLayout } from '../src/sandbox-layout.ts';
import { planState } from '../src/sandbox-state.ts';

const kuberay = { operator: '/opt/kuberay/bin/ray-operator', crdDir: '/opt/kuberay/crds', version: 'v1.5.0' };
const jobset = {
  manager: '/opt/jobset/bin/jobset-manager',
  manifestDir: '/opt/jobset/manifests',
  version: 'v0.9.1',
};

describe("a cluster's ray-operator", () => {
  it('runs out of cluster on its own loopback ports, without leader election', async () => {
    const state = await planState(undefined, {
      workers: 1,
      binariesDir: '/b',
      redisServer: '/r',
      kuberay,
      jobset,
    });
    const worker = state.clusters[1]!;
    expect(rayOperatorArgs('/s/worker-1.kubeconfig', worker)).toEqual([
      '--kubeconfig=/s/worker-1.kubeconfig',
      `--metrics-addr=127.0.0.1:${worker.rayOperatorMetricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${worker.rayOperatorProbePort}`,
      '--enable-leader-election=false',
      '--reconcile-concurrency=1',
      '--log-stdout-encoder=console',
    ]);
  });

  it('sends its dashboard requests to the simulated dashboards, naming its cluster, and nothing else through a proxy', () => {
    const env = rayOperatorEnv(
      { PATH: '/bin', https_proxy: 'http://corp:3128', HTTP_PROXY: 'http://corp:3128', no_proxy: '.corp' },
      4321,
      'worker-2',
    );
    expect(env).toEqual({
      PATH: '/bin',
      HTTP_PROXY: 'http://worker-2@127.0.0.1:4321',
      NO_PROXY: '127.0.0.1,localhost',
    });
    expect(new URL(rayDashboardProxyUrl(4321, 'worker-2')).username).toBe('worker-2');
  });

  it('is one process per cluster, after the simulated dashboards; none for a sandbox that predates KubeRay', async () => {
    const state = await planState(undefined, {
      workers: 2,
      binariesDir: '/b',
      redisServer: '/r',
      kuberay,
      jobset,
    });
    const layout = new SandboxLayout('/tmp/sandbox-x');
    const specs = kuberayProcesses(state, layout);
    expect(specs.map((s) => s.name)).toEqual([
      'ray-dashboard',
      'management/ray-operator',
      'worker-1/ray-operator',
      'worker-2/ray-operator',
    ]);
    expect(specs[0]!.args).toEqual(
      expect.arrayContaining(['--port', String(state.rayDashboard!.port), '--sandbox-dir', layout.dir]),
    );
    expect(specs[1]!.binary).toBe(kuberay.operator);
    expect(specs[1]!.args[0]).toBe(`--kubeconfig=${layout.kubeconfig('management')}`);
    expect(specs.every((s) => s.name === 'ray-dashboard' || s.beforeStart)).toBe(true);
    delete state.kuberay;
    expect(kuberayProcesses(state, layout)).toEqual([]);
  });

  it('recognises a running ray-dashboard by the program recorded for it, whichever Node runs `up` now', async () => {
    const state = await planState(undefined, {
      workers: 1,
      binariesDir: '/b',
      redisServer: '/r',
      kuberay,
      jobset,
    });
    const layout = new SandboxLayout('/tmp/sandbox-x');
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const sleepBinary = realpathSync(
        execFileSync('bash', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim(),
      );
      state.processes['ray-dashboard'] = { pid: other.pid!, binary: sleepBinary };
      expect(kuberayProcesses(state, layout)[0]!.binary).toBe(sleepBinary);
      state.processes['ray-dashboard'] = { pid: other.pid!, binary: '/not/what/runs' };
      expect(kuberayProcesses(state, layout)[0]!.binary).toBe(process.execPath);
    } finally {
      other.kill();
    }
  });
});

describe('resolveKuberayOperator', () => {
  let dir: string;
  const saved = { ...process.env };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'jobrelay-kuberay-'));
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes JOBRELAY_KUBERAY_OPERATOR and the CRDs in crds/ next to it', async () => {
    mkdirSync(join(dir, 'crds'));
    writeFileSync(join(dir, 'ray-operator'), '');
    for (const file of kuberayCrdFiles)
      writeFileSync(join(dir, 'crds', file), 'kind: CustomResourceDefinition\n');
    process.env.JOBRELAY_KUBERAY_OPERATOR = join(dir, 'ray-operator');
    const resolved = await resolveKuberayOperator();
    expect(resolved.operator).toBe(join(dir, 'ray-operator'));
    expect(resolved.crdDir).toBe(join(dir, 'crds'));
  });

  it('says where it looked when the CRDs are missing', async () => {
    writeFileSync(join(dir, 'ray-operator'), '');
    process.env.JOBRELAY_KUBERAY_OPERATOR = join(dir, 'ray-operator');
    await expect(resolveKuberayOperator()).rejects.toThrow(/no KubeRay CRDs .*JOBRELAY_KUBERAY_CRDS/);
  });

  it('refuses a JOBRELAY_KUBERAY_OPERATOR that is not a file', async () => {
    process.env.JOBRELAY_KUBERAY_OPERATOR = join(dir, 'missing');
    await expect(resolveKuberayOperator()).rejects.toThrow(/is not a file/);
  });

  it('caches by version and build script, under JOBRELAY_CACHE_DIR', () => {
    process.env.JOBRELAY_CACHE_DIR = dir;
    expect(kuberayCacheDir()).toMatch(
      new RegExp(`^${dir}/kuberay-operator-${pinnedVersions.kuberay}-[0-9a-f]{10}$`),
    );
  });
});

describe('sandbox Ray manifests', () => {
  it('write a RayCluster with a head and a worker group of small requests', () => {
    const rc = sandboxRayCluster({ name: 'rc', namespace: 'ns', workerReplicas: 2 });
    expect(rc).toMatchObject({
      apiVersion: 'ray.io/v1',
      kind: 'RayCluster',
      metadata: { name: 'rc', namespace: 'ns' },
    });
    expect(rc.spec).toMatchObject({
      rayVersion: expect.any(String),
      workerGroupSpecs: [{ groupName: 'workers', replicas: 2 }],
    });
    expect(rc.spec.managedBy).toBeUndefined();
  });

  it("write a RayJob's simulated behaviour as its metadata", () => {
    const rj = sandboxRayJob({ name: 'rj', submissionMode: 'HTTPMode', runSeconds: 2, exitCode: 1 });
    expect(rj.spec).toMatchObject({
      submissionMode: 'HTTPMode',
      metadata: { [rayJobSimulation.runSecondsKey]: '2', [rayJobSimulation.exitCodeKey]: '1' },
      rayClusterSpec: { workerGroupSpecs: [] },
    });
    expect(sandboxRayJob({ name: 'plain' }).spec.metadata).toBeUndefined();
  });
});
