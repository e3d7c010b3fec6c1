import type { KubeObject, WorkloadClient } from '@jobrelay/kinds';
import { describeApiError, isAlreadyExists, isNotFound, refusalOf, statusCodeOf } from '@jobrelay/kube';
import { mirrorOwnership } from '@jobrelay/mirror';
import type { CoreV1Api } from '@kubernetes/client-node';

export type CreateMirrorResult<T extends KubeObject> =
  | { kind: 'created'; mirror: T }
  | { kind: 'adopted'; mirror: T }
  /** An object of that name exists there and is not ours: never touched. */
  | { kind: 'collision'; owner: string }
  | { kind: 'namespace-missing' }
  /** The worker's apiserver refused the object itself (admission, quota, validation). */
  | { kind: 'refused'; code: number; message: string }
  /** Ours, but from an older attempt or an older origin of the same name: delete it, then retry. */
  | { kind: 'stale'; mirror: T };

/**
 * Creates the mirror, idempotently, for any kind: an AlreadyExists carrying our origin UID
 * and attempt is adopted; anything else of that name is a collision (kueue #11849, #12404).
 * A namespace missing there is created with `namespaceLabels` (its management namespace's Pod
 * Security labels and jobrelay's origin label); without them it is not created at all, rather
 * than created enforcing nothing.
 */
export async function createOrAdoptMirror<T extends KubeObject>(
  client: WorkloadClient<T>,
  core: Pick<CoreV1Api, 'createNamespace'>,
  body: T,
  options: {
    originId: string;
    originUid: string;
    attempt: number;
    createNamespaces: boolean;
    namespaceLabels: Record<string, string> | undefined;
  },
): Promise<CreateMirrorResult<T>> {
  const namespace = body.metadata!.namespace!;
  const create = async (): Promise<CreateMirrorResult<T>> => {
    try {
      return { kind: 'created', mirror: await client.create(namespace, body) };
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal) return { kind: 'refused', ...refusal };
      throw err;
    }
  };
  try {
    return await create();
  } catch (err) {
    if (isNotFound(err)) {
      if (!options.createNamespaces) return { kind: 'namespace-missing' };
      if (!options.namespaceLabels)
        throw new Error(
          `namespace ${namespace} is missing there and its labels on the management cluster are not known yet: not created`,
        );
      await ensureNamespace(core, namespace, options.namespaceLabels);
      return await create();
    }
    if (!isAlreadyExists(err)) throw err;
  }
  const existing = await client.read(namespace, body.metadata!.name!);
  const ownership = mirrorOwnership(existing, options.originId, options.originUid);
  if (ownership.kind === 'foreign') return { kind: 'collision', owner: ownership.owner };
  if (ownership.kind === 'this-origin' && ownership.attempt === options.attempt)
    return { kind: 'adopted', mirror: existing };
  return { kind: 'stale', mirror: existing };
}

/**
 * The first mirror create into a namespace on a worker goes alone; creates into that namespace
 * there that come meanwhile wait for it. A namespace new to a worker is missing there until a
 * create finds it missing and makes it: without this, every reconcile running at once sends its
 * create, each is answered 404 and each creates the namespace (a 2,000-Job drain into a new
 * namespace over three workers: 5 failed creates and 5 namespace creates). What the first create
 * learned is only a hint: a namespace deleted later is found missing by a create's own 404, and
 * made again.
 */
export class FirstCreatePerNamespace {
  private readonly present = new Set<string>();
  private readonly firsts = new Map<string, Promise<void>>();
  private readonly remembered: number;

  /** `remembered`: namespaces known present, over all workers, before the hints start over. */
  constructor(remembered = 10_000) {
    this.remembered = remembered;
  }

  /**
   * Runs `create` into `namespace` on `cluster`, alone if it is the first there; `present` tells
   * from its result whether the namespace exists now.
   */
  async run<R>(
    cluster: string,
    namespace: string,
    create: () => Promise<R>,
    present: (result: R) => boolean,
  ): Promise<R> {
    const key = `${cluster}/${namespace}`;
    if (this.present.has(key)) return create();
    const first = this.firsts.get(key);
    if (first) {
      await first;
      return create();
    }
    let finished!: () => void;
    this.firsts.set(
      key,
      new Promise<void>((resolve) => {
        finished = resolve;
      }),
    );
    try {
      const result = await create();
      if (present(result)) {
        if (this.present.size >= this.remembered) this.present.clear();
        this.present.add(key);
      }
      return result;
    } finally {
      // Failed or not, the waiting creates go on: each handles a missing namespace itself.
      this.firsts.delete(key);
      finished();
    }
  }
}

async function ensureNamespace(
  core: Pick<CoreV1Api, 'createNamespace'>,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name, labels } } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw new Error(`cannot create namespace ${name}: ${describeApiError(err)}`);
  }
}

/**
 * Deletes one of our mirrors, with its pods (background propagation, or foreground when the
 * mirror must stay until its pods are gone). The UID precondition guarantees that an object
 * which replaced it meanwhile is never deleted.
 */
export async function deleteMirror<T extends KubeObject>(
  client: WorkloadClient<T>,
  mirror: T,
  propagation: 'Background' | 'Foreground' = 'Background',
): Promise<void> {
  try {
    await client.delete(
      mirror.metadata!.namespace!,
      mirror.metadata!.name!,
      mirror.metadata!.uid!,
      propagation,
    );
  } catch (err) {
    // Gone already, or replaced by another object (precondition failed): nothing of ours to delete.
    if (isNotFound(err) || statusCodeOf(err) === 409) return;
    throw err;
  }
}
