// The namespaces jobrelay creates on workers, and their Pod Security labels. A namespace a
// mirror lands in must enforce on the worker what its namespace enforces on the management
// cluster: a dispatched Job makes no pods on the management cluster, so the worker's Pod
// Security admission is the only one that ever judges them. jobrelay creates a missing
// namespace with the management namespace's pod-security.kubernetes.io/* labels and its own
// jobrelay.dev/origin label, and keeps those labels equal while it carries that origin label
// (the management namespace's labels changed, or someone changed them on the worker). A
// namespace without it (the worker admin's, another installation's) is never written: placement
// refuses the cluster when it enforces less (choose-worker-cluster.ts).
import type { WorkerConnection } from '@jobrelay/clusters';
import { type Clock, describeApiError, mergePatch } from '@jobrelay/kube';
import { originLabel } from '@jobrelay/mirror';
import { type NamespaceLookup, podSecurityLabelPatch, podSecurityLabelsOf } from '@jobrelay/placement';
import type { Logger } from 'pino';
import type { ControllerEventSubscriber, ControllerPart } from './controller-events.ts';
import { KeyedWorkQueue } from './keyed-work-queue.ts';

/** Also on the namespaces jobrelay creates: what kubectl and people read as "who made this". */
const createdByLabel = 'app.kubernetes.io/created-by';

/** The labels of a namespace jobrelay creates on a worker, for a management namespace with `managementLabels`. */
export function createdNamespaceLabels(
  originId: string,
  managementLabels: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return { ...podSecurityLabelsOf(managementLabels), [createdByLabel]: 'jobrelay', [originLabel]: originId };
}

/**
 * The labels' merge patch that brings a worker namespace's Pod Security labels to the
 * management namespace's, or undefined when there is nothing jobrelay may or must change: the
 * worker namespace was not created by this installation (no origin label of `originId`), the
 * management namespace is gone (its labels are not known: the worker's are left as they are),
 * or they are equal already.
 */
export function workerNamespaceLabelPatch(
  originId: string,
  managementLabels: Readonly<Record<string, string>> | undefined | null,
  workerLabels: Readonly<Record<string, string>> | undefined,
): Record<string, string | null> | undefined {
  if (workerLabels?.[originLabel] !== originId) return undefined;
  if (managementLabels === null) return undefined;
  return podSecurityLabelPatch(managementLabels, workerLabels);
}

export interface WorkerNamespaceLabelsOptions {
  originId: string;
  /** The management cluster's namespaces (their labels). */
  management: NamespaceLookup;
  /** The connected workers, each with its namespace cache and clients. */
  connections: () => readonly WorkerConnection[];
  connection: (cluster: string) => WorkerConnection | undefined;
  /** Writes only while this holds (the leader). */
  leading: () => boolean;
  clock?: Clock;
  log: Logger;
}

/**
 * Keeps the Pod Security labels of the namespaces this installation created on workers equal to
 * the management namespaces'. Level-triggered: a change of a namespace on either side only
 * enqueues `cluster/namespace`, and one reconcile per key reads both caches and patches the
 * difference.
 */
export class WorkerNamespaceLabels implements ControllerPart {
  private readonly options: WorkerNamespaceLabelsOptions;
  private readonly queue: KeyedWorkQueue;

  readonly name = 'worker namespace labels';
  readonly watches = ['managementNamespace', 'workerNamespace'] as const;
  readonly writes = ['worker namespaces this installation created: Pod Security labels'];

  subscribe(events: ControllerEventSubscriber): void {
    events.on('managementNamespace', (name) => this.managementNamespaceChanged(name));
    events.on('workerNamespace', (cluster, name) => this.workerNamespaceChanged(cluster, name));
  }

  constructor(options: WorkerNamespaceLabelsOptions) {
    this.options = options;
    this.queue = new KeyedWorkQueue({
      name: 'worker namespace labels',
      concurrency: 4,
      startPaused: true,
      log: options.log,
      ...(options.clock ? { clock: options.clock } : {}),
      reconcile: async (key) => {
        await this.reconcile(key);
        return undefined;
      },
    });
  }

  /** Starts reconciling (caches synced): every namespace jobrelay created on a connected worker is looked at once. */
  start(): void {
    this.queue.resume();
    this.reconcileEvery();
  }

  stop(): void {
    this.queue.stop();
  }

  /** A namespace changed on a worker. */
  workerNamespaceChanged(cluster: string, name: string): void {
    this.queue.add(`${cluster}/${name}`);
  }

  /** A namespace changed on the management cluster: its namespace on every worker is looked at. */
  managementNamespaceChanged(name: string): void {
    for (const connection of this.options.connections()) this.queue.add(`${connection.name}/${name}`);
  }

  /** Every namespace this installation created on every connected worker (a resync, or a new leader). */
  reconcileEvery(): void {
    for (const connection of this.options.connections()) {
      for (const namespace of connection.namespaces.list()) {
        if (namespace.metadata?.labels?.[originLabel] === this.options.originId)
          this.queue.add(`${connection.name}/${namespace.metadata.name}`);
      }
    }
  }

  private async reconcile(key: string): Promise<void> {
    if (!this.options.leading()) return;
    const slash = key.indexOf('/');
    const cluster = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const connection = this.options.connection(cluster);
    const there = connection?.namespaces.get(name);
    if (!connection || !there) return;
    const here = this.options.management.get(name);
    const patch = workerNamespaceLabelPatch(
      this.options.originId,
      here ? (here.metadata?.labels ?? {}) : null,
      there.metadata?.labels,
    );
    if (!patch) return;
    try {
      await connection.core.patchNamespace({ name, body: { metadata: { labels: patch } } }, mergePatch);
    } catch (err) {
      throw new Error(
        `cannot set the Pod Security labels of namespace ${name} on ${cluster}: ${describeApiError(err)}`,
      );
    }
    this.options.log.info(
      { cluster, namespace: name, labels: patch },
      'set the Pod Security labels of a worker namespace to the management namespace’s',
    );
  }
}
