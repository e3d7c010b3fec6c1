import {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  type KubeObject,
  type WorkloadClient,
  type WorkloadKindAdapter,
} from '@jobrelay/kinds';
import type { ResilientInformer } from '@jobrelay/kube';
import type { V1ObjectReference } from '@kubernetes/client-node';

/** One workload kind the controller dispatches: its adapter, the value it claims, its origins. */
export interface DispatchedKind<T extends KubeObject = KubeObject> {
  adapter: WorkloadKindAdapter<T>;
  /** The spec.managedBy value claimed for this kind. */
  managedBy: string;
  /** The management cluster's objects of this kind that carry that value (nobody else's). */
  origins: ResilientInformer<T>;
  /** Objects of this kind on the management cluster. */
  management: WorkloadClient<T>;
}

// biome-ignore lint/suspicious/noExplicitAny: kinds of different object types live in one map.
export type AnyDispatchedKind = DispatchedKind<any> & { adapter: AnyWorkloadKindAdapter };

/**
 * The reconcile and placement key of an origin: `<kind>/<namespace>/<name>`. Two kinds may
 * hold objects of the same namespace/name; they are different origins.
 */
export function originKey(kind: string, objectKey: string): string {
  return `${kind}/${objectKey}`;
}

export function splitOriginKey(key: string): {
  kind: string;
  objectKey: string;
  namespace: string;
  name: string;
} {
  const [kind = '', namespace = '', ...rest] = key.split('/');
  const name = rest.join('/');
  return { kind, objectKey: `${namespace}/${name}`, namespace, name };
}

/** The namespace in an origin's queue key (`kind/namespace/name`), without splitting the rest. */
export function originKeyNamespace(key: string): string {
  const start = key.indexOf('/') + 1;
  const end = key.indexOf('/', start);
  return end < 0 ? '' : key.slice(start, end);
}

/** What an Event about an origin of this kind is regarding. */
export function eventRegarding(
  adapter: Pick<AnyWorkloadKindAdapter, 'resource'>,
  origin: { namespace?: string | undefined; name?: string | undefined; uid?: string | undefined },
): V1ObjectReference {
  return {
    apiVersion: apiVersionOf(adapter.resource),
    kind: adapter.resource.kind,
    name: origin.name,
    namespace: origin.namespace,
    uid: origin.uid,
  };
}
