// DispatchQueues as shipped: the chart's `queues` value renders DispatchQueue objects (none by
// default, so an install without queues is what it was), deploy/README.md's values snippet and
// deploy/examples/queues/two-teams.yaml describe the same two queues, and every one of them is a
// queue the controller can use (parseDispatchQueue, the code the controller reads queues with).
// Bad queue values fail `helm template` naming the value. Rendered with the pinned helm the
// chart tests use (built once into ~/.cache/jobrelay, or JOBRELAY_HELM).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDispatchQueue, type QueueSpec } from '@jobrelay/admission';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { resolveGoTool } from '../src/go-tools.ts';
import { repositoryRoot } from '../src/sandbox-layout.ts';

const chartDir = join(repositoryRoot, 'deploy/helm/jobrelay');
const scratch = mkdtempSync(join(tmpdir(), 'jobrelay-queue-chart-'));
let helm: string;

interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
}

function runHelm(args: string[]): { code: number; stdout: string; stderr: string } {
  const result = spawnSync(helm, args, {
    encoding: 'utf8',
    // helm's caches and configuration stay out of the user's home.
    env: {
      PATH: process.env.PATH,
      HOME: scratch,
      HELM_CACHE_HOME: join(scratch, 'cache'),
      HELM_CONFIG_HOME: join(scratch, 'config'),
      HELM_DATA_HOME: join(scratch, 'data'),
    },
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

function render(values: string[]): Rendered[] {
  const { code, stdout, stderr } = runHelm([
    'template',
    'jobrelay',
    chartDir,
    '-n',
    'jobrelay-system',
    ...values,
  ]);
  expect(code, stderr).toBe(0);
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Rendered | null)
    .filter((object): object is Rendered => Boolean(object?.kind));
}

function valuesFile(text: string): string[] {
  const file = join(mkdtempSync(join(scratch, 'values-')), 'values.yaml');
  writeFileSync(file, text);
  return ['-f', file];
}

/** The first ```yaml block of deploy/README.md that sets `queues:`. */
function readmeSnippet(): string {
  const readme = readFileSync(join(repositoryRoot, 'deploy/README.md'), 'utf8');
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => b.startsWith('queues:'));
  if (!block) throw new Error('deploy/README.md has no ```yaml block starting with queues:');
  return block;
}

function usable(object: unknown): QueueSpec {
  const parsed = parseDispatchQueue(object);
  if (parsed.kind !== 'ok') throw new Error(`unusable queue: ${parsed.problems.join('; ')}`);
  return parsed.spec;
}

const gib = 2 ** 30;
const twoTeams: QueueSpec[] = [
  {
    name: 'research',
    namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: ['research'] }] },
    cohort: 'shared',
    weight: 1,
    queueingStrategy: 'BestEffortFIFO',
    nominalQuota: { cpu: 4000, memory: 16 * gib },
    borrowingLimit: { cpu: 2000 },
    preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Never' },
  },
  {
    name: 'production',
    namespaceSelector: { requirements: [{ key: 'team', operator: 'Equals', values: ['production'] }] },
    cohort: 'shared',
    weight: 2,
    queueingStrategy: 'BestEffortFIFO',
    nominalQuota: { cpu: 12_000, memory: 48 * gib },
    preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' },
  },
];

beforeAll(async () => {
  helm = await resolveGoTool('helm', (line) => console.log(`[helm] ${line}`));
}, 30 * 60_000);

// helm's home and the values files, all under scratch.
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the chart’s queues', () => {
  it('are none by default', () => {
    expect(render([]).filter((o) => o.kind === 'DispatchQueue')).toEqual([]);
  });

  it('render deploy/README.md’s snippet as usable DispatchQueues of the release', () => {
    const queues = render(valuesFile(readmeSnippet())).filter((o) => o.kind === 'DispatchQueue');
    expect(queues.map((q) => q.apiVersion)).toEqual(['jobrelay.dev/v1alpha1', 'jobrelay.dev/v1alpha1']);
    // Cluster-scoped, and named as written: workloads name them by label.
    expect(queues.map((q) => [q.metadata.name, q.metadata.namespace])).toEqual([
      ['research', undefined],
      ['production', undefined],
    ]);
    expect(queues[0]!.metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': 'jobrelay' });
    expect(queues.map(usable)).toEqual(twoTeams);
  });

  it('are what deploy/examples/queues/two-teams.yaml applies', () => {
    const example = parseAllDocuments(
      readFileSync(join(repositoryRoot, 'deploy/examples/queues/two-teams.yaml'), 'utf8'),
    ).map((doc) => doc.toJS() as Rendered);
    expect(example.map((o) => o.kind)).toEqual(['DispatchQueue', 'DispatchQueue']);
    expect(example.map(usable)).toEqual(twoTeams);
  });

  it('pass helm lint --strict', () => {
    const { code, stdout, stderr } = runHelm(['lint', '--strict', chartDir, ...valuesFile(readmeSnippet())]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
  });

  const cpu = [{ name: 'cpu', nominalQuota: 1 }];
  it.each([
    {
      queues: [{ name: 'Research', resources: cpu }],
      says: "at '/queues/0/name': 'Research' does not match pattern",
    },
    {
      queues: [{ name: 'a', resources: [{ name: 'cpu', nominalQuota: '-1' }] }],
      says: "at '/queues/0/resources/0/nominalQuota': '-1' does not match pattern",
    },
    {
      queues: [{ name: 'a', resources: [{ name: 'cpu', nominalQuota: -1 }] }],
      says: "at '/queues/0/resources/0/nominalQuota': minimum: got -1, want 0",
    },
    {
      queues: [{ name: 'a', queueingStrategy: 'FIFO', resources: cpu }],
      says: "at '/queues/0/queueingStrategy': value must be one of 'StrictFIFO', 'BestEffortFIFO'",
    },
    { queues: [{ name: 'a', weight: 0, resources: cpu }], says: "at '/queues/0/weight': exclusiveMinimum" },
    { queues: [{ name: 'a', resources: [] }], says: "at '/queues/0/resources': minItems" },
    { queues: [{ name: 'a', resource: cpu }], says: "additional properties 'resource' not allowed" },
    {
      queues: [
        { name: 'a', resources: cpu },
        { name: 'a', resources: cpu },
      ],
      says: "queues[1].name: a is already queues[0]'s; DispatchQueues are cluster-scoped, one per name",
    },
    {
      queues: [{ name: 'a', resources: [{ name: 'cpu', nominalQuota: 4, borrowingLimit: 2 }] }],
      says: "queues[0].resources[0]: borrowingLimit and lendingLimit need the queue's cohort",
    },
  ])('refuse $queues, naming the value', ({ queues, says }) => {
    const { code, stderr } = runHelm([
      'template',
      'jobrelay',
      chartDir,
      '--set-json',
      `queues=${JSON.stringify(queues)}`,
    ]);
    expect(code).not.toBe(0);
    expect(stderr).toContain(says);
  });

  it('document every field of the CRD’s spec in values.schema.json', () => {
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as {
      properties: { queues: { items: { properties: Record<string, unknown> } } };
    };
    const crd = parse(
      readFileSync(join(repositoryRoot, 'deploy/crds/dispatchqueues.jobrelay.dev.yaml'), 'utf8'),
    ) as {
      spec: {
        versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: object } } } } }>;
      };
    };
    const specFields = Object.keys(crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties);
    expect(Object.keys(schema.properties.queues.items.properties).sort()).toEqual(
      ['name', ...specFields].sort(),
    );
  });
});
