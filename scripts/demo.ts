// `npm run demo`: local clusters, Redis and the controller; sample Jobs of several modes and
// KubeRay workloads (a RayCluster, a RayJob) dispatched to the workers with live status; a
// summary; everything left running.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { controllerEnvironment, controllerNodeFlags } from '@jobrelay/controller/node-flags';
import {
  apiCommandLine,
  kuberayManagedBy,
  openSandbox,
  recordSandboxApi,
  registerSandboxWorkers,
  repositoryRoot,
  type Sandbox,
  sandboxRayCluster,
  sandboxRayJob,
  sandboxUp,
  startSandboxApp,
} from '@jobrelay/sandbox';
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  type V1Job,
  type V1JobSpec,
} from '@kubernetes/client-node';

const namespace = 'jobrelay-demo';
/** Two teams' namespaces, each selected by its DispatchQueue (deploy/examples/queues/two-teams.yaml, scaled). */
const teams = { research: 'demo-research', production: 'demo-production' } as const;
const burstSize = 6;
const queueApi = { group: 'jobrelay.dev', version: 'v1alpha1', plural: 'dispatchqueues' };
const healthAddress = '127.0.0.1:8081';
const apiAddress = '127.0.0.1:8090';
const managedBy = 'jobrelay.dev/dispatcher';
const timeoutMs = 180_000;

interface Sample {
  name: string;
  mode: string;
  dispatched: boolean;
  spec: Partial<V1JobSpec>;
  pod?: Record<string, string>;
  /** `Complete/CompletionsReached`, `Failed/BackoffLimitExceeded`, ... */
  expected: string;
}

const samples: Sample[] = [
  {
    name: 'hello',
    mode: 'non-parallel',
    dispatched: true,
    spec: {},
    expected: 'Complete/CompletionsReached',
  },
  {
    name: 'batch-5x2',
    mode: 'completions 5, parallelism 2',
    dispatched: true,
    spec: { completions: 5, parallelism: 2 },
    pod: { 'sandbox.jobrelay.dev/run-seconds': '2' },
    expected: 'Complete/CompletionsReached',
  },
  {
    name: 'work-queue',
    mode: 'work queue, parallelism 3',
    dispatched: true,
    spec: { parallelism: 3 },
    expected: 'Complete/CompletionsReached',
  },
  {
    name: 'indexed-4',
    mode: 'Indexed, completions 4',
    dispatched: true,
    spec: { completions: 4, parallelism: 4, completionMode: 'Indexed' },
    expected: 'Complete/CompletionsReached',
  },
  {
    name: 'flaky',
    mode: 'backoffLimit 1, pods exit 1',
    dispatched: true,
    spec: { backoffLimit: 1 },
    pod: { 'sandbox.jobrelay.dev/exit-code': '1' },
    expected: 'Failed/BackoffLimitExceeded',
  },
  {
    name: 'exit-42',
    mode: 'podFailurePolicy FailJob on exit 42',
    dispatched: true,
    spec: {
      podFailurePolicy: {
        rules: [{ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } }],
      },
    },
    pod: { 'sandbox.jobrelay.dev/exit-code': '42' },
    expected: 'Failed/PodFailurePolicy',
  },
  {
    name: 'per-index',
    mode: 'backoffLimitPerIndex, index 1 fails',
    dispatched: true,
    spec: { completions: 3, parallelism: 3, completionMode: 'Indexed', backoffLimitPerIndex: 0 },
    pod: { 'sandbox.jobrelay.dev/fail-indexes': '1' },
    expected: 'Failed/FailedIndexes',
  },
  {
    name: 'stays-home',
    mode: 'no managedBy: runs on the management cluster',
    dispatched: false,
    spec: {},
    expected: 'Complete/CompletionsReached',
  },
];

/** KubeRay workloads, run by the workers' real ray-operator (RayJobs against the simulated Ray dashboard). */
interface RaySample {
  name: string;
  plural: 'rayclusters' | 'rayjobs';
  mode: string;
  body: KubernetesObject;
  /** RayCluster: `ready`; RayJob: `Complete/SUCCEEDED`. */
  expected: string;
}

const raySamples: RaySample[] = [
  {
    name: 'ray-demo',
    plural: 'rayclusters',
    mode: 'RayCluster, head + 2 workers',
    body: sandboxRayCluster({ name: 'ray-demo', workerReplicas: 2, managedBy: kuberayManagedBy.multiKueue }),
    expected: 'ready',
  },
  {
    name: 'ray-job',
    plural: 'rayjobs',
    mode: 'RayJob, its own RayCluster',
    body: sandboxRayJob({
      name: 'ray-job',
      runSeconds: 4,
      cluster: { workerReplicas: 1 },
      managedBy: kuberayManagedBy.multiKueue,
    }),
    expected: 'Complete/SUCCEEDED',
  },
];

interface RayObject extends KubernetesObject {
  status?: { state?: string; readyWorkerReplicas?: number; jobDeploymentStatus?: string; jobStatus?: string };
}

const ray = (plural: RaySample['plural']) => ({ group: 'ray.io', version: 'v1', namespace, plural });

/** Where a Ray sample stands: a RayCluster's state, a RayJob's deployment and job status. */
function rayOutcome(sample: RaySample, object: RayObject): string | undefined {
  const status = object.status ?? {};
  if (sample.plural === 'rayclusters') return status.state || undefined;
  return status.jobDeploymentStatus ? `${status.jobDeploymentStatus}/${status.jobStatus ?? '-'}` : undefined;
}

function rayFinal(sample: RaySample, object: RayObject): boolean {
  const outcome = rayOutcome(sample, object);
  return sample.plural === 'rayclusters'
    ? outcome === 'ready'
    : outcome?.startsWith('Complete/') === true || outcome?.startsWith('Failed/') === true;
}

async function resetRay(custom: CustomObjectsApi): Promise<void> {
  for (const sample of raySamples) {
    await custom.deleteNamespacedCustomObject({ ...ray(sample.plural), name: sample.name }).catch(() => {});
  }
  for (let i = 0; i < 60; i++) {
    const left = await Promise.all(
      raySamples.map((sample) =>
        custom.getNamespacedCustomObject({ ...ray(sample.plural), name: sample.name }).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (!left.includes(true)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const began = Date.now();
const stamp = () => `[${((Date.now() - began) / 1000).toFixed(1).padStart(5)}s]`;
const say = (line: string) => process.stdout.write(`${line}\n`);

function outcome(job: V1Job): string | undefined {
  const done = job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  return done ? `${done.type}/${done.reason}` : undefined;
}

function placedOn(job: V1Job): string | undefined {
  const raw = job.metadata?.annotations?.['jobrelay.dev/placement'];
  return raw ? (JSON.parse(raw) as { cluster?: string }).cluster : undefined;
}

function progress(job: V1Job): string {
  const s = job.status ?? {};
  const parts = [`active ${s.active ?? 0}`, `succeeded ${s.succeeded ?? 0}`, `failed ${s.failed ?? 0}`];
  if (s.completedIndexes) parts.push(`completedIndexes ${s.completedIndexes}`);
  if (s.failedIndexes) parts.push(`failedIndexes ${s.failedIndexes}`);
  return parts.join(', ');
}

async function resetNamespace(
  core: CoreV1Api,
  batch: BatchV1Api,
  namespace: string,
  labels?: Record<string, string>,
): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name: namespace, ...(labels ? { labels } : {}) } } });
  } catch {
    // Already there from an earlier run: clear its Jobs so the samples start fresh.
    await batch.deleteCollectionNamespacedJob({ namespace, propagationPolicy: 'Background' });
    for (let i = 0; i < 60; i++) {
      if ((await batch.listNamespacedJob({ namespace })).items.length === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  for (let i = 0; i < 60; i++) {
    const accounts = await core.listNamespacedServiceAccount({ namespace });
    if (accounts.items.some((a) => a.metadata?.name === 'default')) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function sampleJob(sample: Sample): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: sample.name, labels: { 'app.kubernetes.io/part-of': 'jobrelay-demo' } },
    spec: {
      ...(sample.dispatched ? { managedBy } : {}),
      ...sample.spec,
      template: {
        metadata: { annotations: { 'sandbox.jobrelay.dev/run-seconds': '3', ...sample.pod } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'example.invalid/demo:1' }] },
      },
    },
  };
}

async function main(): Promise<number> {
  say('jobrelay demo: one management cluster, two workers, Redis, the controller\n');
  const { sandbox: up } = await sandboxUp({ workers: 2, log: (line) => say(`${stamp()} sandbox: ${line}`) });
  const sandbox: Sandbox = openSandbox(up.dir);
  say(
    `${stamp()} clusters ready: ${sandbox.clusters.map((c) => c.name).join(', ')}; Redis at ${sandbox.redisUrl}`,
  );
  await registerSandboxWorkers(sandbox);
  say(
    `${stamp()} registered ${sandbox.workers.map((w) => w.name).join(', ')} as WorkerClusters with deploy/worker's RBAC (jobrelay-dispatcher kubeconfigs, not admin)`,
  );
  const controller = startSandboxApp(
    sandbox.dir,
    'controller',
    [
      ...controllerNodeFlags,
      join(repositoryRoot, 'apps/controller/src/main.ts'),
      // Its ServiceAccount's token, with deploy/controller's RBAC: what an install runs with.
      `--kubeconfig=${sandbox.serviceAccountKubeconfigPath('jobrelay-controller')}`,
      `--redis-url=${sandbox.redisUrl}`,
      '--mirror-retention-seconds=300',
      // A fixed name: a demo rerun after a crash takes the leader Lease back at once.
      '--leader-election-identity=demo',
      `--health-address=${healthAddress}`,
    ],
    { ...process.env, ...controllerEnvironment },
  );
  say(
    `${stamp()} controller ${controller.started ? 'started' : 'already running'} (pid ${controller.pid}, log ${controller.logFile})`,
  );

  await waitUntilReady('controller', controller, () => `http://${healthAddress}`);

  // The admin API, as its own process with its own identity (deploy/api's jobrelay-api RBAC).
  const api = startSandboxApp(sandbox.dir, 'api', apiCommandLine(sandbox, apiAddress));
  const apiUrl = await waitUntilReady(
    'API',
    api,
    // It logs its URL once it listens.
    (log) => /"url":"(http[^"]+)"[^\n]*"msg":"serving the jobrelay API"/.exec(log)?.[1],
  );
  recordSandboxApi(sandbox.dir, apiUrl);
  say(
    `${stamp()} admin API ${api.started ? 'started' : 'already running'} at ${apiUrl} (pid ${api.pid}, log ${api.logFile})`,
  );

  const kc = new KubeConfig();
  kc.loadFromFile(sandbox.kubeconfigPath(sandbox.management.name));
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  await resetNamespace(core, batch, namespace);
  const custom = kc.makeApiClient(CustomObjectsApi);
  await resetRay(custom);
  for (const [team, name] of Object.entries(teams)) await resetNamespace(core, batch, name, { team });
  await applyQueues(custom);
  for (const sample of samples) await batch.createNamespacedJob({ namespace, body: sampleJob(sample) });
  for (const sample of raySamples) {
    await custom.createNamespacedCustomObject({ ...ray(sample.plural), body: sample.body });
  }
  say(
    `${stamp()} submitted ${samples.length} Jobs, a RayCluster and a RayJob to namespace ${namespace} on the management cluster`,
  );
  const story = queueStory(batch, custom);
  say('');

  const seen = new Map<string, string>();
  const final = new Map<string, V1Job>();
  const rayFinals = new Map<string, RayObject>();
  let storyDone = false;
  const storyOutcome = story.finally(() => {
    storyDone = true;
  });
  while (
    (final.size < samples.length || rayFinals.size < raySamples.length || !storyDone) &&
    Date.now() - began < timeoutMs
  ) {
    for (const sample of raySamples) {
      if (rayFinals.has(sample.name)) continue;
      const object = (await custom.getNamespacedCustomObject({
        ...ray(sample.plural),
        name: sample.name,
      })) as RayObject;
      const line = `${placedOn(object as V1Job) ?? 'waiting for placement'}: ${rayOutcome(sample, object) ?? 'starting'}`;
      if (seen.get(sample.name) !== line) {
        say(`${stamp()} ${sample.name.padEnd(11)} ${line}`);
        seen.set(sample.name, line);
      }
      if (rayFinal(sample, object)) rayFinals.set(sample.name, object);
    }
    const jobs = (await batch.listNamespacedJob({ namespace })).items;
    for (const job of jobs) {
      const name = job.metadata!.name!;
      const sample = samples.find((s) => s.name === name);
      if (!sample || final.has(name)) continue;
      const where = sample.dispatched
        ? (placedOn(job) ?? 'waiting for placement')
        : 'management (built-in controller)';
      const line = `${where}: ${progress(job)}${outcome(job) ? ` -> ${outcome(job)}` : ''}`;
      if (seen.get(name) !== line) {
        say(`${stamp()} ${name.padEnd(11)} ${line}`);
        seen.set(name, line);
      }
      if (outcome(job)) final.set(name, job);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }

  const rows = [['WORKLOAD', 'MODE', 'RAN ON', 'FINAL STATUS', 'EXPECTED', '']];
  let failures = 0;
  for (const sample of samples) {
    const job = final.get(sample.name);
    const got = job ? (outcome(job) ?? 'unfinished') : 'unfinished (timed out)';
    const ok = got === sample.expected;
    if (!ok) failures += 1;
    const ranOn = sample.dispatched ? ((job && placedOn(job)) ?? '-') : 'management';
    rows.push([sample.name, sample.mode, ranOn, got, sample.expected, ok ? 'ok' : 'UNEXPECTED']);
  }
  for (const sample of raySamples) {
    const object = rayFinals.get(sample.name);
    const got = object ? (rayOutcome(sample, object) ?? 'unknown') : 'not there (timed out)';
    const ok = got === sample.expected;
    if (!ok) failures += 1;
    rows.push([
      sample.name,
      sample.mode,
      (object && placedOn(object as V1Job)) ?? '-',
      got,
      sample.expected,
      ok ? 'ok' : 'UNEXPECTED',
    ]);
  }
  const queued = storyDone ? await storyOutcome : undefined;
  for (const row of queueRows(queued)) {
    if (row[5] !== 'ok') failures += 1;
    rows.push(row);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  say('');
  for (const row of rows)
    say(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  const workersUsed = new Set(
    samples.filter((s) => s.dispatched).map((s) => final.get(s.name) && placedOn(final.get(s.name)!)),
  );
  say(
    `\n${samples.length + raySamples.length + 2 - failures}/${samples.length + raySamples.length + 2} workloads ended as expected; dispatched Jobs ran on ${[...workersUsed].filter(Boolean).join(' and ')}.`,
  );
  say(`
Everything is still running. Try:

  eval "$(npm run -s sandbox -- env)"
  kubectl get jobs -n ${namespace}                       # origin Jobs, live status, on the management cluster
  kubectl describe job -n ${namespace} batch-5x2         # placement annotation and Events explain the decision
  kubectl --kubeconfig "$JOBRELAY_WORKER_1_KUBECONFIG" get jobs,pods -n ${namespace}   # mirrors and their pods
  kubectl get rayclusters,rayjobs -n ${namespace}       # KubeRay origins: live state from the workers' operators
  kubectl get workerclusters                               # worker health
  kubectl get dispatchqueues                               # the two teams' queues: pending, admitted, cpu used/nominal
  kubectl get jobs -n ${teams.research} -o custom-columns=NAME:.metadata.name,WAITING:.metadata.annotations.jobrelay\\.dev/unschedulable

  curl http://${healthAddress}/metrics                    # the controller's Prometheus metrics

The admin API (${apiUrl}/docs for every route), as the sandbox's fleet-admin:

  export JOBRELAY_TOKEN="$(cat ${join(sandbox.dir, 'tokens', 'fleet-admin')})"
  curl -s -H "Authorization: Bearer $JOBRELAY_TOKEN" ${apiUrl}/api/v1/clusters
  curl -s -H "Authorization: Bearer $JOBRELAY_TOKEN" "${apiUrl}/api/v1/workloads?namespace=${namespace}&phase=finished"
  curl -s -H "Authorization: Bearer $JOBRELAY_TOKEN" ${apiUrl}/api/v1/workloads/job/${namespace}/batch-5x2/logs
  curl -s -H "Authorization: Bearer $JOBRELAY_TOKEN" -X POST ${apiUrl}/api/v1/clusters/worker-2/cordon

  export PATH=$PWD/node_modules/.bin:"$PATH" KUBECONFIG="$JOBRELAY_FLEET_ADMIN_KUBECONFIG"
  kubectl jobrelay clusters                                # the kubectl plugin, as the fleet-admin
  kubectl jobrelay explain batch-5x2 -n ${namespace}

The web dashboard, in a browser; sign in with the fleet-admin's token (the file above):

  ${apiUrl}/dashboard/

  npm run sandbox -- status                                # every process, including the controller
  npm run sandbox -- down                                  # stop everything
`);
  return failures === 0 ? 0 : 1;
}

/**
 * deploy/examples/queues/two-teams.yaml scaled to the demo's fleet (24 cpu, 96Gi over two
 * workers): production is guaranteed three quarters, research a quarter and may borrow 3 cpu.
 */
function demoQueues() {
  const queue = (name: keyof typeof teams, spec: Record<string, unknown>) => ({
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    metadata: { name },
    spec: {
      namespaceSelector: { matchLabels: { team: name } },
      cohort: 'demo',
      queueingStrategy: 'BestEffortFIFO',
      ...spec,
    },
  });
  return [
    queue('research', {
      weight: 1,
      resources: [
        { name: 'cpu', nominalQuota: '6', borrowingLimit: '3' },
        { name: 'memory', nominalQuota: '24Gi' },
      ],
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'Never' },
    }),
    queue('production', {
      weight: 2,
      resources: [
        { name: 'cpu', nominalQuota: '18' },
        { name: 'memory', nominalQuota: '72Gi' },
      ],
      preemption: { withinQueue: 'LowerPriority', reclaimWithinCohort: 'LowerPriority' },
    }),
  ];
}

/** The demo's queues as they are written now (a rerun replaces the previous run's). */
async function applyQueues(custom: CustomObjectsApi): Promise<void> {
  for (const body of demoQueues()) {
    const name = body.metadata.name;
    const existing = (await custom.getClusterCustomObject({ ...queueApi, name }).catch(() => undefined)) as
      | KubernetesObject
      | undefined;
    if (existing)
      await custom.replaceClusterCustomObject({
        ...queueApi,
        name,
        body: {
          ...body,
          metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
        },
      });
    else await custom.createClusterCustomObject({ ...queueApi, body });
  }
}

/** A team's Job: one pod asking `cpu` cores and 1Gi, running `seconds`. */
function teamJob(name: string, cpu: string, seconds: number): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels: { 'app.kubernetes.io/part-of': 'jobrelay-demo' } },
    spec: {
      managedBy,
      template: {
        metadata: { annotations: { 'sandbox.jobrelay.dev/run-seconds': String(seconds) } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'example.invalid/demo:1',
              resources: { requests: { cpu, memory: '1Gi' } },
            },
          ],
        },
      },
    },
  };
}

interface QueueObject extends KubernetesObject {
  spec?: { cohort?: string };
  status?: {
    pendingWorkloads?: number;
    admittedWorkloads?: number;
    columns?: { cpu?: string; memory?: string };
    share?: string;
  };
}

/** `kubectl get dispatchqueues`, as its printer columns show it. */
async function printQueues(custom: CustomObjectsApi): Promise<void> {
  const list = (await custom.listClusterCustomObject({ ...queueApi })) as { items: QueueObject[] };
  const rows = [['NAME', 'PENDING', 'ADMITTED', 'CPU', 'MEMORY', 'SHARE', 'COHORT']];
  for (const q of list.items.filter((q) => (q.metadata?.name ?? '') in teams))
    rows.push([
      q.metadata!.name!,
      String(q.status?.pendingWorkloads ?? 0),
      String(q.status?.admittedWorkloads ?? 0),
      q.status?.columns?.cpu ?? '-',
      q.status?.columns?.memory ?? '-',
      q.status?.share ?? '0',
      q.spec?.cohort ?? '',
    ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) say(`         ${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd());
}

interface QueueStoryOutcome {
  burst: V1Job[];
  urgent: V1Job | undefined;
  /** The research Jobs still waiting when production's Job was placed. */
  heldWhileUrgentPlaced: number;
}

/**
 * Research submits a burst of 6 Jobs of 3 cpu: its queue admits 3 (6 cpu nominal, 3 borrowed)
 * and holds the rest. Production then submits one Job: within its own quota, it is placed at
 * once, ahead of research's older Jobs; research's burst drains as its Jobs finish.
 */
async function queueStory(batch: BatchV1Api, custom: CustomObjectsApi): Promise<QueueStoryOutcome> {
  const research = teams.research;
  const production = teams.production;
  const burstNames = Array.from({ length: burstSize }, (_, i) => `train-${i + 1}`);
  for (const name of burstNames)
    await batch.createNamespacedJob({ namespace: research, body: teamJob(name, '3', 6) });
  say(
    `${stamp()} queues  team research submits a burst of ${burstSize} Jobs of 3 cpu to ${research}: queue research (6 cpu, borrows up to 3 from cohort demo)`,
  );
  const jobsOf = async (ns: string) => (await batch.listNamespacedJob({ namespace: ns })).items;
  const deadline = began + timeoutMs;
  let burst = await jobsOf(research);
  // Three placed (6 cpu nominal + 3 borrowed), and the others showing why they wait.
  const reasonOf = (job: V1Job | undefined) => job?.metadata?.annotations?.['jobrelay.dev/unschedulable'];
  while (
    (burst.filter((j) => placedOn(j)).length < 3 || !reasonOf(burst.find((j) => !placedOn(j)))) &&
    Date.now() < deadline
  ) {
    await new Promise((r) => setTimeout(r, 500));
    burst = await jobsOf(research);
  }
  const held = burst.filter((j) => !placedOn(j));
  const reason = reasonOf(held[0]);
  say(
    `${stamp()} queues  research: ${burst.length - held.length} placed, ${held.length} held by the queue${reason ? ` ("${reason}")` : ''}`,
  );
  await batch.createNamespacedJob({ namespace: production, body: teamJob('report', '3', 4) });
  say(`${stamp()} queues  team production submits report (3 cpu) to ${production}, after research's burst`);
  let urgent: V1Job | undefined;
  while (Date.now() < deadline) {
    urgent = (await jobsOf(production))[0];
    if (urgent && placedOn(urgent)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  burst = await jobsOf(research);
  const heldWhileUrgentPlaced = burst.filter((j) => !placedOn(j)).length;
  say(
    `${stamp()} queues  report placed on ${urgent ? placedOn(urgent) : '-'} within production's own quota, ahead of ${heldWhileUrgentPlaced} older research Jobs still held:`,
  );
  // A queue's status is written at most every 2 s: read it once it shows production's admission.
  for (let i = 0; i < 12; i++) {
    const q = (await custom.getClusterCustomObject({ ...queueApi, name: 'production' })) as QueueObject;
    if ((q.status?.admittedWorkloads ?? 0) > 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await printQueues(custom);
  const finished = (jobs: V1Job[]) => jobs.filter((j) => outcome(j)).length;
  let announced = false;
  while (Date.now() < deadline) {
    burst = await jobsOf(research);
    urgent = (await jobsOf(production))[0];
    if (!announced && burst.every((j) => placedOn(j))) {
      say(`${stamp()} queues  research: the rest of its burst placed as its first Jobs finished`);
      announced = true;
    }
    if (finished(burst) === burstSize && urgent && outcome(urgent)) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // The statuses catch up within a few seconds (written at most every 2 s).
  for (let i = 0; i < 24; i++) {
    const list = (await custom.listClusterCustomObject({ ...queueApi })) as { items: QueueObject[] };
    const ours = list.items.filter((q) => (q.metadata?.name ?? '') in teams);
    if (
      ours.every((q) => (q.status?.admittedWorkloads ?? 0) === 0 && (q.status?.pendingWorkloads ?? 0) === 0)
    )
      break;
    await new Promise((r) => setTimeout(r, 250));
  }
  say(`${stamp()} queues  both teams done:`);
  await printQueues(custom);
  return { burst, urgent, heldWhileUrgentPlaced };
}

/** The summary's rows for the two teams' Jobs. */
function queueRows(story: QueueStoryOutcome | undefined): string[][] {
  const complete = (job: V1Job | undefined) => (job && outcome(job)) === 'Complete/CompletionsReached';
  const burstDone = story?.burst.filter(complete).length ?? 0;
  const burstOk = burstDone === burstSize && (story?.heldWhileUrgentPlaced ?? 0) > 0;
  const urgentOk = complete(story?.urgent);
  const clusters = [...new Set(story?.burst.map((j) => placedOn(j)).filter(Boolean))].sort().join(',');
  return [
    [
      'train-1..6',
      `research's burst, held by its queue`,
      clusters || '-',
      `${burstDone}/${burstSize} Complete`,
      `${burstSize}/${burstSize} Complete`,
      burstOk ? 'ok' : 'UNEXPECTED',
    ],
    [
      'report',
      `production's Job, placed ahead of it`,
      (story?.urgent && placedOn(story.urgent)) ?? '-',
      story?.urgent ? (outcome(story.urgent) ?? 'unfinished') : 'not there (timed out)',
      'Complete/CompletionsReached',
      urgentOk && (story?.heldWhileUrgentPlaced ?? 0) > 0 ? 'ok' : 'UNEXPECTED',
    ],
  ];
}

/**
 * Waits until one of the sandbox's apps answers /readyz (caches synced) at the base URL
 * `baseUrl` finds (undefined while it is not known yet); if the process dies instead, shows why.
 */
async function waitUntilReady(
  what: string,
  app: { pid: number; logFile: string },
  baseUrl: (log: string) => string | undefined,
): Promise<string> {
  for (let i = 0; i < 120; i++) {
    try {
      process.kill(app.pid, 0);
    } catch {
      const tail = readFileSync(app.logFile, 'utf8').trimEnd().split('\n').slice(-5).join('\n');
      throw new Error(`the ${what} exited; last lines of ${app.logFile}:\n${tail}`);
    }
    const url = baseUrl(existsSync(app.logFile) ? readFileSync(app.logFile, 'utf8') : '');
    const ready =
      url !== undefined &&
      (await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ));
    if (ready) return url;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the ${what} was not ready after 60s; see ${app.logFile}`);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
