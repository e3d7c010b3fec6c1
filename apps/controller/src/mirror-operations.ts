import type { WorkerConnection } from '@jobrelay/clusters';
import { describeApiError, isAlreadyExists, isNotFound } from '@jobrelay/kube';
import { buildMirrorJob, type MirrorContinuation, mirrorOwnership } from '@jobrelay/mirror';
import type { V1Job } from '@kubernetes/client-node';

export type CreateMirrorResult =
  | { kind: 'created'; mirror: V1Job }
  | { kind: 'adopted'; mirror: V1Job }
  /** A Job of that name exists there and is not ours: never touched. */
  | { kind: 'collision'; owner: string }
  | { kind: 'namespace-missing' }
  /** Ours, but from an older attempt or an older origin of the same name: delete it, then retry. */
  | { kind: 'stale'; mirror: V1Job };

/**
 * Creates the mirror, idempotently: an AlreadyExists carrying our origin UID and attempt is
 * adopted; anything else of that name is a collision (kueue #11849, #12404).
 */
export async function createOrAdoptMirror(
  connection: WorkerConnection,
  origin: V1Job,
  options: {
    originId: string;
    attempt: number;
    createNamespaces: boolean;
    continuation?: MirrorContinuation;
  },
): Promise<CreateMirrorResult> {
  const { originId, attempt, continuation } = options;
  const body = buildMirrorJob(origin, { originId, attempt, continuation });
  const namespace = body.metadata!.namespace!;
  const create = () => connection.batch.createNamespacedJob({ namespace, body });
  try {
    return { kind: 'created', mirror: await create() };
  } catch (err) {
    if (isNotFound(err)) {
      if (!options.createNamespaces) return { kind: 'namespace-missing' };
      await ensureNamespace(connection, namespace);
      return { kind: 'created', mirror: await create() };
    }
    if (!isAlreadyExists(err)) throw err;
  }
  const existing = await connection.batch.readNamespacedJob({ name: body.metadata!.name!, namespace });
  const ownership = mirrorOwnership(existing, options.originId, origin.metadata!.uid!);
  if (ownership.kind === 'foreign') return { kind: 'collision', owner: ownership.owner };
  if (ownership.kind === 'this-origin' && ownership.attempt === options.attempt)
    return { kind: 'adopted', mirror: existing };
  return { kind: 'stale', mirror: existing };
}

async function ensureNamespace(connection: WorkerConnection, name: string): Promise<void> {
  try {
    await connection.core.createNamespace({
      body: { metadata: { name, labels: { 'app.kubernetes.io/created-by': 'jobrelay' } } },
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw new Error(`cannot create namespace ${name}: ${describeApiError(err)}`);
  }
}

/**
 * Deletes one of our mirrors, with its pods (background propagation). The UID precondition
 * guarantees that an object which replaced it meanwhile is never deleted.
 */
export async function deleteMirror(connection: WorkerConnection, mirror: V1Job): Promise<void> {
  try {
    await connection.batch.deleteNamespacedJob({
      name: mirror.metadata!.name!,
      namespace: mirror.metadata!.namespace!,
      // In the body too: with a body the query parameter is not enough, and a Job's own
      // default is to orphan its pods.
      propagationPolicy: 'Background',
      body: { propagationPolicy: 'Background', preconditions: { uid: mirror.metadata!.uid } },
    });
  } catch (err) {
    // Gone already, or replaced by another object (precondition failed): nothing of ours to delete.
    if (isNotFound(err) || (err as { code?: number }).code === 409) return;
    throw err;
  }
}
