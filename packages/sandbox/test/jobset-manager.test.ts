import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { jobSetManagerConfig, jobSetProcesses, jobSetWebhookConfigurations } from '../src/jobset-manager.ts';
import { SandboxLayout } from '../src/sandbox-layout.ts';
import { planState } from '../src/sandbox-state.ts';

/** The webhook manifests and kustomize patches of the v0.9.1 release, as the module ships them. */
const releaseManifests = fileURLToPath(new URL('./fixtures/jobset-v0.9.1', import.meta.url));
const kuberay = { operator: '/k/ray-operator', crdDir: '/k/crds', version: 'v1.5.0' };
const jobset = { manager: '/j/bin/jobset-manager', manifestDir: '/j/manifests', version: 'v0.9.1' };
const pki = {
  caCert: '/p/ca.crt',
  caKey: '/p/ca.key',
  servingCert: '/p/apiserver.crt',
  servingKey: '/p/apiserver.key',
  serviceAccountKey: '/p/sa.key',
  serviceAccountPub: '/p/sa.pub',
};

describe("JobSet's webhooks out of cluster", () => {
  const configurations = jobSetWebhookConfigurations(releaseManifests, 4443, 'CA PEM');
  const webhooks = configurations.flatMap((c) => c.webhooks) as Array<Record<string, unknown>>;

  it('are the release’s, with its name prefix, each called by URL on loopback with the sandbox CA', () => {
    expect(configurations.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual([
      'MutatingWebhookConfiguration/jobset-mutating-webhook-configuration',
      'ValidatingWebhookConfiguration/jobset-validating-webhook-configuration',
    ]);
    expect(webhooks.map((w) => w.clientConfig)).toEqual(
      [
        '/mutate-jobset-x-k8s-io-v1alpha2-jobset',
        '/mutate--v1-pod',
        '/validate-jobset-x-k8s-io-v1alpha2-jobset',
        '/validate--v1-pod',
      ].map((path) => ({
        url: `https://127.0.0.1:4443${path}`,
        caBundle: Buffer.from('CA PEM').toString('base64'),
      })),
    );
  });

  it('judge only JobSet pods (the release’s patches), so no other pod depends on the manager', () => {
    const podWebhooks = webhooks.filter((w) => ['mpod.kb.io', 'vpod.kb.io'].includes(w.name as string));
    expect(podWebhooks).toHaveLength(2);
    for (const webhook of podWebhooks) {
      expect(webhook.objectSelector).toEqual({
        matchExpressions: [{ key: 'jobset.sigs.k8s.io/jobset-name', operator: 'Exists' }],
      });
    }
  });
});

describe("a cluster's JobSet manager", () => {
  it('runs one per cluster on its own loopback ports, with its certificates managed by the sandbox', async () => {
    const state = await planState(undefined, {
      workers: 1,
      binariesDir: '/b',
      redisServer: '/r',
      kuberay,
      jobset,
    });
    const dir = mkdtempSync(join(tmpdir(), 'jobrelay-jobset-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const layout = new SandboxLayout(dir);
    const specs = jobSetProcesses(state, layout, pki);
    expect(specs.map((s) => s.name)).toEqual(['management/jobset-manager', 'worker-1/jobset-manager']);
    const worker = state.clusters[1]!;
    expect(specs[1]!.binary).toBe(jobset.manager);
    expect(specs[1]!.args[0]).toBe(`--kubeconfig=${layout.kubeconfig('worker-1')}`);
    expect(parse(jobSetManagerConfig(worker, '/certs'))).toEqual({
      apiVersion: 'config.jobset.x-k8s.io/v1alpha1',
      kind: 'Configuration',
      internalCertManagement: { enable: false },
      webhook: { host: '127.0.0.1', port: worker.jobSetWebhookPort, certDir: '/certs' },
      metrics: { bindAddress: '0' },
      health: { healthProbeBindAddress: `127.0.0.1:${worker.jobSetProbePort}` },
      leaderElection: { leaderElect: false },
    });
    delete state.jobset;
    expect(jobSetProcesses(state, layout, pki)).toEqual([]);
  });
});
