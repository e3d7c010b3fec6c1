// The middle test tier's cluster: one cluster's objects of one kind held in memory, answered at
// the client boundary the controller's classes already take (WorkloadClient, the namespaces
// API). It answers as kube-apiserver does where the controller reads the answer: resource
// versions, a resourceVersion precondition on patch and /status (409 Conflict), AlreadyExists
// (409, reason AlreadyExists), NotFound for a missing object or namespace, a UID precondition
// on delete. Failures to inject are queued per verb. Every call is logged, in order.
import type { KubeObject, WorkloadClient } from '@jobrelay/kinds';
import { applyMergePatch } from '@jobrelay/mirror';
import type { CoreV1Api } from '@kubernetes/client-node';

/** An error shaped like client-node's ApiException: `code` and a Status `body`. */
export function apiError(code: number, reason: string, message = reason): Error {
  return Object.assign(new Error(`HTTP ${code} ${reason}: ${message}`), {
    code,
    body: { kind: 'Status', reason, message, code },
  });
}

type Verb = 'create' | 'read' | 'patch' | 'patchStatus' | 'replaceStatus' | 'delete' | 'createNamespace';

export class InMemoryCluster<T extends KubeObject = KubeObject> implements WorkloadClient<T> {
  readonly objects = new Map<string, T>();
  readonly namespaces = new Set<string>();
  /** `verb namespace/name`, in call order. */
  readonly calls: string[] = [];
  /** Namespaces created through `core`, with their labels. */
  readonly createdNamespaces = new Map<string, Record<string, string> | undefined>();
  private readonly failures = new Map<Verb, Error[]>();
  private readonly holds: Array<{ verb: Verb; name: string; held: Promise<void> }> = [];
  private version = 100;
  private uids = 0;

  readonly name: string;

  constructor(name: string, namespaces: string[] = ['team-a']) {
    this.name = name;
    for (const namespace of namespaces) this.namespaces.add(namespace);
  }

  /**
   * The next call of `verb` on `name` hangs (as a request on a dead connection would) until the
   * returned function is called; then it goes on as usual.
   */
  holdNext(verb: Verb, name: string): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.holds.push({ verb, name, held });
    return release;
  }

  private async held(verb: Verb, name: string): Promise<void> {
    const index = this.holds.findIndex((h) => h.verb === verb && h.name === name);
    if (index < 0) return;
    const [hold] = this.holds.splice(index, 1);
    await hold!.held;
  }

  /** The next call of `verb` fails with `err` (queued: several calls, several failures). */
  failNext(verb: Verb, err: Error): void {
    this.failures.set(verb, [...(this.failures.get(verb) ?? []), err]);
  }

  /** Puts an object there as someone else would have (a version and a UID assigned). */
  put(object: T): T {
    const stored = structuredClone(object);
    stored.metadata = {
      ...stored.metadata,
      uid: stored.metadata?.uid ?? `${this.name}-uid-${++this.uids}`,
      resourceVersion: String(++this.version),
    };
    this.objects.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
    return structuredClone(stored);
  }

  /**
   * Its Kueue, as far as the controller reads it: `absent` (no Workload API: 404 on every
   * version, as kube-apiserver answers for a resource it does not serve), `forbidden` (403, the
   * identity lacks the optional rule), or `installed` (v1beta2 served, the Workloads below).
   */
  kueue: 'absent' | 'forbidden' | 'installed' = 'absent';
  /** Kueue's Workloads there (installed only). */
  readonly workloads: KubeObject[] = [];

  /** A LIST of Kueue Workloads in `namespace` by one `key=value` label selector, answered as the apiserver would. */
  async listWorkloads(request: {
    version: string;
    namespace: string;
    labelSelector: string;
  }): Promise<unknown> {
    const { version, namespace, labelSelector } = request;
    this.calls.push(`list workloads.${version} ${namespace}?${labelSelector}`);
    if (this.kueue === 'forbidden')
      throw apiError(
        403,
        'Forbidden',
        `workloads.kueue.x-k8s.io is forbidden: User "system:serviceaccount:jobrelay-system:jobrelay-dispatcher" cannot list resource "workloads" in API group "kueue.x-k8s.io" in the namespace "${namespace}"`,
      );
    if (this.kueue === 'absent' || version !== 'v1beta2')
      throw apiError(404, 'NotFound', 'the server could not find the requested resource');
    const [label, value] = labelSelector.split('=');
    return {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'WorkloadList',
      items: this.workloads.filter(
        (w) => w.metadata?.namespace === namespace && w.metadata?.labels?.[label!] === value,
      ),
    };
  }

  get(namespace: string, name: string): T | undefined {
    const found = this.objects.get(`${namespace}/${name}`);
    return found ? structuredClone(found) : undefined;
  }

  readonly core: Pick<CoreV1Api, 'createNamespace'> = {
    createNamespace: async ({ body }) => {
      const name = body.metadata!.name!;
      this.calls.push(`createNamespace ${name}`);
      this.fail('createNamespace');
      if (this.namespaces.has(name)) throw apiError(409, 'AlreadyExists');
      this.namespaces.add(name);
      this.createdNamespaces.set(name, body.metadata?.labels);
      return body;
    },
  };

  async create(namespace: string, body: T): Promise<T> {
    this.calls.push(`create ${namespace}/${body.metadata!.name}`);
    this.fail('create');
    if (!this.namespaces.has(namespace))
      throw apiError(404, 'NotFound', `namespaces "${namespace}" not found`);
    if (this.objects.has(`${namespace}/${body.metadata!.name}`)) throw apiError(409, 'AlreadyExists');
    return this.put({ ...body, metadata: { ...body.metadata, uid: undefined } });
  }

  async read(namespace: string, name: string): Promise<T> {
    this.calls.push(`read ${namespace}/${name}`);
    this.fail('read');
    return this.existing(namespace, name);
  }

  async patch(namespace: string, name: string, body: object): Promise<T> {
    this.calls.push(`patch ${namespace}/${name}`);
    await this.held('patch', name);
    this.fail('patch');
    const current = this.existing(namespace, name);
    const precondition = (body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (precondition !== undefined && precondition !== current.metadata!.resourceVersion)
      throw apiError(409, 'Conflict', 'the object has been modified');
    return this.put(applyMergePatch(current, body) as T);
  }

  async patchStatus(namespace: string, name: string, body: object): Promise<T> {
    this.calls.push(`patchStatus ${namespace}/${name}`);
    this.fail('patchStatus');
    const current = this.existing(namespace, name);
    const { status } = body as { status?: unknown };
    return this.put({
      ...current,
      status: applyMergePatch((current as { status?: unknown }).status, status),
    });
  }

  async replaceStatus(object: T): Promise<T> {
    const { namespace, name, resourceVersion } = object.metadata!;
    this.calls.push(`replaceStatus ${namespace}/${name}`);
    this.fail('replaceStatus');
    const current = this.existing(namespace!, name!);
    if (resourceVersion !== current.metadata!.resourceVersion)
      throw apiError(409, 'Conflict', 'the object has been modified');
    return this.put({ ...current, status: (object as { status?: unknown }).status });
  }

  /**
   * Background (the default): the object goes at once. Foreground: it stays with a
   * deletionTimestamp and the `foregroundDeletion` finalizer, as while the garbage collector
   * deletes its pods, until `dependentsGone`.
   */
  async delete(
    namespace: string,
    name: string,
    uid: string,
    propagation: 'Background' | 'Foreground' = 'Background',
  ): Promise<void> {
    this.calls.push(`delete ${namespace}/${name}${propagation === 'Foreground' ? ' (foreground)' : ''}`);
    await this.held('delete', name);
    this.fail('delete');
    const current = this.existing(namespace, name);
    if (current.metadata!.uid !== uid) throw apiError(409, 'Conflict', 'Precondition failed: UID');
    if (propagation === 'Background') {
      this.objects.delete(`${namespace}/${name}`);
      return;
    }
    if (current.metadata!.deletionTimestamp) return;
    this.put({
      ...current,
      metadata: {
        ...current.metadata,
        deletionTimestamp: '2026-12-01T10:00:00Z',
        finalizers: [...(current.metadata!.finalizers ?? []), 'foregroundDeletion'],
      },
    });
  }

  /** The garbage collector is done with a foreground deletion: the object's dependents are gone, and so is it. */
  dependentsGone(namespace: string, name: string): void {
    const current = this.existing(namespace, name);
    if (!current.metadata!.finalizers?.includes('foregroundDeletion'))
      throw new Error(`${namespace}/${name} is not being deleted in the foreground`);
    this.objects.delete(`${namespace}/${name}`);
  }

  private existing(namespace: string, name: string): T {
    const found = this.objects.get(`${namespace}/${name}`);
    if (!found) throw apiError(404, 'NotFound', `"${name}" not found`);
    return structuredClone(found);
  }

  private fail(verb: Verb): void {
    const err = this.failures.get(verb)?.shift();
    if (err) throw err;
  }
}
