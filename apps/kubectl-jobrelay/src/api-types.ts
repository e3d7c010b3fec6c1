// The shapes of the admin API's answers (apps/api, contract v1) that the plugin reads. Fields are
// optional where a table can do without them, so a newer API with more or fewer fields still prints.

export interface Cluster {
  name: string;
  labels?: Record<string, string>;
  active: boolean;
  reason?: string;
  message?: string;
  kubernetesVersion?: string | null;
  cordoned?: boolean;
  draining?: boolean;
  weight?: number;
  maxActiveWorkloads?: number | null;
  allowedNamespaces?: string[];
  capacity?: {
    nodes?: number;
    allocatable?: Record<string, string | number>;
    free?: Record<string, string | number>;
  } | null;
  jobsPlaced?: number;
  placementsPerMinute?: number;
  lastHeartbeatTime?: string | null;
  createdAt?: string;
}

export interface Drain {
  cluster: string;
  draining: boolean;
  remaining: number;
  /** Of remaining, those in namespaces the caller may not list: counted, not named. */
  hidden?: number;
  jobs?: Array<{ namespace: string; name: string }>;
}

export interface JobSummary {
  namespace: string;
  name: string;
  uid?: string;
  phase: string;
  cluster: string | null;
  attempt: number | null;
  placedAt: string | null;
  waitingSince: string | null;
  createdAt?: string;
  completions: number | null;
  parallelism: number | null;
  active?: number;
  succeeded?: number;
  failed?: number;
  reason: string | null;
}

export interface JobDetail extends JobSummary {
  placement: Record<string, unknown> | null;
  /** The contract's placement attempts. */
  attempts?: Array<{ attempt: number; cluster: string; at: string; reason?: string; message?: string }>;
  /** apps/api as built sends the placement Events as `history` instead of `attempts`. */
  history?: JobEvent[];
  mirror: { cluster: string; uid: string | null; status?: Record<string, unknown> } | null;
  mirrorUnavailable?: string | null;
  status?: Record<string, unknown>;
  /** null when the caller may not list Events in the namespace. */
  events?: JobEvent[] | null;
  waiting: { reason: string; since: string | null } | null;
}

export interface JobEvent {
  type?: string;
  reason?: string;
  message?: string;
  at?: string | null;
  count?: number;
  /** The reporting component, or `placement-record` for a history entry no Event recorded. */
  source?: string | null;
}

export interface PendingItem {
  position: number;
  /** The kind's name in the API (job, raycluster, ...); absent from an API older than kinds. */
  kind?: string;
  apiVersion?: string;
  objectKind?: string;
  namespace: string;
  name: string;
  uid?: string;
  waitingSince?: string | null;
  waitingSeconds?: number | null;
  reason?: string | null;
  queueState?: string;
}

export interface PendingPage {
  items: PendingItem[];
  total?: number;
  continue?: string;
}

export interface PlacementPreview {
  decision: 'placed' | 'unschedulable';
  cluster: string | null;
  message?: string;
  clusters?: Array<{ name: string; eligible: boolean; score: number | null; reason: string | null }>;
}

export interface RegisterDryRun {
  dryRun: true;
  probe?: { server?: string; kubernetesVersion?: string };
}

/** A dispatched workload of any kind (GET /api/v1/workloads). */
export interface WorkloadSummary {
  /** The kind's name in the API: job, raycluster, rayjob, ... */
  kind: string;
  apiVersion?: string;
  objectKind?: string;
  namespace: string;
  name: string;
  uid?: string;
  /** pending, placed, running, finished or suspended. */
  phase: string;
  cluster: string | null;
  attempt: number | null;
  placedAt: string | null;
  waitingSince: string | null;
  createdAt?: string | null;
  finishedAt?: string | null;
  pods?: number;
  reason: string | null;
  labels?: Record<string, string>;
}

export interface WorkloadDetail extends WorkloadSummary {
  placement: Record<string, unknown> | null;
  history?: JobEvent[];
  mirror: { cluster: string; uid: string | null; status?: Record<string, unknown> } | null;
  mirrorUnavailable?: string | null;
  status?: Record<string, unknown>;
  events?: JobEvent[] | null;
  waiting: { reason: string; since: string | null } | null;
  podSelectors?: Array<{ labelSelector: string; description: string }>;
}
