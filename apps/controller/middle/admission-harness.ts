// What the middle tier's queue admission tests share: QueueAdmission over the real OriginPlacer
// and OriginExecutor (executor-harness.ts), on a management cluster held in memory, with the
// real admission functions; the DispatchQueues, PriorityClasses and namespaces the test's caches
// hold; and origin Jobs made to order. The clock is injected; a cycle is run by the test, not by
// a timer (unless a test asks for the scheduler).

import type { DispatchQueueStatus } from '@jobrelay/admission';
import { CachedPriorityClasses } from '@jobrelay/admission';
import type { Job } from '@jobrelay/kinds';
import { batchJobAdapter, type KubeObject } from '@jobrelay/kinds';
import { defaultManagedBy } from '@jobrelay/mirror';
import { placementRecordOf } from '@jobrelay/placement';
import { originJob } from '@jobrelay/planner/test-support/snapshot-builders';
import { admissionFunctions } from '../src/admission-functions.ts';
import { ClaimedOriginIndex } from '../src/claimed-origin-index.ts';
import { ControllerEvents, subscribeParts } from '../src/controller-events.ts';
import type { AnyDispatchedKind } from '../src/dispatched-kinds.ts';
import { OriginPlacer } from '../src/place-origin-jobs.ts';
import { type AdmittedKind, QueueAdmission, type QueueAdmissionOptions } from '../src/queue-admission.ts';
import {
  type ExecutorWorld,
  executorWorld,
  registryOf,
  silentLog,
  TestClock,
  workerView,
} from './executor-harness.ts';

/** A DispatchQueue as the apiserver returns it. */
export function dispatchQueue(
  name: string,
  spec: Record<string, unknown>,
  status?: DispatchQueueStatus,
): KubeObject {
  return {
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name, generation: 1, uid: `queue-${name}` },
    spec,
    ...(status ? { status } : {}),
  } as KubeObject;
}

/**
 * A one-pod Job (500m unless `cpu` says otherwise) in `namespace` (team-a unless it says
 * otherwise), created `ageSeconds` before the clock's now. Its UID is `uid-<name>` in team-a,
 * `uid-<namespace>-<name>` elsewhere: one name may be used in several namespaces.
 */
export function job(
  name: string,
  clock: TestClock,
  ageSeconds: number,
  options: { namespace?: string; cpu?: string } = {},
): Job {
  const namespace = options.namespace ?? 'team-a';
  const base = originJob({ uid: namespace === 'team-a' ? `uid-${name}` : `uid-${namespace}-${name}` });
  const template = base.spec!.template;
  const [container] = template.spec!.containers;
  return {
    ...base,
    metadata: {
      ...base.metadata,
      name,
      namespace,
      creationTimestamp: new Date(clock.now() - ageSeconds * 1000).toISOString(),
    },
    spec: {
      ...base.spec!,
      completions: 1,
      parallelism: 1,
      template: options.cpu
        ? {
            ...template,
            spec: {
              ...template.spec!,
              containers: [{ ...container!, resources: { requests: { cpu: options.cpu } } }],
            },
          }
        : template,
    },
  };
}

export interface AdmissionWorld {
  world: ExecutorWorld;
  clock: TestClock;
  queues: KubeObject[];
  priorityClasses: KubeObject[];
  /** A PriorityClass was added or changed (as the cache's event says). */
  priorityClassesChanged(): void;
  placer: OriginPlacer;
  admission: QueueAdmission;
  kind: AdmittedKind;
  statuses: Array<{ name: string; status: DispatchQueueStatus }>;
  /** Workloads admission handed back to their reconcile (`released`), as `kind namespace/name`. */
  released: string[];
  /** The origin cache catches up with the management cluster, its events reaching placer and admission. */
  sync(): void;
  /** The origin `<namespace>/<name>` as the management cluster holds it now. */
  stored(name: string, namespace?: string): Job;
}

export function admissionWorld(
  options: {
    queues?: KubeObject[];
    world?: ExecutorWorld;
    clock?: TestClock;
    /** The management cluster's namespaces and their labels (what queue selectors match). */
    namespaces?: Record<string, Record<string, string>>;
    notes?: Pick<
      QueueAdmissionOptions,
      'notesPerCycle' | 'noteRefreshMs' | 'writeWaitMs' | 'scheduleCycles' | 'debounceMs'
    >;
  } = {},
): AdmissionWorld {
  const world = options.world ?? executorWorld();
  const clock = options.clock ?? new TestClock();
  const cache = new Map<string, Job>();
  const queues = options.queues ?? [];
  const priorityClasses: KubeObject[] = [];
  const priorityLookup = new CachedPriorityClasses(() => priorityClasses);
  const statuses: AdmissionWorld['statuses'] = [];
  const released: string[] = [];
  const kind: AdmittedKind = {
    adapter: batchJobAdapter,
    managedBy: defaultManagedBy,
    origins: { get: (key: string) => cache.get(key) },
    management: world.management,
  };
  const claimed = new ClaimedOriginIndex({ recordKeys: world.keys });
  const kinds = new Map([['job', kind]]);
  const namespaceLabels = options.namespaces ?? { 'team-a': { team: 'a' } };
  const namespaces = {
    get: (name: string) =>
      Object.hasOwn(namespaceLabels, name) ? { metadata: { labels: namespaceLabels[name] } } : undefined,
  };
  let admission: QueueAdmission | undefined;
  const placer = new OriginPlacer({
    kinds,
    registry: registryOf(() => [workerView('worker-1'), workerView('worker-2')]),
    queue: { retryWaitingNow: async () => {} },
    executor: world.executor,
    leading: () => true,
    recordKeys: world.keys,
    config: {
      placementPolicy: 'spread',
      placementTimeoutSeconds: 0,
      recordDispatchEvents: false,
      systemNamespace: 'jobrelay-system',
    },
    namespaces,
    clock,
    log: silentLog,
    originWritten: () => {},
    placedOn: () => {},
    admissionGate: (_kind, origin) => admission!.isQueued(kind, origin),
  });
  admission = new QueueAdmission({
    kinds,
    claimed,
    placer,
    queues: { list: () => queues },
    priorityClasses: priorityLookup,
    namespaces,
    functions: admissionFunctions,
    writeQueueStatus: async (name, status) => void statuses.push({ name, status }),
    leading: () => true,
    recordKeys: world.keys,
    clock,
    log: silentLog,
    metrics: world.metrics.queues,
    // No timer fires in these tests: every cycle is the test's own call.
    scheduleCycles: false,
    released: (kindName, key) => void released.push(`${kindName} ${key}`),
    ...options.notes,
  });
  // As the controller wires them: the shared index reads each origin, placement then admission get it.
  const hub = new ControllerEvents();
  subscribeParts(hub, [claimed, placer, admission]);
  // The harness's kind is the slice of a dispatched kind these parts read.
  const dispatched = kind as unknown as AnyDispatchedKind;
  const sync = () => {
    const before = new Map(cache);
    cache.clear();
    for (const [key, object] of world.management.objects) cache.set(key, structuredClone(object));
    for (const [key, object] of cache) {
      const event = { type: 'upsert' as const, object: object as KubeObject, previous: before.get(key) };
      hub.emit('origin', dispatched, event);
    }
    for (const [key, object] of before) {
      if (cache.has(key)) continue;
      hub.emit('origin', dispatched, { type: 'delete', object });
    }
  };
  admission.factsChanged();
  return {
    world,
    clock,
    queues,
    priorityClasses,
    priorityClassesChanged: () => {
      priorityLookup.changed();
      admission!.factsChanged();
    },
    placer,
    admission,
    kind,
    statuses,
    released,
    sync,
    stored: (name, namespace = 'team-a') => world.management.get(namespace, name)!,
  };
}

/** The placement record of `<namespace>/<name>` (team-a unless said), undefined if it has none. */
export function recordOf(a: AdmissionWorld, name: string, namespace?: string) {
  const parsed = placementRecordOf(a.stored(name, namespace), a.world.keys);
  return parsed.kind === 'ok' ? parsed.record : undefined;
}

/** The Job `<namespace>/<name>` (team-a unless said) completes, as its status sync would write it. */
export function finish(a: AdmissionWorld, name: string, namespace?: string): void {
  const stored = a.stored(name, namespace);
  a.world.management.put({
    ...stored,
    status: {
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True' },
        { type: 'Complete', status: 'True' },
      ],
      succeeded: 1,
    },
  } as Job);
}
