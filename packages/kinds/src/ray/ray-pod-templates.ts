// The pod templates of a RayCluster (alone or a RayJob's) and of a RayJob's submitter, with what
// the v1.5.0 operator changes in the pods it makes from them that a WorkerCluster's
// podRestrictions judge: with in-tree autoscaling, the head pod runs as a ServiceAccount the
// operator names after the RayCluster (and creates, with a Role over the cluster's pods) when
// the template names none, and carries the autoscaler container, whose securityContext comes
// from autoscalerOptions (common.BuildHeadPodTemplate, utils.GetHeadGroupServiceAccountName).
// The wait-gcs-ready init container copies the Ray container's securityContext, so it asks
// nothing the templates do not already.

import type { PodSpec } from '@jobrelay/kube';
import type { WorkloadPodTemplate } from '@jobrelay/placement';
import type { V1Container } from '@kubernetes/client-node';
import { defaultSubmitterContainer, usesExistingCluster } from './ray-pod-demand.ts';
import type { RayClusterSpec, RayJobSpec } from './ray-types.ts';

/**
 * utils.CheckName: the operator clips a name to its last 50 characters and replaces a
 * leading digit or punctuation with `r`; the autoscaler's ServiceAccount is named so.
 */
export function rayCheckName(name: string): string {
  let clipped = name.length > 50 ? name.slice(name.length - 50) : name;
  if (/^[0-9\p{P}]/u.test(clipped)) clipped = `r${clipped.slice(1)}`;
  return clipped;
}

/**
 * The head group's template and each worker group's. `headServiceAccount` is the account the
 * operator gives the head pod with in-tree autoscaling when its template names none.
 */
export function rayClusterPodTemplates(
  spec: RayClusterSpec,
  headServiceAccount: NonNullable<WorkloadPodTemplate['serviceAccount']>,
): WorkloadPodTemplate[] {
  const templates: WorkloadPodTemplate[] = [];
  const head = spec.headGroupSpec?.template?.spec;
  if (head) {
    const autoscaling = spec.enableInTreeAutoscaling === true;
    const autoscaler = {
      name: 'autoscaler',
      ...(spec.autoscalerOptions?.securityContext
        ? { securityContext: spec.autoscalerOptions.securityContext }
        : {}),
    } as V1Container;
    const headSpec: PodSpec = autoscaling
      ? { ...head, containers: [...(head.containers ?? []), autoscaler] }
      : head;
    templates.push({
      role: 'head group',
      spec: headSpec,
      ...(autoscaling && !head.serviceAccountName ? { serviceAccount: headServiceAccount } : {}),
    });
  }
  for (const group of spec.workerGroupSpecs ?? []) {
    if (group.template?.spec)
      templates.push({ role: `worker group ${group.groupName}`, spec: group.template.spec });
  }
  return templates;
}

/**
 * A RayJob's templates: the RayCluster it creates (none when clusterSelector picks an existing
 * one: those pods are another workload's), and in K8sJobMode its submitter pod
 * (spec.submitterPodTemplate, else the operator's default: the submitter container alone). In
 * SidecarMode the submitter is a container the operator adds to the head pod, unprivileged.
 */
export function rayJobPodTemplates(spec: RayJobSpec): WorkloadPodTemplate[] {
  const templates: WorkloadPodTemplate[] = [];
  if (spec.rayClusterSpec && !usesExistingCluster(spec)) {
    templates.push(
      ...rayClusterPodTemplates(spec.rayClusterSpec, {
        unknown: 'the operator names after the RayCluster it creates',
      }),
    );
  }
  if ((spec.submissionMode ?? 'K8sJobMode') === 'K8sJobMode') {
    const submitter: PodSpec = spec.submitterPodTemplate?.spec ?? {
      containers: [{ name: defaultSubmitterContainer.name }],
      restartPolicy: 'Never',
    };
    templates.push({ role: 'submitter', spec: submitter });
  }
  return templates;
}
