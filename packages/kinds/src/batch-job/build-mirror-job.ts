import {
  continuesFromAnnotation,
  deadlineUsedAnnotation,
  deepCopy,
  mirrorIdentityMetadata,
  suspendSentAnnotation,
} from '@jobrelay/mirror';
import { type MirrorContinuation, remainingDeadlineSeconds } from './continuation.ts';
import type { Job, JobSpec } from './job-object.ts';

/** Labels the origin's apiserver generated from the origin's UID; the worker generates its own. */
const generatedSelectorLabels = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

export interface MirrorIdentity {
  /** This installation's origin id (value of `jobrelay.dev/origin`). */
  originId: string;
  /** The placement attempt that creates this mirror. */
  attempt: number;
  /** What a re-placed Job's mirror takes over from earlier attempts (see continuation.ts). */
  continuation?: MirrorContinuation;
}

function without(
  record: Record<string, string> | undefined,
  keys: readonly string[],
): Record<string, string> {
  const copy = { ...(record ?? {}) };
  for (const key of keys) delete copy[key];
  return copy;
}

/**
 * The mirror of an origin Job for a worker cluster: same namespace and name, the spec minus
 * what the origin's apiserver generated or what must stay on the management cluster
 * (reference/job-api-rules.md, "Creating a mirror"), and our origin labels. A re-placed
 * Job's mirror is created suspended until its status holds the progress it continues from,
 * and gets only what is left of activeDeadlineSeconds.
 */
export function buildMirrorJob(origin: Job, identity: MirrorIdentity): Job {
  const { metadata, spec } = origin;
  if (!metadata?.name || !metadata.namespace || !metadata.uid || !spec) {
    throw new Error(
      'buildMirrorJob needs an origin Job read from the apiserver (name, namespace, uid and spec)',
    );
  }
  const {
    selector: _selector,
    manualSelector: _manualSelector,
    // The worker's built-in Job controller must run the mirror.
    managedBy: _managedBy,
    // Honoured on the origin by the management cluster's TTL controller. On the mirror it
    // would let the worker delete it before its final status is synced, and the Job would
    // be dispatched again (kueue PR #14734).
    ttlSecondsAfterFinished: _ttl,
    ...copiedSpec
  } = spec;
  // One deep copy (the origin is the informer's cached object and must stay as it is).
  const mirrorSpec: JobSpec = deepCopy(copiedSpec);
  mirrorSpec.template.metadata = {
    ...mirrorSpec.template.metadata,
    labels: without(mirrorSpec.template.metadata?.labels, generatedSelectorLabels),
  };
  const continuation = identity.continuation;
  const continuationAnnotations: Record<string, string> = {};
  if (continuation?.progress) {
    mirrorSpec.suspend = true;
    continuationAnnotations[continuesFromAnnotation] = JSON.stringify(continuation.progress);
  }
  if (
    continuation?.deadlineUsedSeconds !== undefined &&
    typeof mirrorSpec.activeDeadlineSeconds === 'number'
  ) {
    mirrorSpec.activeDeadlineSeconds = remainingDeadlineSeconds(
      mirrorSpec.activeDeadlineSeconds,
      continuation.deadlineUsedSeconds,
    );
    continuationAnnotations[deadlineUsedAnnotation] = String(continuation.deadlineUsedSeconds);
  }
  const identityMetadata = mirrorIdentityMetadata(metadata, identity, generatedSelectorLabels);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      ...identityMetadata,
      annotations: {
        ...identityMetadata.annotations,
        ...continuationAnnotations,
        // What jobrelay sent, so that later only the origin's transitions go down: a worker's
        // admission webhook may suspend the mirror at creation, and that hold is the worker's.
        [suspendSentAnnotation]: String(mirrorSpec.suspend === true),
      },
    },
    spec: mirrorSpec,
  };
}
