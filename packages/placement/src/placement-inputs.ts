// The inputs of chooseWorkerCluster, computed from what the caches hold: what a workload asks
// for, how loaded each cluster is, and each cluster as a candidate. Pure, and shared by the
// controller (which decides) and the admin API (which previews and explains), so both
// compute exactly the same decision from the same state.
//
// The annotation names come from @jobrelay/mirror, which holds every user-facing jobrelay
// name. That is no cycle: @jobrelay/mirror depends on no other jobrelay package. Moving the names here would split them across two
// packages, and taking them as parameters would let a caller pass different ones than the
// controller reads. What a workload is (finished, suspended, its pods) comes from its kind's
// adapter, structurally as WorkloadFacts: @jobrelay/kinds depends on this package.
import type { ObjectMeta } from '@jobrelay/kube';
import {
  clusterPinAnnotation,
  clusterSelectorAnnotation,
  placementAnnotation,
  placementPolicyAnnotation,
} from '@jobrelay/mirror';
import { parseLabelSelector, type Resources } from '@jobrelay/resources';
import type {
  ClusterCandidate,
  NamespaceLookup,
  PlacementRequest,
  ScoringPolicy,
} from './choose-worker-cluster.ts';
import { scoringPolicies } from './choose-worker-cluster.ts';
import type { ClusterLoad, PlacedWorkload, PodsByOwner } from './placed-load.ts';
import { PlacedLoadIndex } from './placed-load-index.ts';
import { type ParsedPlacement, type PlacementRecord, readPlacementRecord } from './placement-record.ts';
import type { PodGroup } from './pod-groups.ts';
import { type PodRestrictionsRead, readPodRestrictions } from './pod-restrictions.ts';
import { podSecurityLevelOf } from './pod-security.ts';
import { podTemplateAsks, type WorkloadPodTemplate } from './pod-template-asks.ts';
import type { RecordKeyring, SealSubject } from './record-seal.ts';
import { systemNamespaceProblem } from './system-namespaces.ts';

/** Any workload object, as far as placement reads it: its metadata. */
export interface Workload {
  metadata?: ObjectMeta | undefined;
}

/**
 * What placement needs to know about a workload of one kind (a WorkloadKindAdapter is one).
 * `podDemand` gives the pods that run at once when it starts, as groups of identical pods;
 * `podTemplates` every template its pods are made from, as its controller will make them.
 */
export interface WorkloadFacts<T extends Workload = Workload> {
  readonly name: string;
  readonly resource: { readonly kind: string };
  isFinished(workload: T): boolean;
  isSuspended(workload: T): boolean;
  podDemand(workload: T): PodGroup[];
  /** Undefined when the kind does not say where its templates are. */
  podTemplates(workload: T): WorkloadPodTemplate[] | undefined;
}

/** What placement reads besides the workload: the controller's settings and the management cluster's namespaces. */
export interface PlacementSettings {
  /** How clusters are scored unless the workload's placement-policy annotation says otherwise. */
  defaultPolicy: ScoringPolicy;
  /** The controller's own namespace: never dispatched from, like kube-* and default. */
  systemNamespace: string;
  /** The management cluster's namespaces: the Pod Security level a workload's namespace enforces here. */
  namespaces: NamespaceLookup;
}

export type PlacementRequestResult =
  | { kind: 'ok'; request: PlacementRequest }
  | { kind: 'invalid'; message: string };

/**
 * What the workload asks of a cluster, from its pods and its jobrelay.dev/* annotations
 * (cluster-selector, placement-policy, cluster pin), and the clusters its placement record
 * excludes, with the Pod Security level its namespace enforces here. A workload in a system
 * namespace, in a namespace not known yet, or with an annotation that does not parse makes the
 * request invalid, with a message that says so: the workload waits with it rather than being
 * placed by a guess. `demandOf` lets a caller cache the demand per workload.
 */
export function placementRequestFor<T extends Workload>(
  workload: T,
  previous: PlacementRecord | undefined,
  settings: PlacementSettings,
  facts: WorkloadFacts<T>,
  demandOf: (workload: T) => PodGroup[] = (w) => facts.podDemand(w),
): PlacementRequestResult {
  const namespace = workload.metadata?.namespace ?? '';
  const system = systemNamespaceProblem(namespace, settings.systemNamespace);
  if (system) return { kind: 'invalid', message: system };
  const managementNamespace = settings.namespaces.get(namespace);
  if (!managementNamespace) {
    return {
      kind: 'invalid',
      message: `namespace ${namespace} is not known yet: its Pod Security level cannot be read`,
    };
  }
  const annotations = workload.metadata?.annotations ?? {};
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
  const policy = annotations[placementPolicyAnnotation] ?? settings.defaultPolicy;
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
      namespace,
      excludedClusters: previous?.excludedClusters ?? [],
      ...(previous?.refusedBy?.length ? { avoidedClusters: previous.refusedBy } : {}),
      ...(clusterSelector ? { clusterSelector } : {}),
      ...(pin ? { pinnedCluster: pin } : {}),
      podGroups: demandOf(workload),
      kind: { name: facts.name, label: facts.resource.kind },
      policy: policy as ScoringPolicy,
      asks: podTemplateAsks(facts.podTemplates(workload)),
      podSecurity: podSecurityLevelOf(managementNamespace.metadata?.labels),
    },
  };
}

/** A managed workload and the facts of its kind. */
export interface KindedWorkload {
  workload: Workload;
  facts: WorkloadFacts<never>;
}

const parsedRecords = new WeakMap<object, { keyring: RecordKeyring; parsed: ParsedPlacement }>();

/** Whose record it is, for its seal: a workload read from an apiserver always says. */
export function sealSubjectOf(workload: Workload): SealSubject {
  const metadata = workload.metadata;
  return { namespace: metadata?.namespace ?? '', name: metadata?.name ?? '', uid: metadata?.uid ?? '' };
}

/**
 * The workload's placement record, read and its seal checked once per object: cached objects
 * are replaced, never changed, on update, so the object itself is the cache key (parsing runs
 * zod and an HMAC, and the load of every cluster reads every placed workload's record). A new
 * version of the workload mostly carries the same record (a status write, the write's answer and
 * its watch echo): the last few thousand annotations read are remembered too, with whose they
 * were and under which keyring, so one is checked once, not once per version.
 */
export function placementRecordOf(workload: Workload, keyring: RecordKeyring): ParsedPlacement {
  const annotation = workload.metadata?.annotations?.[placementAnnotation];
  if (!workload.metadata) return readPlacementRecord(annotation, sealSubjectOf(workload), keyring);
  const cached = parsedRecords.get(workload.metadata);
  if (cached?.keyring === keyring) return cached.parsed;
  const parsed = recentlyRead(annotation, sealSubjectOf(workload), keyring);
  parsedRecords.set(workload.metadata, { keyring, parsed });
  return parsed;
}

/** How many annotations `recentlyRead` remembers: about as many workloads as change at once. */
const recentRecordsHeld = 4096;
const recentRecords = new Map<string, { subject: string; keyring: RecordKeyring; parsed: ParsedPlacement }>();

function recentlyRead(
  annotation: string | undefined,
  subject: SealSubject,
  keyring: RecordKeyring,
): ParsedPlacement {
  if (annotation === undefined) return readPlacementRecord(annotation, subject, keyring);
  // The seal binds the record to its workload: the same text on another one is read afresh.
  const whose = `${subject.namespace}\u0000${subject.name}\u0000${subject.uid}`;
  const known = recentRecords.get(annotation);
  if (known && known.subject === whose && known.keyring === keyring) return known.parsed;
  const parsed = readPlacementRecord(annotation, subject, keyring);
  recentRecords.delete(annotation);
  recentRecords.set(annotation, { subject: whose, keyring, parsed });
  // Map keeps insertion order: the first key is the one read longest ago.
  if (recentRecords.size > recentRecordsHeld) recentRecords.delete(recentRecords.keys().next().value!);
  return parsed;
}

/**
 * Where a workload weighs: the cluster its record names, else the one it is assumed on
 * (placed but the write not yet seen); undefined when finished or not placed.
 */
export function placedWorkload(
  entry: KindedWorkload,
  assumedCluster: string | undefined,
  keyring: RecordKeyring,
  demandOf: (entry: KindedWorkload) => PodGroup[] = ({ workload, facts }) =>
    (facts as WorkloadFacts).podDemand(workload),
): PlacedWorkload | undefined {
  const facts = entry.facts as WorkloadFacts;
  if (facts.isFinished(entry.workload)) return undefined;
  const read = { finished: false, placement: placementRecordOf(entry.workload, keyring) };
  return placedWorkloadOf(entry, read, assumedCluster, demandOf);
}

/**
 * `placedWorkload` of a workload its caller has read already (whether it is finished, and its
 * record as `placementRecordOf` gives it): a controller that keeps one index of its origins reads
 * each version once, and its consumers take the reading from it instead of reading it again.
 */
export function placedWorkloadOf(
  entry: KindedWorkload,
  read: { finished: boolean; placement: ParsedPlacement },
  assumedCluster: string | undefined,
  demandOf: (entry: KindedWorkload) => PodGroup[] = ({ workload, facts }) =>
    (facts as WorkloadFacts).podDemand(workload),
): PlacedWorkload | undefined {
  if (read.finished) return undefined;
  const { workload } = entry;
  const facts = entry.facts as WorkloadFacts;
  const { placement } = read;
  const cluster = (placement.kind === 'ok' ? placement.record.cluster : undefined) ?? assumedCluster;
  if (!cluster) return undefined;
  const suspended = facts.isSuspended(workload);
  return {
    cluster,
    key: `${workload.metadata?.namespace}/${workload.metadata?.name}`,
    suspended,
    demand: suspended ? [] : demandOf(entry),
  };
}

/**
 * Per cluster: the placed unfinished workloads and the requests of their pods that do not
 * exist yet, so a burst of placements does not all land on the cluster that looked emptiest
 * a moment ago (cf. kube-scheduler's assume cache). Pods already counted by the worker's
 * capacity (its pod watch) are not assumed again; the mirror's status can run ahead of that
 * watch, so it is not used here. Counted pods are taken off the groups in order (a
 * RayCluster's head first, then its workers).
 */
export function loadOfPlaced(
  placed: Iterable<PlacedWorkload>,
  capacities: ReadonlyMap<string, PodsByOwner | undefined>,
): ClusterLoad {
  // One computation of this rule: the index the controller keeps up to date, built once here.
  const index = new PlacedLoadIndex();
  let n = 0;
  for (const workload of placed) index.set(String(n++), workload);
  return index.load(capacities);
}

/**
 * clusterLoad over whole workloads (`assumedPlacements` by origin UID: placements written but
 * not yet seen in the cache). The controller keeps PlacedWorkloads up to date as its cache
 * changes instead, and sums them with loadOfPlaced; the admin API computes this on demand.
 */
export function clusterLoad(
  workloads: Iterable<KindedWorkload>,
  capacities: ReadonlyMap<string, PodsByOwner | undefined>,
  assumedPlacements: ReadonlyMap<string, string>,
  keyring: RecordKeyring,
  demandOf?: (entry: KindedWorkload) => PodGroup[],
): ClusterLoad {
  const placed: PlacedWorkload[] = [];
  for (const entry of workloads) {
    const one = placedWorkload(
      entry,
      assumedPlacements.get(entry.workload.metadata?.uid ?? ''),
      keyring,
      demandOf,
    );
    if (one) placed.push(one);
  }
  return loadOfPlaced(placed, capacities);
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
    maxActiveWorkloads?: number;
    allowedNamespaces?: readonly string[];
    /** Read with podRestrictionsSchema: the CRD's schema, checked again. */
    podRestrictions?: unknown;
  };
  state: { active: boolean; reason?: string };
  /** The workload kinds (adapter names) it serves; undefined while not known. */
  servedKinds?: readonly string[];
  /** Its namespaces with their labels; undefined until they are listed. */
  namespaces?: NamespaceLookup;
  /** Undefined until the cluster's nodes and pods are listed. */
  capacity: { nodes: ReadonlyArray<{ name: string; free: Resources }>; allocatable: Resources } | undefined;
}

const readRestrictions = new WeakMap<object, PodRestrictionsRead>();

/** spec.podRestrictions read once per object: cached specs are replaced, never changed, on update. */
function podRestrictionsOf(value: unknown): PodRestrictionsRead {
  if (typeof value !== 'object' || value === null) return readPodRestrictions(value);
  const cached = readRestrictions.get(value);
  if (cached) return cached;
  const read = readPodRestrictions(value);
  readRestrictions.set(value, read);
  return read;
}

/** The clusters as chooseWorkerCluster's candidates, with their load. */
export function clusterCandidates(
  clusters: readonly PlacementClusterInput[],
  load: ClusterLoad,
): ClusterCandidate[] {
  return clusters.map((cluster) => {
    const here = load.get(cluster.name);
    const restrictions = podRestrictionsOf(cluster.spec.podRestrictions);
    return {
      name: cluster.name,
      labels: cluster.labels,
      active: cluster.state.active,
      inactiveReason: cluster.state.reason,
      // Draining is cordoned and more: no new workloads either way.
      cordoned: cluster.spec.unschedulable === true || cluster.spec.drain === true,
      weight: cluster.spec.weight ?? 1,
      allowedNamespaces: cluster.spec.allowedNamespaces ?? [],
      ...(cluster.spec.maxActiveWorkloads !== undefined
        ? { maxActiveWorkloads: cluster.spec.maxActiveWorkloads }
        : {}),
      activeWorkloads: here?.workloads ?? 0,
      ...(cluster.servedKinds ? { servedKinds: cluster.servedKinds } : {}),
      ...(restrictions.ok
        ? restrictions.restrictions
          ? { podRestrictions: restrictions.restrictions }
          : {}
        : { podRestrictionsProblem: restrictions.problem }),
      ...(cluster.namespaces ? { namespaces: cluster.namespaces } : {}),
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
 * When the workload's current placement attempt started waiting for a cluster: the record's
 * waitingSince (set when it is placed again), else the workload's creation. Undefined when
 * neither is known. The placement timeout counts from it; the pending queue orders by it.
 */
export function waitingSince(job: Workload, record: PlacementRecord | undefined): Date | undefined {
  // A waitingSince that is not a time (the annotation is hand-editable) falls back to the
  // workload's creation, the earliest the attempt can have started: never an Invalid Date.
  for (const since of [record?.waitingSince, job.metadata?.creationTimestamp]) {
    if (since === undefined) continue;
    const date = new Date(since);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return undefined;
}
