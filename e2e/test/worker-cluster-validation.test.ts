// Malformed WorkerClusters are refused by the management apiserver itself (the CRD's schema and
// CEL rules in deploy/crds), with a message that says what to fix, and nothing is stored: not on
// create, and not on an update of a good one (it stays as it was).
import { mergePatch } from '@jobrelay/kube';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, fleetOf } from '../src/dispatch-fixtures.ts';
import { refusal, statusCodeOf, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

let fleet: Fleet;
let custom: CustomObjectsApi;
const created: string[] = [];
const resource = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'workerclusters' };

beforeAll(() => {
  fleet = fleetOf(testSandbox());
  custom = fleet.management.kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  for (const name of created) await custom.deleteClusterCustomObject({ ...resource, name }).catch(() => {});
});

function workerCluster(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'jobrelay.dev/v1alpha1', kind: 'WorkerCluster', metadata: { name }, spec };
}

const secretRef = { kubeconfigSecretRef: { name: 'worker-x' } };

const bad: Array<{ what: string; name?: string; spec: Record<string, unknown>; says: RegExp }> = [
  {
    what: 'a name with a dot',
    name: 'worker.one',
    spec: secretRef,
    says: /metadata\.name must be a DNS label/,
  },
  {
    what: 'a 64-character name',
    name: 'w'.repeat(64),
    spec: secretRef,
    says: /metadata\.name must be a DNS label/,
  },
  { what: 'no kubeconfigSecretRef', spec: {}, says: /spec\.kubeconfigSecretRef: Required value/ },
  {
    what: 'an empty Secret name',
    spec: { kubeconfigSecretRef: { name: '' } },
    says: /kubeconfigSecretRef\.name.*at least 1 chars/,
  },
  {
    what: 'a Secret name with capitals',
    spec: { kubeconfigSecretRef: { name: 'Worker_X' } },
    says: /kubeconfigSecretRef\.name: Invalid value.*must be the name of a Secret in the controller's namespace/,
  },
  {
    what: 'a data key with a slash',
    spec: { kubeconfigSecretRef: { name: 'worker-x', key: 'config/admin' } },
    says: /kubeconfigSecretRef\.key: Invalid value.*must be a Secret data key/,
  },
  {
    what: 'weight 101',
    spec: { ...secretRef, weight: 101 },
    says: /spec\.weight: Invalid value: 101: .*less than or equal to 100/,
  },
  {
    what: 'a negative weight',
    spec: { ...secretRef, weight: -1 },
    says: /spec\.weight: Invalid value: -1: .*greater than or equal to 0/,
  },
  {
    what: 'a weight that is a word',
    spec: { ...secretRef, weight: 'high' },
    says: /spec\.weight: Invalid value: "string": .*must be of type integer/,
  },
  {
    what: 'unschedulable as a word',
    spec: { ...secretRef, unschedulable: 'yes' },
    says: /spec\.unschedulable: Invalid value: "string": .*must be of type boolean/,
  },
  {
    what: 'a negative maxActiveWorkloads',
    spec: { ...secretRef, maxActiveWorkloads: -5 },
    says: /spec\.maxActiveWorkloads: Invalid value: -5/,
  },
  {
    what: 'a namespace listed twice',
    spec: { ...secretRef, allowedNamespaces: ['team-a', 'team-a'] },
    says: /spec\.allowedNamespaces\[1\]: Duplicate value: "team-a"/,
  },
  {
    what: 'a namespace that cannot exist',
    spec: { ...secretRef, allowedNamespaces: ['Team A'] },
    says: /spec\.allowedNamespaces\[0\]: Invalid value.*must be a namespace name/,
  },
  {
    what: 'a pod restriction that is a word',
    spec: { ...secretRef, podRestrictions: { refusePrivileged: 'yes' } },
    says: /spec\.podRestrictions\.refusePrivileged: Invalid value: "string": .*must be of type boolean/,
  },
  {
    what: 'an empty list of allowed ServiceAccounts (absent allows any)',
    spec: { ...secretRef, podRestrictions: { allowedServiceAccounts: [] } },
    says: /spec\.podRestrictions\.allowedServiceAccounts: Invalid value: .*at least 1 items/,
  },
  {
    what: 'an allowed ServiceAccount that cannot exist',
    spec: { ...secretRef, podRestrictions: { allowedServiceAccounts: ['Build Bot'] } },
    says: /spec\.podRestrictions\.allowedServiceAccounts\[0\]: Invalid value.*must be a ServiceAccount name/,
  },
  {
    what: 'an allowed ServiceAccount listed twice',
    spec: { ...secretRef, podRestrictions: { allowedServiceAccounts: ['runner', 'runner'] } },
    says: /spec\.podRestrictions\.allowedServiceAccounts\[1\]: Duplicate value: "runner"/,
  },
];

describe('WorkerCluster validation by the management apiserver', () => {
  it.each(bad)(
    'refuses $what with a message that says what to fix, and stores nothing',
    async ({ name, spec, says }) => {
      const objectName = name ?? uniqueName('invalid');
      const { code, message } = await refusal(
        custom.createClusterCustomObject({ ...resource, body: workerCluster(objectName, spec) }),
      );
      expect(code).toBe(422);
      expect(message).toMatch(says);
      expect(await statusCodeOf(custom.getClusterCustomObject({ ...resource, name: objectName }))).toBe(404);
    },
  );

  it('accepts a good one with every field, and refuses a bad update of it, which leaves it as it was', async () => {
    const name = uniqueName('valid');
    created.push(name);
    const spec = {
      kubeconfigSecretRef: { name: 'worker-x.config', key: 'kube_config.yaml' },
      weight: 0,
      unschedulable: false,
      drain: false,
      maxActiveWorkloads: 0,
      allowedNamespaces: ['team-a', 'b2'],
      podRestrictions: {
        refusePrivileged: true,
        refuseHostPath: true,
        refuseHostNamespaces: false,
        refuseNodeName: true,
        allowedServiceAccounts: ['default', 'runner.v2'],
      },
    };
    const stored = (await custom.createClusterCustomObject({
      ...resource,
      body: workerCluster(name, spec),
    })) as {
      metadata: { resourceVersion: string };
      spec: unknown;
    };
    expect(stored.spec).toEqual(spec);
    const { code, message } = await refusal(
      custom.patchClusterCustomObject(
        { ...resource, name, body: { spec: { allowedNamespaces: ['team-a', 'not valid'] } } },
        mergePatch,
      ),
    );
    expect(code).toBe(422);
    expect(message).toMatch(/must be a namespace name/);
    const after = (await custom.getClusterCustomObject({ ...resource, name })) as {
      metadata: { resourceVersion: string };
      spec: unknown;
    };
    expect(after.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    expect(after.spec).toEqual(spec);
  });
});
