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
  spec: { kubeconfigSecretRef: { name: string; key?: string } };
  status?: {
    observedGeneration?: number;
    activeJobs?: number;
    kubernetesVersion?: string;
    lastHeartbeatTime?: string;
    conditions?: WorkerClusterCondition[];
  };
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
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  connecting: 'Connecting',
  duplicateCluster: 'DuplicateCluster',
} as const;

export type ActiveReason = (typeof activeReasons)[keyof typeof activeReasons];
