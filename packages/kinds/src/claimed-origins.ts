// The management cluster's objects of one kind that a managedBy value claims: what "ours" is,
// for the controller that dispatches them, the API that shows them and the benchmark that
// watches as the controller does. One rule in one place, because a reader that kept another's
// objects (or dropped its own) would show or dispatch what it must not.
import { type InformerEvent, ResilientInformer } from '@jobrelay/kube';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  collectionPath,
  type KubeObject,
} from './workload-kind-adapter.ts';

export function claimedOriginInformer(options: {
  adapter: AnyWorkloadKindAdapter;
  /** The spec.managedBy value claimed for this kind. */
  managedBy: string;
  kubeConfig: KubeConfig;
  /** For logs (default `origin <Kind>s`). */
  name?: string;
  /** Only these namespaces (none: every namespace); one namespace is listed and watched alone. */
  namespaces?: readonly string[];
  onEvent: (event: InformerEvent<KubeObject>) => void;
  log: Logger;
}): ResilientInformer<KubeObject> {
  const { adapter, managedBy, namespaces = [] } = options;
  const { resource } = adapter;
  return new ResilientInformer<KubeObject>({
    name: options.name ?? `origin ${resource.kind}s`,
    kubeConfig: options.kubeConfig,
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    path: collectionPath(resource, namespaces.length === 1 ? namespaces[0] : undefined),
    // There is no field selector for managedBy: everyone else's objects are dropped on arrival.
    keep: (object) =>
      adapter.isManagedBy(object, managedBy) &&
      (namespaces.length === 0 || namespaces.includes(object.metadata?.namespace ?? '')),
    log: options.log,
    onEvent: options.onEvent,
  });
}
