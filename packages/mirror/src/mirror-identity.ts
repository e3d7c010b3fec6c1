import type { V1ObjectMeta } from '@kubernetes/client-node';
import {
  originLabel,
  originUidLabel,
  placementAnnotation,
  placementAttemptAnnotation,
  unschedulableAnnotation,
} from './jobrelay-names.ts';

/**
 * Bookkeeping that means nothing on another cluster: a client's, and jobrelay's own record on
 * the origin (where it placed the workload and why, or why it waits). A copy on the mirror
 * would be a stale snapshot of it, sent to the worker and cached with every mirror.
 */
const droppedAnnotations = [
  'kubectl.kubernetes.io/last-applied-configuration',
  placementAnnotation,
  unschedulableAnnotation,
];

/**
 * The metadata of any kind's mirror: the origin's namespace, name, labels and annotations
 * (minus `droppedLabels` and client bookkeeping), plus the identity every watch, adoption
 * and deletion on a worker relies on: `jobrelay.dev/origin`, `jobrelay.dev/origin-uid` and
 * the placement attempt. Nothing else of the origin's metadata (UID, resourceVersion,
 * ownerReferences, finalizers, managedFields) crosses to the worker.
 */
export function mirrorIdentityMetadata(
  origin: V1ObjectMeta,
  identity: { originId: string; attempt: number },
  droppedLabels: readonly string[] = [],
): V1ObjectMeta {
  if (!origin.name || !origin.namespace || !origin.uid) {
    throw new Error('a mirror needs an origin read from the apiserver (name, namespace and uid)');
  }
  const labels = { ...(origin.labels ?? {}) };
  for (const key of droppedLabels) delete labels[key];
  const annotations = { ...(origin.annotations ?? {}) };
  for (const key of droppedAnnotations) delete annotations[key];
  return {
    name: origin.name,
    namespace: origin.namespace,
    labels: { ...labels, [originLabel]: identity.originId, [originUidLabel]: origin.uid },
    annotations: { ...annotations, [placementAttemptAnnotation]: String(identity.attempt) },
  };
}
