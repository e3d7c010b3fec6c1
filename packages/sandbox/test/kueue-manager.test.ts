import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kueueManagerConfig, kueueWebhookConfigurations } from '../src/kueue-manager.ts';

/** The webhook manifests of the v0.17.0 release, as the module ships them. */
const releaseManifests = fileURLToPath(new URL('./fixtures/kueue-v0.17.0', import.meta.url));
const onlyEnrolled = { matchLabels: { 'example.com/kueue': 'true' } };

describe("Kueue's webhooks out of cluster", () => {
  const configurations = kueueWebhookConfigurations(releaseManifests, 9443, 'CA PEM', onlyEnrolled);
  const webhooks = configurations.flatMap((c) => c.webhooks);

  it('keep only those of batch Jobs and Kueue’s own objects: a framework it does not run would refuse its objects', () => {
    expect(configurations.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual([
      'MutatingWebhookConfiguration/kueue-mutating-webhook-configuration',
      'ValidatingWebhookConfiguration/kueue-validating-webhook-configuration',
    ]);
    expect(webhooks.map((w) => w.clientConfig.url).sort()).toEqual(
      [
        '/mutate-kueue-x-k8s-io-v1beta2-clusterqueue',
        '/mutate-batch-v1-job',
        '/mutate-kueue-x-k8s-io-v1beta2-resourceflavor',
        '/mutate-kueue-x-k8s-io-v1beta2-workload',
        '/validate-kueue-x-k8s-io-v1beta2-clusterqueue',
        '/validate-kueue-x-k8s-io-v1beta2-cohort',
        '/validate-batch-v1-job',
        '/validate-kueue-x-k8s-io-v1beta2-resourceflavor',
        '/validate-kueue-x-k8s-io-v1beta2-workload',
      ]
        .map((path) => `https://127.0.0.1:9443${path}`)
        .sort(),
    );
    for (const webhook of webhooks) {
      expect(webhook.clientConfig).toEqual({
        url: expect.any(String),
        caBundle: Buffer.from('CA PEM').toString('base64'),
      });
    }
  });

  it('judge Jobs only in the namespaces enrolled, so no other test’s Jobs depend on the process', () => {
    const jobWebhooks = webhooks.filter((w) => w.clientConfig.url?.includes('batch-v1-job'));
    expect(jobWebhooks).toHaveLength(2);
    for (const webhook of jobWebhooks) expect(webhook.namespaceSelector).toEqual(onlyEnrolled);
  });
});

describe("Kueue's configuration", () => {
  it('runs out of cluster on loopback, for batch Jobs that name a queue, with the sandbox’s certificates', () => {
    const config = parse(kueueManagerConfig({ webhook: 1, health: 2, pprof: 3, visibility: 4 }, '/certs'));
    expect(config).toMatchObject({
      apiVersion: 'config.kueue.x-k8s.io/v1beta2',
      kind: 'Configuration',
      internalCertManagement: { enable: false },
      webhook: { host: '127.0.0.1', port: 1, certDir: '/certs' },
      health: { healthProbeBindAddress: '127.0.0.1:2' },
      metrics: { bindAddress: '0' },
      pprofBindAddress: '127.0.0.1:3',
      leaderElection: { leaderElect: false },
      manageJobsWithoutQueueName: false,
      integrations: { frameworks: ['batch/job'] },
      featureGates: { VisibilityOnDemand: false },
    });
  });
});
