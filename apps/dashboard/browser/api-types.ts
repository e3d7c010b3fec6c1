// The shapes of the API's answers the dashboard reads (apps/api's zod schemas are the truth;
// these are the fields used here).

export interface CallerAction {
  action: string;
  allowed: boolean;
  needs: string;
}

export interface Me {
  username: string;
  groups: string[];
  /** The namespace the actions were checked in (the dashboard's scope); null: every namespace. */
  namespace: string | null;
  actions: CallerAction[];
}

export interface Cluster {
  name: string;
  labels: Record<string, string>;
  active: boolean;
  reason: string;
  message: string;
  kubernetesVersion: string | null;
  cordoned: boolean;
  draining: boolean;
  weight: number;
  maxActiveWorkloads: number | null;
  capacity: { nodes: number; allocatable: Record<string, string>; free: Record<string, string> } | null;
  assumed?: Record<string, string>;
  jobsPlaced: number;
  placedByKind: Record<string, number>;
  placementsPerMinute: number;
  lastHeartbeatTime: string | null;
}

export interface JobSummary {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  cluster: string | null;
  attempt: number | null;
  placedAt: string | null;
  waitingSince: string | null;
  createdAt: string | null;
  completions: number | null;
  parallelism: number | null;
  active: number;
  succeeded: number;
  failed: number;
  reason: string | null;
  labels: Record<string, string>;
}

export interface EventView {
  type: string;
  reason: string;
  message: string;
  at: string | null;
  count: number;
  source: string | null;
}

export interface JobCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface JobDetail extends JobSummary {
  placement: { cluster?: string; attempt?: number; placedAt?: string; decision?: string } | null;
  history: EventView[];
  mirror: { cluster: string; status: Record<string, unknown> } | null;
  mirrorUnavailable: string | null;
  status: { conditions?: JobCondition[]; startTime?: string; completionTime?: string };
  events: EventView[] | null;
  waiting: { reason: string; since: string | null } | null;
}

export interface PendingItem {
  position: number;
  kind: string;
  namespace: string;
  name: string;
  waitingSeconds: number | null;
  reason: string;
  queueState: string;
}

export interface StatsHistory {
  now: string;
  since: string;
  minutes: string[];
  placementsPerCluster: Array<{ cluster: string; perMinute: number[] }>;
  dispatchLatency: Array<{
    count: number;
    medianSeconds: number | null;
    p95Seconds: number | null;
    maxSeconds: number | null;
  }>;
  sampleSeconds: number;
  queueDepth: Array<{ at: string; pending: number; queued: number | null }>;
}

export interface Problem {
  status: number;
  code?: string;
  detail?: string;
  missingPermission?: Record<string, string>;
}
