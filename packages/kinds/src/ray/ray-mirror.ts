// What RayCluster and RayJob mirrors share: the managedBy policy, the mirror's metadata and
// spec, and the spec changes that flow down.

import type { ObjectMeta } from '@jobrelay/kube';
import { deepCopy, mirrorIdentityMetadata } from '@jobrelay/mirror';
import { mergePatchTowards } from '../generic/json-values.ts';
import type { ManagedByPolicy, MirrorBuildContext, WorkloadPods } from '../workload-kind-adapter.ts';
import { multiKueueManagedBy } from './ray-types.ts';

/**
 * The CRDs' CEL rule accepts only `ray.io/kuberay-operator` and `kueue.x-k8s.io/multikueue`.
 * The first is the operator's own value: an object carrying it is run by the KubeRay
 * operator of the cluster it is on, so claiming it would run every such RayCluster twice
 * (once on the management cluster, once on a worker) and would claim objects their authors
 * meant for the local operator. jobrelay therefore claims only the MultiKueue value, the one
 * reserved for "a multi-cluster dispatcher runs this elsewhere". The consequence: jobrelay and
 * Kueue's MultiKueue cannot both dispatch Ray kinds from one management cluster.
 */
export const rayManagedByPolicy: ManagedByPolicy = {
  default: multiKueueManagedBy,
  accepted: [multiKueueManagedBy],
};

/** The spec without managedBy, deep-copied: what a worker's operator is given. */
export function specWithoutManagedBy<S extends { managedBy?: string }>(spec: S): Omit<S, 'managedBy'> {
  const { managedBy: _claimed, ...rest } = deepCopy(spec);
  return rest;
}

/**
 * A mirror of a Ray object: identity metadata (@jobrelay/mirror) and the origin's spec minus
 * managedBy, so the worker's KubeRay operator runs it. No status: the worker's operator
 * writes its own from scratch.
 */
export function buildRayMirror<
  T extends { metadata?: ObjectMeta; spec?: S },
  S extends { managedBy?: string },
>(origin: T, apiVersion: string, kind: string, context: MirrorBuildContext): T {
  if (!origin.spec)
    throw new Error(`${kind} ${origin.metadata?.namespace}/${origin.metadata?.name} has no spec`);
  return {
    apiVersion,
    kind,
    metadata: mirrorIdentityMetadata(origin.metadata ?? {}, context),
    spec: specWithoutManagedBy(origin.spec),
  } as unknown as T;
}

/**
 * The merge patch that brings a mirror's spec in line with its origin's: every field the
 * origin states except managedBy (immutable, and the mirror must have none). `suspend` is
 * compared as a boolean (absent is false) so a resume always flows down. Other fields the
 * origin leaves out have no opinion (the worker's defaults stay), and an array that differs
 * is sent whole. `prepare` adjusts the wanted spec first (RayCluster keeps the autoscaler's
 * fields).
 */
export function raySpecPatch<S extends { managedBy?: string; suspend?: boolean }>(
  originSpec: S | undefined,
  mirrorSpec: S | undefined,
  prepare: (want: Record<string, unknown>) => Record<string, unknown> = (want) => want,
): Record<string, unknown> | undefined {
  if (!originSpec || !mirrorSpec) return undefined;
  const want = prepare(specWithoutManagedBy(originSpec) as Record<string, unknown>);
  const have = mirrorSpec as Record<string, unknown>;
  const patch = mergePatchTowards(have, { ...want, suspend: undefined }) ?? {};
  const suspend = originSpec.suspend === true;
  if (suspend !== (mirrorSpec.suspend === true)) patch.suspend = suspend;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** Every pod of a RayCluster (head and workers): the operator labels them `ray.io/cluster=<name>`. */
export function rayClusterPods(clusterName: string): WorkloadPods {
  return { labelSelector: `ray.io/cluster=${clusterName}`, description: `RayCluster ${clusterName}` };
}
