// A cluster's namespaces as jobrelay caches them: name, UID and labels only. Its own module
// because it is not the registry's alone: the controller and the API cache the management
// cluster's namespaces with the same view and informer, and the registry each worker's
// (worker-watches.ts); none of it needs a connection.
import { type InformerEvent, type PlainJson, ResilientInformer } from '@jobrelay/kube';
import type { KubeConfig, V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';

/** A namespace as plain JSON, as the namespace caches read it. */
export type Namespace = PlainJson<V1Namespace>;

/**
 * What the namespace caches keep of a namespace: its identity and labels (Pod Security levels,
 * and the origin label of those jobrelay created). A few hundred per worker at most.
 */
export function namespaceView(namespace: Namespace): Namespace {
  const { name, uid, resourceVersion, labels } = namespace.metadata ?? {};
  return { metadata: { name, uid, resourceVersion, ...(labels ? { labels } : {}) } };
}

/**
 * A cache of one cluster's namespaces as `namespaceView` keeps them (the management cluster's
 * in the controller and the API, each worker's in the registry). Not started.
 */
export function namespaceInformer(options: {
  name: string;
  kubeConfig: KubeConfig;
  log: Logger;
  onEvent: (event: InformerEvent<Namespace>) => void;
}): ResilientInformer<Namespace> {
  return new ResilientInformer<Namespace>({
    ...options,
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    view: namespaceView,
  });
}
