// The chaos run's queues (issue 30): two DispatchQueues in one cohort take the Jobs, a seeded
// part of them with a PriorityClass, and a sampler checks at every sampled instant that no queue
// and no cohort holds more than its quota: by the placement records on the management cluster
// (what admission reserved) and by the pods running on the workers (what is really used).
//
// Usage is computed here from the objects, never by @jobrelay/admission or @jobrelay/placement:
// checking the controller's arithmetic with itself would prove nothing.

import { placementAnnotation, unschedulableAnnotation } from '@jobrelay/mirror';
import { CustomObjectsApi, SchedulingV1Api, type V1Job } from '@kubernetes/client-node';
import type { LiveMirror, LivePod } from './fleet-sampler.ts';
import { type MixedJob, seededRandom } from './job-mix.ts';
import { type ClusterClients, sandboxJob } from './kube-test-helpers.ts';
import { finishedCondition, getJson, type RawJob } from './status-differential.ts';

/** The classes the mix draws from (no class: priority 0); they exist on every cluster. */
export const chaosPriorityClasses = [
  { name: 'jobrelay-chaos-high', value: 1000 },
  { name: 'jobrelay-chaos-mid', value: 500 },
] as const;

export type ChaosLane = 'a' | 'b';
export const chaosLanes: readonly ChaosLane[] = ['a', 'b'];

/** A Job of the chaos mix with what queueing adds: its lane (namespace, so queue), cpu and class. */
export interface ChaosJob extends MixedJob {
  lane: ChaosLane;
  /** Each container's cpu request (the pod has one container). */
  cpu: string;
  priorityClassName?: string;
}

/** Pods a Job runs at once, as the Job controller (and jobrelay's demand) count them. */
export function podsAtOnce(spec: { parallelism?: number; completions?: number | null } | undefined): number {
  const parallelism = spec?.parallelism ?? 1;
  const completions = spec?.completions ?? parallelism;
  return Math.max(0, Math.min(parallelism, completions));
}

/** The most cpu (millicores) one Job may ask for: within either queue's nominal quota alone. */
export const maxJobCpuMillis = 750;

/**
 * Lane, cpu request and PriorityClass for each Job of the mix, from their own random stream, so
 * the mix itself (families and specs) is the same as without queues for the same seed. A Job's
 * demand (request x pods at once) stays within one queue's nominal quota, so every Job can be
 * admitted without borrowing and none waits forever.
 */
export function assignQueueing(seed: number, mix: readonly MixedJob[]): ChaosJob[] {
  const random = seededRandom((seed ^ 0x51ee7) >>> 0);
  return mix.map((job) => {
    const lane: ChaosLane = random() < 0.55 ? 'a' : 'b';
    const wanted = [200, 250, 400, 500][Math.floor(random() * 4)]!;
    const pods = podsAtOnce(job.spec);
    const cap = pods > 0 ? Math.max(50, Math.floor(maxJobCpuMillis / pods / 50) * 50) : wanted;
    const cpu = `${Math.min(wanted, cap)}m`;
    const draw = random();
    const priorityClassName =
      draw < 0.25 ? chaosPriorityClasses[0].name : draw < 0.5 ? chaosPriorityClasses[1].name : undefined;
    return {
      ...job,
      lane,
      cpu,
      ...(priorityClassName ? { priorityClassName } : {}),
      summary: `${job.summary}; cpu ${cpu} per pod, ${priorityClassName ?? 'no PriorityClass'}, lane ${lane}`,
    };
  });
}

/** The Job as created, through jobrelay (`managedBy`) and directly for the control alike. */
export function chaosJobBody(job: ChaosJob, managedBy?: string): V1Job {
  const body = sandboxJob({
    name: job.name,
    ...(managedBy ? { managedBy } : {}),
    spec: job.spec,
    pod: job.pod,
    requests: { cpu: job.cpu },
  });
  if (job.priorityClassName) body.spec!.template.spec!.priorityClassName = job.priorityClassName;
  return body;
}

/** cpu in millicores of a Kubernetes quantity (the forms the run writes: 250m, 1, 1.5). */
export function cpuMillis(quantity: string | number | undefined): number {
  if (quantity === undefined) return 0;
  const text = String(quantity).trim();
  const value = text.endsWith('m') ? Number(text.slice(0, -1)) : Number(text) * 1000;
  if (!Number.isFinite(value)) throw new Error(`not a cpu quantity the chaos run writes: ${text}`);
  return Math.round(value);
}

/**
 * A Job's cpu demand (millicores) as the controller's quota counts it, computed independently:
 * the batch Job adapter's `podDemand` is `podRequests(template) x jobPodsAtOnce(spec)`, where
 * jobPodsAtOnce is min(parallelism ?? 1, completions ?? parallelism) and podRequests is the sum of
 * the containers' requests (a limit standing in for a missing request), then raised by init
 * containers, replaced by pod-level resources, plus overhead. The chaos Jobs have none of those
 * three, and a template that has one is refused here (thrown) rather than counted differently.
 */
export function jobCpuDemandMillis(job: RawJob | V1Job): number {
  const spec = (job as { spec?: unknown }).spec as V1Job['spec'];
  const podSpec = spec?.template?.spec;
  if (!podSpec) return 0;
  if (
    (podSpec.initContainers?.length ?? 0) > 0 ||
    podSpec.overhead ||
    (podSpec as { resources?: unknown }).resources
  )
    throw new Error(
      `${job.metadata?.name}: the chaos run's demand does not count init containers, pod resources or overhead`,
    );
  const perPod = (podSpec.containers ?? []).reduce(
    (sum, c) => sum + cpuMillis(c.resources?.requests?.cpu ?? c.resources?.limits?.cpu),
    0,
  );
  return perPod * podsAtOnce(spec);
}

/** What a DispatchQueue of the run allows, in cpu millicores, from its spec alone. */
export interface QueueQuota {
  name: string;
  cohort: string;
  nominal: number;
  /** Undefined: borrows whatever the cohort lends. */
  borrowingLimit?: number;
  /** Undefined: lends all of its nominal quota while unused. */
  lendingLimit?: number;
  withinQueue: 'Never' | 'LowerPriority';
  reclaimWithinCohort: 'Never' | 'LowerPriority' | 'Any';
}

export interface ChaosQueues {
  cohort: string;
  /** The queue of each lane. */
  queues: Record<ChaosLane, QueueQuota>;
  /** The namespace label that selects each lane's queue. */
  laneLabel: string;
}

/**
 * Jobs arriving per second in the short variant (40 Jobs over 70 % of 150 s), for which the
 * queues below are sized; a run whose Jobs arrive faster gets proportionally larger quotas.
 */
const shortRunArrivalsPerSecond = 40 / (0.7 * 150);

/** How much larger than the short variant's the queues of a run are: its arrival rate over the short one's. */
export function quotaScale(jobs: number, windowMs: number): number {
  return Math.max(1, jobs / ((0.7 * windowMs) / 1000) / shortRunArrivalsPerSecond);
}

const scaled = (millis: number, scale: number) => Math.round((millis * scale) / 50) * 50;

/**
 * The run's queues: in one cohort, 1.5 cpu of nominal quota between them (times `scale`), far
 * below what the mix asks at once (so Jobs wait on their queue), yet enough that the backlog
 * clears within the finish timeout. Both preempt their own lower-priority Jobs for
 * a higher one. Lane a's queue borrows and lends at most a third of its quota; lane b's may
 * borrow without a limit of its own and takes back what it lent from lower-priority borrowers.
 */
export function chaosQueues(suffix: string, scale = 1): ChaosQueues {
  const cohort = `chaos-${suffix}`;
  return {
    cohort,
    laneLabel: 'jobrelay.dev/chaos-lane',
    queues: {
      a: {
        name: `chaos-${suffix}-a`,
        cohort,
        nominal: scaled(750, scale),
        borrowingLimit: scaled(250, scale),
        lendingLimit: scaled(250, scale),
        withinQueue: 'LowerPriority',
        reclaimWithinCohort: 'Never',
      },
      b: {
        name: `chaos-${suffix}-b`,
        cohort,
        nominal: scaled(750, scale),
        withinQueue: 'LowerPriority',
        reclaimWithinCohort: 'LowerPriority',
      },
    },
  };
}

export function dispatchQueueObject(queue: QueueQuota, laneLabel: string): Record<string, unknown> {
  const quantity = (millis: number) => `${millis}m`;
  return {
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name: queue.name },
    spec: {
      namespaceSelector: { matchLabels: { [laneLabel]: queue.name } },
      cohort: queue.cohort,
      queueingStrategy: 'BestEffortFIFO',
      resources: [
        {
          name: 'cpu',
          nominalQuota: quantity(queue.nominal),
          ...(queue.borrowingLimit !== undefined ? { borrowingLimit: quantity(queue.borrowingLimit) } : {}),
          ...(queue.lendingLimit !== undefined ? { lendingLimit: quantity(queue.lendingLimit) } : {}),
        },
      ],
      preemption: { withinQueue: queue.withinQueue, reclaimWithinCohort: queue.reclaimWithinCohort },
    },
  };
}

/**
 * The most cpu a queue may hold: nominal plus its borrowing limit, and never more than the
 * others of its cohort can lend (their nominal, or their lending limit). The cohort's limit is
 * the sum of its members' nominal quotas.
 */
export function queueLimits(queues: readonly QueueQuota[]): {
  queue: Map<string, number>;
  cohort: Map<string, number>;
} {
  const queue = new Map<string, number>();
  const cohort = new Map<string, number>();
  for (const q of queues) {
    const lendable = queues
      .filter((o) => o.cohort === q.cohort && o.name !== q.name)
      .reduce((sum, o) => sum + (o.lendingLimit ?? o.nominal), 0);
    queue.set(q.name, q.nominal + Math.min(q.borrowingLimit ?? Number.POSITIVE_INFINITY, lendable));
    cohort.set(q.cohort, (cohort.get(q.cohort) ?? 0) + q.nominal);
  }
  return { queue, cohort };
}

const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };

/** Creates the PriorityClasses on every cluster (a worker's scheduler needs the class its pods name). */
export async function createPriorityClasses(clusters: readonly ClusterClients[]): Promise<void> {
  for (const clients of clusters)
    for (const { name, value } of chaosPriorityClasses)
      await clients.kubeConfig
        .makeApiClient(SchedulingV1Api)
        .createPriorityClass({
          body: {
            metadata: { name },
            value,
            // Never: a worker's scheduler must not evict another Job's pods for these (that would
            // change a status the control run decides); ordering is jobrelay's queues' business.
            preemptionPolicy: 'Never',
            description: 'jobrelay chaos run (e2e/src/chaos-queues.ts)',
          },
        })
        .catch((err: unknown) => {
          if ((err as { code?: number }).code !== 409) throw err;
        });
}

export async function deletePriorityClasses(clusters: readonly ClusterClients[]): Promise<void> {
  for (const clients of clusters)
    for (const { name } of chaosPriorityClasses)
      await clients.kubeConfig
        .makeApiClient(SchedulingV1Api)
        .deletePriorityClass({ name })
        .catch(() => undefined);
}

export async function createQueues(management: ClusterClients, setup: ChaosQueues): Promise<void> {
  const custom = management.kubeConfig.makeApiClient(CustomObjectsApi);
  for (const queue of Object.values(setup.queues))
    await custom.createClusterCustomObject({
      ...queueApi,
      body: dispatchQueueObject(queue, setup.laneLabel),
    });
}

export async function deleteQueues(management: ClusterClients, setup: ChaosQueues): Promise<void> {
  const custom = management.kubeConfig.makeApiClient(CustomObjectsApi);
  for (const queue of Object.values(setup.queues))
    await custom.deleteClusterCustomObject({ ...queueApi, name: queue.name }).catch(() => undefined);
}

/** One instant at which a queue or a cohort held more than it may. */
export interface QuotaExceeded {
  /** ms since the chaos phase began. */
  atMs: number;
  /** A queue's name, or `cohort NAME`. */
  queue: string;
  resource: string;
  /** In cores. */
  used: number;
  limit: number;
  /** records: the placement records of admitted, unfinished Jobs; pods: the pods running on the workers. */
  by: 'records' | 'pods';
}

/**
 * An instant at which the pods running on the workers held more than a quota, but only counting
 * pods that are terminating, or that belong to a mirror no longer its origin's placement (an
 * evicted or moved attempt's): docs/queues.md's known limit, reported, not a failure.
 */
export interface RunningOverQuota extends Omit<QuotaExceeded, 'by'> {
  /** Of `used`: pods of the origin's current placement, not terminating. */
  current: number;
  terminating: number;
  /** Pods of a mirror that is not (or no longer) its origin's placement. */
  stale: number;
}

export interface QuotaReport {
  quotaSamples: number;
  /** Samples whose list of the management cluster's Jobs failed (an apiserver or etcd away). */
  incompleteQuotaSamples: number;
  quotaExceeded: QuotaExceeded[];
  runningOverQuota: RunningOverQuota[];
  /** The most cpu (cores) each queue's admitted Jobs held at once, and each cohort. */
  maxUsed: Record<string, number>;
  /**
   * The most cpu (cores) of pods running at once per queue and cohort: of current placements
   * only, and of every pod counted (terminating and stale ones too).
   */
  maxRunning: Record<string, { current: number; all: number }>;
  /** Distinct Jobs seen waiting unplaced with their queue's reason (`queue NAME: ...`). */
  queueWaits: number;
  /** The most Jobs waiting on their queue in one sample. */
  maxPending: number;
  /** Preempted attempts seen: in the records (preempted, or re-placed because preempted) and as Preempted Events. */
  preemptions: number;
  /** Jobs of a queued namespace placed with a record that names no queue (quota bypassed). */
  placedWithoutQueue: string[];
}

export interface QuotaSampler {
  stop(): Promise<QuotaReport>;
}

interface PlacementView {
  cluster?: string;
  attempt?: number;
  queue?: string;
  preempted?: string;
  lastReplacedBecause?: string;
}

function placementView(job: RawJob): PlacementView | undefined {
  const raw = job.metadata.annotations?.[placementAnnotation];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as PlacementView;
  } catch {
    return undefined;
  }
}

const cores = (millis: number) => Math.round(millis) / 1000;

/**
 * Every `intervalMs`: one list of every Job on the management cluster (one consistent snapshot),
 * the usage per queue and per cohort from the records of the admitted, unfinished Jobs of the
 * queued namespaces, and the cpu of the pods running on the workers for them (`livePods`).
 */
export function startQuotaSampler(options: {
  management: ClusterClients;
  setup: ChaosQueues;
  /** Namespace to lane. */
  namespaces: ReadonlyMap<string, ChaosLane>;
  livePods: () => LivePod[];
  liveMirrors: () => LiveMirror[];
  startedAt: number;
  intervalMs?: number;
}): QuotaSampler {
  const { management, setup, namespaces, startedAt } = options;
  const quotas = Object.values(setup.queues);
  const limits = queueLimits(quotas);
  const queueOfNamespace = new Map([...namespaces].map(([ns, lane]) => [ns, setup.queues[lane]]));
  const report: QuotaReport = {
    quotaSamples: 0,
    incompleteQuotaSamples: 0,
    quotaExceeded: [],
    runningOverQuota: [],
    maxUsed: {},
    maxRunning: {},
    queueWaits: 0,
    maxPending: 0,
    preemptions: 0,
    placedWithoutQueue: [],
  };
  const waited = new Set<string>();
  const preempted = new Set<string>();
  const withoutQueue = new Set<string>();
  let stopped = false;

  function check(at: number, name: string, used: number, limit: number, by: 'records' | 'pods'): boolean {
    if (by === 'records') report.maxUsed[name] = Math.max(report.maxUsed[name] ?? 0, cores(used));
    if (used <= limit) return false;
    report.quotaExceeded.push({
      atMs: at - startedAt,
      queue: name,
      resource: 'cpu',
      used: cores(used),
      limit: cores(limit),
      by,
    });
    return true;
  }

  async function sampleOnce(): Promise<void> {
    let jobs: RawJob[];
    try {
      jobs = ((await getJson(management.kubeConfig, '/apis/batch/v1/jobs')) as unknown as { items: RawJob[] })
        .items;
    } catch {
      report.incompleteQuotaSamples++;
      return;
    }
    const at = Date.now();
    // A workload whose mirror is finished on its placement's cluster holds no quota (its pods are
    // gone), though its origin may not show it yet: the controller's rule (docs/queues.md).
    const finishedOnWorker = new Set(
      options
        .liveMirrors()
        .filter((m) => m.finished && !m.terminating)
        .map((m) => `${m.originUid}@${m.cluster}/${m.attempt}`),
    );
    const used = new Map<string, number>();
    const origins = new Map<
      string,
      { job: RawJob; record: PlacementView | undefined; finished: boolean; queue: QueueQuota }
    >();
    let pending = 0;
    for (const job of jobs) {
      const queue = queueOfNamespace.get(job.metadata.namespace ?? '');
      if (!queue) continue;
      const record = placementView(job);
      const finished = finishedCondition(job) !== undefined;
      origins.set(job.metadata.uid ?? '', { job, record, finished, queue });
      const key = `${job.metadata.namespace}/${job.metadata.name}`;
      if (record?.preempted !== undefined) preempted.add(`${job.metadata.uid}/${record.attempt}`);
      if (record?.lastReplacedBecause?.startsWith('preempted') && record.attempt !== undefined)
        preempted.add(`${job.metadata.uid}/${record.attempt - 1}`);
      if (finished) continue;
      if (
        record?.cluster &&
        finishedOnWorker.has(`${job.metadata.uid}@${record.cluster}/${record.attempt ?? 0}`)
      )
        continue;
      if (record?.cluster && record.queue) {
        used.set(record.queue, (used.get(record.queue) ?? 0) + jobCpuDemandMillis(job));
      } else if (record?.cluster) {
        withoutQueue.add(key);
      } else if (job.metadata.annotations?.[unschedulableAnnotation]?.startsWith(`queue ${queue.name}`)) {
        pending++;
        waited.add(job.metadata.uid ?? key);
      }
    }
    report.maxPending = Math.max(report.maxPending, pending);
    const cohortUsed = new Map<string, number>();
    for (const q of quotas) {
      const here = used.get(q.name) ?? 0;
      cohortUsed.set(q.cohort, (cohortUsed.get(q.cohort) ?? 0) + here);
      check(at, q.name, here, limits.queue.get(q.name)!, 'records');
    }
    for (const [cohort, here] of cohortUsed)
      check(at, `cohort ${cohort}`, here, limits.cohort.get(cohort)!, 'records');
    // A record naming a queue that is not one of the run's: its usage is counted nowhere above.
    for (const queue of used.keys())
      if (!limits.queue.has(queue)) check(at, queue, used.get(queue)!, 0, 'records');

    // What runs: pods bound to a node and not ended, of the queued namespaces' mirrors.
    const running = new Map<string, { all: number; current: number; terminating: number; stale: number }>();
    for (const pod of options.livePods()) {
      const queue = queueOfNamespace.get(pod.namespace);
      if (!queue || !pod.bound || pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
      if (pod.hasInitContainersOrOverhead)
        throw new Error(`${pod.cluster}/${pod.namespace}/${pod.name}: not a chaos pod`);
      const cpu = pod.containerRequests.reduce((sum, r) => sum + cpuMillis(r.cpu), 0);
      const origin = pod.mirror ? origins.get(pod.mirror.originUid) : undefined;
      const current =
        origin !== undefined &&
        !origin.finished &&
        origin.record?.cluster === pod.cluster &&
        origin.record.attempt === pod.mirror!.attempt;
      const terminating = pod.terminating || pod.mirror?.terminating === true;
      for (const name of [queue.name, `cohort ${queue.cohort}`]) {
        const sums = running.get(name) ?? { all: 0, current: 0, terminating: 0, stale: 0 };
        sums.all += cpu;
        if (terminating) sums.terminating += cpu;
        else if (current) sums.current += cpu;
        else sums.stale += cpu;
        running.set(name, sums);
      }
    }
    for (const [name, sums] of running) {
      const most = report.maxRunning[name] ?? { current: 0, all: 0 };
      report.maxRunning[name] = {
        current: Math.max(most.current, cores(sums.current)),
        all: Math.max(most.all, cores(sums.all)),
      };
      const limit = name.startsWith('cohort ')
        ? limits.cohort.get(name.slice('cohort '.length))!
        : limits.queue.get(name)!;
      if (check(at, name, sums.current, limit, 'pods')) continue;
      if (sums.all > limit)
        report.runningOverQuota.push({
          atMs: at - startedAt,
          queue: name,
          resource: 'cpu',
          used: cores(sums.all),
          limit: cores(limit),
          current: cores(sums.current),
          terminating: cores(sums.terminating),
          stale: cores(sums.stale),
        });
    }
    report.quotaSamples++;
  }

  const sampling = (async () => {
    while (!stopped) {
      await sampleOnce();
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 1_000));
    }
  })();

  return {
    async stop() {
      stopped = true;
      await sampling;
      // Preempted Events on the origins: an eviction written and re-placed between two samples
      // leaves one even when no sample saw its record.
      let events = 0;
      for (const namespace of namespaces.keys()) {
        const list = await management.core
          .listNamespacedEvent({ namespace, fieldSelector: 'reason=Preempted' })
          .catch(() => ({ items: [] }));
        events += list.items.reduce((sum, e) => sum + (e.count ?? 1), 0);
      }
      report.preemptions = Math.max(preempted.size, events);
      report.queueWaits = waited.size;
      report.placedWithoutQueue = [...withoutQueue];
      return report;
    },
  };
}
