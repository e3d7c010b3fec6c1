// checkWorker's own logic (which kinds it asks discovery about, which it lists and checks,
// what it learns), against a recording stand-in for a worker's clients. What a real
// apiserver answers is the e2e suite's (observe-only-registry, worker-rbac).

import { kindsServedBy } from '@jobrelay/kinds';
import type { ClusterApiClients } from '@jobrelay/kube';
import type { V1APIResourceList, V1SelfSubjectAccessReview } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { checkWorker } from '../src/probe-worker.ts';
import { activeReasons } from '../src/worker-cluster.ts';
import type { WorkerKind } from '../src/worker-permissions.ts';

const widget: WorkerKind = {
  name: 'widget',
  resource: { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets' },
  mirrorStatusSeed: () => undefined,
};
const gadget: WorkerKind = {
  name: 'gadget',
  resource: { group: 'toys.example.com', version: 'v1', kind: 'Gadget', plural: 'gadgets' },
};
const gizmo: WorkerKind = {
  name: 'gizmo',
  resource: { group: 'toys.example.com', version: 'v1', kind: 'Gizmo', plural: 'gizmos' },
};
const kinds = [widget, gadget, gizmo];
const server = 'https://worker:6443';

class HttpError extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`HTTP ${code}`);
    this.code = code;
  }
}

interface FakeWorker {
  /** Resources served per group/version; absent: 404. */
  served: Map<string, string[]>;
  /** Resources (`plural`, `plural/status`) and verbs the identity is denied. */
  denied?: Set<string>;
  /** HTTP status of every discovery request, when it fails. */
  discoveryStatus?: number;
  /** HTTP status of listing a plural, when it fails. */
  listStatus?: Map<string, number>;
}

function fakeClients(worker: FakeWorker): { clients: ClusterApiClients; calls: string[] } {
  const calls: string[] = [];
  const custom = {
    getAPIResources: async ({ group, version }: { group: string; version: string }) => {
      calls.push(`discover ${group}/${version}`);
      if (worker.discoveryStatus) throw new HttpError(worker.discoveryStatus);
      const resources = worker.served.get(`${group}/${version}`);
      if (!resources) throw new HttpError(404);
      return {
        groupVersion: `${group}/${version}`,
        resources: resources.map((name) => ({
          name,
          kind: 'X',
          namespaced: true,
          singularName: '',
          verbs: [],
        })),
      } satisfies V1APIResourceList;
    },
    listClusterCustomObject: async ({ plural, labelSelector }: { plural: string; labelSelector: string }) => {
      calls.push(`list ${plural} ${labelSelector}`);
      const status = worker.listStatus?.get(plural);
      if (status) throw new HttpError(status);
      return { items: [] };
    },
    createClusterCustomObject: async ({ body }: { body: V1SelfSubjectAccessReview }) => {
      const { resource, subresource, verb } = body.spec.resourceAttributes!;
      const name = `${resource}${subresource ? `/${subresource}` : ''}`;
      calls.push(`review ${verb} ${name}`);
      return { ...body, status: { allowed: !worker.denied?.has(`${verb} ${name}`) } };
    },
  };
  const clients = {
    custom,
    version: {
      getCode: async () => {
        calls.push('version');
        return { gitVersion: 'v1.35.0' };
      },
    },
    core: {
      readNamespace: async () => {
        calls.push('kube-system');
        return { metadata: { uid: 'uid-1' } };
      },
    },
    requestCount: 0,
  } as unknown as ClusterApiClients;
  return { clients, calls };
}

const options = { kinds, mirrorSelector: 'jobrelay.dev/origin=o1', timeoutMs: 1_000 };

describe('checkWorker', () => {
  it('finds the served kinds, lists and checks only those, and learns the version and kube-system UID', async () => {
    const { clients, calls } = fakeClients({
      served: new Map([['example.com/v1', ['widgets', 'widgets/status']]]),
    });
    const check = await checkWorker(clients, server, options);
    expect(check).toEqual({
      servedKinds: new Set(['widget']),
      kubernetesVersion: 'v1.35.0',
      clusterUid: 'uid-1',
      permissionsChecked: true,
    });
    // One discovery per group/version, whatever the number of its kinds.
    expect(calls.filter((c) => c.startsWith('discover')).sort()).toEqual([
      'discover example.com/v1',
      'discover toys.example.com/v1',
    ]);
    expect(calls.filter((c) => c.startsWith('list'))).toEqual(['list widgets jobrelay.dev/origin=o1']);
    const reviewed = calls.filter((c) => c.startsWith('review'));
    expect(reviewed).toContain('review create widgets');
    expect(reviewed).toContain('review patch widgets/status');
    expect(reviewed).toContain('review watch nodes');
    expect(reviewed.some((c) => c.includes('gadgets') || c.includes('gizmos'))).toBe(false);
  });

  it('once every kind is known served, asks discovery nothing and reviews nothing again', async () => {
    const { clients, calls } = fakeClients({
      served: new Map([
        ['example.com/v1', ['widgets']],
        ['toys.example.com/v1', ['gadgets', 'gizmos']],
      ]),
    });
    const check = await checkWorker(clients, server, {
      ...options,
      known: { kubernetesVersion: 'v1.35.0', clusterUid: 'uid-1' },
      servedKinds: new Set(['widget', 'gadget', 'gizmo']),
      permissionsChecked: true,
    });
    expect(check.failure).toBeUndefined();
    expect(check.permissionsChecked).toBe(true);
    expect(calls.sort()).toEqual([
      'list gadgets jobrelay.dev/origin=o1',
      'list gizmos jobrelay.dev/origin=o1',
      'list widgets jobrelay.dev/origin=o1',
    ]);
  });

  it('lists no kind whose mirrors are watched right now; the version then proves the worker answers', async () => {
    const everything = new Map([
      ['example.com/v1', ['widgets']],
      ['toys.example.com/v1', ['gadgets', 'gizmos']],
    ]);
    const known = {
      ...options,
      known: { kubernetesVersion: 'v1.35.0', clusterUid: 'uid-1' },
      servedKinds: new Set(['widget', 'gadget', 'gizmo']),
      permissionsChecked: true,
    };
    const all = fakeClients({ served: everything });
    expect(
      (
        await checkWorker(all.clients, server, {
          ...known,
          watchedKinds: new Set(['widget', 'gadget', 'gizmo']),
        })
      ).failure,
    ).toBeUndefined();
    expect(all.calls).toEqual(['version']);
    // One watch failed since: that kind is listed (and its 403 found), the others are not.
    const some = fakeClients({
      served: everything,
      listStatus: new Map([['gizmos', 403]]),
      denied: new Set(['list gizmos']),
    });
    const check = await checkWorker(some.clients, server, {
      ...known,
      watchedKinds: new Set(['widget', 'gadget']),
    });
    expect(some.calls.filter((c) => c.startsWith('list') || c === 'version')).toEqual([
      'list gizmos jobrelay.dev/origin=o1',
    ]);
    expect(check.failure?.reason).toBe(activeReasons.forbidden);
    expect(check.failure?.message).toContain('gizmos');
  });

  it('asks again about a missing kind only, and reviews the permissions again when it appears', async () => {
    const worker: FakeWorker = { served: new Map([['example.com/v1', ['widgets']]]) };
    const { clients, calls } = fakeClients(worker);
    const known = {
      ...options,
      known: { kubernetesVersion: 'v1.35.0', clusterUid: 'uid-1' },
      servedKinds: new Set(['widget']),
      permissionsChecked: true,
    };
    expect((await checkWorker(clients, server, known)).servedKinds).toEqual(new Set(['widget']));
    expect(calls).toEqual(['discover toys.example.com/v1', 'list widgets jobrelay.dev/origin=o1']);

    // Its CRD installed: found at the next check, listed, its permissions reviewed.
    worker.served.set('toys.example.com/v1', ['gizmos']);
    calls.length = 0;
    const check = await checkWorker(clients, server, known);
    expect(check.servedKinds).toEqual(new Set(['widget', 'gizmo']));
    expect(check.permissionsChecked).toBe(true);
    expect(calls).toContain('list gizmos jobrelay.dev/origin=o1');
    expect(calls).toContain('review create gizmos');
  });

  it('a kind whose resource went away since it was found is no longer served', async () => {
    const { clients } = fakeClients({
      served: new Map([['example.com/v1', ['widgets']]]),
      listStatus: new Map([['gadgets', 404]]),
    });
    const check = await checkWorker(clients, server, {
      ...options,
      known: { kubernetesVersion: 'v1.35.0' },
      servedKinds: new Set(['widget', 'gadget']),
      permissionsChecked: true,
    });
    expect(check.failure).toBeUndefined();
    expect(check.servedKinds).toEqual(new Set(['widget']));
  });

  it('a worker that serves none of the kinds connects with none served', async () => {
    const { clients, calls } = fakeClients({ served: new Map() });
    const check = await checkWorker(clients, server, options);
    expect(check.failure).toBeUndefined();
    expect(check.servedKinds).toEqual(new Set());
    expect(calls.some((c) => c.startsWith('list'))).toBe(false);
  });

  it('with no kinds at all, still asks the worker something at every check', async () => {
    const { clients, calls } = fakeClients({ served: new Map() });
    const check = await checkWorker(clients, server, {
      ...options,
      kinds: [],
      known: { kubernetesVersion: 'v1.35.0' },
      servedKinds: new Set(),
      permissionsChecked: true,
    });
    expect(check.failure).toBeUndefined();
    expect(calls).toEqual(['version']);
  });

  it('a 403 listing mirrors names every denied permission of the served kinds (Forbidden)', async () => {
    const { clients } = fakeClients({
      served: new Map([['example.com/v1', ['widgets']]]),
      listStatus: new Map([['widgets', 403]]),
      denied: new Set(['list widgets', 'watch widgets', 'list nodes']),
    });
    const check = await checkWorker(clients, server, options);
    expect(check.failure?.reason).toBe(activeReasons.forbidden);
    expect(check.failure?.message).toContain(`${server} denied listing widgets.example.com (HTTP 403)`);
    expect(check.failure?.message).toContain('list, watch widgets.example.com; list nodes');
    expect(check.servedKinds).toEqual(new Set(['widget']));
  });

  it('a denied permission found by the reviews alone is Forbidden too', async () => {
    const { clients } = fakeClients({
      served: new Map([['example.com/v1', ['widgets']]]),
      denied: new Set(['patch widgets/status']),
    });
    const check = await checkWorker(clients, server, options);
    expect(check.failure).toEqual({
      reason: activeReasons.forbidden,
      message: expect.stringContaining("denies the kubeconfig's identity patch widgets.example.com/status"),
    });
    expect(check.permissionsChecked).toBe(false);
  });

  it('rejected credentials at discovery are Unauthorized; what was known stays', async () => {
    const { clients, calls } = fakeClients({ served: new Map(), discoveryStatus: 401 });
    const check = await checkWorker(clients, server, { ...options, servedKinds: new Set(['widget']) });
    expect(check.failure?.reason).toBe(activeReasons.unauthorized);
    expect(check.servedKinds).toEqual(new Set(['widget']));
    expect(calls.some((c) => c.startsWith('list'))).toBe(false);
  });
});

describe('kindsServedBy', () => {
  it('matches plurals of the same group/version, never a subresource or another version', () => {
    const list: V1APIResourceList = {
      groupVersion: 'toys.example.com/v1',
      resources: [
        { name: 'gadgets/status', kind: 'Gadget', namespaced: true, singularName: '', verbs: [] },
        { name: 'gizmos', kind: 'Gizmo', namespaced: true, singularName: 'gizmo', verbs: [] },
      ],
    };
    expect(kindsServedBy(kinds, list)).toEqual(['gizmo']);
    expect(kindsServedBy([{ ...gizmo, resource: { ...gizmo.resource, version: 'v2' } }], list)).toEqual([]);
  });
});
