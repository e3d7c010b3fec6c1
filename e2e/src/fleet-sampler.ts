// Watching the workers while Jobs run, so that "never two mirrors at once" and "ran once" are
// observed rather than inferred from a final status. Mirrors and their pods are deleted a few
// seconds after the origin finishes, so looking afterwards proves little.
import { originUidLabel, placementAttemptAnnotation } from '@jobrelay/mirror';
import { CustomObjectsApi, type V1Job, type V1Pod, Watch } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { Fleet } from './dispatch-fixtures.ts';

/** The label the built-in Job controller puts on every pod of a Job: the Job's uid. */
export const jobControllerUidLabel = 'batch.kubernetes.io/controller-uid';

export interface SampledMirror {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
  originUid: string;
}

export interface SampledPod {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
  /** The uid of the Job that owns it (a mirror's, or any other Job's on a worker). */
  jobUid: string;
  /** The last phase seen; a pod deleted while running (deadline, suspend) ends Running or Pending. */
  phase: string;
}

/** One sample in which one origin had two or more mirrors not being deleted. */
export interface SampledOverlap {
  /** When the sample began (ms since the epoch). */
  at: number;
  originUid: string;
  /**
   * Each mirror's cluster, placement attempt (jobrelay.dev/placement-attempt), and when that
   * cluster's list answered (ms since the epoch): a frozen apiserver answers when it thaws, so
   * one sample's answers can be seconds apart.
   */
  mirrors: Array<{ cluster: string; attempt: number; seenAt: number }>;
}

/** A pod on a worker as it is now (from the watches): what a quota check counts as running. */
export interface LivePod {
  cluster: string;
  namespace: string;
  name: string;
  /** The uid of the Job that owns it. */
  jobUid: string;
  /** Bound to a node (the sandbox's scheduler placed it; KWOK runs it). */
  bound: boolean;
  phase: string;
  /** It has a deletionTimestamp. */
  terminating: boolean;
  /** Each container's requests, with its limits filling in (as the apiserver defaults them). */
  containerRequests: Array<Record<string, string>>;
  /** Whether the pod spec has what changes its requests beyond the containers' sum. */
  hasInitContainersOrOverhead: boolean;
  /** The mirror Job that owns it, when that mirror is alive in the watch's view. */
  mirror?: { originUid: string; attempt: number; terminating: boolean; finished: boolean };
}

/** A mirror Job alive in the watches' view. */
export interface LiveMirror {
  cluster: string;
  originUid: string;
  attempt: number;
  terminating: boolean;
  /** Complete or Failed on its worker. */
  finished: boolean;
}

export interface FleetSampleReport {
  /** Samples (lists of the mirrors on every worker) in which every worker answered. */
  samples: number;
  /** Samples in which at least one worker's list failed (e.g. its apiserver was stopped). */
  incompleteSamples: number;
  /** Failed lists and watches per worker. */
  failures: Record<string, number>;
  /** The longest time from the start of one complete sample to the end of the next. */
  maxGapMs: number;
  /**
   * Times a watch could not resume where it stopped (410 Gone, or a worker away) and had to list
   * again: a mirror or pod created and deleted in between would be missing. 0: complete history.
   */
  watchGaps: number;
  /**
   * Every sample in which one origin had two or more mirrors that were not being deleted, with
   * the clusters they were on (the "at most one live mirror" invariant, broken).
   */
  overlaps: ReadonlyArray<SampledOverlap>;
  /** The most mirrors of `originUid` alive at once across all workers, in any one sample. */
  maxLiveMirrors(originUid: string, options?: { includeTerminating?: boolean }): number;
  /** Every distinct mirror of `originUid` that existed while the sampler ran (from the watches). */
  mirrorsOf(originUid: string): SampledMirror[];
  /** Every distinct pod of the Job with this uid that existed while the sampler ran. */
  podsOfJob(jobUid: string): SampledPod[];
  /** Every distinct pod of any mirror of `originUid` that existed while the sampler ran. */
  podsOfOrigin(originUid: string): SampledPod[];
}

export interface FleetSampler {
  /** A snapshot of what has been seen so far. */
  report(): FleetSampleReport;
  /**
   * Resolves after a complete sample that began after this call (so it waits while a worker is
   * away), and a list of every worker's pods merged into the record: whatever exists now has
   * been seen.
   */
  settle(): Promise<void>;
  /** Stops sampling and watching, and returns the final report. */
  stop(): Promise<FleetSampleReport>;
  /**
   * The pods in scope that exist now on every worker, as the watches last saw them (a worker
   * whose apiserver is frozen or stopped shows what it had then), with their mirror.
   */
  livePods(): LivePod[];
  /** The mirrors in scope that exist now on every worker, as the watches last saw them. */
  liveMirrors(): LiveMirror[];
}

export interface FleetSamplerOptions {
  /** Pause between the end of one sample and the start of the next. */
  intervalMs?: number;
  /** Only mirrors and pods in these namespaces (default: every namespace). */
  namespaces?: string[];
  /** Samples count KubeRay mirrors (RayClusters and RayJobs) beside the Jobs (default: Jobs only). */
  rayMirrors?: boolean;
}

/** Objects a controller made (a RayJob's RayCluster, its submitter Job) are never mirrors, whatever labels they copied. */
function controllerOwned(object: {
  metadata?: { ownerReferences?: Array<{ controller?: boolean }> };
}): boolean {
  return object.metadata?.ownerReferences?.some((owner) => owner.controller === true) ?? false;
}

type Kind = 'mirrors' | 'pods';
type Listed = { items: Array<V1Job | V1Pod>; metadata?: { resourceVersion?: string } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * On every worker: watches the mirror Jobs (those with the origin-uid label) and the pods of any
 * Job, keeping every one that ever existed; and lists the mirrors every `intervalMs` to record,
 * per origin, the most mirrors alive at once. Resolves once the watches run and a first sample
 * is taken, so whatever is created afterwards is inside the window.
 */
export async function startFleetSampler(
  fleet: Fleet,
  options: FleetSamplerOptions = {},
): Promise<FleetSampler> {
  const intervalMs = options.intervalMs ?? 300;
  const inScope = (namespace: string | undefined) =>
    !options.namespaces || options.namespaces.includes(namespace ?? '');
  const mirrors = new Map<string, SampledMirror>();
  const pods = new Map<string, SampledPod>();
  const maxLive = new Map<string, number>();
  // What exists now, per cluster (by uid), kept by the watches: a list replaces a cluster's set.
  const livePodsOf = new Map<string, Map<string, Omit<LivePod, 'mirror'>>>();
  const liveMirrorsOf = new Map<
    string,
    Map<string, { originUid: string; attempt: number; terminating: boolean; finished: boolean }>
  >();
  const maxLiveNotTerminating = new Map<string, number>();
  const overlaps: SampledOverlap[] = [];
  const clusters = [...fleet.workers.keys()];
  const failures: Record<string, number> = Object.fromEntries(clusters.map((c) => [c, 0]));
  let samples = 0;
  let incompleteSamples = 0;
  let maxGapMs = 0;
  let watchGaps = 0;
  let previousCompleteStart: number | undefined;
  let stopped = false;
  const aborts = new Set<AbortController>();

  function recordMirror(cluster: string, job: V1Job): void {
    const originUid = job.metadata?.labels?.[originUidLabel];
    const uid = job.metadata?.uid;
    if (!originUid || !uid || !inScope(job.metadata?.namespace) || mirrors.has(uid) || controllerOwned(job))
      return;
    mirrors.set(uid, {
      cluster,
      namespace: job.metadata!.namespace!,
      name: job.metadata!.name!,
      uid,
      originUid,
    });
  }

  function recordPod(cluster: string, pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const jobUid = pod.metadata?.labels?.[jobControllerUidLabel];
    if (!uid || !jobUid || !inScope(pod.metadata?.namespace)) return;
    const phase = pod.status?.phase ?? 'Unknown';
    const seen = pods.get(uid);
    if (seen) seen.phase = phase;
    else {
      pods.set(uid, {
        cluster,
        namespace: pod.metadata!.namespace!,
        name: pod.metadata!.name!,
        uid,
        jobUid,
        phase,
      });
    }
  }

  function list(cluster: string, kind: Kind): Promise<Listed> {
    const clients = fleet.workers.get(cluster)!;
    return kind === 'mirrors'
      ? clients.batch.listJobForAllNamespaces({ labelSelector: originUidLabel })
      : clients.core.listPodForAllNamespaces({ labelSelector: jobControllerUidLabel });
  }

  function record(cluster: string, kind: Kind, object: V1Job | V1Pod, deleted = false): void {
    if (kind === 'mirrors') recordMirror(cluster, object as V1Job);
    else recordPod(cluster, object as V1Pod);
    trackLive(cluster, kind, object, deleted);
  }

  function trackLive(cluster: string, kind: Kind, object: V1Job | V1Pod, deleted: boolean): void {
    const uid = object.metadata?.uid;
    if (!uid || !inScope(object.metadata?.namespace)) return;
    if (kind === 'mirrors') {
      const job = object as V1Job;
      const originUid = job.metadata?.labels?.[originUidLabel];
      const here = liveMirrorsOf.get(cluster) ?? new Map();
      liveMirrorsOf.set(cluster, here);
      if (deleted || !originUid || controllerOwned(job)) here.delete(uid);
      else
        here.set(uid, {
          originUid,
          attempt: Number(job.metadata?.annotations?.[placementAttemptAnnotation] ?? 0),
          terminating: job.metadata?.deletionTimestamp !== undefined,
          // Complete or Failed: a Job's terminal condition comes once its pods are gone.
          finished: (job.status?.conditions ?? []).some(
            (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
          ),
        });
      return;
    }
    const pod = object as V1Pod;
    const jobUid = pod.metadata?.labels?.[jobControllerUidLabel];
    const here = livePodsOf.get(cluster) ?? new Map();
    livePodsOf.set(cluster, here);
    if (deleted || !jobUid) {
      here.delete(uid);
      return;
    }
    const spec = pod.spec;
    here.set(uid, {
      cluster,
      namespace: pod.metadata!.namespace!,
      name: pod.metadata!.name!,
      jobUid,
      bound: Boolean(spec?.nodeName),
      phase: pod.status?.phase ?? 'Unknown',
      terminating: pod.metadata?.deletionTimestamp !== undefined,
      containerRequests: (spec?.containers ?? []).map((c) => ({
        ...c.resources?.limits,
        ...c.resources?.requests,
      })),
      hasInitContainersOrOverhead:
        (spec?.initContainers?.length ?? 0) > 0 ||
        spec?.overhead !== undefined ||
        (spec as { resources?: unknown } | undefined)?.resources !== undefined,
    });
  }

  /** List, then watch from the list's resourceVersion, resuming each watch where the last ended. */
  async function watchLoop(cluster: string, kind: Kind, ready: () => void): Promise<void> {
    const watch = new Watch(fleet.workers.get(cluster)!.kubeConfig);
    const path = kind === 'mirrors' ? '/apis/batch/v1/jobs' : '/api/v1/pods';
    const labelSelector = kind === 'mirrors' ? originUidLabel : jobControllerUidLabel;
    let resourceVersion: string | undefined;
    let listed = false;
    while (!stopped) {
      if (resourceVersion === undefined) {
        try {
          const result = await list(cluster, kind);
          // The list is the whole truth: what the watch missed being deleted goes.
          (kind === 'mirrors' ? liveMirrorsOf : livePodsOf).get(cluster)?.clear();
          for (const item of result.items) record(cluster, kind, item);
          resourceVersion = result.metadata?.resourceVersion;
          if (listed) watchGaps++;
          listed = true;
          ready();
        } catch {
          failures[cluster] = (failures[cluster] ?? 0) + 1;
          await sleep(500);
          continue;
        }
      }
      const outcome = await new Promise<'ended' | 'gone' | 'failed'>((resolve) => {
        let gone = false;
        watch
          .watch(
            path,
            { labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 20 },
            (type, object) => {
              if (type === 'ERROR') {
                gone = true;
                return;
              }
              const version = object?.metadata?.resourceVersion;
              if (version) resourceVersion = version;
              if (type !== 'BOOKMARK') record(cluster, kind, object, type === 'DELETED');
            },
            (err) => resolve(gone ? 'gone' : err ? 'failed' : 'ended'),
          )
          .then(
            (abort) => {
              aborts.add(abort);
              if (stopped) abort.abort();
            },
            () => resolve('failed'),
          );
      });
      if (outcome === 'gone') resourceVersion = undefined;
      if (outcome === 'failed' && !stopped) {
        failures[cluster] = (failures[cluster] ?? 0) + 1;
        await sleep(500);
      }
    }
  }

  /** Every mirror on `cluster`: its Jobs, and with `rayMirrors` its RayClusters and RayJobs. */
  async function listSampledMirrors(cluster: string): Promise<{ items: V1Job[] }> {
    const jobs = (await list(cluster, 'mirrors')) as { items: V1Job[] };
    if (!options.rayMirrors) return jobs;
    const custom = fleet.workers.get(cluster)!.kubeConfig.makeApiClient(CustomObjectsApi);
    const ray = await Promise.all(
      (['rayclusters', 'rayjobs'] as const).map(
        async (plural) =>
          (
            (await custom.listClusterCustomObject({
              group: 'ray.io',
              version: 'v1',
              plural,
              labelSelector: originUidLabel,
            })) as { items: V1Job[] }
          ).items,
      ),
    );
    return { items: [...jobs.items, ...ray.flat()] };
  }

  async function sampleOnce(): Promise<void> {
    const began = Date.now();
    const answeredAt = new Map<string, number>();
    const results = await Promise.all(
      clusters.map((cluster) =>
        listSampledMirrors(cluster).then(
          (result) => {
            answeredAt.set(cluster, Date.now());
            return result;
          },
          () => {
            failures[cluster] = (failures[cluster] ?? 0) + 1;
            return undefined;
          },
        ),
      ),
    );
    const live = new Map<string, number>();
    const liveNotTerminating = new Map<string, number>();
    const liveMirrors = new Map<string, SampledOverlap['mirrors']>();
    results.forEach((result, i) => {
      for (const job of result?.items ?? []) {
        const originUid = job.metadata?.labels?.[originUidLabel];
        if (!originUid || !inScope(job.metadata?.namespace) || controllerOwned(job)) continue;
        recordMirror(clusters[i]!, job);
        live.set(originUid, (live.get(originUid) ?? 0) + 1);
        if (!job.metadata?.deletionTimestamp) {
          liveNotTerminating.set(originUid, (liveNotTerminating.get(originUid) ?? 0) + 1);
          const attempt = Number(job.metadata?.annotations?.[placementAttemptAnnotation] ?? 0);
          liveMirrors.set(originUid, [
            ...(liveMirrors.get(originUid) ?? []),
            { cluster: clusters[i]!, attempt, seenAt: answeredAt.get(clusters[i]!)! },
          ]);
        }
      }
    });
    for (const [originUid, on] of liveMirrors) {
      if (on.length > 1) overlaps.push({ at: began, originUid, mirrors: on });
    }
    for (const [originUid, count] of live) {
      maxLive.set(originUid, Math.max(maxLive.get(originUid) ?? 0, count));
    }
    for (const [originUid, count] of liveNotTerminating) {
      maxLiveNotTerminating.set(originUid, Math.max(maxLiveNotTerminating.get(originUid) ?? 0, count));
    }
    if (results.some((r) => r === undefined)) {
      incompleteSamples++;
      return;
    }
    samples++;
    if (previousCompleteStart !== undefined)
      maxGapMs = Math.max(maxGapMs, Date.now() - previousCompleteStart);
    previousCompleteStart = began;
  }

  function report(): FleetSampleReport {
    const mirrorList = [...mirrors.values()].map((m) => ({ ...m }));
    const podList = [...pods.values()].map((p) => ({ ...p }));
    return {
      samples,
      incompleteSamples,
      failures: { ...failures },
      maxGapMs,
      watchGaps,
      overlaps: overlaps.map((o) => ({ ...o, mirrors: o.mirrors.map((m) => ({ ...m })) })),
      maxLiveMirrors: (originUid, { includeTerminating = true } = {}) =>
        (includeTerminating ? maxLive : maxLiveNotTerminating).get(originUid) ?? 0,
      mirrorsOf: (originUid) => mirrorList.filter((m) => m.originUid === originUid),
      podsOfJob: (jobUid) => podList.filter((p) => p.jobUid === jobUid),
      podsOfOrigin: (originUid) => {
        const mirrorUids = new Set(mirrorList.filter((m) => m.originUid === originUid).map((m) => m.uid));
        return podList.filter((p) => mirrorUids.has(p.jobUid));
      },
    };
  }

  // Sample: a loop that runs until stopped; settle() waits for the next complete sample.
  let sampleWaiters: Array<{ after: number; resolve: () => void }> = [];
  const sampling = (async () => {
    while (!stopped) {
      const began = Date.now();
      const before = samples;
      await sampleOnce();
      if (samples > before) {
        const due = sampleWaiters.filter((w) => w.after <= began);
        sampleWaiters = sampleWaiters.filter((w) => w.after > began);
        for (const waiter of due) waiter.resolve();
      }
      await sleep(intervalMs);
    }
  })();

  const watchesListed: Promise<void>[] = [];
  const watching = Promise.all(
    clusters.flatMap((cluster) =>
      (['mirrors', 'pods'] as const).map((kind) => {
        let ready!: () => void;
        watchesListed.push(new Promise<void>((resolve) => (ready = resolve)));
        return watchLoop(cluster, kind, ready);
      }),
    ),
  );

  async function settle(): Promise<void> {
    if (stopped) throw new Error('the fleet sampler is stopped');
    const sampled = new Promise<void>((resolve) => sampleWaiters.push({ after: Date.now(), resolve }));
    await Promise.all(
      clusters.map(async (cluster) => {
        try {
          for (const pod of (await list(cluster, 'pods')).items) record(cluster, 'pods', pod);
        } catch {
          // A worker that is away (a lost-worker test) is counted, not fatal.
          failures[cluster] = (failures[cluster] ?? 0) + 1;
        }
      }),
    );
    await sampled;
  }

  function livePods(): LivePod[] {
    const result: LivePod[] = [];
    for (const [cluster, pods] of livePodsOf) {
      const mirrorsHere = liveMirrorsOf.get(cluster);
      for (const pod of pods.values()) {
        const mirror = mirrorsHere?.get(pod.jobUid);
        result.push({
          ...pod,
          containerRequests: pod.containerRequests,
          ...(mirror ? { mirror: { ...mirror } } : {}),
        });
      }
    }
    return result;
  }

  function liveMirrors(): LiveMirror[] {
    return [...liveMirrorsOf].flatMap(([cluster, here]) =>
      [...here.values()].map((mirror) => ({ cluster, ...mirror })),
    );
  }

  await Promise.all(watchesListed);
  await settle();
  return {
    report,
    settle,
    livePods,
    liveMirrors,
    async stop() {
      stopped = true;
      for (const abort of aborts) abort.abort();
      for (const waiter of sampleWaiters) waiter.resolve();
      await Promise.all([sampling, watching]);
      return report();
    },
  };
}

/**
 * Asserts what "ran once" means for a dispatched Job, from what the sampler saw on the workers:
 * samples were taken and the watches missed nothing; exactly one mirror ever existed (so never
 * two at once), on `cluster`; and exactly `pods` pods ran, all of that mirror. Returns those
 * pods, for the caller to check their phases.
 */
export function expectRanOnce(
  report: FleetSampleReport,
  origin: V1Job,
  expected: { cluster: string; pods: number },
): SampledPod[] {
  const name = `${origin.metadata?.namespace}/${origin.metadata?.name}`;
  const uid = origin.metadata!.uid!;
  expect(report.samples, 'samples taken while the Jobs ran').toBeGreaterThan(0);
  expect(report.watchGaps, 'times a watch of the workers lost its history').toBe(0);
  const mirrors = report.mirrorsOf(uid);
  expect(
    mirrors.map((m) => `${m.cluster}/${m.uid}`),
    `${name}: mirrors that existed on the workers`,
  ).toEqual([expect.stringMatching(new RegExp(`^${expected.cluster}/`))]);
  expect(report.maxLiveMirrors(uid), `${name}: most mirrors alive at once`).toBe(1);
  const pods = report.podsOfOrigin(uid);
  expect(
    pods.map((p) => `${p.cluster}/${p.name}:${p.phase}`),
    `${name}: pods that ran on the workers`,
  ).toHaveLength(expected.pods);
  expect(new Set(pods.map((p) => p.cluster)), `${name}: clusters its pods ran on`).toEqual(
    new Set([expected.cluster]),
  );
  return pods;
}
