import type { V1Container, V1PodSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import { addResources, type Resources, resourceAmount } from './resource-quantity.ts';

/**
 * The fields of a pod spec that its requests come from. Any pod spec is one: client-node's
 * V1PodSpec, or a pod spec as plain JSON (`PodSpec` of `@jobrelay/kube/plain-json`, whose time
 * fields are strings), which this package does not import.
 */
export type PodResourceFields = Pick<V1PodSpec, 'containers' | 'initContainers' | 'resources' | 'overhead'>;

/**
 * What one pod of this template asks the scheduler for, by the rules kube-scheduler
 * applies to the pod the Job controller will create (k8s.io/component-helpers/resource
 * PodRequests, after the API server's SetDefaults_Pod):
 * 1. a container's request for a resource defaults to its limit when only the limit is set;
 * 2. per resource, the larger of
 *    - regular containers plus sidecars (init containers with restartPolicy Always), and
 *    - for each other init container, its request plus the sidecars started before it;
 * 3. pod-level requests (spec.resources, for cpu, memory and hugepages-*) replace that sum;
 * 4. plus spec.overhead.
 * Values that do not parse as quantities are skipped, as if they were not there.
 */
export function podRequests(podSpec: PodResourceFields): Resources {
  let total: Resources = {};
  let sidecars: Resources = {};
  let initPeak: Resources = {};
  for (const container of podSpec.containers ?? []) total = addResources(total, containerRequests(container));
  for (const container of podSpec.initContainers ?? []) {
    const requests = containerRequests(container);
    if (container.restartPolicy === 'Always') {
      // A sidecar runs alongside everything after it, including the regular containers.
      total = addResources(total, requests);
      sidecars = addResources(sidecars, requests);
    } else {
      initPeak = maxResources(initPeak, addResources(requests, sidecars));
    }
  }
  total = maxResources(total, initPeak);
  total = applyPodLevelRequests(total, podSpec.resources);
  return addResources(total, amounts(podSpec.overhead));
}

/** Requests with limits filling in the resources that have no request (SetDefaults_Pod). */
function containerRequests(container: V1Container): Resources {
  return amounts({ ...container.resources?.limits, ...container.resources?.requests });
}

function isPodLevelResource(resource: string): boolean {
  return resource === 'cpu' || resource === 'memory' || resource.startsWith('hugepages-');
}

/**
 * Pod-level resources (PodLevelResources, on by default since Kubernetes 1.34) as
 * defaultPodRequests and PodRequests combine them: an explicit pod-level request wins; a
 * pod-level limit stands in for it when no container asks for that resource (and always for
 * hugepages, which cannot be overcommitted); otherwise the containers' sum stays.
 */
function applyPodLevelRequests(
  containers: Resources,
  podLevel: V1ResourceRequirements | undefined,
): Resources {
  const requests = amounts(podLevel?.requests);
  const limits = amounts(podLevel?.limits);
  const result = { ...containers };
  for (const [resource, limit] of Object.entries(limits)) {
    if (!isPodLevelResource(resource) || Object.hasOwn(requests, resource)) continue;
    if (resource.startsWith('hugepages-') || !Object.hasOwn(containers, resource)) result[resource] = limit;
  }
  for (const [resource, request] of Object.entries(requests)) {
    if (isPodLevelResource(resource)) result[resource] = request;
  }
  return result;
}

function amounts(quantities: Record<string, string> | undefined): Resources {
  const result: Resources = {};
  for (const [resource, quantity] of Object.entries(quantities ?? {})) {
    const amount = resourceAmount(resource, quantity);
    if (amount !== undefined) result[resource] = amount;
  }
  return result;
}

function maxResources(a: Resources, b: Resources): Resources {
  const result = { ...a };
  for (const [resource, amount] of Object.entries(b)) {
    result[resource] = Math.max(result[resource] ?? amount, amount);
  }
  return result;
}
