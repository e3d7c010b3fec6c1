// deploy/api grants what the admin API's design names, no more, and owns no object that
// deploy/controller (applied first, on the same cluster) already owns.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject, V1ClusterRole, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { apiManifests, sandboxApiBindings, teamNamespace } from '../src/api-access.ts';
import { repositoryRoot } from '../src/sandbox-layout.ts';

/** Every object `kubectl apply -k <dir>` applies, following directory resources. */
function kustomize(dir: string): KubernetesObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  return kustomization.resources.flatMap((resource) => {
    const path = join(dir, resource);
    if (statSync(path).isDirectory()) return kustomize(path);
    return parseAllDocuments(readFileSync(path, 'utf8'))
      .map((doc) => doc.toJS() as KubernetesObject | null)
      .filter((o): o is KubernetesObject => Boolean(o?.kind));
  });
}

function identify(o: KubernetesObject): string {
  return `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
}

/** One `group|resource|verb` (or `url|verb`) per grant, sorted. */
function grants(rules: V1PolicyRule[] | undefined): string[] {
  return (rules ?? [])
    .flatMap((rule) => [
      ...(rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).flatMap((resource) =>
          rule.verbs.map((verb) => `${group}|${resource}|${verb}`),
        ),
      ),
      ...(rule.nonResourceURLs ?? []).flatMap((url) => rule.verbs.map((verb) => `${url}|${verb}`)),
    ])
    .sort();
}

function expand(groups: string[], resources: string[], verbs: string[]): string[] {
  return groups.flatMap((g) => resources.flatMap((r) => verbs.map((v) => `${g}|${r}|${v}`)));
}

const read = ['get', 'list', 'watch'];
const all = [...read, 'create', 'update', 'patch', 'delete'];
const events = expand(['', 'events.k8s.io'], ['events'], read);
/** KubeRay's kinds, read-only: the API shows them, never writes them. */
const rayKinds = expand(['ray.io'], ['rayclusters', 'rayjobs'], read);

function role(kind: 'ClusterRole' | 'Role', name: string): V1ClusterRole | V1Role {
  const found = apiManifests().find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`deploy/api has no ${kind} ${name}`);
  return found as V1ClusterRole;
}

describe('deploy/api', () => {
  it('grants jobrelay-admin exactly the fleet operations', () => {
    expect(grants(role('ClusterRole', 'jobrelay-admin').rules)).toEqual(
      [
        ...expand(['jobrelay.dev'], ['workerclusters'], all),
        ...expand(['jobrelay.dev'], ['workerclusters/cordon', 'workerclusters/drain'], ['update']),
        // Queues are the admins' to write; nobody but the controller writes their status.
        ...expand(['jobrelay.dev'], ['dispatchqueues'], all),
        ...expand(['batch'], ['jobs'], read),
        ...rayKinds,
        '|pods/log|get',
        ...events,
        '/metrics|get',
      ].sort(),
    );
  });

  it('grants jobrelay-admin-credentials only Secret create/delete/get', () => {
    expect(grants(role('ClusterRole', 'jobrelay-admin-credentials').rules)).toEqual(
      expand([''], ['secrets'], ['create', 'delete', 'get']).sort(),
    );
  });

  it('grants jobrelay-viewer reads only', () => {
    expect(grants(role('ClusterRole', 'jobrelay-viewer').rules)).toEqual(
      [
        ...expand(['jobrelay.dev'], ['workerclusters', 'dispatchqueues'], read),
        ...expand(['batch'], ['jobs'], read),
        ...rayKinds,
        '|pods/log|get',
        ...events,
        '/metrics|get',
      ].sort(),
    );
  });

  it('grants the API process reviews, WorkerClusters, reads of DispatchQueues, PriorityClasses and every built-in kind, and Secrets only in jobrelay-system', () => {
    expect(grants(role('ClusterRole', 'jobrelay-api').rules)).toEqual(
      [
        'authentication.k8s.io|tokenreviews|create',
        'authorization.k8s.io|subjectaccessreviews|create',
        ...expand(['jobrelay.dev'], ['workerclusters'], all),
        ...expand(['jobrelay.dev'], ['dispatchqueues'], read),
        ...expand(['scheduling.k8s.io'], ['priorityclasses'], read),
        ...expand(['batch'], ['jobs'], read),
        ...rayKinds,
        'kueue.x-k8s.io|admissionchecks|list',
        ...events,
        ...expand([''], ['namespaces'], read),
      ].sort(),
    );
    const secrets = role('Role', 'jobrelay-api');
    expect(secrets.metadata?.namespace).toBe('jobrelay-system');
    // Read one by one (get), never listed or watched: a list would hand it every Secret there.
    expect(grants(secrets.rules)).toEqual(expand([''], ['secrets'], ['get', 'create', 'delete']).sort());
  });

  it('binds the jobrelay-api ServiceAccount to its ClusterRole and Role', () => {
    const bindings = apiManifests().filter((o) => o.kind?.endsWith('Binding')) as Array<
      KubernetesObject & { roleRef: { kind: string; name: string }; subjects: unknown[] }
    >;
    expect(bindings.map((b) => [identify(b), `${b.roleRef.kind}/${b.roleRef.name}`, b.subjects])).toEqual([
      [
        'ClusterRoleBinding//jobrelay-api',
        'ClusterRole/jobrelay-api',
        [{ kind: 'ServiceAccount', name: 'jobrelay-api', namespace: 'jobrelay-system' }],
      ],
      [
        'RoleBinding/jobrelay-system/jobrelay-api',
        'Role/jobrelay-api',
        [{ kind: 'ServiceAccount', name: 'jobrelay-api', namespace: 'jobrelay-system' }],
      ],
    ]);
  });

  it('uses no wildcard', () => {
    const text = readFileSync(join(repositoryRoot, 'deploy', 'api', 'rbac.yaml'), 'utf8');
    expect(text).not.toMatch(/["']\*["']/);
  });

  it("owns no object of deploy/controller's, and relies on its jobrelay-system namespace", () => {
    const controller = kustomize(join(repositoryRoot, 'deploy', 'controller'));
    const owned = new Set(controller.map(identify));
    const api = kustomize(join(repositoryRoot, 'deploy', 'api'));
    expect(api.map(identify).filter((id) => owned.has(id))).toEqual([]);
    expect(api.filter((o) => o.kind === 'Namespace')).toEqual([]);
    expect(owned.has('Namespace//jobrelay-system')).toBe(true);
    expect(new Set(api.flatMap((o) => (o.metadata?.namespace ? [o.metadata.namespace] : [])))).toEqual(
      new Set(['jobrelay-system']),
    );
    // apiManifests() is what the sandbox applies: the same objects as `kubectl apply -k`.
    expect(apiManifests().map(identify)).toEqual(api.map(identify));
  });
});

describe('the sandbox bindings', () => {
  it('bind jobrelay-admin-credentials through a RoleBinding in jobrelay-system only', () => {
    const refs = sandboxApiBindings().filter(
      (o) => (o as { roleRef?: { name: string } }).roleRef?.name === 'jobrelay-admin-credentials',
    );
    expect(refs.map(identify)).toEqual(['RoleBinding/jobrelay-system/sandbox-fleet-admin-credentials']);
  });

  it('give team-a rights in its own namespace only', () => {
    const teamA = sandboxApiBindings().filter((o) =>
      ((o as { subjects?: Array<{ name: string }> }).subjects ?? []).some((s) => s.name === 'team-a'),
    );
    expect(teamA.map(identify)).toEqual([`RoleBinding/${teamNamespace}/sandbox-team-a`]);
  });
});
