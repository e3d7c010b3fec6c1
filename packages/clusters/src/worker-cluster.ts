/** The WorkerCluster custom resource (deploy/crds/workerclusters.jobrelay.dev.yaml), as plain JSON. */
export interface WorkerClusterCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface WorkerCluster {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
  };
  spec: WorkerClusterSpec;
  status?: {
    observedGeneration?: number;
    activeJobs?: number;
    kubernetesVersion?: string;
    lastHeartbeatTime?: string;
    connectionAttempts?: number;
    nextAttemptTime?: string;
    capacity?: { nodes?: number; allocatable?: Record<string, string>; free?: Record<string, string> };
    conditions?: WorkerClusterCondition[];
  };
}

export interface WorkerClusterSpec {
  kubeconfigSecretRef: { name: string; key?: string };
  /** Multiplies the placement score; default 1, 0 makes the cluster a last resort. */
  weight?: number;
  /** Cordon: no new Jobs are placed here; Jobs already here stay. */
  unschedulable?: boolean;
  /** Drain: like cordon, and the unfinished Jobs here are placed elsewhere. */
  drain?: boolean;
  /** At most this many unfinished jobrelay Jobs at once. */
  maxActiveJobs?: number;
  /** Only Jobs from these namespaces; empty or absent means all. */
  allowedNamespaces?: string[];
}

export const workerClusterGroup = 'jobrelay.dev';
export const workerClusterVersion = 'v1alpha1';
export const workerClusterPlural = 'workerclusters';

/** Reasons of the Active condition; stable, so admins and alerts can match on them. */
export const activeReasons = {
  connected: 'Connected',
  secretNotFound: 'SecretNotFound',
  kubeconfigKeyMissing: 'KubeconfigKeyMissing',
  kubeconfigMalformed: 'KubeconfigMalformed',
  kubeconfigUnsafe: 'KubeconfigUnsafe',
  unreachable: 'Unreachable',
  tlsError: 'TLSError',
  certificateExpired: 'CertificateExpired',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  connecting: 'Connecting',
  duplicateCluster: 'DuplicateCluster',
} as const;

export type ActiveReason = (typeof activeReasons)[keyof typeof activeReasons];
