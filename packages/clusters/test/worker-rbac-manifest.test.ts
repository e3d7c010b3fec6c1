// deploy/worker grants exactly what the controller uses on a worker for the kinds jobrelay
// ships (workerPermissions), without wildcards, to the identity whose kubeconfig is registered.

import { readFileSync } from 'node:fs';
import { batchJobAdapter, builtInKind, builtInKinds } from '@jobrelay/kinds';
import type { V1ClusterRole, V1ClusterRoleBinding, V1PolicyRule } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  clusterPermissions,
  deniedPermissions,
  kindPermissions,
  workerPermissions as permissionsFor,
  summarizePermissions,
  type WorkerKind,
  type WorkerPermission,
} from '../src/worker-permissions.ts';

/** The kinds deploy/worker is written for: every built-in kind. */
const shippedKinds: readonly WorkerKind[] = builtInKinds;
const workerPermissions = permissionsFor(shippedKinds);

const workerDir = new URL('../../../deploy/worker/', import.meta.url);

interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** Every object `kubectl apply -k deploy/worker` applies. */
function workerManifests(): ManifestObject[] {
  const kustomization = parse(readFileSync(new URL('kustomization.yaml', workerDir), 'utf8')) as {
    resources: string[];
  };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(new URL(file, workerDir), 'utf8')).map(
      (doc) => doc.toJS() as ManifestObject,
    ),
  );
}

function ofKind<T>(kind: string): T[] {
  return workerManifests().filter((o) => o.kind === kind) as T[];
}

/** One string per (group, resource, verb, resourceNames) a rule grants. */
function expand(rule: V1PolicyRule): string[] {
  const names = rule.resourceNames ? [...rule.resourceNames].sort().join(',') : '*';
  return (rule.apiGroups ?? []).flatMap((group) =>
    (rule.resources ?? []).flatMap((resource) =>
      rule.verbs.map((verb) => `${group}|${resource}|${verb}|${names}`),
    ),
  );
}

function key(p: WorkerPermission): string {
  const names = p.resourceNames ? [...p.resourceNames].sort().join(',') : '*';
  return `${p.group}|${p.resource}|${p.verb}|${names}`;
}

describe('deploy/worker', () => {
  it("is written for batch/v1 Job and KubeRay's RayCluster and RayJob", () => {
    expect(shippedKinds.map((kind) => kind.name)).toEqual(['job', 'raycluster', 'rayjob']);
  });

  it('has one ClusterRole and no namespaced Role', () => {
    expect(ofKind<V1ClusterRole>('ClusterRole').map((r) => r.metadata?.name)).toEqual(['jobrelay-worker']);
    expect(ofKind('Role')).toEqual([]);
  });

  it('uses no wildcard in any apiGroup, resource, verb or URL', () => {
    const rules = ofKind<V1ClusterRole>('ClusterRole').flatMap((r) => r.rules ?? []);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      const values = [
        ...(rule.apiGroups ?? []),
        ...(rule.resources ?? []),
        ...rule.verbs,
        ...(rule.nonResourceURLs ?? []),
      ];
      expect(
        values.filter((v) => v.includes('*')),
        JSON.stringify(rule),
      ).toEqual([]);
      expect(rule.nonResourceURLs, 'no non-resource URLs').toBeUndefined();
      expect(rule.resources?.length, 'a rule names its resources').toBeGreaterThan(0);
    }
    expect(ofKind<V1ClusterRole>('ClusterRole').every((r) => r.aggregationRule === undefined)).toBe(true);
  });

  it('grants exactly the permissions the controller uses for the shipped kinds, each once', () => {
    const granted = ofKind<V1ClusterRole>('ClusterRole').flatMap((r) => (r.rules ?? []).flatMap(expand));
    expect(new Set(granted).size, 'no permission granted twice').toBe(granted.length);
    expect([...granted].sort()).toEqual(workerPermissions.map(key).sort());
  });

  it('covers the calls the controller makes for capacity, mirrors and duplicate detection', () => {
    const has = (group: string, resource: string, verb: string) =>
      workerPermissions.some((p) => p.group === group && p.resource === resource && p.verb === verb);
    for (const verb of ['list', 'watch']) {
      expect(has('', 'nodes', verb), `${verb} nodes`).toBe(true);
      expect(has('', 'pods', verb), `${verb} pods`).toBe(true);
    }
    for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'])
      expect(has('batch', 'jobs', verb), `${verb} jobs`).toBe(true);
    for (const verb of ['get', 'patch', 'update']) expect(has('batch', 'jobs/status', verb)).toBe(true);
    for (const resource of ['rayclusters', 'rayjobs']) {
      for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'])
        expect(has('ray.io', resource, verb), `${verb} ${resource}`).toBe(true);
      for (const verb of ['get', 'patch', 'update'])
        expect(has('ray.io', `${resource}/status`, verb)).toBe(true);
    }
    expect(has('', 'namespaces', 'create')).toBe(true);
    expect(
      workerPermissions.find((p) => p.resource === 'namespaces' && p.verb === 'get')?.resourceNames,
    ).toEqual(['kube-system']);
    expect(has('', 'pods/log', 'get')).toBe(true);
    // A worker's own Kueue's Workloads: read only, and optional (a worker without Kueue, or
    // whose admin leaves the rule out, is still Active).
    expect(workerPermissions.filter((p) => p.group === 'kueue.x-k8s.io')).toEqual([
      { group: 'kueue.x-k8s.io', resource: 'workloads', verb: 'get', required: false },
      { group: 'kueue.x-k8s.io', resource: 'workloads', verb: 'list', required: false },
    ]);
    // Nothing that writes pods or reads Secrets.
    expect(
      workerPermissions.filter((p) => p.resource === 'pods' && !['list', 'watch'].includes(p.verb)),
    ).toEqual([]);
    expect(workerPermissions.filter((p) => p.resource === 'secrets')).toEqual([]);
  });

  it('binds the ClusterRole to the jobrelay-dispatcher ServiceAccount in jobrelay-system', () => {
    const bindings = ofKind<V1ClusterRoleBinding>('ClusterRoleBinding');
    expect(bindings).toHaveLength(1);
    expect(bindings[0]!.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'jobrelay-worker',
    });
    expect(bindings[0]!.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'jobrelay-dispatcher', namespace: 'jobrelay-system' },
    ]);
    const accounts = ofKind<ManifestObject>('ServiceAccount');
    expect(accounts.map((a) => `${a.metadata.namespace}/${a.metadata.name}`)).toEqual([
      'jobrelay-system/jobrelay-dispatcher',
    ]);
  });
});

describe('deniedPermissions', () => {
  it('asks one access review per permission and returns the denied ones', async () => {
    const asked: unknown[] = [];
    const denied = await deniedPermissions(
      {
        createSelfSubjectAccessReview: async ({ body }) => {
          asked.push(body.spec.resourceAttributes);
          const allowed = body.spec.resourceAttributes?.resource !== 'nodes';
          return { ...body, status: { allowed } };
        },
      },
      workerPermissions.filter((p) => p.required),
    );
    expect(asked).toContainEqual({ group: '', resource: 'nodes', verb: 'watch' });
    expect(asked).toContainEqual({ group: 'batch', resource: 'jobs', verb: 'create' });
    expect(asked).toHaveLength(workerPermissions.filter((p) => p.required).length);
    expect(summarizePermissions(denied)).toBe('list, watch nodes');
  });

  it('sends subresources and resource names the way the authorizer expects them', async () => {
    const asked: unknown[] = [];
    await deniedPermissions(
      {
        createSelfSubjectAccessReview: async ({ body }) => {
          asked.push(body.spec.resourceAttributes);
          return { ...body, status: { allowed: true } };
        },
      },
      workerPermissions.filter((p) => p.resource === 'jobs/status' || p.resourceNames),
    );
    expect(asked).toContainEqual({ group: 'batch', resource: 'jobs', subresource: 'status', verb: 'patch' });
    expect(asked).toContainEqual({ group: '', resource: 'namespaces', verb: 'get', name: 'kube-system' });
  });

  it('summarizes by resource, naming the group of non-core resources', () => {
    const pick = (resource: string, verb: string) =>
      workerPermissions.find((p) => p.resource === resource && p.verb === verb)!;
    expect(summarizePermissions([pick('jobs', 'create'), pick('jobs', 'delete'), pick('pods', 'list')])).toBe(
      'create, delete jobs.batch; list pods',
    );
    expect(summarizePermissions([pick('jobs/status', 'patch'), pick('pods/log', 'get')])).toBe(
      'patch jobs.batch/status; get pods/log',
    );
  });
});

describe('workerPermissions', () => {
  it("derives a kind's permissions from its adapter: its group and plural, nothing named", () => {
    const kind: WorkerKind = {
      name: 'widget',
      resource: { group: 'example.com', version: 'v2', kind: 'Widget', plural: 'widgets' },
    };
    const permissions = kindPermissions(kind);
    expect(permissions.every((p) => p.group === 'example.com')).toBe(true);
    expect(new Set(permissions.map((p) => p.resource))).toEqual(new Set(['widgets', 'widgets/status']));
    expect(
      permissions
        .filter((p) => p.required)
        .map((p) => `${p.verb} ${p.resource}`)
        .sort(),
    ).toEqual([
      'create widgets',
      'delete widgets',
      'get widgets',
      'list widgets',
      'patch widgets',
      'watch widgets',
    ]);
    expect(permissionsFor([kind])).toEqual([...permissions, ...clusterPermissions]);
    expect(permissionsFor([])).toEqual([...clusterPermissions]);
  });

  it('requires patching the status subresource only of kinds that seed a mirror status', () => {
    const statusPatch = (kind: WorkerKind) =>
      kindPermissions(kind).find((p) => p.resource.endsWith('/status') && p.verb === 'patch')?.required;
    expect(batchJobAdapter.mirrorStatusSeed).toBeDefined();
    expect(statusPatch(batchJobAdapter)).toBe(true);
    expect(statusPatch(builtInKind('raycluster')!)).toBe(false);
    expect(statusPatch(builtInKind('rayjob')!)).toBe(false);
  });
});

describe('deploy/worker dispatcher policies', () => {
  interface Policy {
    metadata: { name: string };
    spec: {
      matchConstraints: { resourceRules: Array<{ apiGroups: string[]; resources: string[] }> };
      matchConditions: Array<{ expression: string }>;
    };
  }
  const policies = ofKind<Policy>('ValidatingAdmissionPolicy');
  const bindings = ofKind<{ spec: { policyName: string; validationActions: string[] } }>(
    'ValidatingAdmissionPolicyBinding',
  );

  it('judge only the jobrelay-dispatcher identity, and deny what they refuse', () => {
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([
      'jobrelay-dispatcher-namespaces',
      'jobrelay-dispatcher-system-namespaces',
    ]);
    for (const policy of policies) {
      expect(policy.spec.matchConditions).toEqual([
        {
          name: 'jobrelay-dispatcher',
          expression:
            "request.userInfo.username == 'system:serviceaccount:jobrelay-system:jobrelay-dispatcher'",
        },
      ]);
      expect(
        bindings.find((b) => b.spec.policyName === policy.metadata.name)?.spec.validationActions,
      ).toEqual(['Deny']);
    }
  });

  it('keep every shipped kind out of the system namespaces, its status too', () => {
    const rules = policies.find((p) => p.metadata.name === 'jobrelay-dispatcher-system-namespaces')!.spec
      .matchConstraints.resourceRules;
    const covered = (group: string, resource: string) =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource));
    for (const { resource } of shippedKinds) {
      expect(covered(resource.group, resource.plural), resource.plural).toBe(true);
      expect(covered(resource.group, `${resource.plural}/status`), `${resource.plural}/status`).toBe(true);
    }
  });
});
