import type { PodSpec } from '@jobrelay/kube';
import { describe, expect, it } from 'vitest';
import {
  describeRefusal,
  newlyRefusedAsks,
  type PodRestrictions,
  podRestrictionRefusal,
  readPodRestrictions,
} from '../src/pod-restrictions.ts';
import { noPodTemplateAsks, type PodTemplateAsks, podTemplateAsks } from '../src/pod-template-asks.ts';

const main = { name: 'main', image: 'busybox' };

describe('podTemplateAsks', () => {
  it('asks nothing of a plain template but its default service account', () => {
    expect(podTemplateAsks([{ role: '', spec: { containers: [main] } }])).toEqual({
      ...noPodTemplateAsks,
      serviceAccounts: [{ role: '', name: 'default' }],
    });
  });

  it.each<[string, PodSpec, Partial<PodTemplateAsks>]>([
    [
      'a privileged container',
      { containers: [{ ...main, securityContext: { privileged: true } }] },
      { privileged: ['container main'] },
    ],
    [
      'privileged init and ephemeral containers, not one that says false',
      {
        initContainers: [{ name: 'setup', securityContext: { privileged: true } }],
        containers: [{ ...main, securityContext: { privileged: false } }],
        ephemeralContainers: [{ name: 'debug', securityContext: { privileged: true } }],
      },
      { privileged: ['init container setup', 'ephemeral container debug'] },
    ],
    [
      'hostPath volumes only',
      {
        containers: [main],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'docker', hostPath: { path: '/var/run/docker.sock' } },
        ],
      },
      { hostPathVolumes: ['volume docker'] },
    ],
    [
      'host namespaces',
      { containers: [main], hostNetwork: true, hostPID: true, hostIPC: false },
      { hostNamespaces: ['hostNetwork', 'hostPID'] },
    ],
    [
      'a node by name',
      { containers: [main], nodeName: 'gpu-node-7' },
      { nodeNames: ['nodeName gpu-node-7'] },
    ],
    [
      'a named service account',
      { containers: [main], serviceAccountName: 'builder' },
      { serviceAccounts: [{ role: '', name: 'builder' }] },
    ],
    [
      'the deprecated serviceAccount field alone',
      { containers: [main], serviceAccount: 'legacy' },
      { serviceAccounts: [{ role: '', name: 'legacy' }] },
    ],
  ])('%s', (_what, spec, asks) => {
    expect(podTemplateAsks([{ role: '', spec }])).toEqual({
      ...noPodTemplateAsks,
      serviceAccounts: [{ role: '', name: spec.serviceAccountName ?? spec.serviceAccount ?? 'default' }],
      ...asks,
    });
  });

  it('says which template each ask comes from, and takes the account its controller gives', () => {
    const asks = podTemplateAsks([
      {
        role: 'head group',
        spec: {
          containers: [{ name: 'ray-head', securityContext: { privileged: true } }],
          hostNetwork: true,
        },
        serviceAccount: { name: 'train' },
      },
      { role: 'worker group gpu', spec: { containers: [main] }, serviceAccount: { unknown: 'named later' } },
    ]);
    expect(asks).toEqual({
      ...noPodTemplateAsks,
      privileged: ['container ray-head in the head group'],
      hostNamespaces: ['hostNetwork in the head group'],
      serviceAccounts: [
        { role: 'head group', name: 'train' },
        { role: 'worker group gpu', unknown: 'named later' },
      ],
    });
  });

  it('cannot know what templates it is not given', () => {
    expect(podTemplateAsks(undefined)).toEqual({ ...noPodTemplateAsks, templatesUnknown: true });
    expect(podTemplateAsks([]).templatesUnknown).toBe(false);
  });
});

describe('readPodRestrictions', () => {
  it.each<[string, unknown, ReturnType<typeof readPodRestrictions>]>([
    ['absent: none', undefined, { ok: true, restrictions: undefined }],
    ['null: none', null, { ok: true, restrictions: undefined }],
    [
      'every field',
      {
        refusePrivileged: true,
        refuseHostPath: true,
        refuseHostNamespaces: false,
        refuseNodeName: true,
        allowedServiceAccounts: ['default', 'runner.v2'],
      },
      {
        ok: true,
        restrictions: {
          refusePrivileged: true,
          refuseHostPath: true,
          refuseHostNamespaces: false,
          refuseNodeName: true,
          allowedServiceAccounts: ['default', 'runner.v2'],
        },
      },
    ],
    [
      'a flag that is a word',
      { refusePrivileged: 'yes' },
      { ok: false, problem: 'spec.podRestrictions.refusePrivileged: must be true or false' },
    ],
    [
      'an empty list of accounts',
      { allowedServiceAccounts: [] },
      {
        ok: false,
        problem:
          'spec.podRestrictions.allowedServiceAccounts: must list at least one name (absent allows any)',
      },
    ],
    [
      'an account that cannot exist',
      { allowedServiceAccounts: ['default', 'Build Bot'] },
      {
        ok: false,
        problem:
          'spec.podRestrictions.allowedServiceAccounts[1]: must be a ServiceAccount name: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
      },
    ],
    [
      'an unknown field',
      { refuseEverything: true },
      { ok: false, problem: 'spec.podRestrictions: unknown field refuseEverything' },
    ],
    [
      'not an object',
      'strict',
      { ok: false, problem: 'spec.podRestrictions: Invalid input: expected object, received string' },
    ],
  ])('%s', (_what, value, read) => {
    expect(readPodRestrictions(value)).toEqual(read);
  });
});

describe('podRestrictionRefusal', () => {
  const asks = (more: Partial<PodTemplateAsks>): PodTemplateAsks => ({
    ...noPodTemplateAsks,
    serviceAccounts: [{ role: '', name: 'default' }],
    ...more,
  });
  const everything = asks({
    privileged: ['container main'],
    hostPathVolumes: ['volume docker'],
    hostNamespaces: ['hostNetwork'],
    nodeNames: ['nodeName node-1'],
    serviceAccounts: [{ role: '', name: 'builder' }],
  });

  it.each<[string, PodRestrictions | undefined, PodTemplateAsks, string | undefined]>([
    ['no restrictions take anything', undefined, everything, undefined],
    [
      'restrictions all off take anything',
      { refusePrivileged: false, refuseHostPath: false },
      everything,
      undefined,
    ],
    ['privileged', { refusePrivileged: true }, everything, 'refuses privileged pods (container main)'],
    [
      'privileged, naming every container and its template',
      { refusePrivileged: true },
      asks({ privileged: ['init container setup', 'container ray-head in the head group'] }),
      'refuses privileged pods (init container setup, container ray-head in the head group)',
    ],
    ['hostPath', { refuseHostPath: true }, everything, 'refuses hostPath volumes (volume docker)'],
    ['host namespaces', { refuseHostNamespaces: true }, everything, 'refuses host namespaces (hostNetwork)'],
    [
      'nodeName',
      { refuseNodeName: true },
      everything,
      'refuses pods bound to a node by name (nodeName node-1)',
    ],
    [
      'a service account not listed',
      { allowedServiceAccounts: ['default', 'runner'] },
      everything,
      'does not allow service account builder',
    ],
    ['the default account when listed', { allowedServiceAccounts: ['default'] }, asks({}), undefined],
    [
      'the default account when not listed',
      { allowedServiceAccounts: ['runner'] },
      asks({}),
      'does not allow service account default',
    ],
    [
      'an account named only when the pods are made',
      { allowedServiceAccounts: ['default'] },
      asks({
        serviceAccounts: [
          { role: 'head group', unknown: 'the operator names after the RayCluster it creates' },
          { role: 'worker group gpu', name: 'default' },
          { role: 'submitter', name: 'submitter' },
        ],
      }),
      'does not allow a service account the operator names after the RayCluster it creates in the head group, service account submitter in the submitter',
    ],
    [
      'the first refused ask is the reason',
      { refusePrivileged: true, refuseHostPath: true, refuseNodeName: true },
      asks({ hostPathVolumes: ['volume data'], nodeNames: ['nodeName n'] }),
      'refuses hostPath volumes (volume data)',
    ],
    [
      'templates it cannot read, when it restricts anything',
      { refuseNodeName: true },
      { ...noPodTemplateAsks, templatesUnknown: true },
      'refuses workloads whose pod templates jobrelay cannot read',
    ],
    [
      'templates it cannot read, when it restricts nothing',
      {},
      { ...noPodTemplateAsks, templatesUnknown: true },
      undefined,
    ],
  ])('%s', (_what, restrictions, asked, refusal) => {
    expect(podRestrictionRefusal(restrictions, asked)).toBe(refusal);
  });
});

describe('newlyRefusedAsks', () => {
  const base = { ...noPodTemplateAsks, serviceAccounts: [{ role: '', name: 'default' }] };

  it('is what the change adds of what the cluster refuses, nothing it already had', () => {
    const before = { ...base, privileged: ['container a'] };
    const after = {
      ...base,
      privileged: ['container a', 'container b'],
      hostPathVolumes: ['volume v'],
      serviceAccounts: [{ role: '', name: 'builder' }],
    };
    const restrictions = { refusePrivileged: true, allowedServiceAccounts: ['default'] };
    expect(describeRefusal(newlyRefusedAsks(restrictions, before, after))).toBe(
      'refuses privileged pods (container b)',
    );
    expect(newlyRefusedAsks(restrictions, before, after).serviceAccounts).toEqual([
      { role: '', name: 'builder' },
    ]);
  });

  it('is nothing when the change adds nothing refused', () => {
    const same = { ...base, privileged: ['container a'] };
    expect(describeRefusal(newlyRefusedAsks({ refusePrivileged: true }, same, same))).toBeUndefined();
    expect(
      describeRefusal(
        newlyRefusedAsks({ refuseHostPath: true }, base, { ...base, privileged: ['container a'] }),
      ),
    ).toBeUndefined();
  });
});
