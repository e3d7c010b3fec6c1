// KubeRay's RayCluster (ray.io/v1, operator v1.5.0) behind the kind seam. The mirror is the
// origin minus managedBy, run by the worker's real KubeRay operator; its status comes back
// field for field, as Kueue's MultiKueue copies it, except observedGeneration (see
// originObservedGeneration).
import { deepCopy } from '@jobrelay/mirror';
import { customObjectClient } from '../custom-object-client.ts';
import { absentWhenZeroValue, equalIgnoringAbsent, isPlainObject } from '../generic/json-values.ts';
import { originObservedGeneration, withObservedGeneration } from '../generic/observed-generation.ts';
import {
  buildRayMirror,
  rayClusterPods,
  rayHeldByWorker,
  rayManagedByPolicy,
  raySpecPatch,
  raySuspendRecordUpdate,
} from '../ray/ray-mirror.ts';
import { rayClusterPodGroups } from '../ray/ray-pod-demand.ts';
import { rayCheckName, rayClusterPodTemplates } from '../ray/ray-pod-templates.ts';
import { rayClusterStatusViolations } from '../ray/ray-status-schema.ts';
import type { RayCluster, RayClusterSpec, RayClusterStatus } from '../ray/ray-types.ts';
import type { WorkloadKindAdapter, WorkloadResource } from '../workload-kind-adapter.ts';
import { apiVersionOf } from '../workload-kind-adapter.ts';

const resource: WorkloadResource = {
  group: 'ray.io',
  version: 'v1',
  kind: 'RayCluster',
  plural: 'rayclusters',
};

/**
 * With in-tree autoscaling on, the Ray autoscaler in the mirror's head pod owns each worker
 * group's `replicas` and `scaleStrategy.workersToDelete` on the mirror (it writes them there,
 * never on the origin). The wanted worker groups keep the mirror's values of those two for
 * every group the mirror already has; new groups take the origin's.
 */
function keepAutoscalerFields(mirrorSpec: RayClusterSpec | undefined) {
  return (want: Record<string, unknown>): Record<string, unknown> => {
    if (mirrorSpec?.enableInTreeAutoscaling !== true || !Array.isArray(want.workerGroupSpecs)) return want;
    const current = new Map((mirrorSpec.workerGroupSpecs ?? []).map((group) => [group.groupName, group]));
    const workerGroupSpecs = want.workerGroupSpecs.map((group: unknown) => {
      if (!isPlainObject(group)) return group;
      const mirrored = current.get(group.groupName as string);
      if (!mirrored) return group;
      const { replicas: _r, scaleStrategy: _s, ...rest } = group;
      return {
        ...rest,
        ...(mirrored.replicas === undefined ? {} : { replicas: mirrored.replicas }),
        ...(mirrored.scaleStrategy === undefined ? {} : { scaleStrategy: deepCopy(mirrored.scaleStrategy) }),
      };
    });
    return { ...want, workerGroupSpecs };
  };
}

/**
 * What flows down to a running mirror: the origin's whole spec except managedBy, field by
 * field (suspend, worker groups' replicas / minReplicas / maxReplicas / numOfHosts /
 * suspend / scaleStrategy, added or removed groups, templates the operator uses for the pods
 * it creates next, the head group ...), as the operator on one cluster would see the edit.
 * workerGroupSpecs is an array, so when any group differs the origin's whole array is sent,
 * with the autoscaler's fields kept from the mirror (keepAutoscalerFields). A field the origin
 * leaves out is not removed from the mirror (the worker's apiserver may have defaulted it).
 */
function mirrorSpecUpdate(origin: RayCluster, mirror: RayCluster): Record<string, unknown> | undefined {
  return raySpecPatch(origin, mirror, keepAutoscalerFields(mirror.spec));
}

export const rayClusterAdapter = {
  name: 'raycluster',
  resource,
  managedBy: rayManagedByPolicy,
  verification: 'real-controller',

  isManagedBy: (cluster, managedBy) => cluster.spec?.managedBy === managedBy,
  client: (apis) => customObjectClient<RayCluster>(resource, apis),

  buildMirror: (origin, context) => buildRayMirror(origin, apiVersionOf(resource), resource.kind, context),
  mirrorSpecUpdate,
  mirrorRecordUpdate: (origin, mirror) => raySuspendRecordUpdate(origin, mirror),
  mirrorHeldByWorker: (origin, mirror) =>
    rayHeldByWorker(
      origin,
      mirror,
      resource.kind,
      mirror.status?.state ? `state ${mirror.status.state}` : undefined,
    ),
  /**
   * The mirror's status as the worker's operator wrote it: state, worker counts, desired
   * resources, conditions, lastUpdateTime, stateTransitionTimes, reason, endpoints and head
   * (pod and Service names and IPs: the worker's, the only cluster where they mean anything;
   * the origin's placement annotation says which). observedGeneration is the origin's own
   * generation once the mirror has observed the spec that matches it (originObservedGeneration).
   * A RayCluster has no counters, so `carried` adds nothing.
   */
  originStatus: (origin, mirror, _carried, _now) => {
    const status: RayClusterStatus = deepCopy(mirror.status ?? {});
    const specInLine = mirrorSpecUpdate(origin, mirror) === undefined;
    return withObservedGeneration(status, originObservedGeneration(origin, mirror, specInLine));
  },
  // Every RayClusterStatus field is omitempty: a zero, an empty map and a missing field are one.
  sameStatus: (a, b) => equalIgnoringAbsent(a ?? {}, b ?? {}, absentWhenZeroValue),
  statusViolations: (_origin, desired) => rayClusterStatusViolations(desired),
  statusOf: (cluster) => cluster.status,

  /**
   * Never: a RayCluster is long-running. Its state is `ready` or `suspended` (the old `failed`
   * is deprecated, no longer written by v1.5.0, and never was final), and a suspended one may
   * be resumed. Its mirror therefore lives as long as its origin, and moves to another
   * cluster when its worker is lost or drained.
   */
  isFinished: (_cluster) => false,
  finishedAt: (_cluster) => undefined,
  isSuspended: (cluster) => cluster.spec?.suspend === true,
  podDemand: (cluster) => (cluster.spec ? rayClusterPodGroups(cluster.spec) : []),
  /** Head and worker groups; with in-tree autoscaling the head runs as the RayCluster's name unless it names an account. */
  podTemplates: (cluster) =>
    cluster.spec
      ? rayClusterPodTemplates(cluster.spec, { name: rayCheckName(cluster.metadata?.name ?? '') })
      : [],
  /** Head and workers: the operator labels every pod of a RayCluster `ray.io/cluster=<name>`. */
  podsOf: (mirror) => (mirror.metadata?.name ? [rayClusterPods(mirror.metadata.name)] : []),
} satisfies WorkloadKindAdapter<RayCluster>;
