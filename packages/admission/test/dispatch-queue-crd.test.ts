// The DispatchQueue CRD (deploy/crds) and the code that reads and writes its objects agree: the
// defaults and enums the apiserver applies are the parser's, the status schema holds exactly
// DispatchQueueStatus (a field the controller writes that the schema lacks would be pruned
// silently), and the chart ships the same CRD. The CEL rules were checked on a real apiserver
// (kube-apiserver v1.35.4) when written; deploy/README.md says what each refuses.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  dispatchQueueDefaults,
  queueingStrategies,
  reclaimPreemptions,
  withinQueuePreemptions,
} from '../src/dispatch-queue.ts';
import type { DispatchQueueStatus } from '../src/queue-model.ts';

const file = 'dispatchqueues.jobrelay.dev.yaml';

function read(path: string): unknown {
  return parse(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8'));
}

interface Schema {
  type?: string;
  default?: unknown;
  enum?: string[];
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-int-or-string'?: boolean;
}

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: Record<string, unknown>;
      additionalPrinterColumns: Array<{ name: string; jsonPath: string; priority?: number }>;
      schema: { openAPIV3Schema: Schema };
    }>;
  };
}

const crd = read(`deploy/crds/${file}`) as Crd;
const [version] = crd.spec.versions;
const root = version!.schema.openAPIV3Schema.properties!;
const spec = root.spec!.properties!;
const status = root.status!.properties!;

// Every field, so that a field added to DispatchQueueStatus fails to compile here until the
// schema below is checked for it.
const everyStatusField: Required<DispatchQueueStatus> = {
  pendingWorkloads: 0,
  admittedWorkloads: 0,
  usage: {},
  borrowed: {},
  share: '0',
  columns: { cpu: '-', memory: '-', gpu: '-' },
  conditions: [],
  observedGeneration: 1,
};

describe('the DispatchQueue CRD', () => {
  it('is jobrelay.dev/v1alpha1 DispatchQueue, cluster-scoped, short name dq, with a status subresource', () => {
    expect(crd.metadata.name).toBe('dispatchqueues.jobrelay.dev');
    expect(crd.spec).toMatchObject({
      group: 'jobrelay.dev',
      scope: 'Cluster',
      names: { kind: 'DispatchQueue', plural: 'dispatchqueues', shortNames: ['dq'] },
    });
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1alpha1', true, true]]);
    expect(version!.subresources).toEqual({ status: {} });
  });

  it('fills in the defaults the parser fills in', () => {
    expect(spec.weight!.default).toBe(dispatchQueueDefaults.weight);
    expect(spec.queueingStrategy!.default).toBe(dispatchQueueDefaults.queueingStrategy);
    const preemption = spec.preemption!.properties!;
    expect(preemption.withinQueue!.default).toBe(dispatchQueueDefaults.preemption.withinQueue);
    expect(preemption.reclaimWithinCohort!.default).toBe(
      dispatchQueueDefaults.preemption.reclaimWithinCohort,
    );
    // An absent preemption object gets its defaults too.
    expect(spec.preemption!.default).toEqual({});
  });

  it('accepts exactly the strategies and policies the parser accepts', () => {
    expect(spec.queueingStrategy!.enum).toEqual(queueingStrategies);
    expect(spec.preemption!.properties!.withinQueue!.enum).toEqual(withinQueuePreemptions);
    expect(spec.preemption!.properties!.reclaimWithinCohort!.enum).toEqual(reclaimPreemptions);
  });

  it('keys resources by name, each quota an integer or a quantity string', () => {
    const resources = spec.resources!;
    expect(resources['x-kubernetes-list-type']).toBe('map');
    expect(resources['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(resources.items!.required).toEqual(['name', 'nominalQuota']);
    for (const field of ['nominalQuota', 'borrowingLimit', 'lendingLimit'])
      expect(resources.items!.properties![field]!['x-kubernetes-int-or-string'], field).toBe(true);
  });

  it('stores exactly the status the controller writes', () => {
    expect(Object.keys(status).sort()).toEqual(Object.keys(everyStatusField).sort());
    expect(Object.keys(status.columns!.properties!).sort()).toEqual(
      Object.keys(everyStatusField.columns).sort(),
    );
    expect(status.conditions!.items!.properties!.status!.enum).toEqual(['True', 'False', 'Unknown']);
  });

  it('prints pending, admitted, cpu, memory, GPUs and share; the cohort with -o wide', () => {
    expect(version!.additionalPrinterColumns.map((c) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
      ['Pending', '.status.pendingWorkloads', 0],
      ['Admitted', '.status.admittedWorkloads', 0],
      ['CPU', '.status.columns.cpu', 0],
      ['Memory', '.status.columns.memory', 0],
      ['GPU', '.status.columns.gpu', 0],
      ['Share', '.status.share', 0],
      ['Cohort', '.spec.cohort', 1],
      ['Age', '.metadata.creationTimestamp', 0],
    ]);
  });

  it('is installed by deploy/crds and shipped unchanged by the chart', () => {
    expect((read('deploy/crds/kustomization.yaml') as { resources: string[] }).resources).toContain(file);
    expect(read(`deploy/helm/jobrelay/crds/${file}`)).toEqual(crd);
  });
});
