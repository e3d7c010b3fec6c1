import { describe, expect, it } from 'vitest';
import {
  atLeastAsStrict,
  type PodSecurityLevel,
  podSecurityLabelPatch,
  podSecurityLabelsOf,
  podSecurityLevelOf,
} from '../src/pod-security.ts';
import { systemNamespaceProblem } from '../src/system-namespaces.ts';

const enforce = 'pod-security.kubernetes.io/enforce';

describe('podSecurityLevelOf', () => {
  it.each<[string, Record<string, string> | undefined, PodSecurityLevel]>([
    ['no labels at all', undefined, 'privileged'],
    ['labels, none of them Pod Security', { team: 'a' }, 'privileged'],
    [
      'only warn and audit: they enforce nothing',
      { 'pod-security.kubernetes.io/warn': 'restricted' },
      'privileged',
    ],
    ['enforce privileged', { [enforce]: 'privileged' }, 'privileged'],
    ['enforce baseline', { [enforce]: 'baseline' }, 'baseline'],
    [
      'enforce restricted, with a version',
      { [enforce]: 'restricted', [`${enforce}-version`]: 'v1.30' },
      'restricted',
    ],
    // Pod Security admission's ParseLevel falls back to restricted for anything else.
    ['a value that is not a level', { [enforce]: 'Baseline' }, 'restricted'],
    ['an empty value', { [enforce]: '' }, 'restricted'],
  ])('%s: %s', (_what, labels, level) => {
    expect(podSecurityLevelOf(labels)).toBe(level);
  });
});

describe('atLeastAsStrict', () => {
  const order: PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];
  it.each(order.flatMap((level, i) => order.map((than, j) => [level, than, i >= j] as const)))(
    '%s is at least as strict as %s: %s',
    (level, than, expected) => {
      expect(atLeastAsStrict(level, than)).toBe(expected);
    },
  );
});

describe('podSecurityLabelsOf', () => {
  it('keeps the six Pod Security labels and nothing else', () => {
    expect(
      podSecurityLabelsOf({
        [enforce]: 'baseline',
        [`${enforce}-version`]: 'latest',
        'pod-security.kubernetes.io/audit': 'restricted',
        'pod-security.kubernetes.io/audit-version': 'v1.35',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/warn-version': 'latest',
        'kubernetes.io/metadata.name': 'team-a',
        'jobrelay.dev/origin': 'mgmt',
      }),
    ).toEqual({
      [enforce]: 'baseline',
      [`${enforce}-version`]: 'latest',
      'pod-security.kubernetes.io/audit': 'restricted',
      'pod-security.kubernetes.io/audit-version': 'v1.35',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/warn-version': 'latest',
    });
  });
});

describe('podSecurityLabelPatch', () => {
  it.each<
    [string, Record<string, string> | undefined, Record<string, string> | undefined, object | undefined]
  >([
    ['equal: nothing to do', { [enforce]: 'baseline', a: '1' }, { [enforce]: 'baseline', b: '2' }, undefined],
    ['neither has any', {}, { other: 'x' }, undefined],
    ['missing there: added', { [enforce]: 'baseline' }, {}, { [enforce]: 'baseline' }],
    [
      'changed here: follows',
      { [enforce]: 'restricted' },
      { [enforce]: 'baseline' },
      { [enforce]: 'restricted' },
    ],
    ['removed here: removed there', {}, { [enforce]: 'baseline', keep: 'me' }, { [enforce]: null }],
    [
      'a version added and a warn label removed, other labels untouched',
      { [enforce]: 'baseline', [`${enforce}-version`]: 'v1.35' },
      { [enforce]: 'baseline', 'pod-security.kubernetes.io/warn': 'restricted', team: 'a' },
      { [`${enforce}-version`]: 'v1.35', 'pod-security.kubernetes.io/warn': null },
    ],
  ])('%s', (_what, want, have, patch) => {
    expect(podSecurityLabelPatch(want, have)).toEqual(patch);
  });
});

describe('systemNamespaceProblem', () => {
  it.each([
    ['kube-system', true],
    ['kube-public', true],
    ['kube-node-lease', true],
    ['default', true],
    ['jobrelay-system', true],
    ['team-a', false],
    ['kubeflow', false],
    ['default-team', false],
    ['my-kube-system', false],
  ])('%s is a system namespace: %s', (namespace, system) => {
    const problem = systemNamespaceProblem(namespace, 'jobrelay-system');
    expect(problem).toBe(
      system ? `namespace ${namespace} is a system namespace: jobrelay never dispatches from it` : undefined,
    );
  });

  it("is the controller's configured namespace, not jobrelay-system's name", () => {
    expect(systemNamespaceProblem('dispatch', 'dispatch')).toBe(
      'namespace dispatch is a system namespace: jobrelay never dispatches from it',
    );
    expect(systemNamespaceProblem('jobrelay-system', 'dispatch')).toBeUndefined();
  });
});
