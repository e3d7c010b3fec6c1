import { describe, expect, it } from 'vitest';
import { createdNamespaceLabels, workerNamespaceLabelPatch } from '../src/worker-namespace-labels.ts';

const enforce = 'pod-security.kubernetes.io/enforce';
const origin = 'jobrelay.dev/origin';

describe('createdNamespaceLabels', () => {
  it("carries the management namespace's Pod Security labels and this installation's origin, nothing else of it", () => {
    expect(
      createdNamespaceLabels('mgmt-1', {
        [enforce]: 'restricted',
        [`${enforce}-version`]: 'v1.35',
        'pod-security.kubernetes.io/warn': 'restricted',
        'kubernetes.io/metadata.name': 'team-a',
        team: 'a',
      }),
    ).toEqual({
      [enforce]: 'restricted',
      [`${enforce}-version`]: 'v1.35',
      'pod-security.kubernetes.io/warn': 'restricted',
      'app.kubernetes.io/created-by': 'jobrelay',
      [origin]: 'mgmt-1',
    });
  });

  it('carries no Pod Security label for a namespace that has none', () => {
    expect(createdNamespaceLabels('mgmt-1', undefined)).toEqual({
      'app.kubernetes.io/created-by': 'jobrelay',
      [origin]: 'mgmt-1',
    });
  });

  it('cannot be made to claim another origin by a label of the management namespace', () => {
    expect(createdNamespaceLabels('mgmt-1', { [origin]: 'someone-else' })[origin]).toBe('mgmt-1');
  });
});

describe('workerNamespaceLabelPatch', () => {
  it.each<
    [
      string,
      Record<string, string> | undefined | null,
      Record<string, string> | undefined,
      object | undefined,
    ]
  >([
    [
      'ours, behind the management namespace: brought to it',
      { [enforce]: 'restricted' },
      { [origin]: 'mgmt-1', [enforce]: 'baseline' },
      { [enforce]: 'restricted' },
    ],
    [
      'ours, stripped by someone on the worker: put back',
      { [enforce]: 'baseline', [`${enforce}-version`]: 'latest' },
      { [origin]: 'mgmt-1' },
      { [enforce]: 'baseline', [`${enforce}-version`]: 'latest' },
    ],
    [
      'ours, with a level the management namespace no longer has: removed',
      {},
      { [origin]: 'mgmt-1', [enforce]: 'baseline', other: 'kept' },
      { [enforce]: null },
    ],
    [
      'ours, equal: nothing',
      { [enforce]: 'baseline' },
      { [origin]: 'mgmt-1', [enforce]: 'baseline' },
      undefined,
    ],
    ["the worker admin's (no origin label): never written", { [enforce]: 'restricted' }, {}, undefined],
    [
      "another installation's: never written",
      { [enforce]: 'restricted' },
      { [origin]: 'mgmt-2', [enforce]: 'privileged' },
      undefined,
    ],
    [
      'ours, but the management namespace is gone: left as it is',
      null,
      { [origin]: 'mgmt-1', [enforce]: 'baseline' },
      undefined,
    ],
  ])('%s', (_what, management, worker, patch) => {
    expect(workerNamespaceLabelPatch('mgmt-1', management, worker)).toEqual(patch);
  });
});
