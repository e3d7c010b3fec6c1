import type { Cluster, JobSummary, PendingItem, WorkloadSummary } from './api-types.ts';
import { formatAge, formatDuration } from './format-age.ts';
import { none, orNone } from './format-table.ts';

export const clusterHeaders = [
  'NAME',
  'ACTIVE',
  'REASON',
  'VERSION',
  'CORDONED',
  'JOBS',
  'FREE-CPU',
  'FREE-MEMORY',
  'PLACEMENTS/MIN',
  'AGE',
] as const;

export function clusterRow(cluster: Cluster, now: Date): string[] {
  const free = cluster.capacity?.free;
  return [
    cluster.name,
    cluster.active ? 'True' : 'False',
    orNone(cluster.reason),
    orNone(cluster.kubernetesVersion),
    // Drain implies cordon; saying which one tells an admin whether Jobs are moving away.
    cluster.draining ? 'Draining' : cluster.cordoned ? 'True' : 'False',
    orNone(cluster.jobsPlaced),
    free ? formatCpu(free.cpu) : '<unknown>',
    free ? formatMemory(free.memory) : '<unknown>',
    formatRate(cluster.placementsPerMinute),
    formatAge(cluster.createdAt, now),
  ];
}

/** CPU as Kubernetes writes it ("3500m", "4") or as a number of cores. */
export function formatCpu(value: string | number | undefined): string {
  if (value === undefined) return '<unknown>';
  if (typeof value === 'string') return value;
  return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
}

const binaryUnits = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi'];

/** Memory as a quantity string, or bytes shown in the largest binary unit that keeps it >= 1. */
export function formatMemory(value: string | number | undefined): string {
  if (value === undefined) return '<unknown>';
  if (typeof value === 'string') return value;
  let amount = value;
  let unit = '';
  for (const next of binaryUnits) {
    if (amount < 1024) break;
    amount /= 1024;
    unit = next;
  }
  return `${Number.isInteger(amount) ? amount : amount.toFixed(1)}${unit}`;
}

function formatRate(value: number | undefined): string {
  if (value === undefined) return none;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

export function jobHeaders(allNamespaces: boolean): string[] {
  return [
    ...(allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'PHASE',
    'CLUSTER',
    'ATTEMPT',
    'COMPLETIONS',
    'ACTIVE',
    'FAILED',
    'AGE',
    'REASON',
  ];
}

export function jobRow(job: JobSummary, allNamespaces: boolean, now: Date): string[] {
  return [
    ...(allNamespaces ? [job.namespace] : []),
    job.name,
    job.phase,
    orNone(job.cluster),
    orNone(job.attempt),
    formatCompletions(job),
    String(job.active ?? 0),
    String(job.failed ?? 0),
    formatAge(job.createdAt, now),
    orNone(job.reason),
  ];
}

export const pendingHeaders = ['POSITION', 'KIND', 'NAMESPACE', 'NAME', 'WAITING', 'REASON'] as const;

export function pendingRow(item: PendingItem, now: Date): string[] {
  const waiting =
    typeof item.waitingSeconds === 'number'
      ? formatDuration(item.waitingSeconds * 1000)
      : formatAge(item.waitingSince, now);
  // An API older than kinds queued Jobs only.
  return [String(item.position), item.kind ?? 'job', item.namespace, item.name, waiting, orNone(item.reason)];
}

export function workloadHeaders(allNamespaces: boolean): string[] {
  return [
    ...(allNamespaces ? ['NAMESPACE'] : []),
    'KIND',
    'NAME',
    'PHASE',
    'CLUSTER',
    'ATTEMPT',
    'PODS',
    'AGE',
    'REASON',
  ];
}

export function workloadRow(workload: WorkloadSummary, allNamespaces: boolean, now: Date): string[] {
  return [
    ...(allNamespaces ? [workload.namespace] : []),
    workload.kind,
    workload.name,
    workload.phase,
    orNone(workload.cluster),
    orNone(workload.attempt),
    orNone(workload.pods),
    formatAge(workload.createdAt, now),
    orNone(workload.reason),
  ];
}

/** kubectl's COMPLETIONS: a work queue (no completions) reads "0/1 of 3" with its parallelism. */
export function formatCompletions(
  job: Pick<JobSummary, 'succeeded' | 'completions' | 'parallelism'>,
): string {
  const succeeded = job.succeeded ?? 0;
  if (job.completions !== null && job.completions !== undefined) return `${succeeded}/${job.completions}`;
  const parallelism = job.parallelism ?? 1;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}
