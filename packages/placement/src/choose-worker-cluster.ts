import {
  addResources,
  describeLabelSelector,
  fitsIn,
  formatResourceAmount,
  type LabelSelector,
  labelsMatch,
  type Resources,
  scaleResources,
  subtractResources,
} from '@jobrelay/resources';
import type { PodGroup } from './pod-groups.ts';
import { type PodRestrictions, podRestrictionRefusal } from './pod-restrictions.ts';
import { atLeastAsStrict, type PodSecurityLevel, podSecurityLevelOf } from './pod-security.ts';
import type { PodTemplateAsks } from './pod-template-asks.ts';

/** Namespaces by name, with their labels, as an informer caches them (V1Namespace is one). */
export interface NamespaceLookup {
  get(name: string): { metadata?: { labels?: Record<string, string> } } | undefined;
}

/** What placement knows about one WorkerCluster when it decides. */
export interface ClusterCandidate {
  name: string;
  /** The WorkerCluster's metadata labels, matched by a workload's cluster selector. */
  labels: Record<string, string>;
  /** The Active condition: connected and answering. */
  active: boolean;
  /** Why not, when not active (the Active condition's reason). */
  inactiveReason?: string;
  /** Cordoned (spec.unschedulable) or draining: no new workloads. */
  cordoned: boolean;
  /** Multiplies the score; 0 makes the cluster a last resort. */
  weight: number;
  /** Namespaces whose workloads may run there; empty means all. */
  allowedNamespaces: readonly string[];
  maxActiveWorkloads?: number;
  /** Unfinished workloads jobrelay placed there, including placements not yet mirrored. */
  activeWorkloads: number;
  /** The workload kinds (adapter names) the cluster serves; undefined while not known (not filtered). */
  servedKinds?: readonly string[];
  /** spec.podRestrictions: what it refuses beyond Pod Security; undefined refuses nothing more. */
  podRestrictions?: PodRestrictions;
  /** Why spec.podRestrictions could not be read: the cluster then takes nothing, rather than anything. */
  podRestrictionsProblem?: string;
  /** The worker's namespaces (their Pod Security labels); undefined until they are listed. */
  namespaces?: NamespaceLookup;
  /** Undefined until the cluster's nodes and pods have been listed. */
  capacity?: {
    /** Free resources of each node new pods can land on. */
    nodes: ReadonlyArray<{ name: string; free: Resources }>;
    allocatable: Resources;
    /** Requests of workloads placed there whose pods do not exist yet (cf. kube-scheduler's assume cache). */
    assumed: Resources;
  };
}

export type ScoringPolicy = 'spread' | 'binpack';
export const scoringPolicies: readonly ScoringPolicy[] = ['spread', 'binpack'];

export interface PlacementRequest {
  namespace: string;
  /** Clusters this workload must not go to, e.g. where a foreign object already holds its name. */
  excludedClusters: readonly string[];
  /** Clusters whose apiserver refused this workload's mirror: chosen only when no other fits. */
  avoidedClusters?: readonly string[];
  clusterSelector?: LabelSelector;
  pinnedCluster?: string;
  /** The pods that run at once, as groups of identical pods (a Job: one group of min(parallelism, completions)). */
  podGroups: readonly PodGroup[];
  /** The workload's kind, when clusters may not all serve it: `name` as the clusters list it, `label` for messages. */
  kind?: { name: string; label: string };
  policy: ScoringPolicy;
  /** What its pod templates ask beyond resources (podTemplateAsks): WorkerClusters' podRestrictions judge it. */
  asks: PodTemplateAsks;
  /** The Pod Security level its namespace enforces on the management cluster. */
  podSecurity: PodSecurityLevel;
}

export interface ScoredCluster {
  name: string;
  score: number;
}

export type PlacementDecision =
  | { kind: 'placed'; cluster: string; message: string; ranking: ScoredCluster[] }
  | { kind: 'unschedulable'; message: string };

/** Scored resources: what kube-scheduler's NodeResourcesFit weighs by default. */
const scoredResources = ['cpu', 'memory'] as const;

function max(resources: readonly Resources[], name: string): number {
  return resources.reduce((best, r) => Math.max(best, r[name] ?? 0), 0);
}

function hasRequests(requests: Resources): boolean {
  return Object.values(requests).some((amount) => amount > 0);
}

/**
 * Why a cluster cannot take the workload. Rejections with the same `group` are counted together;
 * for resources, the message then names the most any of them had free (kube-scheduler
 * likewise says "3 Insufficient cpu", not three lines).
 */
type Rejection =
  | string
  | {
      group: string;
      resource: string;
      requested: number;
      free: number;
      kind: 'node' | 'total';
      pods: number;
    };

function renderRejection(count: number, rejections: Rejection[]): string {
  const first = rejections[0]!;
  if (typeof first === 'string') return `${count} ${first}`;
  const free = Math.max(...rejections.map((r) => (typeof r === 'string' ? 0 : r.free)));
  const fmt = (amount: number) => formatResourceAmount(first.resource, Math.max(0, amount));
  if (first.kind === 'node') {
    // Clusters may fail on different pod groups: name the largest request, whatever their order.
    const requested = Math.max(...rejections.map((r) => (typeof r === 'string' ? 0 : r.requested)));
    return `${count} insufficient ${first.resource} (requests ${fmt(requested)}, largest free node ${fmt(free)})`;
  }
  const pods = `${first.pods} ${first.pods === 1 ? 'pod needs' : 'pods need'}`;
  return `${count} insufficient ${first.resource} in total (${pods} ${fmt(first.requested)}, ${count === 1 ? 'free' : 'most free'} ${fmt(free)})`;
}

/** What the cluster's spec.podRestrictions refuse of the workload's pod templates. */
function refusedByPodRestrictions(
  candidate: ClusterCandidate,
  request: PlacementRequest,
): string | undefined {
  if (candidate.podRestrictionsProblem !== undefined)
    return `podRestrictions not readable (${candidate.podRestrictionsProblem})`;
  return podRestrictionRefusal(candidate.podRestrictions, request.asks);
}

/**
 * A namespace of the workload's name on the worker that enforces a weaker Pod Security level
 * than the management namespace: its pods would be judged more leniently there. One that does
 * not exist yet is created by jobrelay with the management namespace's labels; one jobrelay
 * manages is brought to them, and is placed on again once it has been.
 */
function weakerNamespaceThere(candidate: ClusterCandidate, request: PlacementRequest): string | undefined {
  if (!candidate.namespaces) return 'namespaces not known yet';
  const there = candidate.namespaces.get(request.namespace);
  if (!there) return undefined;
  const level = podSecurityLevelOf(there.metadata?.labels);
  if (atLeastAsStrict(level, request.podSecurity)) return undefined;
  return `namespace ${request.namespace} enforces ${level} there, ${request.podSecurity} here`;
}

/**
 * Why a cluster's fences keep the workload out (everything but its capacity), or undefined if they
 * do not: the controller checks these again just before it creates a mirror, whatever the
 * placement record says. `candidate.activeWorkloads` must not count the workload itself.
 */
export function fenceRejection(candidate: ClusterCandidate, request: PlacementRequest): string | undefined {
  if (request.excludedClusters.includes(candidate.name)) {
    return 'excluded (an object of the same name that jobrelay does not own is there)';
  }
  if (request.pinnedCluster !== undefined && candidate.name !== request.pinnedCluster) {
    return `not the pinned cluster ${request.pinnedCluster}`;
  }
  if (!candidate.active) return `not active (${candidate.inactiveReason ?? 'unknown'})`;
  if (candidate.cordoned) return 'cordoned';
  if (request.clusterSelector && !labelsMatch(request.clusterSelector, candidate.labels)) {
    return `did not match selector ${describeLabelSelector(request.clusterSelector)}`;
  }
  if (candidate.allowedNamespaces.length > 0 && !candidate.allowedNamespaces.includes(request.namespace)) {
    return `does not allow namespace ${request.namespace}`;
  }
  if (
    candidate.maxActiveWorkloads !== undefined &&
    candidate.activeWorkloads >= candidate.maxActiveWorkloads
  ) {
    return `at maxActiveWorkloads (${candidate.maxActiveWorkloads})`;
  }
  if (request.kind && candidate.servedKinds && !candidate.servedKinds.includes(request.kind.name)) {
    return `does not serve ${request.kind.label}`;
  }
  const refused = refusedByPodRestrictions(candidate, request);
  if (refused) return refused;
  const weaker = weakerNamespaceThere(candidate, request);
  if (weaker) return weaker;
  return undefined;
}

/**
 * Why a cluster cannot take the workload, or undefined if it can. Checks in a fixed order; the
 * first failure is the reason. `needed`: what all the workload's pods that run at once request
 * (totalDemand), summed once per decision.
 */
function filter(
  candidate: ClusterCandidate,
  request: PlacementRequest,
  needed: Resources,
): Rejection | undefined {
  const fenced = fenceRejection(candidate, request);
  if (fenced !== undefined) return fenced;
  const groups = request.podGroups.filter((group) => hasRequests(group.requests));
  if (groups.length === 0) return undefined;
  const capacity = candidate.capacity;
  if (!capacity) return 'capacity not known yet';
  // One node must fit one pod of each group...
  for (const group of groups) {
    if (capacity.nodes.some((node) => fitsIn(group.requests, node.free).length === 0)) continue;
    const frees = capacity.nodes.map((node) => node.free);
    const missing = Object.keys(group.requests).find(
      (name) => (group.requests[name] ?? 0) > max(frees, name),
    );
    if (missing) {
      return {
        group: `insufficient ${missing}`,
        resource: missing,
        requested: group.requests[missing]!,
        free: max(frees, missing),
        kind: 'node',
        pods: 1,
      };
    }
    return 'no single node fits one pod';
  }
  // ...and the cluster's free total must fit all the pods that run at once.
  const freeTotal = subtractResources(freeOnNodes(capacity.nodes), capacity.assumed);
  const short = fitsIn(needed, freeTotal)[0];
  if (short) {
    return {
      group: `insufficient ${short} in total`,
      resource: short,
      requested: needed[short]!,
      free: freeTotal[short] ?? 0,
      kind: 'total',
      pods: request.podGroups.reduce((sum, group) => sum + group.count, 0),
    };
  }
  return undefined;
}

// Filter and score read it for every candidate of every placement. A cluster's nodes come from
// its capacity snapshot, the same array (never changed) until its pods or nodes change.
const freeOnNodesCache = new WeakMap<object, Resources>();

/** The free resources of the nodes, summed. */
function freeOnNodes(nodes: readonly { free: Resources }[]): Resources {
  let free = freeOnNodesCache.get(nodes);
  if (!free) {
    free = nodes.reduce<Resources>((sum, node) => addResources(sum, node.free), {});
    freeOnNodesCache.set(nodes, free);
  }
  return free;
}

/** What all the pods that run at once request together. */
export function totalDemand(groups: readonly PodGroup[]): Resources {
  return groups.reduce<Resources>(
    (sum, group) => addResources(sum, scaleResources(group.requests, group.count)),
    {},
  );
}

/**
 * 0..100: spread prefers the cluster left with the largest free fraction after the workload
 * (least allocated), binpack the one left fullest (most allocated), as kube-scheduler's
 * NodeResourcesFit strategies do for nodes. Then multiplied by the cluster's weight.
 */
function score(candidate: ClusterCandidate, request: PlacementRequest, needed: Resources): number {
  const capacity = candidate.capacity;
  let total = 0;
  let counted = 0;
  if (capacity) {
    const freeTotal = subtractResources(freeOnNodes(capacity.nodes), capacity.assumed);
    for (const name of scoredResources) {
      const allocatable = capacity.allocatable[name] ?? 0;
      if (allocatable <= 0) continue;
      const freeAfter = Math.max(0, (freeTotal[name] ?? 0) - (needed[name] ?? 0));
      const freeFraction = Math.min(1, freeAfter / allocatable);
      total += request.policy === 'spread' ? freeFraction : 1 - freeFraction;
      counted += 1;
    }
  }
  const base = counted > 0 ? (total / counted) * 100 : 50;
  return Math.round(base * candidate.weight * 100) / 100;
}

/**
 * The placement decision: filter, then score. Pure, so every case is a unit test. When
 * nothing fits the message counts why, kube-scheduler style:
 * `0/3 clusters available: 1 cordoned, 1 did not match selector region=eu, 1 insufficient cpu (requests 8, largest free node 4).`
 */
export function chooseWorkerCluster(
  candidates: readonly ClusterCandidate[],
  request: PlacementRequest,
): PlacementDecision {
  const rejections = new Map<string, Rejection[]>();
  const feasible: ClusterCandidate[] = [];
  const needed = totalDemand(request.podGroups);
  for (const candidate of candidates) {
    const why = filter(candidate, request, needed);
    if (why === undefined) {
      feasible.push(candidate);
      continue;
    }
    const group = typeof why === 'string' ? why : why.group;
    rejections.set(group, [...(rejections.get(group) ?? []), why]);
  }
  const total = candidates.length;
  const reasons = [...rejections.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, group]) => renderRejection(group.length, group));
  if (feasible.length === 0) {
    if (total === 0)
      return { kind: 'unschedulable', message: '0/0 clusters available: no WorkerCluster is registered.' };
    return { kind: 'unschedulable', message: `0/${total} clusters available: ${reasons.join(', ')}.` };
  }
  const avoided = (candidate: ClusterCandidate) => request.avoidedClusters?.includes(candidate.name) === true;
  const ranking = feasible
    .map((candidate) => ({ candidate, score: score(candidate, request, needed) }))
    .sort(
      // Weight 0 is a last resort even against a cluster that scores 0 (left full, or a GPU-only
      // Job under binpack); a cluster that refused this workload's mirror comes after every other.
      // Whole points decide, as kube-scheduler's integer scores do: a hundredth of a point is
      // other tenants' pods coming and going, and ranking on it sent a fleet benchmark's
      // 100,000 pod-less Jobs 16,200–16,600 each to six of ten identical workers and
      // 1,100–1,550 to the other four; within a point, the cluster with fewer active workloads.
      (a, b) =>
        Number(b.candidate.weight > 0) - Number(a.candidate.weight > 0) ||
        Number(avoided(a.candidate)) - Number(avoided(b.candidate)) ||
        Math.round(b.score) - Math.round(a.score) ||
        a.candidate.activeWorkloads - b.candidate.activeWorkloads ||
        a.candidate.name.localeCompare(b.candidate.name),
    )
    .map(({ candidate, score }) => ({ name: candidate.name, score }));
  const [best, ...rest] = ranking as [ScoredCluster, ...ScoredCluster[]];
  const others = rest.length > 0 ? `; ${rest.map((r) => `${r.name} ${r.score}`).join(', ')}` : '';
  const filtered = reasons.length > 0 ? ` ${total - feasible.length} filtered: ${reasons.join(', ')}.` : '';
  const refusedBefore = feasible.filter(avoided).map((c) => c.name);
  const outscored = rest.filter((r) => r.score > best.score).map((r) => r.name);
  const withinAPoint =
    outscored.length > 0 ? ` Within a point of ${outscored.join(', ')}, it has fewer active workloads.` : '';
  const last =
    refusedBefore.length > 0
      ? ` Ranked last, having refused its mirror before: ${refusedBefore.join(', ')}.`
      : '';
  return {
    kind: 'placed',
    cluster: best.name,
    ranking,
    message: `placed on ${best.name} by ${request.policy} (score ${best.score}${others}); ${feasible.length}/${total} clusters feasible.${filtered}${withinAPoint}${last}`,
  };
}

/** One cluster's verdict for one workload: why it cannot take it, or its score. */
export interface ClusterVerdict {
  name: string;
  eligible: boolean;
  /** The weighted score, for eligible clusters. */
  score: number | null;
  /** Why not, for the others, in the words of chooseWorkerCluster's message. */
  reason: string | null;
}

/**
 * Every candidate's verdict, as chooseWorkerCluster sees it (same filters, same scores), for
 * people asking "why not that cluster?" (the API's placement preview). Eligible ones first, in
 * chooseWorkerCluster's ranking order; the rest by name.
 */
export function clusterVerdicts(
  candidates: readonly ClusterCandidate[],
  request: PlacementRequest,
): ClusterVerdict[] {
  const decision = chooseWorkerCluster(candidates, request);
  const ranking = decision.kind === 'placed' ? decision.ranking : [];
  const eligible = ranking.map((r) => ({ name: r.name, eligible: true, score: r.score, reason: null }));
  const needed = totalDemand(request.podGroups);
  const rejected = candidates
    .filter((candidate) => !ranking.some((r) => r.name === candidate.name))
    .map((candidate) => {
      const why = filter(candidate, request, needed)!;
      // "1 cordoned" -> "cordoned": the count means nothing for one cluster.
      const reason = renderRejection(1, [why]).replace(/^1 /, '');
      return { name: candidate.name, eligible: false, score: null, reason };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return [...eligible, ...rejected];
}
