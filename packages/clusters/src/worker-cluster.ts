import type { PodRestrictions } from '@jobrelay/placement';
import type { CapacityStatus } from './capacity-summary.ts';

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
    activeWorkloads?: number;
    kubernetesVersion?: string;
    /** The kinds (adapter names) the worker serves, as discovery last found them. */
    servedKinds?: string[];
    lastHeartbeatTime?: string;
    connectionAttempts?: number;
    nextAttemptTime?: string;
    /** Published by the leader (capacity-summary.ts); null once cleared. */
    capacity?: CapacityStatus | null;
    conditions?: WorkerClusterCondition[];
  };
}

export interface WorkerClusterSpec {
  kubeconfigSecretRef: { name: string; key?: string };
  /** Multiplies the placement score; default 1, 0 makes the cluster a last resort. */
  weight?: number;
  /** Cordon: nothing new is placed here; what is here stays. */
  unschedulable?: boolean;
  /** Drain: like cordon, and the unfinished workloads here are placed elsewhere. */
  drain?: boolean;
  /** At most this many unfinished jobrelay workloads (of every kind) at once. */
  maxActiveWorkloads?: number;
  /** Only workloads from these namespaces; empty or absent means all. */
  allowedNamespaces?: string[];
  /**
   * What the cluster refuses beyond Pod Security: privileged containers, hostPath volumes,
   * host namespaces, nodeName, service accounts not listed; absent refuses nothing more. Read
   * with @jobrelay/placement's podRestrictionsSchema (readPodRestrictions) before it is used:
   * the CRD's schema says the same, and a value that does not parse refuses every workload.
   */
  podRestrictions?: PodRestrictions;
}

export { podRestrictionsSchema, readPodRestrictions } from '@jobrelay/placement';

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
