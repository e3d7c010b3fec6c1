// A workload's mirror as the API sees it on its worker, from the observe-only registry's watch
// of that worker (no API call), or why there is none to show. Its own module because the rule
// (only an object carrying this origin's UID is its mirror) is a pure decision of its own,
// tested apart from any cache (test/workload-detail-assembly.test.ts), and the registry is all
// it reads.
import type { WorkerClusterRegistry, WorkerConnection } from '@jobrelay/clusters';
import { type AnyWorkloadKindAdapter, apiVersionOf, type KubeObject } from '@jobrelay/kinds';
import { objectKey } from '@jobrelay/kube';
import { originUidLabel } from '@jobrelay/mirror';
import { placementOf } from './placement-trust.ts';

export type MirrorLookup =
  | { kind: 'found'; cluster: string; connection: WorkerConnection; mirror: KubeObject }
  | { kind: 'unplaced' | 'disconnected' | 'absent'; cluster: string | undefined; message: string };

/** What the API's connection to a workload's cluster shows of it: undefined when not connected at all. */
export interface ClusterSight {
  active: boolean;
  /** The cluster serves the workload's kind (its mirrors are watched there). */
  serves: boolean;
  /** The cached object of the workload's name and kind there, whoever's it is. */
  mirror: KubeObject | undefined;
  connection: WorkerConnection;
}

/**
 * Pure: the workload's current mirror as the API sees it, or why there is none to show. Only an
 * object carrying this origin's UID counts: another origin's object of the same name (a
 * collision, or an older incarnation) is no mirror of this one.
 */
export function lookUpMirror(
  adapter: Pick<AnyWorkloadKindAdapter, 'resource'>,
  origin: KubeObject,
  cluster: string | undefined,
  sight: ClusterSight | undefined,
): MirrorLookup {
  const what = adapter.resource.kind;
  if (!cluster) return { kind: 'unplaced', cluster, message: `the ${what} is not placed on a cluster yet` };
  if (!sight?.active)
    return { kind: 'disconnected', cluster, message: `cluster ${cluster} is not reachable from the API now` };
  const mirror = sight.mirror;
  if (!mirror || mirror.metadata?.labels?.[originUidLabel] !== origin.metadata?.uid)
    return {
      kind: 'absent',
      cluster,
      message: sight.serves
        ? `no mirror on ${cluster} (not created yet, or removed after the ${what} finished)`
        : `${cluster} does not serve ${apiVersionOf(adapter.resource)} ${what}: no mirror there`,
    };
  return { kind: 'found', cluster, connection: sight.connection, mirror };
}

/**
 * lookUpMirror with what the registry shows: the connection to the cluster the origin's
 * placement record names, and its cache of the kind's mirrors.
 */
export function mirrorInRegistry(
  registry: Pick<WorkerClusterRegistry, 'get'>,
  adapter: AnyWorkloadKindAdapter,
  origin: KubeObject,
): MirrorLookup {
  const cluster = placementOf(origin)?.cluster;
  const connection = cluster ? registry.get(cluster) : undefined;
  return lookUpMirror(
    adapter,
    origin,
    cluster,
    connection && {
      active: connection.state.active,
      serves: connection.servedKinds.has(adapter.name),
      mirror: connection.mirrors(adapter.name)?.get(objectKey(origin)),
      connection,
    },
  );
}
