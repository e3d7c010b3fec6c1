// Malformed DispatchQueues are refused by the management apiserver itself (the CRD's schema and
// CEL rules in deploy/crds), with a message that names the field, and nothing is stored; a good
// one is stored with the schema's defaults, which are the ones the controller's parser
// (parseDispatchQueue) fills in, and the status the controller writes is kept whole.
import { parseDispatchQueue } from '@jobrelay/admission';
import { mergePatch } from '@jobrelay/kube';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal, statusCodeOf, testSandbox, uniqueName } from '../src/kube-test-helpers.ts';

let custom: CustomObjectsApi;
const created: string[] = [];
const resource = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };

beforeAll(() => {
  const sandbox = testSandbox();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name));
  custom = kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  for (const name of created) await custom.deleteClusterCustomObject({ ...resource, name }).catch(() => {});
});

function dispatchQueue(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'jobrelay.dev/v1alpha1', kind: 'DispatchQueue', metadata: { name }, spec };
}

const cpu = [{ name: 'cpu', nominalQuota: 4 }];

const bad: Array<{ what: string; name?: string; spec: Record<string, unknown>; says: RegExp }> = [
  {
    what: 'a name with a dot',
    name: 'team.research',
    spec: { resources: cpu },
    says: /metadata\.name must be a DNS label/,
  },
  { what: 'no resources', spec: {}, says: /spec\.resources: Required value/ },
  {
    what: 'a lendingLimit above nominalQuota',
    spec: { cohort: 'shared', resources: [{ name: 'memory', nominalQuota: '1Gi', lendingLimit: '2Gi' }] },
    says: /spec\.resources\[0\]\.lendingLimit: Invalid value: .*lendingLimit must not be above nominalQuota/,
  },
  {
    what: 'a negative quota as an integer',
    spec: { resources: [{ name: 'cpu', nominalQuota: -4 }] },
    says: /spec\.resources\[0\]\.nominalQuota: Invalid value: -4: must not be negative/,
  },
  {
    what: 'a negative quota as a quantity',
    spec: { resources: [{ name: 'memory', nominalQuota: '-1Gi' }] },
    says: /spec\.resources\[0\]\.nominalQuota: Invalid value: "-1Gi": must not be negative/,
  },
  {
    what: 'a quota that is not a quantity',
    spec: { resources: [{ name: 'cpu', nominalQuota: 'lots' }] },
    says: /spec\.resources\[0\]\.nominalQuota: Invalid value: "lots": must be a Kubernetes quantity/,
  },
  {
    what: 'a borrowingLimit without a cohort',
    spec: { resources: [{ name: 'cpu', nominalQuota: 4, borrowingLimit: 2 }] },
    says: /spec: Invalid value: .*borrowingLimit and lendingLimit need a cohort/,
  },
  {
    what: 'a resource listed twice',
    spec: { resources: [...cpu, { name: 'cpu', nominalQuota: 8 }] },
    says: /spec\.resources\[1\]: Duplicate value: .*"cpu"/,
  },
  {
    what: 'a resource name with a space',
    spec: { resources: [{ name: 'GPU cards', nominalQuota: 1 }] },
    says: /spec\.resources\[0\]\.name: Invalid value.*must be a resource name/,
  },
  {
    what: 'an unknown queueing strategy',
    spec: { resources: cpu, queueingStrategy: 'FIFO' },
    says: /spec\.queueingStrategy: Unsupported value: "FIFO": supported values: "StrictFIFO", "BestEffortFIFO"/,
  },
  {
    what: 'an unknown preemption policy',
    spec: { resources: cpu, preemption: { reclaimWithinCohort: 'Some' } },
    says: /spec\.preemption\.reclaimWithinCohort: Unsupported value: "Some"/,
  },
  {
    what: 'a weight of 0',
    spec: { resources: cpu, weight: 0 },
    says: /spec\.weight: Invalid value: 0: .*greater than 0/,
  },
  {
    what: 'a cohort that is not a DNS label',
    spec: { resources: cpu, cohort: 'Shared_Pool' },
    says: /spec\.cohort: Invalid value.*must be a DNS label/,
  },
  {
    what: 'In without values',
    spec: { resources: cpu, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } },
    says: /In and NotIn need values; Exists and DoesNotExist take none/,
  },
  {
    what: 'a selector operator LabelSelector does not have',
    spec: {
      resources: cpu,
      namespaceSelector: { matchExpressions: [{ key: 'gpus', operator: 'Gt', values: ['1'] }] },
    },
    says: /spec\.namespaceSelector\.matchExpressions\[0\]\.operator: Unsupported value: "Gt"/,
  },
];

describe('DispatchQueue validation by the management apiserver', () => {
  it.each(bad)(
    'refuses $what with a message naming the field, and stores nothing',
    async ({ name, spec, says }) => {
      const objectName = name ?? uniqueName('invalid-queue');
      const { code, message } = await refusal(
        custom.createClusterCustomObject({ ...resource, body: dispatchQueue(objectName, spec) }),
      );
      expect(code).toBe(422);
      expect(message).toMatch(says);
      expect(await statusCodeOf(custom.getClusterCustomObject({ ...resource, name: objectName }))).toBe(404);
    },
  );

  it('stores a minimal queue with the defaults the controller’s parser fills in', async () => {
    const name = uniqueName('queue');
    created.push(name);
    const body = dispatchQueue(name, { resources: [{ name: 'cpu', nominalQuota: '500m' }] });
    const stored = await custom.createClusterCustomObject({ ...resource, body });
    const fromServer = parseDispatchQueue(stored);
    expect(fromServer.kind).toBe('ok');
    expect(fromServer).toEqual(parseDispatchQueue(body));
    expect((stored as { spec: unknown }).spec).toEqual({
      resources: [{ name: 'cpu', nominalQuota: '500m' }],
      weight: 1,
      queueingStrategy: 'BestEffortFIFO',
      preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
    });
  });

  it('accepts every field, keeps the status the controller writes, and refuses a bad update', async () => {
    const name = uniqueName('queue');
    created.push(name);
    const spec = {
      namespaceSelector: {
        matchLabels: { team: 'research' },
        matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['frozen'] }],
      },
      cohort: 'shared',
      weight: 1.5,
      queueingStrategy: 'StrictFIFO',
      resources: [
        { name: 'cpu', nominalQuota: 40, borrowingLimit: '8', lendingLimit: '10' },
        { name: 'memory', nominalQuota: '64Gi' },
        { name: 'nvidia.com/gpu', nominalQuota: 8 },
        { name: 'workloads', nominalQuota: 100 },
      ],
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
    };
    const stored = (await custom.createClusterCustomObject({
      ...resource,
      body: dispatchQueue(name, spec),
    })) as {
      metadata: { resourceVersion: string };
      spec: unknown;
    };
    expect(stored.spec).toEqual(spec);
    expect(parseDispatchQueue(stored).kind).toBe('ok');

    const status = {
      pendingWorkloads: 3,
      admittedWorkloads: 2,
      usage: { cpu: '4', memory: '8Gi' },
      borrowed: {},
      share: '0.1',
      columns: { cpu: '4/40', memory: '8Gi/64Gi', gpu: '0/8' },
      conditions: [
        {
          type: 'Active',
          status: 'True',
          reason: 'Valid',
          message: 'admitting',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      observedGeneration: 1,
    };
    const withStatus = (await custom.patchClusterCustomObjectStatus(
      { ...resource, name, body: { status } },
      mergePatch,
    )) as { status: unknown };
    expect(withStatus.status).toEqual(status);

    const { code, message } = await refusal(
      custom.patchClusterCustomObject({ ...resource, name, body: { spec: { weight: -1 } } }, mergePatch),
    );
    expect(code).toBe(422);
    expect(message).toMatch(/spec\.weight/);
    const after = (await custom.getClusterCustomObject({ ...resource, name })) as { spec: unknown };
    expect(after.spec).toEqual(spec);
  });
});
