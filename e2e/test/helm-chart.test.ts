// deploy/helm/jobrelay, checked with a real helm built from the Go module proxy: linted and
// rendered for several value sets (each rendering's settings loaded by the real processes'
// configuration code), bad values refused with a clear message, and installed into the
// sandbox's management cluster. The installed release's controller then runs with the chart's
// own ServiceAccount token and the chart's own settings until Jobs dispatch, the chart's
// MutatingAdmissionPolicy opts a labelled namespace in without editing its Jobs, and its
// bookkeeping ValidatingAdmissionPolicy (deploy/controller's, for the release's controller)
// refuses a forged placement record. helm 4 (pinnedVersions.helm): server-side apply by default,
// `--wait` alone is its `watcher` strategy.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApiConfig } from '@jobrelay/api';
import { loadControllerConfig } from '@jobrelay/controller/config';
import { placementAnnotation } from '@jobrelay/mirror';
import { pinnedVersions, repositoryRoot, resolveGoTool, serviceAccountKubeconfig } from '@jobrelay/sandbox';
import { CoordinationV1Api, RbacAuthorizationV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { eventually, isTrue, sandboxJob, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

const chartDir = join(repositoryRoot, 'deploy/helm/jobrelay');
const kubeVersion = '1.35.4';
let helm: string;
const scratch = mkdtempSync(join(tmpdir(), 'jobrelay-helm-'));

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

function runHelm(args: string[], kubeconfig?: string): { code: number; stdout: string; stderr: string } {
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

beforeAll(async () => {
  helm = await resolveGoTool('helm', (line) => console.log(`[helm] ${line}`));
}, 30 * 60_000);

// Runs after the installed release's afterAll: its controller (reading its settings and
// kubeconfig here) has exited and its helm uninstall (HOME here) is done.
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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

describe('the chart, installed into the management cluster', () => {
  const release = 'jobrelay-helm';
  const namespace = 'jobrelay-helm';
  let fleet: Fleet;
  let adminKubeconfig: string;
  let controller: ControllerProcess | undefined;
  const namespaces: string[] = [];

  beforeAll(async () => {
    fleet = fleetOf(testSandbox());
    adminKubeconfig = fleet.sandbox.kubeconfigPath(fleet.sandbox.management.name);
    runHelm(['uninstall', release, '--namespace', namespace, '--wait'], adminKubeconfig);
  });

  afterAll(async () => {
    await controller?.kill('SIGTERM');
    runHelm(['uninstall', release, '--namespace', namespace, '--wait'], adminKubeconfig);
    for (const name of namespaces) await fleet.management.core.deleteNamespace({ name }).catch(() => {});
  });

  it('installs, and its controller dispatches with the chart’s ServiceAccount and settings', {
    timeout: 300_000,
  }, async () => {
    const installed = runHelm(
      [
        'install',
        release,
        chartDir,
        '--namespace',
        namespace,
        '--create-namespace',
        '--set',
        `namePrefix=${release}`,
        '--set',
        'namespaceOptIn.enabled=true',
        // The sandbox has no images to run: the chart's objects are installed, its controller
        // runs here as a process with the chart's identity and settings.
        '--set',
        'api.enabled=false',
      ],
      adminKubeconfig,
    );
    expect(installed.code, installed.stderr).toBe(0);
    // Worker kubeconfigs live in the release's namespace: copy the sandbox's registrations there.
    for (const worker of fleet.sandbox.workers) {
      const secret = await fleet.management.core.readNamespacedSecret({
        name: `${worker.name}-kubeconfig`,
        namespace: 'jobrelay-system',
      });
      await fleet.management.core
        .createNamespacedSecret({
          namespace,
          body: { metadata: { name: secret.metadata!.name! }, data: secret.data },
        })
        .catch(() => {});
    }
    const kubeconfig = join(scratch, 'controller-sa.kubeconfig');
    writeFileSync(
      kubeconfig,
      await serviceAccountKubeconfig(
        fleet.sandbox,
        fleet.sandbox.management.name,
        `${release}-controller`,
        namespace,
      ),
      {
        mode: 0o600,
      },
    );
    const config = await fleet.management.core.readNamespacedConfigMap({
      name: `${release}-config`,
      namespace,
    });
    const settings = join(scratch, 'controller.yaml');
    writeFileSync(settings, config.data!['controller.yaml']!);
    controller = startController(fleet.sandbox, [
      `--config=${settings}`,
      `--kubeconfig=${kubeconfig}`,
      '--leader-election-identity=helm-e2e',
    ]);
    await eventually(
      'the chart’s controller to hold the chart’s Lease',
      async () => {
        const lease = await fleet.management.kubeConfig
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name: `${release}-controller`, namespace });
        return lease.spec?.holderIdentity === 'helm-e2e' ? true : undefined;
      },
      { timeoutMs: 90_000 },
    );

    // The chart's bookkeeping policy, for this release: even an admin's Job carrying a placement
    // record is refused, while the release's controller writes its records (below).
    const forgedIn = await createNamespace({});
    const refusal = await eventually(
      'the chart’s bookkeeping policy to be enforced',
      async () => {
        const result = spawnSync(
          join(fleet.sandbox.binariesDir, 'kubectl'),
          ['--kubeconfig', adminKubeconfig, 'create', '--dry-run=server', '-n', forgedIn, '-f', '-'],
          {
            encoding: 'utf8',
            input: JSON.stringify(
              sandboxJob({
                name: uniqueName('forged'),
                managedBy: 'jobrelay.dev/dispatcher',
                annotations: { [placementAnnotation]: '{"cluster":"worker-1","attempt":1}' },
              }),
            ),
          },
        );
        return result.status !== 0 ? result.stderr : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(refusal).toContain(`ValidatingAdmissionPolicy '${release}-bookkeeping'`);
    expect(refusal).toContain(`annotation ${placementAnnotation} is jobrelay's bookkeeping`);

    // Namespace opt-in: a plain Job in a labelled namespace is dispatched...
    const optedIn = await createNamespace({ 'jobrelay.dev/dispatch': 'enabled' });
    const plain = await createJob(optedIn, undefined);
    expect(plain.spec?.managedBy, 'managedBy set by the admission policy').toBe('jobrelay.dev/dispatcher');
    // ...a Job that names another manager keeps it...
    const other = await createJob(optedIn, 'example.com/someone-else');
    expect(other.spec?.managedBy).toBe('example.com/someone-else');
    // ...and a plain Job elsewhere stays home.
    const home = await createJob(await createNamespace({}), undefined);
    expect(home.spec?.managedBy).toBeUndefined();

    const done = await eventually(
      'the opted-in Job to complete through a worker',
      async () => {
        const job = await fleet.management.batch.readNamespacedJob({
          name: plain.metadata!.name!,
          namespace: optedIn,
        });
        return isTrue(job, 'Complete') ? job : undefined;
      },
      { timeoutMs: 180_000 },
    );
    expect(done.metadata?.annotations?.[placementAnnotation]).toMatch(/"cluster":"worker-\d"/);
    for (const job of [other, home]) {
      const now = await fleet.management.batch.readNamespacedJob({
        name: job.metadata!.name!,
        namespace: job.metadata!.namespace!,
      });
      expect(
        now.metadata?.annotations?.[placementAnnotation],
        `${job.metadata!.namespace}/${job.metadata!.name}`,
      ).toBeUndefined();
    }
    // No permission the chart's ServiceAccount lacks. A 403 for a namespace being deleted (another
    // test's, whose Jobs this release's controller also claims on the shared fleet) is the
    // apiserver refusing new content there, not RBAC: those lines are left out.
    const denials = controller
      .logs()
      .split('\n')
      .filter((line) => /forbidden/i.test(line) && !line.includes('NamespaceTerminating'));
    expect(denials).toEqual([]);
  });

  it('keeps the bundled Redis’s password across an upgrade', { timeout: 120_000 }, async () => {
    const password = async () =>
      (await fleet.management.core.readNamespacedSecret({ name: `${release}-redis`, namespace })).data
        ?.password;
    const before = await password();
    expect(Buffer.from(before ?? '', 'base64').toString()).toMatch(/^[A-Za-z0-9]{32}$/);
    const upgraded = runHelm(
      ['upgrade', release, chartDir, '--namespace', namespace, '--reuse-values'],
      adminKubeconfig,
    );
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(await password()).toBe(before);
  });

  it('uninstalls everything but the CRD', { timeout: 120_000 }, async () => {
    await controller?.kill('SIGTERM');
    controller = undefined;
    const removed = runHelm(['uninstall', release, '--namespace', namespace, '--wait'], adminKubeconfig);
    expect(removed.code, removed.stderr).toBe(0);
    const rbac = fleet.management.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    const left = (await rbac.listClusterRole({ labelSelector: `app.kubernetes.io/instance=${release}` }))
      .items;
    expect(left.map((r) => r.metadata?.name)).toEqual([]);
  });

  async function createNamespace(labels: Record<string, string>): Promise<string> {
    const name = uniqueName('helm-optin');
    await fleet.management.core.createNamespace({ body: { metadata: { name, labels } } });
    namespaces.push(name);
    return name;
  }

  async function createJob(namespaceName: string, managedBy: string | undefined): Promise<V1Job> {
    return fleet.management.batch.createNamespacedJob({
      namespace: namespaceName,
      body: sandboxJob({
        name: uniqueName('helm'),
        managedBy,
        requests: { cpu: '50m', memory: '32Mi' },
        pod: { runSeconds: 1 },
      }),
    });
  }
});

describe('the kustomize bases', () => {
  it.each([
    { base: 'deploy/controller', cluster: 'management' },
    { base: 'deploy/api', cluster: 'management' },
    { base: 'deploy/worker', cluster: 'worker' },
  ])(
    '$base builds and passes kubectl apply --dry-run=server on the $cluster cluster',
    ({ base, cluster }) => {
      const sandbox = testSandbox();
      const kubectl = join(sandbox.binariesDir, 'kubectl');
      const target = cluster === 'management' ? sandbox.management.name : sandbox.workers[0]!.name;
      const built = spawnSync(kubectl, ['kustomize', join(repositoryRoot, base)], { encoding: 'utf8' });
      expect(built.status, built.stderr).toBe(0);
      expect(parseAllDocuments(built.stdout).length).toBeGreaterThan(1);
      const applied = spawnSync(
        kubectl,
        [
          'apply',
          '--dry-run=server',
          '-k',
          join(repositoryRoot, base),
          '--kubeconfig',
          sandbox.kubeconfigPath(target),
        ],
        { encoding: 'utf8' },
      );
      expect(applied.status, applied.stderr).toBe(0);
      expect(applied.stdout).toMatch(/\(server dry run\)/);
    },
  );
});
