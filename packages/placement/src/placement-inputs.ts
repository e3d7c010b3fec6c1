// The inputs of chooseWorkerCluster, computed from what the caches hold: what a Job asks
// for, how loaded each cluster is, and each cluster as a candidate. Pure, and shared by the
// controller (which decides) and the admin API (which previews and explains), so both
// compute exactly the same decision from the same state.
//
// The annotation names and isJobFinished come from @jobrelay/mirror, which holds every
// user-facing jobrelay name. That is no cycle: @jobrelay/mirror depends only on
// @jobrelay/status, and neither depends on @jobrelay/placement. Moving the names here would
// split them across two packages, and taking them as parameters would let a caller pass
// different ones than the controller reads.
import {
  clusterPinAnnotation,
  clusterSelectorAnnotation,
  isJobFinished,
  placementAnnotation,
  placementPolicyAnnotation,
} from '@jobrelay/mirror';
import type { V1Job } from '@kubernetes/client-node';
import type { ClusterCandidate, PlacementRequest, ScoringPolicy } from './choose-worker-cluster.ts';
import { scoringPolicies } from './choose-worker-cluster.ts';
import { parseLabelSelector } from './label-selector.ts';
import { type PlacementRecord, parsePlacementRecord } from './placement-record.ts';
import { jobPodsAtOnce, podRequests } from './pod-requests.ts';
import { addResources, type Resources, scaleResources } from './resource-quantity.ts';

/** One pod's requests of a Job, from its pod template (none without a template). */
export function jobPodRequests(job: V1Job): Resources {
  return job.spec?.template.spec ? podRequests(job.spec.template.spec) : {};
}

export type PlacementRequestResult =
  | { kind: 'ok'; request: PlacementRequest }
  | { kind: 'invalid'; message: string };

/**
 * What the Job asks of a cluster, from its spec and its jobrelay.dev/* annotations
 * (cluster-selector, placement-policy, cluster pin), and the clusters its placement record
 * excludes. An annotation that does not parse makes the request invalid, with a message
 * naming the annotation: the Job waits with it rather than being placed by a guess.
 * `podRequestsOf` lets a caller cache the requests per Job (the pod template is immutable).
 */
export function placementRequestFor(
  job: V1Job,
  previous: PlacementRecord | undefined,
  defaultPolicy: ScoringPolicy,
  podRequestsOf: (job: V1Job) => Resources = jobPodRequests,
): PlacementRequestResult {
  const annotations = job.metadata?.annotations ?? {};
  const selectorText = annotations[clusterSelectorAnnotation];
  let clusterSelector: PlacementRequest['clusterSelector'];
  if (selectorText !== undefined && selectorText.trim() !== '') {
    const parsed = parseLabelSelector(selectorText);
    if (!parsed.ok) {
      return {
        kind: 'invalid',
        message: `annotation ${clusterSelectorAnnotation} is not a valid label selector: ${parsed.problem}`,
      };
    }
    clusterSelector = parsed.selector;
  }
  const policy = annotations[placementPolicyAnnotation] ?? defaultPolicy;
  if (!(scoringPolicies as readonly string[]).includes(policy)) {
    return {
      kind: 'invalid',
      message: `annotation ${placementPolicyAnnotation} must be one of ${scoringPolicies.join(', ')}, got ${JSON.stringify(policy)}`,
    };
  }
  const pin = annotations[clusterPinAnnotation]?.trim();
  return {
    kind: 'ok',
    request: {
      namespace: job.metadata!.namespace!,
      excludedClusters: previous?.excludedClusters ?? [],
      ...(clusterSelector ? { clusterSelector } : {}),
      ...(pin ? { pinnedCluster: pin } : {}),
      podRequests: podRequestsOf(job),
      pods: job.spec ? jobPodsAtOnce(job.spec) : 0,
      policy: policy as ScoringPolicy,
    },
  };
}

/** By cluster name: unfinished jobrelay Jobs placed there, and the requests assumed on it. */
export type ClusterLoad = Map<string, { jobs: number; assumed: Resources }>;

/** What clusterLoad needs of a cluster's capacity: bound pods per Job (`namespace/name`). */
export interface PodsByJob {
  podsByJob: ReadonlyMap<string, number>;
}

/**
 * Per cluster: unfinished jobrelay Jobs placed there (`assumedPlacements`, by origin UID:
 * placements written but not yet seen in the cache, included) and the requests of those
 * whose pods do not exist yet, so a burst of placements does not all land on the cluster
 * that looked emptiest a moment ago (cf. kube-scheduler's assume cache).
 */
export function clusterLoad(
  origins: Iterable<V1Job>,
  capacities: ReadonlyMap<string, PodsByJob | undefined>,
  assumedPlacements: ReadonlyMap<string, string>,
  podRequestsOf: (job: V1Job) => Resources = jobPodRequests,
): ClusterLoad {
  const byCluster: ClusterLoad = new Map();
  for (const job of origins) {
    if (isJobFinished(job)) continue;
    const parsed = parsePlacementRecord(job.metadata?.annotations?.[placementAnnotation]);
    const cluster =
      (parsed.kind === 'ok' ? parsed.record.cluster : undefined) ??
      assumedPlacements.get(job.metadata?.uid ?? '');
    if (!cluster) continue;
    const entry = byCluster.get(cluster) ?? { jobs: 0, assumed: {} };
    entry.jobs += 1;
    if (job.spec?.suspend !== true) {
      // Pods already counted by the worker's capacity (its pod watch) are not assumed again;
      // the mirror's status can run ahead of that watch, so it is not used here.
      const key = `${job.metadata?.namespace}/${job.metadata?.name}`;
      const counted = capacities.get(cluster)?.podsByJob.get(key) ?? 0;
      const outstanding = Math.max(0, (job.spec ? jobPodsAtOnce(job.spec) : 0) - counted);
      if (outstanding > 0)
        entry.assumed = addResources(entry.assumed, scaleResources(podRequestsOf(job), outstanding));
    }
    byCluster.set(cluster, entry);
  }
  return byCluster;
}

/**
 * A registered cluster as placement needs it. Declared here, structurally, because
 * @jobrelay/clusters depends on this package: its WorkerClusterView satisfies it as is.
 */
export interface PlacementClusterInput {
  name: string;
  labels: Record<string, string>;
  spec: {
    weight?: number;
    unschedulable?: boolean;
    drain?: boolean;
    maxActiveJobs?: number;
    allowedNamespaces?: readonly string[];
  };
  state: { active: boolean; reason?: string };
  /** Undefined until the cluster's nodes and pods are listed. */
  capacity: { nodes: ReadonlyArray<{ name: string; free: Resources }>; allocatable: Resources } | undefined;
}

/** The clusters as chooseWorkerCluster's candidates, with their load. */
export function clusterCandidates(
  clusters: readonly PlacementClusterInput[],
  load: ClusterLoad,
): ClusterCandidate[] {
  return clusters.map((cluster) => {
    const here = load.get(cluster.name);
    return {
      name: cluster.name,
      labels: cluster.labels,
      active: cluster.state.active,
      inactiveReason: cluster.state.reason,
      // Draining is cordoned and more: no new Jobs either way.
      cordoned: cluster.spec.unschedulable === true || cluster.spec.drain === true,
      weight: cluster.spec.weight ?? 1,
      allowedNamespaces: cluster.spec.allowedNamespaces ?? [],
      ...(cluster.spec.maxActiveJobs !== undefined ? { maxActiveJobs: cluster.spec.maxActiveJobs } : {}),
      activeJobs: here?.jobs ?? 0,
      ...(cluster.capacity
        ? {
            capacity: {
              nodes: cluster.capacity.nodes,
              allocatable: cluster.capacity.allocatable,
              assumed: here?.assumed ?? {},
            },
          }
        : {}),
    };
  });
}

/**
 * When the Job's current placement attempt started waiting for a cluster: the record's
 * waitingSince (set when a Job is placed again), else the Job's creation. Undefined when
 * neither is known. The placement timeout counts from it; the pending queue orders by it.
 */
export function waitingSince(job: V1Job, record: PlacementRecord | undefined): Date | undefined {
  // A waitingSince that is not a time (the annotation is hand-editable) falls back to the
  // Job's creation, the earliest the attempt can have started: never an Invalid Date.
  for (const since of [record?.waitingSince, job.metadata?.creationTimestamp]) {
    if (since === undefined) continue;
    const date = new Date(since);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return undefined;
}
