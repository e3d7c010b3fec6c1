import { isDeepStrictEqual } from 'node:util';
import { type InformerEvent, type PlainJson, ResilientInformer } from '@jobrelay/kube';
import {
  addResources,
  podRequests,
  type Resources,
  resourceAmount,
  subtractResources,
} from '@jobrelay/resources';
import type { KubeConfig, V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';

type Pod = PlainJson<V1Pod>;
type Node = PlainJson<V1Node>;

export interface NodeCapacity {
  name: string;
  allocatable: Resources;
  /** Requests of the non-terminal pods bound to it. */
  requested: Resources;
  free: Resources;
}

export interface CapacitySnapshot {
  /** Nodes new pods can land on (Ready, not cordoned, no NoSchedule/NoExecute taint). */
  nodes: NodeCapacity[];
  allocatable: Resources;
  /** Requests of every non-terminal pod, bound or pending. */
  requested: Resources;
  /**
   * Non-terminal pods bound to a node, per controlling owner (`namespace/name`): a Job's pods
   * under the Job, a RayCluster's head and workers under the RayCluster, whatever the kind.
   */
  podsByOwner: ReadonlyMap<string, number>;
}

/**
 * What the capacity cache keeps of a pod: its identity, controlling owner, node, phase and the
 * fields its requests are computed from (podRequests). A running pod's env, volumes, probes,
 * command lines and status details are most of it, and every pod on the worker is cached.
 */
export function podCapacityView(pod: Pod): Pod {
  const { metadata, spec, status } = pod;
  const containerView = (c: V1Container): V1Container => ({
    name: c.name,
    ...(c.resources ? { resources: c.resources } : {}),
    ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
  });
  const owner = metadata?.ownerReferences?.find((reference) => reference.controller);
  return {
    metadata: {
      name: metadata?.name,
      namespace: metadata?.namespace,
      uid: metadata?.uid,
      resourceVersion: metadata?.resourceVersion,
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    ...(spec
      ? {
          spec: {
            containers: spec.containers.map(containerView),
            ...(spec.initContainers ? { initContainers: spec.initContainers.map(containerView) } : {}),
            ...(spec.resources ? { resources: spec.resources } : {}),
            ...(spec.overhead ? { overhead: spec.overhead } : {}),
            ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
          },
        }
      : {}),
    ...(status?.phase ? { status: { phase: status.phase } } : {}),
  };
}

/**
 * Whether a pod's change leaves what capacity reads of it as it was: its node, controlling
 * owner, requests, and whether it is terminal. Most of a busy worker's pod events are status
 * changes (Pending to Running, conditions), which change none of these.
 */
export function samePodCapacity(previous: Pod, next: Pod): boolean {
  return (
    isTerminal(previous) === isTerminal(next) &&
    previous.metadata?.ownerReferences?.[0]?.name === next.metadata?.ownerReferences?.[0]?.name &&
    isDeepStrictEqual(previous.spec, next.spec)
  );
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * What the capacity cache keeps of a node: whether pods can land on it and its allocatable.
 * A node's status is rewritten by every heartbeat (its conditions' times), and its images
 * list is most of its size.
 */
export function nodeCapacityView(node: Node): Node {
  const { metadata, spec, status } = node;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  const taints = spec?.taints?.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  return {
    metadata: { name: metadata?.name, resourceVersion: metadata?.resourceVersion },
    spec: {
      ...(spec?.unschedulable ? { unschedulable: true } : {}),
      ...(taints?.length ? { taints: taints.map(({ key, value, effect }) => ({ key, value, effect })) } : {}),
    },
    status: {
      ...(status?.allocatable ? { allocatable: status.allocatable } : {}),
      ...(ready ? { conditions: [{ type: 'Ready', status: ready.status }] } : {}),
    },
  };
}

/** Whether a node's change leaves what capacity reads of it as it was (a heartbeat does). */
export function sameNodeCapacity(previous: Node, next: Node): boolean {
  return (
    schedulable(previous) === schedulable(next) &&
    isDeepStrictEqual(previous.status?.allocatable ?? {}, next.status?.allocatable ?? {})
  );
}

function schedulable(node: Node): boolean {
  if (node.spec?.unschedulable) return false;
  if (node.spec?.taints?.some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return false;
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function allocatableOf(node: Node): Resources {
  const resources: Resources = {};
  for (const [name, quantity] of Object.entries(node.status?.allocatable ?? {})) {
    const amount = resourceAmount(name, quantity);
    if (amount !== undefined) resources[name] = amount;
  }
  return resources;
}

/**
 * A worker's capacity, kept current from watches as kube-scheduler keeps its own: per node,
 * allocatable minus the requests of the non-terminal pods on it. Terminal pods are filtered
 * out by the apiserver, so memory follows what runs, not what ran.
 */
export class WorkerCapacity {
  private readonly nodes: ResilientInformer<Node>;
  private readonly pods: ResilientInformer<Pod>;
  private cached: CapacitySnapshot | undefined;
  /**
   * Requests of each cached pod spec and allocatable of each cached node status, parsed once per
   * object (replaced, never changed, on update): a snapshot after one pod's change parses no
   * other pod's quantities again.
   */
  private readonly parsed = new WeakMap<object, Resources>();

  constructor(options: { cluster: string; kubeConfig: KubeConfig; log: Logger; onChange: () => void }) {
    // A change capacity does not read (a heartbeat, a pod starting) recomputes nothing and
    // publishes nothing.
    const changed =
      <T>(same: (previous: T, next: T) => boolean) =>
      (event: InformerEvent<T>) => {
        if (event.type === 'upsert' && event.previous && same(event.previous, event.object)) return;
        this.cached = undefined;
        options.onChange();
      };
    this.nodes = new ResilientInformer<Node>({
      name: `${options.cluster} nodes`,
      kubeConfig: options.kubeConfig,
      apiVersion: 'v1',
      kind: 'Node',
      path: '/api/v1/nodes',
      view: nodeCapacityView,
      log: options.log,
      onEvent: changed(sameNodeCapacity),
    });
    this.pods = new ResilientInformer<Pod>({
      name: `${options.cluster} pods`,
      kubeConfig: options.kubeConfig,
      apiVersion: 'v1',
      kind: 'Pod',
      path: '/api/v1/pods',
      fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed',
      view: podCapacityView,
      log: options.log,
      onEvent: changed(samePodCapacity),
    });
  }

  start(): void {
    this.nodes.start();
    this.pods.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()]);
  }

  get hasSynced(): boolean {
    return this.nodes.hasSynced && this.pods.hasSynced;
  }

  async stop(): Promise<void> {
    await Promise.all([this.nodes.stop(), this.pods.stop()]);
  }

  private podRequestsOf(spec: NonNullable<Pod['spec']>): Resources {
    let requests = this.parsed.get(spec);
    if (!requests) {
      requests = podRequests(spec);
      this.parsed.set(spec, requests);
    }
    return requests;
  }

  private allocatableOf(node: Node): Resources {
    if (!node.status) return {};
    let allocatable = this.parsed.get(node.status);
    if (!allocatable) {
      allocatable = allocatableOf(node);
      this.parsed.set(node.status, allocatable);
    }
    return allocatable;
  }

  snapshot(): CapacitySnapshot {
    if (this.cached) return this.cached;
    const byNode = new Map<string, Resources>();
    const podsByOwner = new Map<string, number>();
    let requested: Resources = {};
    for (const pod of this.pods.list()) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed' || !pod.spec) continue;
      const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller)?.name;
      // Only pods bound to a node are in some node's requests; an unbound one is not yet.
      if (owner && pod.spec.nodeName) {
        const key = `${pod.metadata?.namespace}/${owner}`;
        podsByOwner.set(key, (podsByOwner.get(key) ?? 0) + 1);
      }
      const request = this.podRequestsOf(pod.spec);
      requested = addResources(requested, request);
      const node = pod.spec.nodeName;
      if (node) byNode.set(node, addResources(byNode.get(node) ?? {}, request));
    }
    let allocatable: Resources = {};
    const nodes: NodeCapacity[] = [];
    for (const node of this.nodes.list()) {
      const name = node.metadata?.name ?? '';
      const nodeAllocatable = this.allocatableOf(node);
      allocatable = addResources(allocatable, nodeAllocatable);
      if (!schedulable(node)) continue;
      const nodeRequested = byNode.get(name) ?? {};
      nodes.push({
        name,
        allocatable: nodeAllocatable,
        requested: nodeRequested,
        free: subtractResources(nodeAllocatable, nodeRequested),
      });
    }
    this.cached = { nodes, allocatable, requested, podsByOwner };
    return this.cached;
  }
}
