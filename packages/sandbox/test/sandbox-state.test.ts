import { describe, expect, it } from 'vitest';
import { planState, workerNodeShapes } from '../src/sandbox-state.ts';

const options = {
  binariesDir: '/opt/kube/bin',
  redisServer: '/usr/bin/redis-server',
  kuberay: { operator: '/opt/kuberay/bin/ray-operator', crdDir: '/opt/kuberay/crds', version: 'v1.5.0' },
  jobset: {
    manager: '/opt/jobset/bin/jobset-manager',
    manifestDir: '/opt/jobset/manifests',
    version: 'v0.9.1',
  },
};

function allPorts(state: Awaited<ReturnType<typeof planState>>): number[] {
  return [
    state.etcd.clientPort,
    state.etcd.peerPort,
    state.redis.port,
    state.rayDashboard!.port,
    ...state.clusters.flatMap((c) => [
      c.apiserverPort,
      c.controllerManagerPort,
      c.schedulerPort,
      c.kwokPort,
      c.rayOperatorMetricsPort!,
      c.rayOperatorProbePort!,
      c.jobSetWebhookPort!,
      c.jobSetProbePort!,
    ]),
  ];
}

describe('planState', () => {
  it('plans one management cluster and the asked number of workers, named worker-1..N', async () => {
    const state = await planState(undefined, { ...options, workers: 3 });
    expect(state.clusters.map((c) => [c.name, c.role])).toEqual([
      ['management', 'management'],
      ['worker-1', 'worker'],
      ['worker-2', 'worker'],
      ['worker-3', 'worker'],
    ]);
  });

  it('gives every process its own port', async () => {
    const ports = allPorts(await planState(undefined, { ...options, workers: 4 }));
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('sizes workers differently, so placement has capacity to weigh', async () => {
    const state = await planState(undefined, { ...options, workers: 3 });
    const workers = state.clusters.filter((c) => c.role === 'worker');
    expect(workers.map((w) => w.nodes)).toEqual(workerNodeShapes.slice(0, 3));
    expect(new Set(workers.map((w) => `${w.nodes.count}x${w.nodes.cpu}`)).size).toBe(3);
  });

  it('extends a running sandbox without moving what runs, and never shrinks it', async () => {
    const first = await planState(undefined, { ...options, workers: 1 });
    const snapshot = structuredClone(first);
    const grown = await planState(first, { ...options, workers: 2 });
    expect(grown.clusters.slice(0, 2)).toEqual(snapshot.clusters);
    expect(grown.etcd).toEqual(snapshot.etcd);
    expect(grown.clusters).toHaveLength(3);
    expect(new Set(allPorts(grown)).size).toBe(allPorts(grown).length);
    const same = await planState(grown, { ...options, workers: 1 });
    expect(same.clusters).toHaveLength(3);
  });

  it('gives a sandbox planned before KubeRay its ports, moving nothing that runs', async () => {
    const old = await planState(undefined, { ...options, workers: 2 });
    delete old.rayDashboard;
    delete old.kuberay;
    for (const cluster of old.clusters) {
      delete cluster.rayOperatorMetricsPort;
      delete cluster.rayOperatorProbePort;
    }
    const snapshot = structuredClone(old);
    const upgraded = await planState(old, { ...options, workers: 2 });
    expect(upgraded.kuberay).toEqual(options.kuberay);
    expect(upgraded.rayDashboard?.port).toBeGreaterThan(0);
    expect(upgraded.clusters.map(({ apiserverPort, kwokPort }) => ({ apiserverPort, kwokPort }))).toEqual(
      snapshot.clusters.map(({ apiserverPort, kwokPort }) => ({ apiserverPort, kwokPort })),
    );
    const ports = allPorts(upgraded);
    expect(ports.every((port) => port > 0)).toBe(true);
    expect(new Set(ports).size).toBe(ports.length);
  });
});
