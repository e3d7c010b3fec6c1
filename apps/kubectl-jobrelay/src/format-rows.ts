import type { Cluster, PendingWorkload, WorkloadQueue, WorkloadSummary } from '@jobrelay/api-types';
import { formatAge, formatDuration } from './format-age.ts';
import { none, orNone } from './format-table.ts';

export const clusterHeaders = [
  'NAME',
  'ACTIVE',
  'REASON',
  'VERSION',
  'CORDONED',
  'WORKLOADS',
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
    // Drain implies cordon; saying which one tells an admin whether workloads are moving away.
    cluster.draining ? 'Draining' : cluster.cordoned ? 'True' : 'False',
    orNone(cluster.workloadsPlaced),
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

export const pendingHeaders = [
  'POSITION',
  'KIND',
  'NAMESPACE',
  'NAME',
  'QUEUE',
  'WAITING',
  'REASON',
] as const;

/** A workload's DispatchQueue and its place there: `research 3/17`, `research`, or <none>. */
export function queueCell(queue: WorkloadQueue | null | undefined): string {
  if (!queue) return none;
  return queue.position !== null && queue.of !== null
    ? `${queue.name} ${queue.position}/${queue.of}`
    : queue.name;
}

export function pendingRow(item: PendingWorkload, now: Date): string[] {
  const waiting =
    typeof item.waitingSeconds === 'number'
      ? formatDuration(item.waitingSeconds * 1000)
      : formatAge(item.waitingSince, now);
  return [
    String(item.position),
    item.kind,
    item.namespace,
    item.name,
    queueCell(item.queue),
    waiting,
    orNone(item.reason),
  ];
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
