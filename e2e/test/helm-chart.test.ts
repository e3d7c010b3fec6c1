// deploy/helm/jobrelay installed into the sandbox's management cluster with a real helm built
// from the Go module proxy (helm 4, pinnedVersions.helm: server-side apply by default, `--wait`
// alone is its `watcher` strategy). The installed release's controller runs with the chart's own
// ServiceAccount token and the chart's own settings until Jobs dispatch, the chart's
// MutatingAdmissionPolicy opts a labelled namespace in without editing its Jobs, and its
// bookkeeping ValidatingAdmissionPolicy (deploy/controller's, for the release's controller)
// refuses a forged placement record; an upgrade keeps the bundled Redis's password, and the
// uninstall leaves nothing but the CRDs. The kustomize bases (deploy/controller, deploy/api,
// deploy/worker) pass a server-side dry run. The chart's lint and renderings are checked without
// a cluster in e2e/offline/helm-chart.test.ts.

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { placementAnnotation } from '@jobrelay/mirror';
import { repositoryRoot, serviceAccountKubeconfig } from '@jobrelay/sandbox';
import { CoordinationV1Api, RbacAuthorizationV1Api, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type ControllerProcess, startController } from '../src/controller-process.ts';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { chartDir, helmForThisFile } from '../src/helm-chart.ts';
import { eventually, isTrue, sandboxJob, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

// The scratch directory (helm's HOME, the controller's settings and kubeconfig) goes in an afterAll
// of the file's own, after the release's afterAll below has stopped the controller and uninstalled.
const { scratch, runHelm } = helmForThisFile();

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
