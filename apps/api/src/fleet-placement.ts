// What placement itself says of the fleet, from the caches: the requests it assumes on each
// cluster (the cluster views show them) and, for a preview, where it would place a workload now
// with every cluster's verdict. Its own module because both run the controller's own pure inputs
// and chooser (placementRequestFor, clusterLoad, clusterCandidates, chooseWorkerCluster in
// @jobrelay/placement) over what the API caches, so that neither can drift from the decision;
// they read the caches and the registry they are given, and keep nothing.
import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import type { AnyWorkloadKindAdapter, KubeObject } from '@jobrelay/kinds';
import {
  type ClusterVerdict,
  chooseWorkerCluster,
  clusterCandidates,
  clusterLoad,
  clusterVerdicts,
  type PlacementClusterInput,
  type PlacementSettings,
  placementRequestFor,
} from '@jobrelay/placement';
import { formatResourceAmount } from '@jobrelay/resources';
import { activeCondition } from './cluster-views.ts';
import type { DispatchedWorkload } from './fleet-caches.ts';
import { placementOf, recordKeys } from './placement-trust.ts';

export interface PreviewResult {
  decision: 'placed' | 'unschedulable';
  cluster: string | null;
  message: string;
  clusters: ClusterVerdict[];
}

/**
 * Per cluster, the requests of placed workloads whose pods do not exist yet, as placement
 * assumes them (clusterLoad, as previews compute it), as quantities (cpu "500m", memory "1Gi").
 */
export function assumedRequestsByCluster(
  registry: Pick<WorkerClusterRegistry, 'clusters'>,
  workloads: () => readonly DispatchedWorkload[],
): Map<string, Record<string, string>> {
  const capacities = new Map(registry.clusters().map((view) => [view.name, view.capacity]));
  const load = clusterLoad(
    workloads().map(({ adapter, object }) => ({ workload: object, facts: adapter })),
    capacities,
    new Map(),
    recordKeys(),
  );
  return new Map(
    [...load].map(([cluster, { assumed }]) => [
      cluster,
      Object.fromEntries(
        Object.entries(assumed)
          .filter(
            ([name, amount]) => amount > 0 && (name === 'cpu' || name === 'memory' || name.includes('/')),
          )
          .map(([name, amount]) => [name, formatResourceAmount(name, amount)]),
      ),
    ]),
  );
}

/**
 * Where the controller would place this workload now, and every cluster's verdict: the same
 * inputs (placementRequestFor with the kind's adapter, clusterLoad over every kind,
 * clusterCandidates with the kinds each cluster serves) and the same chooser. Clusters count
 * as Active as the controller reports them (their Active condition). Throws when the adapter
 * cannot read the object (a manifest it does not understand): the route says so.
 */
export function previewPlacement(
  adapter: AnyWorkloadKindAdapter,
  object: KubeObject,
  fleet: {
    settings: PlacementSettings;
    registry: Pick<WorkerClusterRegistry, 'clusters' | 'workerClusters'>;
    /** Every dispatched workload of every kind, read once the request is valid. */
    workloads: () => readonly DispatchedWorkload[];
  },
): PreviewResult {
  const { registry } = fleet;
  const request = placementRequestFor(object, placementOf(object), fleet.settings, adapter);
  if (request.kind === 'invalid') {
    return { decision: 'unschedulable', cluster: null, message: request.message, clusters: [] };
  }
  const views = new Map(registry.clusters().map((view) => [view.name, view]));
  const inputs: PlacementClusterInput[] = registry.workerClusters().map((wc) => {
    const condition = activeCondition(wc);
    const view = views.get(wc.metadata.name);
    // The kinds the controller found served there (its status), else what the API found.
    const servedKinds = wc.status?.servedKinds ?? view?.servedKinds;
    return {
      name: wc.metadata.name,
      labels: wc.metadata.labels ?? {},
      spec: wc.spec,
      state: { active: condition?.status === 'True', reason: condition?.reason ?? 'Unknown' },
      ...(servedKinds ? { servedKinds } : {}),
      capacity: view?.capacity,
      ...(view?.namespaces ? { namespaces: view.namespaces } : {}),
    };
  });
  const capacities = new Map([...views.values()].map((view) => [view.name, view.capacity]));
  // Another workload's own placement does not count against itself.
  const others = fleet
    .workloads()
    .filter((other) => other.object.metadata?.uid !== object.metadata?.uid)
    .map(({ adapter: facts, object: workload }) => ({ workload, facts }));
  const candidates = clusterCandidates(inputs, clusterLoad(others, capacities, new Map(), recordKeys()));
  const decision = chooseWorkerCluster(candidates, request.request);
  return {
    decision: decision.kind,
    cluster: decision.kind === 'placed' ? decision.cluster : null,
    message: decision.message,
    clusters: clusterVerdicts(candidates, request.request),
  };
}
