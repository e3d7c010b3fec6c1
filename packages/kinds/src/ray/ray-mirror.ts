// What RayCluster and RayJob mirrors share: the managedBy policy, the mirror's metadata and
// spec, and the spec changes that flow down.

import type { ObjectMeta } from '@jobrelay/kube';
import {
  deepCopy,
  heldByWorker,
  mirrorIdentityMetadata,
  suspendRecordUpdate,
  suspendSentAnnotation,
  suspendTransition,
} from '@jobrelay/mirror';
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
  S extends { managedBy?: string; suspend?: boolean },
>(origin: T, apiVersion: string, kind: string, context: MirrorBuildContext): T {
  if (!origin.spec)
    throw new Error(`${kind} ${origin.metadata?.namespace}/${origin.metadata?.name} has no spec`);
  const metadata = mirrorIdentityMetadata(origin.metadata ?? {}, context);
  return {
    apiVersion,
    kind,
    metadata: {
      ...metadata,
      // What jobrelay sent, so that later only the origin's suspend transitions go down (a
      // worker's Kueue may suspend the mirror at creation: that hold is the worker's).
      annotations: { ...metadata.annotations, [suspendSentAnnotation]: String(origin.spec.suspend === true) },
    },
    spec: specWithoutManagedBy(origin.spec),
  } as unknown as T;
}

interface RayObject {
  metadata?: ObjectMeta;
  spec?: { suspend?: boolean };
}

/**
 * The suspend value to send, when the origin's changed since the last one sent: only the
 * origin's transitions go down, never a standing value over a worker's own admission (Kueue
 * suspends a RayCluster or RayJob that names a LocalQueue until its quota admits it). A mirror
 * without the record (built by an older jobrelay) is brought to the origin's value once.
 */
function raySuspendTransition(origin: RayObject, mirror: RayObject): boolean | undefined {
  return suspendTransition(origin.spec?.suspend === true, mirror, mirror.spec?.suspend === true);
}

/** The record of the suspend value sent, to write with the spec patch; undefined when current. */
export function raySuspendRecordUpdate(
  origin: RayObject,
  mirror: RayObject,
): Record<string, string> | undefined {
  return suspendRecordUpdate(origin.spec?.suspend === true, mirror);
}

/**
 * Why the mirror is suspended though jobrelay last told it to run: the worker's own admission
 * holds it (`state` is what its operator says of it, when it says), or undefined.
 */
export function rayHeldByWorker(
  origin: RayObject,
  mirror: RayObject,
  kind: string,
  state: string | undefined,
): string | undefined {
  if (!heldByWorker(origin.spec?.suspend === true, mirror, mirror.spec?.suspend === true)) return undefined;
  return state ? `its ${kind} is suspended there (${state})` : `its ${kind} is suspended there`;
}

/**
 * The merge patch that brings a mirror's spec in line with its origin's: every field the
 * origin states except managedBy (immutable, and the mirror must have none). `suspend` goes
 * down as the origin's transitions only (raySuspendTransition), compared as a boolean (absent
 * is false) so a resume flows down once. Other fields the origin leaves out have no opinion
 * (the worker's defaults stay), and an array that differs is sent whole. `prepare` adjusts the
 * wanted spec first (RayCluster keeps the autoscaler's fields).
 */
export function raySpecPatch<S extends { managedBy?: string; suspend?: boolean }>(
  origin: { metadata?: ObjectMeta; spec?: S },
  mirror: { metadata?: ObjectMeta; spec?: S },
  prepare: (want: Record<string, unknown>) => Record<string, unknown> = (want) => want,
): Record<string, unknown> | undefined {
  const originSpec = origin.spec;
  const mirrorSpec = mirror.spec;
  if (!originSpec || !mirrorSpec) return undefined;
  const want = prepare(specWithoutManagedBy(originSpec) as Record<string, unknown>);
  const have = mirrorSpec as Record<string, unknown>;
  const patch = mergePatchTowards(have, { ...want, suspend: undefined }) ?? {};
  const suspend = raySuspendTransition(origin, mirror);
  if (suspend !== undefined) patch.suspend = suspend;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** Every pod of a RayCluster (head and workers): the operator labels them `ray.io/cluster=<name>`. */
export function rayClusterPods(clusterName: string): WorkloadPods {
  return { labelSelector: `ray.io/cluster=${clusterName}`, description: `RayCluster ${clusterName}` };
}
