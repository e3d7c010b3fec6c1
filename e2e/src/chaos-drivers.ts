// The chaos run's drivers: Jobs and KubeRay workloads created in one namespace, listed, and
// waited for, through apiservers that may be away for a moment (etcd restarting, a worker's
// apiserver frozen). Shared by the control run (chaos-control.ts) and the chaos phase.

import { mergePatch } from '@jobrelay/kube';
import type { V1Job } from '@kubernetes/client-node';
import type { ClusterClients } from './kube-test-helpers.ts';
import { createRay, deleteRay, listRay, type MixedRay, type RayObject } from './ray-fixtures.ts';
import { finishedCondition, getJson, isSuspended, type RawJob } from './status-differential.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries a call against an apiserver that may be down for a moment (etcd restarting). */
export async function persistently<T>(what: string, call: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${String(err)}`);
      await sleep(1_000);
    }
  }
}

/** Creates Jobs in one namespace, resumes those created suspended once they show it, and lists them. */
export class JobDriver {
  readonly finished = new Map<string, RawJob>();
  private readonly resumed = new Set<string>();
  private readonly wanted = new Set<string>();
  private failures = 0;

  private readonly clients: ClusterClients;
  readonly namespace: string;

  constructor(clients: ClusterClients, namespace: string) {
    this.clients = clients;
    this.namespace = namespace;
  }

  async create(body: V1Job): Promise<void> {
    this.wanted.add(body.metadata!.name!);
    await persistently(`create ${this.namespace}/${body.metadata!.name}`, () =>
      this.clients.batch.createNamespacedJob({ namespace: this.namespace, body }).catch((err: unknown) => {
        // AlreadyExists on a retry: the attempt that timed out went through.
        if ((err as { code?: number }).code !== 409) throw err;
      }),
    );
  }

  get unfinished(): number {
    return this.wanted.size - this.finished.size;
  }

  private latest: RawJob[] = [];
  private latestAt = 0;
  private inFlight: Promise<RawJob[]> | undefined;

  /**
   * The namespace's Jobs, listed at most every 1.5 s however many callers ask (a list of 500 Jobs
   * costs the apiserver, and several waits poll at once): records finished Jobs and resumes
   * suspended ones.
   */
  poll(): Promise<RawJob[]> {
    if (Date.now() - this.latestAt < 1_500) return Promise.resolve(this.latest);
    this.inFlight ??= this.list().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async list(): Promise<RawJob[]> {
    let items: RawJob[];
    try {
      const list = (await getJson(
        this.clients.kubeConfig,
        `/apis/batch/v1/namespaces/${this.namespace}/jobs`,
      )) as unknown as { items: RawJob[] };
      items = list.items;
      this.failures = 0;
    } catch (err) {
      // The apiserver may be away for a moment (etcd restarting): the next poll catches up.
      this.failures++;
      if (this.failures % 10 === 0) console.warn(`listing Jobs in ${this.namespace}: ${String(err)}`);
      return [];
    }
    for (const job of items) {
      const name = job.metadata.name;
      if (finishedCondition(job)) this.finished.set(name, job);
      else if (isSuspended(job) && !this.resumed.has(name)) {
        this.resumed.add(name);
        // Resumed once it shows Suspended (as the status differential does): the origin through jobrelay.
        void persistently(`resume ${this.namespace}/${name}`, () =>
          this.clients.batch.patchNamespacedJob(
            { name, namespace: this.namespace, body: { spec: { suspend: false } } },
            mergePatch,
          ),
        ).catch(() => this.resumed.delete(name));
      }
    }
    this.latest = items;
    this.latestAt = Date.now();
    return items;
  }

  async untilFinished(names: Iterable<string>, timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    const list = [...names];
    for (;;) {
      await this.poll();
      const open = list.filter((name) => !this.finished.has(name));
      if (open.length === 0 || Date.now() > deadline) return open;
      await sleep(2_000);
    }
  }
}

/**
 * Creates KubeRay workloads in one namespace and lists them. Settled is the mix's final state
 * (a RayCluster ready with every worker, a RayJob Complete or Failed), read at each poll: a
 * RayCluster may leave it again when its worker is lost, so only the last reading counts.
 */
export class RayDriver {
  readonly latest = new Map<string, RayObject>();
  private readonly clients: ClusterClients;
  readonly namespace: string;
  private readonly mix: Map<string, MixedRay>;

  constructor(clients: ClusterClients, namespace: string, mix: MixedRay[]) {
    this.clients = clients;
    this.namespace = namespace;
    this.mix = new Map(mix.map((m) => [m.name, m]));
  }

  async create(item: MixedRay, managedBy?: string): Promise<void> {
    await persistently(`create ${this.namespace}/${item.name}`, () =>
      createRay(this.clients, this.namespace, item.manifest(managedBy)).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 409) throw err;
      }),
    );
  }

  async poll(): Promise<void> {
    for (const plural of ['rayclusters', 'rayjobs'] as const) {
      const items = await listRay(this.clients, plural, this.namespace).catch(() => undefined);
      for (const object of items ?? []) this.latest.set(object.metadata!.name!, object);
    }
  }

  settled(name: string): boolean {
    const object = this.latest.get(name);
    return object !== undefined && this.mix.get(name)!.settled(object);
  }

  /** The names not settled when every one was, or the timeout passed. */
  async untilSettled(timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.poll();
      const open = [...this.mix.keys()].filter((name) => !this.settled(name));
      if (open.length === 0 || Date.now() > deadline) return open;
      await sleep(2_000);
    }
  }

  async deleteAll(): Promise<void> {
    for (const item of this.mix.values())
      await persistently(`delete ${this.namespace}/${item.name}`, () =>
        deleteRay(this.clients, item.plural, this.namespace, item.name).catch((err: unknown) => {
          if ((err as { code?: number }).code !== 404) throw err;
        }),
      );
  }
}
