// deploy/helm/jobrelay, checked offline with a real helm built from the Go module proxy (helm 4,
// pinnedVersions.helm): linted and rendered for several value sets (each rendering's settings
// loaded by the real processes' configuration code), bad values refused with a clear message,
// and what it renders held to deploy/: the controller's RBAC, the CRDs, the bookkeeping
// ValidatingAdmissionPolicy and the bundled Redis. No cluster: e2e/test/helm-chart.test.ts
// installs the chart into the sandbox's management cluster.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApiConfig } from '@jobrelay/api';
import { loadControllerConfig } from '@jobrelay/controller/config';
import { pinnedVersions, repositoryRoot } from '@jobrelay/sandbox';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { chartDir, helmForThisFile } from '../src/helm-chart.ts';

const kubeVersion = '1.35.4';
const { scratch, runHelm } = helmForThisFile();

interface Rendered {
  kind: string;
  apiVersion: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface PolicySpec {
  matchConditions: unknown[];
  matchConstraints: { resourceRules: unknown[] };
  [field: string]: unknown;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

function render(values: string[], namespace = 'jobrelay-system'): Rendered[] {
  const { code, stdout, stderr } = runHelm([
    'template',
    'jobrelay',
    chartDir,
    '--namespace',
    namespace,
    '--kube-version',
    kubeVersion,
    ...values,
  ]);
  expect(code, stderr).toBe(0);
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Rendered | null)
    .filter((object): object is Rendered => Boolean(object?.kind));
}

function find(objects: Rendered[], kind: string, name: string): Rendered {
  const object = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!object)
    throw new Error(
      `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  return object;
}

function settingsFile(objects: Rendered[], key: 'controller.yaml' | 'api.yaml'): string {
  const config = find(objects, 'ConfigMap', 'jobrelay-config') as unknown as { data: Record<string, string> };
  const file = join(mkdtempSync(join(scratch, 'settings-')), key);
  writeFileSync(file, config.data[key]!);
  return file;
}

interface RenderedContainer {
  command?: string[];
  env: Array<{ name: string }>;
}

function container(objects: Rendered[], deployment: string): RenderedContainer {
  const spec = find(objects, 'Deployment', deployment) as unknown as {
    spec: { template: { spec: { containers: RenderedContainer[] } } };
  };
  return spec.spec.template.spec.containers[0]!;
}

function redisEnv(objects: Rendered[], deployment: string): unknown {
  return container(objects, deployment).env.find((e) => e.name === 'JOBRELAY_REDIS_URL');
}

function passwordEnv(objects: Rendered[], deployment: string): unknown {
  return container(objects, deployment).env.find((e) => e.name === 'REDIS_PASSWORD');
}

/** deploy/controller's objects of a kind, as shipped. */
function shipped(file: string, kind: string): Rendered[] {
  return parseAllDocuments(readFileSync(join(repositoryRoot, 'deploy/controller', file), 'utf8'))
    .map((doc) => doc.toJS() as Rendered)
    .filter((o) => o?.kind === kind);
}

const valueSets: Array<{ name: string; values: string[] }> = [
  { name: 'the defaults', values: [] },
  {
    name: 'an external Redis behind Sentinels, no API, two kinds',
    values: [
      '--set',
      'redis.bundled=false',
      // --set would split the URL at its comma.
      '--set-json',
      'redis.url="redis+sentinel://:s3cret@sentinel-0.redis:26379,sentinel-1.redis:26379/jobrelay"',
      '--set',
      'api.enabled=false',
      '--set-json',
      'dispatch.kinds=["job","rayjob"]',
    ],
  },
  {
    name: 'watched namespaces, namespace opt-in, a per-kind managedBy, one replica, Redis URL from a Secret',
    values: [
      '--set-json',
      'dispatch.namespaces=["team-a","team-b"]',
      '--set',
      'namespaceOptIn.enabled=true',
      '--set',
      'dispatch.kindManagedBy.raycluster=example.com/ray-dispatcher',
      '--set',
      'controller.replicas=1',
      '--set',
      'redis.bundled=false',
      '--set',
      'redis.urlSecret.name=jobrelay-redis-url',
      '--set-json',
      'controller.extraSettings={"reconcileConcurrency":32}',
    ],
  },
];

describe('the chart, offline', () => {
  it('is checked with helm 4, the vetted release the sandbox builds', () => {
    const { code, stdout, stderr } = runHelm(['version', '--short']);
    expect(code, stderr).toBe(0);
    // JOBRELAY_HELM may point at another build; the cache holds the pin.
    if (!process.env.JOBRELAY_HELM) expect(stdout.trim()).toBe(pinnedVersions.helm);
    expect(stdout).toMatch(/^v4\./);
  });

  it.each(valueSets)('passes helm lint --strict with $name', ({ values }) => {
    const { code, stdout, stderr } = runHelm([
      'lint',
      '--strict',
      chartDir,
      '--kube-version',
      kubeVersion,
      ...values,
    ]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it.each(valueSets)('renders settings the processes accept, with $name', ({ values }) => {
    const objects = render(values);
    // The URL the pod gets, where the chart has it as a value (the bundled Redis's password
    // substituted as the kubelet does); a Secret's is not known here.
    const redisValue = (redisEnv(objects, 'jobrelay-controller') as { value?: string }).value;
    const env = {
      JOBRELAY_REDIS_URL: redisValue?.replace('$(REDIS_PASSWORD)', 'a'.repeat(32)) ?? 'redis://redis:6379',
    };
    const controller = loadControllerConfig(['--config', settingsFile(objects, 'controller.yaml')], env);
    const set = (path: string) => values.some((v) => v.startsWith(path));
    expect(controller).toMatchObject({
      managedBy: 'jobrelay.dev/dispatcher',
      systemNamespace: 'jobrelay-system',
      leaderElect: true,
      leaderElectionLeaseName: 'jobrelay-controller',
      healthAddress: '0.0.0.0:8081',
    });
    if (set('dispatch.namespaces')) expect(controller.namespaces).toEqual(['team-a', 'team-b']);
    if (set('dispatch.kindManagedBy'))
      expect(controller.kindManagedBy).toEqual(['raycluster=example.com/ray-dispatcher']);
    if (set('controller.extraSettings')) expect(controller.reconcileConcurrency).toBe(32);
    if (set('api.enabled=false')) {
      expect(objects.filter((o) => o.metadata.name.startsWith('jobrelay-api'))).toEqual([]);
    } else {
      const api = loadApiConfig(['--config', settingsFile(objects, 'api.yaml')], env);
      expect(api).toMatchObject({
        kinds: controller.kinds,
        managedBy: controller.managedBy,
        address: '0.0.0.0:8443',
      });
    }
    const redis = redisEnv(objects, 'jobrelay-controller');
    if (set('redis.url='))
      expect(redis).toEqual({
        name: 'JOBRELAY_REDIS_URL',
        value: 'redis+sentinel://:s3cret@sentinel-0.redis:26379,sentinel-1.redis:26379/jobrelay',
      });
    else if (set('redis.urlSecret'))
      expect(redis).toEqual({
        name: 'JOBRELAY_REDIS_URL',
        valueFrom: { secretKeyRef: { name: 'jobrelay-redis-url', key: 'url' } },
      });
    else {
      // The bundled Redis's password, from the chart's Secret, inside the URL.
      expect(redis).toEqual({
        name: 'JOBRELAY_REDIS_URL',
        value: 'redis://:$(REDIS_PASSWORD)@jobrelay-redis.jobrelay-system.svc:6379',
      });
      expect(passwordEnv(objects, 'jobrelay-controller')).toEqual({
        name: 'REDIS_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'jobrelay-redis', key: 'password' } },
      });
    }
    expect(objects.some((o) => o.kind === 'Deployment' && o.metadata.name === 'jobrelay-redis')).toBe(
      !set('redis.bundled=false'),
    );
    // A budget only where there is more than one replica to keep.
    expect(
      objects.some((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'jobrelay-controller'),
    ).toBe(!set('controller.replicas=1'));
    expect(objects.some((o) => o.kind === 'MutatingAdmissionPolicy')).toBe(set('namespaceOptIn'));
  });

  it.each(valueSets)(
    'holds no wildcard and keeps namespaced objects in the release namespace, with $name',
    ({ values }) => {
      const objects = render(values, 'platform-jobs');
      for (const object of objects) {
        for (const rule of ((object as { rules?: Rule[] }).rules ?? []) as Rule[])
          expect(
            [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs],
            `${object.kind}/${object.metadata.name}`,
          ).not.toContain('*');
        const clusterScoped = [
          'ClusterRole',
          'ClusterRoleBinding',
          'DispatchQueue',
          'MutatingAdmissionPolicy',
          'MutatingAdmissionPolicyBinding',
          'ValidatingAdmissionPolicy',
          'ValidatingAdmissionPolicyBinding',
        ];
        if (!clusterScoped.includes(object.kind))
          expect(object.metadata.namespace, `${object.kind}/${object.metadata.name}`).toBe('platform-jobs');
      }
    },
  );

  it('grants the controller exactly what deploy/controller grants it', () => {
    const shipped = parseAllDocuments(
      readFileSync(join(repositoryRoot, 'deploy/controller/rbac.yaml'), 'utf8'),
    ).map((doc) => doc.toJS() as Rendered & { rules?: Rule[] });
    const objects = render([]) as Array<Rendered & { rules?: Rule[] }>;
    const rules = (kind: string, from: Array<Rendered & { rules?: Rule[] }>) =>
      from
        .filter((o) => o.kind === kind && o.metadata.name.startsWith('jobrelay-controller'))
        .flatMap((o) => o.rules ?? [])
        .flatMap((r) =>
          (r.resources ?? []).flatMap((res) =>
            r.verbs.map((v) => `${r.apiGroups?.join(',')}|${res}|${v}|${r.resourceNames ?? ''}`),
          ),
        )
        .sort();
    expect(rules('ClusterRole', objects)).toEqual(rules('ClusterRole', shipped));
    expect(rules('Role', objects)).toEqual(rules('Role', shipped));
  });

  it.each(['workerclusters.jobrelay.dev.yaml', 'dispatchqueues.jobrelay.dev.yaml'])(
    'ships the CRD %s of deploy/crds unchanged',
    (file) => {
      expect(parse(readFileSync(join(chartDir, 'crds', file), 'utf8'))).toEqual(
        parse(readFileSync(join(repositoryRoot, 'deploy/crds', file), 'utf8')),
      );
    },
  );

  it('holds deploy/controller’s bookkeeping policy, exempting the release’s own controller', () => {
    const specOf = (object: Rendered) => (object as unknown as { spec: PolicySpec }).spec;
    const [policy] = shipped('bookkeeping-policy.yaml', 'ValidatingAdmissionPolicy');
    const [binding] = shipped('bookkeeping-policy.yaml', 'ValidatingAdmissionPolicyBinding');
    const objects = render([]);
    expect(specOf(find(objects, 'ValidatingAdmissionPolicy', 'jobrelay-bookkeeping'))).toEqual(
      specOf(policy!),
    );
    expect(specOf(find(objects, 'ValidatingAdmissionPolicyBinding', 'jobrelay-bookkeeping'))).toEqual(
      specOf(binding!),
    );
    // Another release: its own controller's ServiceAccount, a generic kind and another writer.
    const acme = specOf(
      find(
        render(
          [
            '--set',
            'namePrefix=acme',
            '--set-json',
            'bookkeepingPolicy.extraResources=[{"apiGroup":"jobset.x-k8s.io","resource":"jobsets"}]',
            '--set-json',
            'bookkeepingPolicy.extraWriters=["system:serviceaccount:jobrelay-system:jobrelay-controller"]',
          ],
          'platform-jobs',
        ),
        'ValidatingAdmissionPolicy',
        'acme-bookkeeping',
      ),
    );
    expect(acme.matchConditions).toEqual([
      {
        name: 'written-by-someone-else-than-the-controller',
        expression:
          "!(request.userInfo.username in ['system:serviceaccount:platform-jobs:acme-controller', 'system:serviceaccount:jobrelay-system:jobrelay-controller'])",
      },
    ]);
    expect(acme.matchConstraints.resourceRules).toEqual([
      ...specOf(policy!).matchConstraints.resourceRules,
      {
        apiGroups: ['jobset.x-k8s.io'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['jobsets', 'jobsets/status'],
      },
    ]);
    expect({ ...acme, matchConditions: [], matchConstraints: {} }).toEqual({
      ...specOf(policy!),
      matchConditions: [],
      matchConstraints: {},
    });
    expect(
      render(['--set', 'bookkeepingPolicy.enabled=false']).filter((o) =>
        o.kind.startsWith('ValidatingAdmission'),
      ),
    ).toEqual([]);
  });

  it('runs deploy/controller’s Redis script with a password of its own Secret, reached by the controller and the API only', () => {
    const objects = render([]);
    expect(container(objects, 'jobrelay-redis').command).toEqual(
      container(shipped('redis.yaml', 'Deployment'), 'jobrelay-redis').command,
    );
    const secret = find(objects, 'Secret', 'jobrelay-redis') as unknown as { data: { password: string } };
    expect(Buffer.from(secret.data.password, 'base64').toString()).toMatch(/^[A-Za-z0-9]{32}$/);
    for (const deployment of ['jobrelay-redis', 'jobrelay-api'])
      expect(passwordEnv(objects, deployment), deployment).toEqual(
        passwordEnv(objects, 'jobrelay-controller'),
      );
    const network = find(objects, 'NetworkPolicy', 'jobrelay-redis') as unknown as {
      spec: { ingress: Array<{ from: Array<{ podSelector: { matchLabels: Record<string, string> } }> }> };
    };
    expect(
      network.spec.ingress.flatMap((rule) =>
        rule.from.map((peer) => peer.podSelector.matchLabels['app.kubernetes.io/name']),
      ),
    ).toEqual(['jobrelay-controller', 'jobrelay-api']);
    // The admin's own Secret instead: none generated.
    const own = render(['--set', 'redis.passwordSecret=my-redis']);
    expect(own.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(passwordEnv(own, 'jobrelay-redis')).toEqual({
      name: 'REDIS_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'my-redis', key: 'password' } },
    });
  });

  it.each([
    {
      values: ['--set', 'dispatch.managedBy=kubernetes.io/job-controller'],
      says: "dispatch.managedBy: kubernetes.io/job-controller is the built-in Job controller's value",
    },
    {
      values: ['--set', 'dispatch.managedBy=dispatcher'],
      says: "at '/dispatch/managedBy': 'dispatcher' does not match pattern",
    },
    {
      values: ['--set', 'dispatch.placementPolicy=random'],
      says: "at '/dispatch/placementPolicy': value must be one of 'spread', 'binpack'",
    },
    { values: ['--set', 'controller.replicas=0'], says: "at '/controller/replicas': minimum: got 0, want 1" },
    {
      values: ['--set', 'redis.url=http://redis:6379', '--set', 'redis.bundled=false'],
      says: "at '/redis/url': 'http://redis:6379' does not match pattern",
    },
    {
      values: ['--set', 'redis.bundled=false'],
      says: 'redis: set redis.bundled=true, or redis.url, or redis.urlSecret.name',
    },
    { values: ['--set', 'controler.replicas=2'], says: "additional properties 'controler' not allowed" },
    {
      values: ['--set', 'controller.leaderElection.renewDeadlineSeconds=15'],
      says: 'renewDeadlineSeconds (15) must be shorter than leaseDurationSeconds (15)',
    },
    {
      values: ['--set', 'controller.shutdownTimeoutSeconds=30'],
      says: 'shutdownTimeoutSeconds (30) must be shorter than terminationGracePeriodSeconds (30)',
    },
    {
      values: ['--set-json', `bookkeepingPolicy.extraWriters=["x' || true || '"]`],
      says: "at '/bookkeepingPolicy/extraWriters/0'",
    },
    {
      values: ['--set-json', 'bookkeepingPolicy.extraResources=[{"apiGroup":"jobset.x-k8s.io"}]'],
      says: "at '/bookkeepingPolicy/extraResources/0': missing property 'resource'",
    },
    {
      values: ['--set', 'redis.passwordSecret=My_Secret'],
      says: "at '/redis/passwordSecret': 'My_Secret' does not match pattern",
    },
  ])('refuses $values with a message naming it', ({ values, says }) => {
    const { code, stderr } = runHelm([
      'template',
      'jobrelay',
      chartDir,
      '--kube-version',
      kubeVersion,
      ...values,
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toContain(says);
  });
});
