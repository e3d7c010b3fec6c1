// RayCluster and RayJob manifests that run in the sandbox: small requests (KWOK nodes have
// 4 to 16 CPUs), an image that is never pulled, and the simulated dashboard's conventions.
import type { KubernetesObject } from '@kubernetes/client-node';
import { rayJobSimulation, simulatedRayVersion } from './ray-dashboard.ts';

export const rayApiVersion = 'ray.io/v1';
/** Never pulled: KWOK runs no containers. */
export const sandboxRayImage = `rayproject/ray:${simulatedRayVersion.ray_version}`;

export interface SandboxRayClusterOptions {
  /** Replicas of the one worker group, `workers` (default 2; 0 for a head only). */
  workerReplicas?: number;
  /** Requests of every Ray container (default 100m CPU, 128Mi). */
  requests?: { cpu: string; memory: string };
}

/** A RayClusterSpec: a head and one worker group, as KubeRay's samples write them. */
export function sandboxRayClusterSpec(options: SandboxRayClusterOptions = {}): Record<string, unknown> {
  const requests = options.requests ?? { cpu: '100m', memory: '128Mi' };
  const container = (name: string) => ({ name, image: sandboxRayImage, resources: { requests } });
  const workerReplicas = options.workerReplicas ?? 2;
  return {
    // K8sJobMode passes job metadata as --metadata-json, which the operator allows only when
    // it knows the Ray version (>= 2.6.0): without it, "failed to parse Ray version".
    rayVersion: simulatedRayVersion.ray_version,
    headGroupSpec: {
      rayStartParams: {},
      template: { spec: { containers: [container('ray-head')] } },
    },
    workerGroupSpecs:
      workerReplicas > 0
        ? [
            {
              groupName: 'workers',
              replicas: workerReplicas,
              minReplicas: 0,
              maxReplicas: Math.max(workerReplicas, 1),
              rayStartParams: {},
              template: { spec: { containers: [container('ray-worker')] } },
            },
          ]
        : [],
  };
}

export interface SandboxRayClusterManifest extends SandboxRayClusterOptions {
  name: string;
  namespace?: string;
  /** spec.managedBy: immutable; the CRD accepts only kuberayManagedBy's two values. */
  managedBy?: string;
}

export function sandboxRayCluster(options: SandboxRayClusterManifest): KubernetesObject & {
  spec: Record<string, unknown>;
} {
  return {
    apiVersion: rayApiVersion,
    kind: 'RayCluster',
    metadata: { name: options.name, ...(options.namespace ? { namespace: options.namespace } : {}) },
    spec: {
      ...(options.managedBy ? { managedBy: options.managedBy } : {}),
      ...sandboxRayClusterSpec(options),
    },
  };
}

export interface SandboxRayJobManifest {
  name: string;
  namespace?: string;
  /** K8sJobMode (the operator's default, also when left out) or HTTPMode. */
  submissionMode?: 'K8sJobMode' | 'HTTPMode';
  entrypoint?: string;
  /** Seconds the simulated Ray job runs (metadata sandbox.jobrelay.dev/run-seconds; default 3). */
  runSeconds?: number;
  /** Its exit code (metadata sandbox.jobrelay.dev/exit-code): not 0 ends FAILED. */
  exitCode?: number;
  managedBy?: string;
  cluster?: SandboxRayClusterOptions;
  shutdownAfterJobFinishes?: boolean;
}

/** A RayJob the sandbox runs to the end: its own RayCluster, the simulated job's behaviour as metadata. */
export function sandboxRayJob(options: SandboxRayJobManifest): KubernetesObject & {
  spec: Record<string, unknown>;
} {
  const metadata: Record<string, string> = {};
  if (options.runSeconds !== undefined) metadata[rayJobSimulation.runSecondsKey] = String(options.runSeconds);
  if (options.exitCode !== undefined) metadata[rayJobSimulation.exitCodeKey] = String(options.exitCode);
  return {
    apiVersion: rayApiVersion,
    kind: 'RayJob',
    metadata: { name: options.name, ...(options.namespace ? { namespace: options.namespace } : {}) },
    spec: {
      ...(options.managedBy ? { managedBy: options.managedBy } : {}),
      ...(options.submissionMode ? { submissionMode: options.submissionMode } : {}),
      entrypoint: options.entrypoint ?? 'python -c "print(\'simulated\')"',
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(options.shutdownAfterJobFinishes !== undefined
        ? { shutdownAfterJobFinishes: options.shutdownAfterJobFinishes }
        : {}),
      rayClusterSpec: sandboxRayClusterSpec(options.cluster ?? { workerReplicas: 0 }),
    },
  };
}
