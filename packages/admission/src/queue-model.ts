// The admission model: what a DispatchQueue says (parsed and validated), what a workload asks
// of it, and what one admission decision answers. Kind-neutral: a workload is its demand and
// its priority; its kind's adapter computed both.

import type { LabelSelector, Resources } from '@jobrelay/resources';

/** The resource name that counts workloads (one per admitted workload) in quotas and usage. */
export const workloadCountResource = 'workloads';

export type QueueingStrategy = 'StrictFIFO' | 'BestEffortFIFO';
/** Preemption inside a queue, to admit a higher-priority workload of the same queue. */
export type WithinQueuePreemption = 'Never' | 'LowerPriority';
/**
 * Reclaim of a queue's own nominal quota that others in its cohort borrowed: `Never`; evict
 * borrowers' workloads of lower priority than the one waiting (`LowerPriority`); evict any
 * borrower's workloads (`Any`).
 */
export type ReclaimPreemption = 'Never' | 'LowerPriority' | 'Any';

/** A DispatchQueue's spec once parsed: every default filled in, every limit checked. */
export interface QueueSpec {
  name: string;
  /**
   * Namespaces whose workloads it takes; undefined: none, not even a workload that names it by
   * label (a label only picks among the queues that select the workload's namespace).
   */
  namespaceSelector?: LabelSelector;
  /**
   * Across the whole fleet, per resource, in the units of Resources (cpu in millicores, memory
   * in bytes, extended resources in units, `workloads` a count). A resource a workload asks for that is not named here
   * cannot be admitted by this queue.
   */
  nominalQuota: Resources;
  /** Queues of one cohort lend each other unused nominal quota. */
  cohort?: string;
  /** At most this much above nominal per resource; a resource not named borrows without limit (what the cohort lends). */
  borrowingLimit?: Resources;
  /** At most this much of its nominal quota lent to the cohort per resource; not named: all of it. */
  lendingLimit?: Resources;
  /** Fair-sharing weight (> 0): in a cohort, queues receive capacity in proportion to it. */
  weight: number;
  queueingStrategy: QueueingStrategy;
  preemption: { withinQueue: WithinQueuePreemption; reclaimWithinCohort: ReclaimPreemption };
}

/** A workload as admission sees it. */
export interface QueuedWorkload {
  /** The origin's UID: stable, unique across kinds. */
  uid: string;
  /** For messages and logs: `kind namespace/name`. */
  label: string;
  namespace: string;
  queue: string;
  /** The Kubernetes priority: its pod templates' PriorityClass (the highest), else the global default, else 0. */
  priority: number;
  /** Milliseconds since the epoch: its age orders it after priority (the origin's creationTimestamp). */
  createdAt: number;
  /** What it holds while admitted, per resource (its pods at once, summed); the count resource is added by admission. */
  demand: Resources;
}

/** A workload that holds quota: admitted (placed, unfinished), on `cluster` since `admittedAt`. */
export interface AdmittedWorkload extends QueuedWorkload {
  cluster: string;
  admittedAt: number;
  /**
   * Already chosen for eviction (its mirror is being deleted): it still holds quota until it is
   * gone, but a new preemption counts it as freed rather than choosing more victims.
   */
  evicting?: boolean;
}

/**
 * Where a pending workload could go now, given what this decision already admitted (the
 * `assumed` requests per cluster, with their count as `workloads`, on top of what the clusters'
 * capacity already counts): a
 * cluster, or why none. The caller wraps chooseWorkerCluster; property tests pass a model.
 */
export type ChooseCluster = (
  workload: QueuedWorkload,
  assumed: ReadonlyMap<string, Resources>,
) => { kind: 'fits'; cluster: string } | { kind: 'no-cluster'; message: string };

export interface AdmissionSnapshot {
  queues: readonly QueueSpec[];
  /** Every workload holding quota, in any queue. */
  admitted: readonly AdmittedWorkload[];
  /** Every workload waiting for admission, in any queue. */
  pending: readonly QueuedWorkload[];
  chooseCluster: ChooseCluster;
}

/** The gate that holds a waiting workload, with its one-line explanation. */
export type WaitingGate =
  /** Its queue's quota (and what the cohort may lend) is used: `queue research: cpu 40/40 in use (borrowing 0 of 8 allowed)`. */
  | 'quota'
  /** StrictFIFO: behind its queue's head (`queue research: StrictFIFO, behind team-a/big`). */
  | 'order'
  /** Its quota has room, no cluster does: the cluster's message (`0/3 clusters available: ...`). */
  | 'clusters'
  /** Room is being made: `preempting 2 workloads of team-b to reclaim nominal quota`. */
  | 'preempting'
  /** It can never be admitted as it stands: its queue lacks a resource it asks for, or it asks more than the queue could ever give. */
  | 'inadmissible';

export interface WaitingVerdict {
  gate: WaitingGate;
  /** The gate in one line, without the position (which moves with every admission): what is written on the workload. */
  message: string;
  /** 1-based place in its queue's order, and the queue's pending count. */
  position: number;
  of: number;
}

export type EvictionReason =
  /** For a higher-priority workload of its own queue. */
  | 'InQueuePreemption'
  /** Its queue borrowed; the lender takes back its nominal quota. */
  | 'ReclaimNominalQuota';

export interface Eviction {
  uid: string;
  reason: EvictionReason;
  /** The workload it makes room for. */
  for: string;
  /** For the evicted origin's Event and waiting reason: `preempted to admit team-a/urgent (priority 1000) of queue research`. */
  message: string;
}

/** Per queue, after this decision's admissions (evictions not yet taken effect still count). */
export interface QueueUsage {
  /** What its admitted workloads hold, per resource (the count resource included). */
  used: Resources;
  /** The part of `used` above its nominal quota, per resource. */
  borrowed: Resources;
  /** Its weighted dominant-resource share (0 when at or below nominal everywhere). */
  share: number;
  admitted: number;
  pending: number;
}

export interface AdmissionDecision {
  /** In the order they were decided; each has quota reserved and a cluster that fits. */
  admit: ReadonlyArray<{ uid: string; cluster: string; queue: string; borrowed: Resources }>;
  evict: readonly Eviction[];
  /** Every pending workload not admitted, by UID. */
  waiting: ReadonlyMap<string, WaitingVerdict>;
  usage: ReadonlyMap<string, QueueUsage>;
}

/** The label by which a workload names its queue (beside its namespace's match by namespaceSelector). */
export const queueNameLabel = 'jobrelay.dev/queue-name';

/** A DispatchQueue's `.status`, as the leader writes it (only when it changed, at most every few seconds). */
export interface DispatchQueueStatus {
  /** Workloads waiting in it. */
  pendingWorkloads: number;
  /** Workloads holding its quota. */
  admittedWorkloads: number;
  /** Per resource it names, what its admitted workloads hold, as Kubernetes quantities (`"4"`, `"8Gi"`). */
  usage: Record<string, string>;
  /** Per resource, the part of usage above nominal (borrowed from its cohort); empty when none. */
  borrowed: Record<string, string>;
  /** The weighted dominant-resource share, as a decimal string (`"0.25"`). */
  share: string;
  /** For `kubectl get dispatchqueues`: `used/nominal` of cpu, memory and GPUs (`"4/40"`, `"8Gi/64Gi"`, `"-"` when not named). */
  columns: { cpu: string; memory: string; gpu: string };
  /** `Active` (False with reason `InvalidSpec` and the problems when its spec cannot be used). */
  conditions: Array<{
    type: string;
    status: 'True' | 'False' | 'Unknown';
    reason: string;
    message: string;
    lastTransitionTime: string;
  }>;
  observedGeneration?: number;
}

// The functions of this package, and where they live (each with its tests):
//
// decide-admission.ts   decideAdmission(snapshot: AdmissionSnapshot): AdmissionDecision
// dispatch-queue.ts     parseDispatchQueue(object: unknown): ParsedQueue
// queue-selection.ts    queueFor(workload, namespaceLabels, queues): QueueChoice
// workload-priority.ts  workloadPriority(templates, classes): WorkloadPriority

/** A DispatchQueue object read from the apiserver: its spec usable, or why not (every problem, for its Active condition). */
export type ParsedQueue =
  | { kind: 'ok'; spec: QueueSpec }
  | {
      kind: 'invalid';
      name: string;
      problems: string[];
      /**
       * Its namespaceSelector when that part parsed: the namespaces it was meant to fence, whose
       * workloads queueFor holds (rather than letting them run unqueued) until it is fixed.
       */
      namespaceSelector?: LabelSelector;
    };

/**
 * Which queue takes a workload: none (no queue selects its namespace and it names none: it is
 * placed as without queues), one, or a refusal the workload waits on (it names a queue that does
 * not exist or does not take its namespace; two queues select its namespace and it names neither).
 */
export type QueueChoice =
  | { kind: 'unqueued' }
  | { kind: 'queued'; queue: string }
  | { kind: 'refused'; message: string };

/** The workload as queue selection reads it. */
export interface QueueSelectionInput {
  namespace: string;
  labels?: Record<string, string>;
}

/** PriorityClasses (scheduling.k8s.io/v1) as the controller caches them. */
export interface PriorityClassLookup {
  get(name: string): { value: number } | undefined;
  /** The class with globalDefault: true (the highest value if several), if any. */
  globalDefault(): { name: string; value: number } | undefined;
}

/** A workload's priority, or why it cannot be known (a PriorityClass that does not exist). */
export type WorkloadPriority =
  | { kind: 'ok'; priority: number; className?: string }
  | { kind: 'refused'; message: string };
