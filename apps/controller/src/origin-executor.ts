import type { KubeObject, WorkloadClient, WorkloadKindAdapter } from '@jobrelay/kinds';
import { type EventRecorder, isNotFound, statusCodeOf, unlessConflict } from '@jobrelay/kube';
import { mirrorOwnership, unschedulableAnnotation } from '@jobrelay/mirror';
import { patchPlacement, type RecordKeyring } from '@jobrelay/placement';
import type { PlacementQueue } from '@jobrelay/placement/queue';
import { conflictRetryMs, deletionRetryMs, mirrorRecorded, type OriginAction } from '@jobrelay/planner';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerMetrics } from './controller-metrics.ts';
import { eventRegarding } from './dispatched-kinds.ts';
import { createOrAdoptMirror, deleteMirror, FirstCreatePerNamespace } from './mirror-operations.ts';
import type { OriginWriteObserver } from './origin-write-expectations.ts';

/** A worker as the executor uses it: the kind's client there and the namespaces API. */
export interface WorkerTarget<T extends KubeObject> {
  client: WorkloadClient<T>;
  core: Pick<CoreV1Api, 'createNamespace'>;
}

/** One reconcile's execution context: the origin, its kind, and where to reach things. */
export interface ExecutionTarget<T extends KubeObject> {
  adapter: WorkloadKindAdapter<T>;
  /** The origin's namespace and name, and its UID. */
  namespace: string;
  name: string;
  uid: string;
  /** The origin as read for the plan (present origins only): writes go over its version. */
  origin: T | undefined;
  management: WorkloadClient<T>;
  worker(cluster: string): WorkerTarget<T> | undefined;
}

export interface OriginExecutorOptions {
  originId: string;
  recordDispatchEvents: boolean;
  createNamespaces: boolean;
  /** Seals the placement records it writes. */
  recordKeys: RecordKeyring;
  /**
   * The labels of a namespace created on a worker for a mirror (createdNamespaceLabels);
   * undefined while the management namespace is not known (nothing is created then).
   */
  namespaceLabels: (namespace: string) => Record<string, string> | undefined;
  events: Pick<EventRecorder, 'record'>;
  queue: Pick<PlacementQueue, 'enqueue'>;
  forgetOrigin: (uid: string) => void;
  metrics: ControllerMetrics;
  /**
   * Told of every write before and after it (`OriginWriteExpectations`): what the caches do not
   * show yet is planned from, and the echoes of these writes are judged against it.
   */
  writes: OriginWriteObserver;
  log: Logger;
}

/** What an execution ended with. */
export interface ExecutionResult<T extends KubeObject = KubeObject> {
  requeueAfterMs: number | undefined;
  /** The origin as the run left it: as read, or as its last write answered. */
  origin: T | undefined;
  /** Mirrors that could not be deleted yet (logged; retried by the next reconcile). */
  failedDeletions: number;
  /** A write over the version read met a newer one: the run ended there (requeueAfterMs set). */
  conflicted: boolean;
}

/**
 * Turns a plan into API calls and Events, in order. It decides nothing: where an API
 * answer matters, the plan carries the branch for each answer. A conflict on any write over
 * the version read ends the run and asks for a fresh read soon.
 */
export class OriginExecutor {
  private readonly options: OriginExecutorOptions;
  private readonly firstCreates = new FirstCreatePerNamespace();

  constructor(options: OriginExecutorOptions) {
    this.options = options;
  }

  async execute<T extends KubeObject>(
    actions: OriginAction<T>[],
    target: ExecutionTarget<T>,
  ): Promise<ExecutionResult<T>> {
    const result: ExecutionResult<T> = {
      requeueAfterMs: undefined,
      origin: target.origin,
      failedDeletions: 0,
      conflicted: false,
    };
    await this.run(actions, target, result);
    if (result.failedDeletions > 0) result.requeueAfterMs ??= deletionRetryMs;
    result.origin = target.origin;
    return result;
  }

  /** Runs actions until one ends the run (a requeue or a conflict); false when it ended early. */
  private async run<T extends KubeObject>(
    actions: OriginAction<T>[],
    target: ExecutionTarget<T>,
    result: ExecutionResult<T>,
  ): Promise<boolean> {
    for (const action of actions) {
      if (!(await this.step(action, target, result))) return false;
    }
    return true;
  }

  private async step<T extends KubeObject>(
    action: OriginAction<T>,
    target: ExecutionTarget<T>,
    result: ExecutionResult<T>,
  ): Promise<boolean> {
    const { adapter } = target;
    const { log, metrics } = this.options;
    const job = `${target.namespace}/${target.name}`;
    switch (action.type) {
      case 'requeue':
        result.requeueAfterMs = action.afterMs;
        return false;
      case 'forget-origin':
        this.options.forgetOrigin(action.uid);
        return true;
      case 'enqueue-placement':
        await this.options.queue.enqueue({
          namespace: target.namespace,
          name: target.name,
          uid: target.uid,
          kind: adapter.name,
        });
        return true;
      case 'record-event':
        await this.options.events.record({
          regarding: eventRegarding(adapter, target),
          type: action.eventType,
          reason: action.reason,
          action: action.action,
          note: action.note,
        });
        return true;
      case 'delete-mirror': {
        const worker = target.worker(action.cluster);
        if (!worker) return true;
        try {
          await deleteMirror(worker.client, action.mirror, action.propagation);
          log.info(
            {
              kind: adapter.name,
              job,
              cluster: action.cluster,
              why: action.why,
              propagation: action.propagation,
            },
            'deleted mirror',
          );
        } catch (err) {
          // Left for the next reconcile (or the cluster's return); the rest goes on.
          result.failedDeletions += 1;
          log.warn(
            { kind: adapter.name, job, cluster: action.cluster, err },
            'could not delete a mirror yet',
          );
        }
        return true;
      }
      case 'patch-placement': {
        const unwritten = () => this.options.writes.originUnwritten(adapter.name, target.origin!);
        this.options.writes.originWriting(adapter.name, target.origin!);
        const written = await patchPlacement(
          target.management,
          target.origin!,
          action.record,
          this.options.recordKeys,
        ).catch((err: unknown) => {
          unwritten();
          throw err;
        });
        if (written.kind === 'conflict') {
          unwritten();
          result.requeueAfterMs = conflictRetryMs;
          result.conflicted = true;
          return false;
        }
        // Later writes in this run go over the version this one produced.
        const over = target.origin!;
        target.origin = written.value;
        this.options.writes.originWritten(adapter.name, written.value, over);
        if (action.record.cluster === undefined) {
          log.warn(
            { kind: adapter.name, job, because: action.record.lastReplacedBecause },
            'placing it again',
          );
        }
        return true;
      }
      case 'write-status': {
        const origin = target.origin!;
        this.options.writes.originWriting(adapter.name, origin);
        const written = await unlessConflict(() =>
          target.management.replaceStatus({ ...origin, status: action.status } as T),
        ).catch((err: unknown) => {
          this.options.writes.originUnwritten(adapter.name, origin);
          // Sent and refused (422 Invalid, 400): a status our validator let through and the
          // apiserver did not. Never expected; counted so that an alert can say so.
          const code = statusCodeOf(err);
          if (code !== undefined && code >= 400 && code < 500) {
            metrics.statusWrites.inc({ result: 'rejected' });
            // Logged as well as counted: a count dies with the process, a log line does not.
            log.error(
              { kind: adapter.name, job, code, err },
              'the apiserver rejected an origin status write',
            );
          }
          throw err;
        });
        metrics.statusWrites.inc({ result: written.kind });
        if (written.kind === 'conflict') {
          this.options.writes.originUnwritten(adapter.name, origin);
          result.requeueAfterMs = conflictRetryMs;
          result.conflicted = true;
          return false;
        }
        target.origin = written.value;
        this.options.writes.originWritten(adapter.name, written.value, origin);
        this.options.writes.statusWritten(adapter.name, written.value);
        if (adapter.isFinished(written.value) && !adapter.isFinished(origin)) {
          log.info({ kind: adapter.name, job, purpose: action.purpose }, 'origin finished');
        }
        return true;
      }
      case 'note-waiting': {
        this.options.writes.originWriting(adapter.name, target.origin!);
        const written = await target.management
          .patch(target.namespace, target.name, {
            metadata: { annotations: { [unschedulableAnnotation]: action.message } },
          })
          .catch((err: unknown) => {
            // Only a note: the Event says the same, and the next attempt writes it again.
            log.warn({ kind: adapter.name, job, err }, 'could not annotate the waiting workload');
            return undefined;
          });
        if (written) {
          const over = target.origin!;
          target.origin = written;
          this.options.writes.originWritten(adapter.name, written, over);
        } else this.options.writes.originUnwritten(adapter.name, target.origin!);
        return true;
      }
      case 'refuse-status':
        metrics.statusWrites.inc({ result: 'refused' });
        log.error(
          { kind: adapter.name, job, violations: action.violations },
          'refused to write an invalid origin status',
        );
        return true;
      case 'seed-mirror-status':
      case 'patch-mirror-spec': {
        const worker = target.worker(action.cluster);
        if (!worker) return true;
        const { namespace, name } = action.mirror.metadata!;
        if (action.type === 'seed-mirror-status') {
          await worker.client.patchStatus(namespace!, name!, { status: action.seed });
        } else {
          await worker.client.patch(namespace!, name!, {
            ...(action.annotations ? { metadata: { annotations: action.annotations } } : {}),
            spec: action.patch,
          });
        }
        log.info(
          {
            kind: adapter.name,
            job,
            cluster: action.cluster,
            ...(action.type === 'seed-mirror-status' ? { seed: action.seed } : { change: action.patch }),
          },
          action.type === 'seed-mirror-status'
            ? 'seeded the mirror with the progress of earlier attempts'
            : 'propagated spec change to the mirror',
        );
        return true;
      }
      case 'confirm-mirror-vanished': {
        const worker = target.worker(action.cluster);
        if (!worker) return true;
        // The cache may lag just after creation: ask the worker before concluding it vanished.
        const live = await worker.client.read(target.namespace, target.name).catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
        const ownership = live ? mirrorOwnership(live, this.options.originId, target.uid) : undefined;
        if (ownership?.kind === 'this-origin' && ownership.attempt === action.attempt) {
          result.requeueAfterMs = 500;
          return false;
        }
        return this.run(action.ifVanished, target, result);
      }
      case 'create-mirror': {
        const worker = target.worker(action.cluster);
        if (!worker) return true;
        this.options.writes.mirrorCreating(adapter.name, action.cluster, action.body);
        const created = await this.firstCreates.run(
          action.cluster,
          action.body.metadata!.namespace!,
          () =>
            createOrAdoptMirror(worker.client, worker.core, action.body, {
              originId: this.options.originId,
              originUid: target.uid,
              attempt: action.record.attempt,
              createNamespaces: this.options.createNamespaces,
              namespaceLabels: this.options.namespaceLabels(action.body.metadata!.namespace!),
            }),
          (outcome) => outcome.kind !== 'namespace-missing',
        );
        metrics.mirrorOperations.inc({ operation: created.kind });
        const createdAt = target.origin?.metadata?.creationTimestamp;
        if (created.kind === 'created' && action.record.attempt === 1 && createdAt)
          metrics.dispatchLatency.observe(Math.max(0, Date.now() - new Date(createdAt).getTime()) / 1000);
        switch (created.kind) {
          case 'created':
          case 'adopted':
            this.options.writes.mirrorCreated(adapter.name, action.cluster, created.mirror);
            log.info(
              { kind: adapter.name, job, cluster: action.cluster, attempt: action.record.attempt },
              `${created.kind} mirror`,
            );
            return this.run(
              mirrorRecorded(adapter, action.record, action.cluster, created.kind, this.options),
              target,
              result,
            );
          case 'collision':
            return this.run(action.onCollision(created.owner), target, result);
          case 'namespace-missing':
            return this.run(action.onNamespaceMissing, target, result);
          case 'refused':
            log.warn(
              {
                kind: adapter.name,
                job,
                cluster: action.cluster,
                code: created.code,
                refusal: created.message,
              },
              'the worker refused the mirror',
            );
            return this.run(action.onRefused(created), target, result);
          case 'stale':
            await deleteMirror(worker.client, created.mirror);
            result.requeueAfterMs = 1_000;
            return false;
        }
      }
    }
  }
}
