// deploy/controller/rbac.yaml grants what the controller does to every built-in kind on the
// management cluster: a kind added to the list without its rules fails here, not in a cluster.
import { readFileSync } from 'node:fs';
import { builtInKinds } from '@jobrelay/kinds';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const documents = parseAllDocuments(
  readFileSync(new URL('../../../deploy/controller/rbac.yaml', import.meta.url), 'utf8'),
).map((d) => d.toJSON() as { kind: string; metadata: { name: string }; rules?: Rule[] });
const role = documents.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'jobrelay-controller')!;

function granted(group: string, resource: string, verb: string): boolean {
  return (role.rules ?? []).some(
    (r) =>
      r.apiGroups.includes(group) &&
      r.resources.includes(resource) &&
      r.verbs.includes(verb) &&
      !r.resourceNames,
  );
}

describe('the controller’s ClusterRole', () => {
  it.each(builtInKinds.map((kind) => [kind.name, kind.resource] as const))(
    'lets it watch, claim and write the status of %s origins',
    (_name, { group, plural }) => {
      for (const verb of ['get', 'list', 'watch', 'patch'])
        expect(granted(group, plural, verb), `${verb} ${plural}`).toBe(true);
      for (const verb of ['update', 'patch'])
        expect(granted(group, `${plural}/status`, verb), `${verb} ${plural}/status`).toBe(true);
    },
  );

  it('lets it read DispatchQueues and PriorityClasses and write queues’ status, and nothing more on queues', () => {
    for (const verb of ['get', 'list', 'watch']) {
      expect(granted('jobrelay.dev', 'dispatchqueues', verb), `${verb} dispatchqueues`).toBe(true);
      expect(granted('scheduling.k8s.io', 'priorityclasses', verb), `${verb} priorityclasses`).toBe(true);
    }
    for (const verb of ['update', 'patch'])
      expect(granted('jobrelay.dev', 'dispatchqueues/status', verb), `${verb} dispatchqueues/status`).toBe(
        true,
      );
    // Queues are the admins' to write: the controller only reports on them.
    for (const verb of ['create', 'update', 'patch', 'delete'])
      expect(granted('jobrelay.dev', 'dispatchqueues', verb), `${verb} dispatchqueues`).toBe(false);
    for (const verb of ['create', 'update', 'patch', 'delete'])
      expect(granted('scheduling.k8s.io', 'priorityclasses', verb), `${verb} priorityclasses`).toBe(false);
  });

  it('lets it look for Kueue’s MultiKueue, and holds no wildcard', () => {
    expect(granted('kueue.x-k8s.io', 'admissionchecks', 'list')).toBe(true);
    const wildcards = (role.rules ?? []).filter((r) =>
      [...r.apiGroups, ...r.resources, ...r.verbs].includes('*'),
    );
    expect(wildcards).toEqual([]);
  });
});

describe('the controller’s leader-election Role', () => {
  const role = documents.find(
    (d) => d.kind === 'Role' && d.metadata.name === 'jobrelay-controller-leader-election',
  ) as { metadata: { namespace?: string }; rules?: Rule[] } | undefined;

  it('lets it read, create and renew Leases in jobrelay-system only', () => {
    expect(role?.metadata.namespace).toBe('jobrelay-system');
    const verbs = (role?.rules ?? [])
      .filter((r) => r.apiGroups.includes('coordination.k8s.io') && r.resources.includes('leases'))
      .flatMap((r) => r.verbs);
    expect(new Set(verbs)).toEqual(new Set(['get', 'create', 'update']));
    const binding = documents.find(
      (d) => d.kind === 'RoleBinding' && d.metadata.name === 'jobrelay-controller-leader-election',
    ) as unknown as { roleRef: { name: string }; subjects: Array<{ name: string; namespace: string }> };
    expect(binding.roleRef.name).toBe('jobrelay-controller-leader-election');
    expect(binding.subjects).toEqual([
      expect.objectContaining({ name: 'jobrelay-controller', namespace: 'jobrelay-system' }),
    ]);
  });
});

describe('the controller’s Role in jobrelay-system', () => {
  const role = documents.find(
    (d) => d.kind === 'Role' && d.metadata.name === 'jobrelay-controller-kubeconfigs',
  ) as { metadata: { namespace?: string }; rules?: Rule[] } | undefined;

  it('lets it read kubeconfigs and create the record key Secret there, and nothing more on Secrets', () => {
    expect(role?.metadata.namespace).toBe('jobrelay-system');
    const verbs = (role?.rules ?? []).filter((r) => r.resources.includes('secrets')).flatMap((r) => r.verbs);
    expect(new Set(verbs)).toEqual(new Set(['get', 'create']));
  });
});
