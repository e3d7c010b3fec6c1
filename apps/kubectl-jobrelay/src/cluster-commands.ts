import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Drain, RegisterDryRun } from '@jobrelay/api-types';
import { stringify } from 'yaml';
import { durationFlag, integerFlag, labelFlags } from './command-line.ts';
import { problemIs } from './describe-api-error.ts';
import { formatDuration } from './format-age.ts';
import { clusterHeaders, clusterRow } from './format-rows.ts';
import { extractContextKubeconfig, loadKubeconfig } from './kubeconfig-files.ts';
import { ApiError, OperationError, UsageError } from './plugin-errors.ts';
import type { PluginSession } from './plugin-session.ts';

const defaultPageSize = 500;

function clusterPath(name: string, suffix = ''): string {
  return `/api/v1/clusters/${encodeURIComponent(name)}${suffix}`;
}

export async function clustersCommand(s: PluginSession): Promise<void> {
  const api = await s.api();
  const [name] = s.args;
  if (name) {
    const cluster = await api.json<Cluster>('GET', clusterPath(name));
    if (s.output !== 'table') s.printObject(cluster);
    else s.table(clusterHeaders, [clusterRow(cluster, s.now())], '');
    return;
  }
  const limit = integerFlag('clusters', 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const { items } = await api.listAll<Cluster>(
    '/api/v1/clusters',
    { labelSelector: s.string('selector') },
    limit,
  );
  // Pages are merged into one list, as kubectl does with chunked lists.
  if (s.output !== 'table') s.printObject({ items });
  else
    s.table(
      clusterHeaders,
      items.map((c) => clusterRow(c, s.now())),
      'No clusters registered.',
    );
}

export async function registerCommand(s: PluginSession): Promise<void> {
  const name = s.args[0]!;
  const fromContext = s.string('from-context');
  if (!fromContext) throw new UsageError('register needs --from-context CTX', 'register');
  const body: Record<string, unknown> = { name };
  const labels = labelFlags('register', s.list('label'));
  if (Object.keys(labels).length > 0) body.labels = labels;
  const weight = integerFlag('register', 'weight', s.string('weight'), 0, 100);
  if (weight !== undefined) body.weight = weight;
  const maxActiveWorkloads = integerFlag(
    'register',
    'max-active-workloads',
    s.string('max-active-workloads'),
    0,
  );
  if (maxActiveWorkloads !== undefined) body.maxActiveWorkloads = maxActiveWorkloads;
  const namespaces = s.list('allowed-namespace');
  if (namespaces.length > 0) body.allowedNamespaces = namespaces;

  const file = s.string('kubeconfig-file');
  const source = file ? loadKubeconfig([file], true) : s.kubeconfig();
  body.kubeconfig = stringify(extractContextKubeconfig(source, fromContext));

  const api = await s.api();
  const dryRun = s.flag('dry-run');
  let answer: Cluster | RegisterDryRun;
  try {
    answer = await api.json<Cluster | RegisterDryRun>('POST', '/api/v1/clusters', {
      query: { dryRun: dryRun ? 'true' : undefined },
      body,
    });
  } catch (err) {
    if (err instanceof ApiError && problemIs(err.problem, 'kubeconfig-refused')) {
      // The API vetted the kubeconfig built from the context; say which context it came from.
      throw new ApiError(err.status, '', {
        ...err.problem,
        detail: `the kubeconfig of context "${fromContext}" was refused: ${err.problem?.detail ?? err.message}`,
      });
    }
    throw err;
  }
  if (s.output !== 'table') {
    s.printObject(answer);
    return;
  }
  if (dryRun) {
    const probe = (answer as RegisterDryRun).probe;
    s.out(
      `workercluster/${name} would be registered (dry run): reached ${probe?.server ?? 'the server'}` +
        `${probe?.kubernetesVersion ? `, Kubernetes ${probe.kubernetesVersion}` : ''}\n`,
    );
  } else {
    const cluster = answer as Cluster;
    s.out(
      `workercluster/${name} registered${cluster.active === false && cluster.reason ? ` (not active yet: ${cluster.reason})` : ''}\n`,
    );
  }
}

export async function cordonCommand(s: PluginSession, verb: 'cordon' | 'uncordon'): Promise<void> {
  const name = s.args[0]!;
  const api = await s.api();
  const cluster = await api.json<Cluster>('POST', clusterPath(name, `/${verb}`));
  if (s.output !== 'table') s.printObject(cluster);
  else s.out(`workercluster/${name} ${verb}ed\n`);
}

export async function drainCommand(s: PluginSession): Promise<void> {
  const name = s.args[0]!;
  const timeoutMs = durationFlag('drain', 'timeout', s.string('timeout') ?? '10m');
  const api = await s.api();
  let drain = await api.json<Drain>('POST', clusterPath(name, '/drain'));
  if (s.output !== 'table' && !s.flag('wait')) {
    s.printObject(drain);
    return;
  }
  if (s.output === 'table') s.out(`workercluster/${name} draining: ${remainingText(drain.remaining)}\n`);
  if (!s.flag('wait')) return;
  const started = s.now().getTime();
  const interval = s.io.drainPollIntervalMs ?? 2000;
  let reported = drain.remaining;
  while (drain.remaining > 0) {
    if (timeoutMs > 0 && s.now().getTime() - started >= timeoutMs) {
      throw new OperationError(
        `timed out after ${formatDuration(timeoutMs)} waiting for workercluster/${name} to drain: ${remainingText(drain.remaining)}`,
      );
    }
    await sleep(interval);
    drain = await api.json<Drain>('GET', clusterPath(name, '/drain'));
    if (s.output === 'table' && drain.remaining !== reported) {
      s.out(`workercluster/${name}: ${remainingText(drain.remaining)}\n`);
      reported = drain.remaining;
    }
  }
  if (s.output !== 'table') s.printObject(drain);
  else s.out(`workercluster/${name} drained\n`);
}

function remainingText(remaining: number): string {
  // Workloads of every kind move off a draining cluster (Jobs, RayClusters, RayJobs ...).
  return `${remaining} ${remaining === 1 ? 'workload remains' : 'workloads remain'}`;
}

export async function deregisterCommand(s: PluginSession): Promise<void> {
  const name = s.args[0]!;
  const api = await s.api();
  let answer: { deleted: string; secretDeleted?: boolean };
  try {
    answer = await api.json('DELETE', clusterPath(name), {
      query: { force: s.flag('force') ? 'true' : undefined },
    });
  } catch (err) {
    if (
      err instanceof ApiError &&
      problemIs(err.problem, 'cluster-has-workloads') &&
      !s.flag('force') &&
      err.problem
    ) {
      throw new ApiError(err.status, '', {
        ...err.problem,
        errors: [
          ...(err.problem.errors ?? []),
          { message: `drain it first ('kubectl jobrelay drain ${name} --wait') or pass --force` },
        ],
      });
    }
    throw err;
  }
  if (s.output !== 'table') s.printObject(answer);
  else
    s.out(
      `workercluster/${name} deregistered${answer?.secretDeleted ? ' (its kubeconfig Secret deleted)' : ''}\n`,
    );
}
