import type { ObjectMeta } from '@jobrelay/kube';
import {
  controllerOwnedAnnotations,
  controllerOwnedLabels,
  originLabel,
  originUidLabel,
  placementAttemptAnnotation,
} from './jobrelay-names.ts';

/**
 * Never copied from an origin to its mirror: a client's bookkeeping, and every annotation
 * jobrelay keeps for itself. jobrelay's own record on the origin means nothing on another
 * cluster; and one the origin's author wrote (a continuation, a placement attempt) must not
 * reach the mirror, where it would pass for jobrelay's: a mirror carries only what jobrelay
 * puts there.
 */
const droppedAnnotations: readonly string[] = [
  'kubectl.kubernetes.io/last-applied-configuration',
  ...controllerOwnedAnnotations,
];

/**
 * The metadata of any kind's mirror: the origin's namespace, name, labels and annotations
 * (minus `droppedLabels` and client bookkeeping), plus the identity every watch, adoption
 * and deletion on a worker relies on: `jobrelay.dev/origin`, `jobrelay.dev/origin-uid` and
 * the placement attempt. Nothing else of the origin's metadata (UID, resourceVersion,
 * ownerReferences, finalizers, managedFields) crosses to the worker.
 */
export function mirrorIdentityMetadata(
  origin: ObjectMeta,
  identity: { originId: string; attempt: number },
  droppedLabels: readonly string[] = [],
): ObjectMeta {
  if (!origin.name || !origin.namespace || !origin.uid) {
    throw new Error('a mirror needs an origin read from the apiserver (name, namespace and uid)');
  }
  const labels = { ...(origin.labels ?? {}) };
  for (const key of [...droppedLabels, ...controllerOwnedLabels]) delete labels[key];
  const annotations = { ...(origin.annotations ?? {}) };
  for (const key of droppedAnnotations) delete annotations[key];
  return {
    name: origin.name,
    namespace: origin.namespace,
    labels: { ...labels, [originLabel]: identity.originId, [originUidLabel]: origin.uid },
    annotations: { ...annotations, [placementAttemptAnnotation]: String(identity.attempt) },
  };
}
