import { statusCodeOf } from '@jobrelay/kube';
import type { CustomObjectsApi, V1APIResourceList } from '@kubernetes/client-node';
import { apiVersionOf, type WorkloadResource } from './workload-kind-adapter.ts';

/** What discovery needs of a kind: its name and where its resource lives. */
export interface DiscoverableKind {
  name: string;
  resource: WorkloadResource;
}

/** The kinds of `kinds` whose resource one discovery answer (`GET /apis/<group>/<version>`) lists. */
export function kindsServedBy(kinds: readonly DiscoverableKind[], list: V1APIResourceList): string[] {
  const resources = new Set(list.resources.map((r) => r.name));
  return kinds
    .filter(
      (kind) => apiVersionOf(kind.resource) === list.groupVersion && resources.has(kind.resource.plural),
    )
    .map((kind) => kind.name);
}

/**
 * Which kinds a cluster serves: `known`, plus those of `kinds` discovery finds now, one
 * `GET /apis/<group>/<version>` per group/version asked about (404: none of them served).
 * Used for the management cluster (which kinds to dispatch) and every worker (which kinds to
 * watch and place there) alike. `call` wraps each request (a worker's timeout). Returned in
 * the order of `kinds`.
 */
export async function discoverServedKinds(
  custom: Pick<CustomObjectsApi, 'getAPIResources'>,
  kinds: readonly DiscoverableKind[],
  options: { known?: ReadonlySet<string>; call?: <T>(request: Promise<T>) => Promise<T> } = {},
): Promise<ReadonlySet<string>> {
  const found = new Set(options.known);
  const byGroupVersion = new Map<string, DiscoverableKind[]>();
  for (const kind of kinds) {
    if (found.has(kind.name)) continue;
    const groupVersion = apiVersionOf(kind.resource);
    byGroupVersion.set(groupVersion, [...(byGroupVersion.get(groupVersion) ?? []), kind]);
  }
  const call = options.call ?? ((request) => request);
  await Promise.all(
    [...byGroupVersion.values()].map(async (asked) => {
      const { group, version } = asked[0]!.resource;
      try {
        const list = await call(custom.getAPIResources({ group, version }));
        for (const name of kindsServedBy(asked, list)) found.add(name);
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }),
  );
  return new Set(kinds.filter((kind) => found.has(kind.name)).map((kind) => kind.name));
}
