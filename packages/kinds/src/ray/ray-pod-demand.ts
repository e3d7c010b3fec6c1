// The pods a RayCluster (alone or a RayJob's) runs when it starts, as the v1.5.0 operator
// builds them: its head pod template plus what the operator adds (the autoscaler sidecar,
// RayJob's SidecarMode submitter), each worker group's template plus the injected
// wait-gcs-ready init container, and RayJob's submitter pod in K8sJobMode.

import type { PodSpec } from '@jobrelay/kube';
import type { PodGroup } from '@jobrelay/placement';
import { podRequests } from '@jobrelay/resources';
import type { V1Container } from '@kubernetes/client-node';
import type { InjectedContainer, RayClusterSpec, RayJobSpec, RayWorkerGroupSpec } from './ray-types.ts';

/** maxReplicas when the CRD default applies (math.MaxInt32). */
export const defaultMaxReplicas = 2147483647;

/**
 * The worker pods one group runs, as utils.GetWorkerGroupDesiredReplicas computes them: none
 * for a suspended group; otherwise replicas clamped to [minReplicas, maxReplicas] (maxReplicas
 * when min > max; minReplicas when replicas is unset), times numOfHosts (pods per replica,
 * CRD default 1; an explicit 0 gives no pods, as in the operator).
 */
export function workerGroupPods(group: RayWorkerGroupSpec): number {
  if (group.suspend === true) return 0;
  const min = group.minReplicas ?? 0;
  const max = group.maxReplicas ?? defaultMaxReplicas;
  let replicas: number;
  if (min > max) replicas = max;
  else if (group.replicas === undefined || group.replicas < min) replicas = min;
  else if (group.replicas > max) replicas = max;
  else replicas = group.replicas;
  return Math.max(0, replicas * (group.numOfHosts ?? 1));
}

/**
 * The autoscaler container the operator appends to the head pod when in-tree autoscaling is
 * on (common.BuildAutoscalerContainer): 500m CPU and 512Mi memory, requests and limits,
 * unless spec.autoscalerOptions.resources replaces them.
 */
export function autoscalerContainer(spec: RayClusterSpec): InjectedContainer {
  return {
    name: 'autoscaler',
    resources: spec.autoscalerOptions?.resources ?? {
      requests: { cpu: '500m', memory: '512Mi' },
      limits: { cpu: '500m', memory: '512Mi' },
    },
  };
}

/**
 * The init container the operator adds to every worker pod (ENABLE_INIT_CONTAINER_INJECTION,
 * on unless the operator's environment turns it off): 200m CPU and 256Mi memory, requests and
 * limits. It runs before the Ray container, so it only matters when it asks for more.
 */
export const waitGcsReadyContainer: InjectedContainer = {
  name: 'wait-gcs-ready',
  resources: {
    requests: { cpu: '200m', memory: '256Mi' },
    limits: { cpu: '200m', memory: '256Mi' },
  },
};

/**
 * RayJob's default submitter container (common.GetDefaultSubmitterContainer): requests 500m
 * CPU and 200Mi memory, limits 1 CPU and 1Gi. The K8sJobMode submitter pod is this container
 * alone when spec.submitterPodTemplate is absent; SidecarMode adds it to the head pod.
 */
export const defaultSubmitterContainer: InjectedContainer = {
  name: 'ray-job-submitter',
  resources: {
    requests: { cpu: '500m', memory: '200Mi' },
    limits: { cpu: '1', memory: '1Gi' },
  },
};

function withContainers(
  podSpec: PodSpec | undefined,
  extra: { containers?: InjectedContainer[]; initContainers?: InjectedContainer[] },
): PodSpec {
  return {
    ...podSpec,
    containers: [...(podSpec?.containers ?? []), ...((extra.containers ?? []) as V1Container[])],
    initContainers: [...(podSpec?.initContainers ?? []), ...((extra.initContainers ?? []) as V1Container[])],
  };
}

/**
 * The head pod (one) and each worker group's pods (groups with none left out). `headExtra`
 * are containers a RayJob adds to the head pod (its SidecarMode submitter).
 */
export function rayClusterPodGroups(spec: RayClusterSpec, headExtra: InjectedContainer[] = []): PodGroup[] {
  const headContainers = [
    ...(spec.enableInTreeAutoscaling === true ? [autoscalerContainer(spec)] : []),
    ...headExtra,
  ];
  const groups: PodGroup[] = [
    {
      requests: podRequests(
        withContainers(spec.headGroupSpec?.template?.spec, { containers: headContainers }),
      ),
      count: 1,
    },
  ];
  for (const group of spec.workerGroupSpecs ?? []) {
    const count = workerGroupPods(group);
    if (count === 0) continue;
    const podSpec = withContainers(group.template?.spec, { initContainers: [waitGcsReadyContainer] });
    groups.push({ requests: podRequests(podSpec), count });
  }
  return groups;
}

/** Whether a RayJob runs on an existing RayCluster (clusterSelector) instead of creating one. */
export function usesExistingCluster(spec: RayJobSpec): boolean {
  return Object.keys(spec.clusterSelector ?? {}).length > 0;
}

/**
 * A RayJob's pods: the RayCluster it creates (none when clusterSelector picks an existing
 * one: that cluster's pods are already running, or are another workload's demand), plus the
 * submitter: in K8sJobMode (the default) a pod of its own (spec.submitterPodTemplate, else
 * the default submitter container with restartPolicy Never); in SidecarMode a container in
 * the head pod; none in HTTPMode and InteractiveMode.
 */
export function rayJobPodGroups(spec: RayJobSpec): PodGroup[] {
  const mode = spec.submissionMode ?? 'K8sJobMode';
  const groups: PodGroup[] = [];
  if (spec.rayClusterSpec && !usesExistingCluster(spec)) {
    groups.push(
      ...rayClusterPodGroups(spec.rayClusterSpec, mode === 'SidecarMode' ? [defaultSubmitterContainer] : []),
    );
  }
  if (mode === 'K8sJobMode') {
    const submitter: PodSpec = spec.submitterPodTemplate?.spec ?? {
      containers: [defaultSubmitterContainer as V1Container],
      restartPolicy: 'Never',
    };
    groups.push({ requests: podRequests(submitter), count: 1 });
  }
  return groups;
}
