// deploy/controller/bookkeeping-policy.yaml, installed exactly as it ships on the sandbox's real
// management apiserver: jobrelay's bookkeeping (placement record, unschedulable reason,
// continuation, origin labels) can be set or changed by the controller's ServiceAccount only.
// Everyone else — system:masters included, and a namespace admin (a ServiceAccount bound to the
// built-in `admin` ClusterRole) — is refused a create that carries one and an update that adds or
// changes one, through every door kubectl has (create, annotate, label, apply, apply
// --server-side --force-conflicts, replace after a get as `kubectl edit` does, the Job's /status),
// with a message naming the keys; updates that leave them alone, and removals, pass. Run by
// kubectl as each identity, so the messages are the ones a user reads. The policy is removed at
// the end: other files share the fleet.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryRoot, type Sandbox, serviceAccountKubeconfig } from '@jobrelay/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientsFor,
  createTestNamespace,
  eventually,
  testSandbox,
  uniqueName,
} from '../src/kube-test-helpers.ts';

const policyFile = join(repositoryRoot, 'deploy/controller/bookkeeping-policy.yaml');
const placement = 'jobrelay.dev/placement';
const forged = '{"cluster":"worker-1","attempt":1,"carried":{"succeeded":3}}';
const refusedBecause = (keys: string) =>
  `${keys} ${keys.includes(',') ? 'are' : 'is'} jobrelay's bookkeeping, written by its controller only: remove ${keys.includes(',') ? 'them' : 'it'} from the manifest`;

type Who = 'admin' | 'tenant' | 'controller';
let sandbox: Sandbox;
let namespace: string;
/** Holds the tenant's kubeconfig, which every test's kubectl reads. */
let scratch: string | undefined;
const kubeconfigs = {} as Record<Who, string>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(who: Who, args: string[], input?: unknown): Run {
  const result = spawnSync(
    join(sandbox.binariesDir, 'kubectl'),
    ['--kubeconfig', kubeconfigs[who], ...args],
    {
      encoding: 'utf8',
      input: input === undefined ? undefined : typeof input === 'string' ? input : JSON.stringify(input),
    },
  );
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

function ok(run: Run): string {
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

/** A refusal by the policy: 403, naming the keys and saying what to do. */
function refused(run: Run, keys: string): void {
  expect(run.code, run.stdout).not.toBe(0);
  expect(run.stderr).toContain('is forbidden: ValidatingAdmissionPolicy');
  expect(run.stderr).toContain(refusedBecause(keys));
}

function metadataOf(
  kind: string,
  name: string,
): { annotations?: Record<string, string>; labels?: Record<string, string> } {
  return (
    JSON.parse(ok(kubectl('admin', ['get', kind, name, '-n', namespace, '-o', 'json']))) as {
      metadata: object;
    }
  ).metadata;
}

function job(
  name: string,
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, ...metadata },
    spec: {
      // jobrelay's value: the built-in Job controller leaves it alone, and no jobrelay controller runs here.
      managedBy: 'jobrelay.dev/dispatcher',
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/x' }] },
      },
    },
  };
}

function rayCluster(
  name: string,
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: { name, namespace, ...metadata },
    spec: {
      // MultiKueue's value: the management cluster's ray-operator leaves it alone.
      managedBy: 'kueue.x-k8s.io/multikueue',
      headGroupSpec: {
        rayStartParams: {},
        template: { spec: { containers: [{ name: 'head', image: 'x' }] } },
      },
    },
  };
}

beforeAll(async () => {
  sandbox = testSandbox();
  scratch = mkdtempSync(join(tmpdir(), 'jobrelay-bookkeeping-'));
  kubeconfigs.admin = sandbox.kubeconfigPath(sandbox.management.name);
  kubeconfigs.controller = sandbox.serviceAccountKubeconfigPath('jobrelay-controller');
  const admin = clientsFor(sandbox, sandbox.management.name);
  namespace = await createTestNamespace(admin, 'bookkeeping');
  // A namespace admin: the built-in admin ClusterRole in this namespace, Ray's kinds, and a
  // Job's /status (which the built-in roles only read) to try that door too.
  ok(
    kubectl('admin', ['apply', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant', namespace } },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'tenant-admin', namespace },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
          subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'tenant-extra', namespace },
          rules: [
            {
              apiGroups: ['ray.io'],
              resources: ['rayclusters', 'rayjobs'],
              verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
            },
            { apiGroups: ['ray.io'], resources: ['rayclusters/status'], verbs: ['update', 'patch'] },
            { apiGroups: ['batch'], resources: ['jobs/status'], verbs: ['update', 'patch'] },
          ],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'tenant-extra', namespace },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant-extra' },
          subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace }],
        },
      ],
    }),
  );
  kubeconfigs.tenant = join(scratch, 'tenant.kubeconfig');
  writeFileSync(
    kubeconfigs.tenant,
    await serviceAccountKubeconfig(sandbox, sandbox.management.name, 'tenant', namespace),
    {
      mode: 0o600,
    },
  );
  ok(kubectl('admin', ['apply', '-f', policyFile]));
  // The apiserver enforces a new policy once its informer has it: a dry-run probe says when.
  await eventually(
    'the bookkeeping policy to be enforced',
    async () => {
      const probe = kubectl(
        'admin',
        ['create', '--dry-run=server', '-f', '-'],
        job('probe', { annotations: { [placement]: forged } }),
      );
      return probe.code !== 0 && probe.stderr.includes('jobrelay-bookkeeping') ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );
}, 120_000);

afterAll(async () => {
  if (!sandbox) return;
  kubectl('admin', ['delete', '--ignore-not-found', '-f', policyFile]);
  if (namespace) kubectl('admin', ['delete', 'namespace', namespace, '--wait=false']);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.each(['admin', 'tenant'] as const)('a Job, written by %s', (who) => {
  it('cannot be created carrying a placement record or an origin label, and nothing is created', () => {
    const name = uniqueName('forged');
    refused(
      kubectl(who, ['create', '-f', '-'], job(name, { annotations: { [placement]: forged } })),
      `annotation ${placement}`,
    );
    refused(
      kubectl(who, ['apply', '-f', '-'], job(name, { labels: { 'jobrelay.dev/origin-uid': 'x' } })),
      'label jobrelay.dev/origin-uid',
    );
    refused(
      kubectl(
        who,
        ['apply', '--server-side', '-f', '-'],
        job(name, {
          annotations: {
            'jobrelay.dev/continues-from': '{"succeeded":3}',
            'jobrelay.dev/unschedulable': 'no',
          },
          labels: { 'jobrelay.dev/origin': 'elsewhere' },
        }),
      ),
      'annotation jobrelay.dev/unschedulable, annotation jobrelay.dev/continues-from, label jobrelay.dev/origin',
    );
    expect(kubectl('admin', ['get', 'job', name, '-n', namespace]).stderr).toContain('NotFound');
  });

  it('gets its bookkeeping from the controller only: added, changed or sent through /status it is refused; left alone or removed it passes', () => {
    const name = uniqueName('booked');
    // Created by kubectl apply (client-side), as most users do, with an annotation users may set.
    const manifest = job(name, { annotations: { 'jobrelay.dev/cluster-selector': 'tier=gold' } });
    ok(kubectl(who, ['apply', '-f', '-'], manifest));
    refused(
      kubectl(who, ['annotate', 'job', name, '-n', namespace, `${placement}=${forged}`]),
      `annotation ${placement}`,
    );

    // The controller records a placement and the origin labels.
    ok(
      kubectl('controller', [
        'annotate',
        'job',
        name,
        '-n',
        namespace,
        `${placement}={"cluster":"worker-2","attempt":1}`,
      ]),
    );
    ok(
      kubectl('controller', [
        'label',
        'job',
        name,
        '-n',
        namespace,
        'jobrelay.dev/origin-uid=from-controller',
      ]),
    );
    const record = metadataOf('job', name).annotations?.[placement];
    expect(record).toBe('{"cluster":"worker-2","attempt":1}');

    // Changing it, by any door, is refused.
    refused(
      kubectl(who, ['annotate', '--overwrite', 'job', name, '-n', namespace, `${placement}=${forged}`]),
      `annotation ${placement}`,
    );
    refused(
      kubectl(who, ['label', '--overwrite', 'job', name, '-n', namespace, 'jobrelay.dev/origin-uid=mine']),
      'label jobrelay.dev/origin-uid',
    );
    refused(
      kubectl(
        who,
        ['apply', '--server-side', '--force-conflicts', '-f', '-'],
        job(name, { annotations: { [placement]: forged } }),
      ),
      `annotation ${placement}`,
    );
    refused(
      kubectl(who, [
        'patch',
        'job',
        name,
        '-n',
        namespace,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { annotations: { [placement]: forged } } }),
      ]),
      `annotation ${placement}`,
    );
    expect(metadataOf('job', name).annotations?.[placement]).toBe(record);

    // Updates that leave it alone pass, and keep it: kubectl apply of the user's manifest
    // (client-side, then server-side), and a get-edit-replace as kubectl edit does.
    ok(
      kubectl(
        who,
        ['apply', '-f', '-'],
        job(name, { annotations: { 'jobrelay.dev/cluster-selector': 'tier=silver' } }),
      ),
    );
    ok(
      kubectl(
        who,
        ['apply', '--server-side', '-f', '-'],
        job(name, {
          annotations: { 'jobrelay.dev/cluster-selector': 'tier=silver', note: 'server-side' },
        }),
      ),
    );
    const edited = JSON.parse(ok(kubectl(who, ['get', 'job', name, '-n', namespace, '-o', 'json']))) as {
      metadata: { labels: Record<string, string> };
    };
    edited.metadata.labels.team = 'a';
    ok(kubectl(who, ['replace', '-f', '-'], edited));
    const kept = metadataOf('job', name);
    expect(kept.annotations).toMatchObject({
      [placement]: record,
      'jobrelay.dev/cluster-selector': 'tier=silver',
      note: 'server-side',
    });
    expect(kept.labels).toMatchObject({ 'jobrelay.dev/origin-uid': 'from-controller', team: 'a' });

    // Removing it is allowed: that is how an admin has jobrelay place a workload afresh.
    ok(kubectl(who, ['annotate', 'job', name, '-n', namespace, `${placement}-`]));
    ok(kubectl(who, ['label', 'job', name, '-n', namespace, 'jobrelay.dev/origin-uid-']));
    const removed = metadataOf('job', name);
    expect(removed.annotations?.[placement]).toBeUndefined();
    expect(removed.labels?.['jobrelay.dev/origin-uid']).toBeUndefined();
  });

  it('without annotations updates as before', () => {
    const name = uniqueName('plain');
    // kubectl create keeps no last-applied annotation: the Job has none at all.
    ok(kubectl(who, ['create', '-f', '-'], job(name)));
    expect(metadataOf('job', name).annotations).toBeUndefined();
    ok(
      kubectl(who, [
        'patch',
        'job',
        name,
        '-n',
        namespace,
        '--type=merge',
        '-p',
        '{"spec":{"parallelism":2}}',
      ]),
    );
    ok(kubectl(who, ['annotate', 'job', name, '-n', namespace, 'note=first']));
  });
});

describe.each(['admin', 'tenant'] as const)('a RayCluster, written by %s', (who) => {
  it('with neither labels nor annotations is created and updated', () => {
    const name = uniqueName('bare');
    ok(kubectl(who, ['create', '-f', '-'], rayCluster(name)));
    const metadata = metadataOf('raycluster', name);
    expect([metadata.annotations, metadata.labels]).toEqual([undefined, undefined]);
    // Old and new without annotations or labels: nothing for CEL to trip on.
    ok(
      kubectl(who, [
        'patch',
        'raycluster',
        name,
        '-n',
        namespace,
        '--type=merge',
        '-p',
        '{"spec":{"suspend":true}}',
      ]),
    );
    ok(kubectl(who, ['annotate', 'raycluster', name, '-n', namespace, 'jobrelay.dev/cluster=worker-1']));
  });

  it('gets its bookkeeping from the controller only', () => {
    const name = uniqueName('ray');
    refused(
      kubectl(
        who,
        ['create', '-f', '-'],
        rayCluster(name, {
          annotations: { [placement]: forged },
          labels: { 'jobrelay.dev/origin-uid': 'x' },
        }),
      ),
      `annotation ${placement}, label jobrelay.dev/origin-uid`,
    );
    ok(kubectl(who, ['apply', '-f', '-'], rayCluster(name)));
    refused(
      kubectl(who, ['annotate', 'raycluster', name, '-n', namespace, `${placement}=${forged}`]),
      `annotation ${placement}`,
    );
    ok(
      kubectl('controller', [
        'annotate',
        'raycluster',
        name,
        '-n',
        namespace,
        `${placement}={"cluster":"worker-3","attempt":2}`,
      ]),
    );
    ok(
      kubectl('controller', [
        'annotate',
        '--overwrite',
        'raycluster',
        name,
        '-n',
        namespace,
        `jobrelay.dev/placement-attempt=2`,
      ]),
    );
    refused(
      kubectl(who, [
        'annotate',
        '--overwrite',
        'raycluster',
        name,
        '-n',
        namespace,
        'jobrelay.dev/placement-attempt=1',
      ]),
      'annotation jobrelay.dev/placement-attempt',
    );
    // A custom resource's /status keeps the object's metadata: a forged annotation there is dropped.
    kubectl(who, [
      'patch',
      'raycluster',
      name,
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { annotations: { [placement]: forged } }, status: {} }),
    ]);
    ok(kubectl(who, ['apply', '-f', '-'], rayCluster(name, { annotations: { note: 'left alone' } })));
    expect(metadataOf('raycluster', name).annotations).toMatchObject({
      [placement]: '{"cluster":"worker-3","attempt":2}',
      'jobrelay.dev/placement-attempt': '2',
      note: 'left alone',
    });
    ok(
      kubectl(who, [
        'annotate',
        'raycluster',
        name,
        '-n',
        namespace,
        `${placement}-`,
        'jobrelay.dev/placement-attempt-',
      ]),
    );
  });

  it('nor a RayJob is created carrying a placement record', () => {
    refused(
      kubectl(who, ['create', '-f', '-'], {
        apiVersion: 'ray.io/v1',
        kind: 'RayJob',
        metadata: {
          name: uniqueName('rayjob'),
          namespace,
          annotations: { 'jobrelay.dev/deadline-used-seconds': '0' },
        },
        spec: {
          managedBy: 'kueue.x-k8s.io/multikueue',
          entrypoint: 'python x.py',
          rayClusterSpec: { headGroupSpec: rayCluster('x').spec.headGroupSpec },
        },
      }),
      'annotation jobrelay.dev/deadline-used-seconds',
    );
  });
});

describe('the controller’s ServiceAccount', () => {
  it('sets, changes and removes every key on a Job', () => {
    const name = uniqueName('controller');
    ok(kubectl('admin', ['create', '-f', '-'], job(name)));
    const keys = [
      'jobrelay.dev/placement',
      'jobrelay.dev/unschedulable',
      'jobrelay.dev/continues-from',
      'jobrelay.dev/deadline-used-seconds',
      'jobrelay.dev/placement-attempt',
    ];
    for (const value of ['1', '2'])
      ok(
        kubectl('controller', [
          'annotate',
          '--overwrite',
          'job',
          name,
          '-n',
          namespace,
          ...keys.map((key) => `${key}=${value}`),
        ]),
      );
    ok(
      kubectl('controller', [
        'label',
        'job',
        name,
        '-n',
        namespace,
        'jobrelay.dev/origin=here',
        'jobrelay.dev/origin-uid=u',
      ]),
    );
    const metadata = metadataOf('job', name);
    for (const key of keys) expect(metadata.annotations?.[key], key).toBe('2');
    expect(metadata.labels).toMatchObject({ 'jobrelay.dev/origin': 'here', 'jobrelay.dev/origin-uid': 'u' });
    ok(kubectl('controller', ['annotate', 'job', name, '-n', namespace, `${placement}-`]));
  });
});
