// Ray objects as the apiservers return them (CRD defaults applied: minReplicas, maxReplicas,
// numOfHosts, backoffLimit, submissionMode ...), and statuses shaped field for field as the
// v1.5.0 operator writes them (apis/ray/v1 types serialized by encoding/json: omitempty
// fields left out, zero resource.Quantity written "0", struct fields such as head always
// present, metav1.Condition's message always present).

import type {
  RayCluster,
  RayClusterSpec,
  RayClusterStatus,
  RayJob,
  RayJobStatus,
} from '../../src/ray/ray-types.ts';
import type { MirrorBuildContext } from '../../src/workload-kind-adapter.ts';

export const context: MirrorBuildContext = {
  originId: 'mgmt-7f3a',
  attempt: 1,
  carried: { succeeded: 0, failed: 0 },
  now: new Date('2026-01-05T10:00:00Z'),
};

const container = (name: string, cpu: string, memory: string) => ({
  name,
  image: 'rayproject/ray:2.46.0',
  ports: [{ containerPort: 6379, name: 'gcs-server', protocol: 'TCP' }],
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
});

export function rayClusterSpec(overrides: Partial<RayClusterSpec> = {}): RayClusterSpec {
  return {
    rayVersion: '2.46.0',
    headGroupSpec: {
      rayStartParams: { 'dashboard-host': '0.0.0.0' },
      template: { spec: { containers: [container('ray-head', '1', '2Gi')] } },
    },
    workerGroupSpecs: [
      {
        groupName: 'cpu',
        replicas: 2,
        minReplicas: 1,
        maxReplicas: 5,
        numOfHosts: 1,
        rayStartParams: {},
        template: { spec: { containers: [container('ray-worker', '1', '2Gi')] } },
      },
    ],
    ...overrides,
  };
}

const originMetadata = (kind: string) => ({
  name: 'demo',
  namespace: 'team-a',
  uid: `origin-${kind}-uid`,
  resourceVersion: '812',
  generation: 3,
  creationTimestamp: '2026-01-05T09:59:00Z',
  managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
  finalizers: ['example.com/audit'],
  labels: { app: 'demo', 'kueue.x-k8s.io/queue-name': 'team-a' },
  annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', owner: 'ana' },
});

export function originRayCluster(spec: Partial<RayClusterSpec> = {}): RayCluster {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: originMetadata('raycluster'),
    spec: { managedBy: 'kueue.x-k8s.io/multikueue', ...rayClusterSpec(spec) },
  };
}

/** The mirror as the worker returns it: the origin's spec minus managedBy, its own generation and status. */
export function mirrorOf<T extends RayCluster | RayJob>(origin: T, status?: T['status'], generation = 1): T {
  const { managedBy: _m, ...spec } = structuredClone(origin.spec!);
  return {
    apiVersion: origin.apiVersion,
    kind: origin.kind,
    metadata: {
      name: origin.metadata!.name,
      namespace: origin.metadata!.namespace,
      uid: 'mirror-uid',
      generation,
      resourceVersion: '55',
      labels: { 'jobrelay.dev/origin': 'mgmt-7f3a', 'jobrelay.dev/origin-uid': origin.metadata!.uid! },
    },
    spec,
    ...(status ? { status } : {}),
  } as unknown as T;
}

/** A RayCluster head + 2 workers, ready (as under KWOK in the sandbox, reference/kuberay.md). */
export function readyRayClusterStatus(observedGeneration = 1): RayClusterStatus {
  return {
    availableWorkerReplicas: 2,
    conditions: [
      {
        lastTransitionTime: '2026-01-05T10:00:12Z',
        message: '',
        reason: 'HeadPodRunningAndReady',
        status: 'True',
        type: 'HeadPodReady',
      },
      {
        lastTransitionTime: '2026-01-05T10:00:20Z',
        message: 'All Ray Pods are ready for the first time',
        reason: 'AllPodRunningAndReadyFirstTime',
        status: 'True',
        type: 'RayClusterProvisioned',
      },
      {
        lastTransitionTime: '2026-01-05T10:00:01Z',
        message: '',
        reason: 'RayClusterSuspended',
        status: 'False',
        type: 'RayClusterSuspended',
      },
      {
        lastTransitionTime: '2026-01-05T10:00:01Z',
        message: '',
        reason: 'RayClusterSuspending',
        status: 'False',
        type: 'RayClusterSuspending',
      },
    ],
    desiredCPU: '3',
    desiredGPU: '0',
    desiredMemory: '6Gi',
    desiredTPU: '0',
    desiredWorkerReplicas: 2,
    endpoints: { client: '10001', dashboard: '8265', 'gcs-server': '6379', metrics: '8080' },
    head: {
      podIP: '10.128.0.5',
      podName: 'demo-head-x7k2p',
      serviceIP: '10.96.12.34',
      serviceName: 'demo-head-svc',
    },
    lastUpdateTime: '2026-01-05T10:00:20Z',
    maxWorkerReplicas: 5,
    minWorkerReplicas: 1,
    observedGeneration,
    readyWorkerReplicas: 2,
    state: 'ready',
    stateTransitionTimes: { ready: '2026-01-05T10:00:20Z' },
  };
}

export function originRayJob(overrides: Partial<RayJob['spec']> = {}): RayJob {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayJob',
    metadata: originMetadata('rayjob'),
    spec: {
      managedBy: 'kueue.x-k8s.io/multikueue',
      entrypoint: 'python /home/ray/samples/sample_code.py',
      backoffLimit: 0,
      submissionMode: 'K8sJobMode',
      shutdownAfterJobFinishes: true,
      ttlSecondsAfterFinished: 60,
      rayClusterSpec: rayClusterSpec(),
      ...overrides,
    },
  };
}

/** Running: the cluster is ready, the submitter has submitted, the dashboard says RUNNING. */
export function runningRayJobStatus(): RayJobStatus {
  return {
    dashboardURL: 'demo-k2x9p-head-svc.team-a.svc.cluster.local:8265',
    failed: 0,
    jobDeploymentStatus: 'Running',
    jobId: 'demo-q8wzt',
    jobStatus: 'RUNNING',
    message: 'Job is currently running.',
    rayClusterName: 'demo-k2x9p',
    rayClusterStatus: { ...readyRayClusterStatus(), head: { podIP: '10.128.0.9', serviceIP: '10.96.40.2' } },
    rayJobInfo: { startTime: '2026-01-05T10:00:31Z' },
    startTime: '2026-01-05T10:00:02Z',
    succeeded: 0,
  };
}

/** Complete: SUCCEEDED, endTime stamped by the operator when the deployment status became Complete. */
export function completeRayJobStatus(): RayJobStatus {
  return {
    ...runningRayJobStatus(),
    jobDeploymentStatus: 'Complete',
    jobStatus: 'SUCCEEDED',
    message: 'Job finished successfully.',
    rayJobInfo: { startTime: '2026-01-05T10:00:31Z', endTime: '2026-01-05T10:02:10Z' },
    endTime: '2026-01-05T10:02:14Z',
    succeeded: 1,
  };
}
