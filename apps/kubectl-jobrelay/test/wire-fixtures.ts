// Whole API answers for the plugin's tests, typed by @jobrelay/api-types: a field the API renames
// fails the type check here too. Each builder takes the fields a test cares about.
import type {
  Cluster,
  DispatchQueue,
  PendingWorkload,
  QueuedWorkload,
  WorkloadDetail,
  WorkloadSummary,
} from '@jobrelay/api-types';

export function clusterOf(fields: Partial<Cluster> & Pick<Cluster, 'name'>): Cluster {
  return {
    labels: {},
    active: true,
    reason: 'Connected',
    message: '',
    kubernetesVersion: null,
    cordoned: false,
    draining: false,
    weight: 1,
    maxActiveWorkloads: null,
    allowedNamespaces: [],
    podRestrictions: null,
    capacity: null,
    assumed: {},
    workloadsPlaced: 0,
    placedByKind: {},
    servedKinds: null,
    placementsPerMinute: 0,
    lastHeartbeatTime: null,
    createdAt: null,
    ...fields,
  };
}

export function pendingOf(
  fields: Partial<PendingWorkload> & Pick<PendingWorkload, 'position' | 'kind' | 'name'>,
): PendingWorkload {
  return {
    apiVersion: 'batch/v1',
    objectKind: 'Job',
    namespace: 'team-a',
    uid: `uid-${fields.name}`,
    waitingSince: null,
    waitingSeconds: null,
    reason: 'waiting',
    queueState: 'waiting',
    queue: null,
    ...fields,
  };
}

export function summaryOf(
  fields: Partial<WorkloadSummary> & Pick<WorkloadSummary, 'kind' | 'name'>,
): WorkloadSummary {
  return {
    apiVersion: 'v1',
    objectKind: fields.kind,
    namespace: 'team-a',
    uid: `uid-${fields.name}`,
    phase: 'pending',
    cluster: null,
    attempt: null,
    placedAt: null,
    waitingSince: null,
    createdAt: null,
    finishedAt: null,
    pods: 1,
    reason: null,
    labels: {},
    ...fields,
  };
}

export function detailOf(
  fields: Partial<WorkloadDetail> & Pick<WorkloadDetail, 'kind' | 'name'>,
): WorkloadDetail {
  return {
    ...summaryOf(fields),
    placement: null,
    history: [],
    mirror: null,
    mirrorUnavailable: null,
    status: {},
    events: [],
    waiting: null,
    queue: null,
    podSelectors: [],
    ...fields,
  };
}

export function queueOf(fields: Partial<DispatchQueue> & Pick<DispatchQueue, 'name'>): DispatchQueue {
  return {
    valid: true,
    problems: [],
    cohort: null,
    weight: 1,
    queueingStrategy: 'BestEffortFIFO',
    preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
    namespaceSelector: null,
    resources: [],
    status: null,
    createdAt: null,
    ...fields,
  };
}

export function queuedOf(fields: Partial<QueuedWorkload> & Pick<QueuedWorkload, 'name'>): QueuedWorkload {
  return {
    kind: 'job',
    namespace: 'team-a',
    uid: `uid-${fields.name}`,
    position: null,
    reason: null,
    waitingSince: null,
    cluster: null,
    admittedAt: null,
    pods: 1,
    ...fields,
  };
}
