import { describe, expect, it } from 'vitest';
import {
  genericKindConfig,
  genericKindConfigSchema,
  parseGenericKindConfigs,
} from '../../src/generic/generic-kind-config.ts';
import { genericKindExamples, jobSetKind, trainJobKind } from '../../src/generic/generic-kind-examples.ts';

const minimal = {
  name: 'widget',
  group: 'example.com',
  version: 'v1beta1',
  kind: 'Widget',
  plural: 'widgets',
  managedBy: { default: 'jobrelay.dev/dispatcher' },
};

function problem(text: string): string {
  const result = parseGenericKindConfigs(text);
  if (result.ok) throw new Error(`expected a problem, parsed ${JSON.stringify(result.configs)}`);
  return result.problem;
}

describe('generic kind configuration', () => {
  it('accepts every ready-made example', () => {
    for (const example of Object.values(genericKindExamples)) {
      expect(genericKindConfigSchema.safeParse(example).success, example.name).toBe(true);
    }
  });

  it('applies defaults: no finish rules, no pod sets, condition status True', () => {
    const result = genericKindConfig({ ...minimal, finishedConditions: [{ type: 'Done' }] });
    expect(result).toEqual({
      ok: true,
      configs: [
        {
          ...minimal,
          finishedConditions: [{ type: 'Done', status: 'True' }],
          finishedFields: [],
          podSets: [],
        },
      ],
    });
  });

  it('parses JSON and YAML, one kind or a list', () => {
    const one = parseGenericKindConfigs(JSON.stringify(jobSetKind));
    expect(one.ok && one.configs.map((c) => c.name)).toEqual(['jobset']);
    const yaml = `
- name: jobset
  group: jobset.x-k8s.io
  version: v1alpha2
  kind: JobSet
  plural: jobsets
  managedBy: {default: jobrelay.dev/dispatcher}
  finishedConditions: [{type: Completed}, {type: Failed}]
  suspendField: spec.suspend
- ${JSON.stringify(trainJobKind)}
`;
    const list = parseGenericKindConfigs(yaml);
    expect(list.ok && list.configs.map((c) => [c.name, c.finishedConditions.length])).toEqual([
      ['jobset', 2],
      ['trainjob', 2],
    ]);
  });

  it('names the field of every problem', () => {
    expect(problem(JSON.stringify({ ...minimal, plural: 'Widgets' }))).toBe(
      'plural: must be lower-case letters, digits and dashes',
    );
    expect(
      problem(JSON.stringify([minimal, { ...minimal, name: 'other', managedBy: { default: 'dispatcher' } }])),
    ).toBe('kinds[1].managedBy.default: must be a domain-prefixed path such as example.com/dispatcher');
    expect(
      problem(
        JSON.stringify({
          ...minimal,
          managedBy: { default: 'a.io/x', accepted: ['kueue.x-k8s.io/multikueue'] },
        }),
      ),
    ).toBe('managedBy.default: default must be one of accepted');
    expect(problem(JSON.stringify({ ...minimal, suspendField: 'status.suspended' }))).toBe(
      'suspendField: must be a field under spec (the mirror must be suspended through it too)',
    );
    expect(
      problem(JSON.stringify({ ...minimal, finishedConditions: [{ type: 'Done', status: 'Yes' }] })),
    ).toMatch(/^finishedConditions\[0\]\.status: /);
    expect(problem(JSON.stringify({ ...minimal, podSets: [{ template: 'spec..template' }] }))).toBe(
      'podSets[0].template: must be a dot-separated field path such as spec.suspend',
    );
    expect(
      problem(JSON.stringify({ ...minimal, finishedFields: [{ path: 'status.phase', values: [] }] })),
    ).toBe('finishedFields[0].values: must list at least one value');
  });

  it('names missing fields and refuses unknown ones', () => {
    const { kind: _k, ...withoutKind } = minimal;
    expect(problem(JSON.stringify(withoutKind))).toBe('kind: is required');
    expect(problem(JSON.stringify({ ...minimal, suspend: 'spec.suspend' }))).toBe(
      '(top level): unknown field "suspend"',
    );
    expect(problem(JSON.stringify([{ ...minimal, managedBy: { default: 'a.io/b', extra: 1 } }]))).toBe(
      'kinds[0].managedBy: unknown field "extra"',
    );
    const many = problem(JSON.stringify({ ...minimal, group: '', version: '1' }));
    expect(many).toMatch(/^group: must be an API group/);
    expect(many).toMatch(/; version: must be an API version/);
  });

  it('refuses duplicate names, text that is not JSON or YAML, and nothing at all', () => {
    expect(problem(JSON.stringify([minimal, minimal]))).toBe('kinds[1].name: duplicate name "widget"');
    expect(problem('{"name": "widget",')).toMatch(/^not valid JSON or YAML: /);
    expect(problem('')).toBe('no kind configuration given');
    expect(problem('42')).toMatch(/^\(top level\): /);
  });
});
