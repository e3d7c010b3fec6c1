// `kubectl jobrelay queues [NAME]`: the DispatchQueues as the API shows them (spec summary and the
// controller's status), and one queue with its pending workloads in order and why each waits.
import type {
  DispatchQueue,
  DispatchQueueDetail,
  DispatchQueueList,
  QueuedWorkload,
} from '@jobrelay/api-types';
import { formatAge } from './format-age.ts';
import { formatTable, none, orNone } from './format-table.ts';
import type { PluginSession } from './plugin-session.ts';

export const queueHeaders = [
  'NAME',
  'COHORT',
  'PENDING',
  'ADMITTED',
  'CPU',
  'MEMORY',
  'GPU',
  'BORROWED',
  'SHARE',
] as const;

/** `resource=amount,...` of a map, or <none> when empty. */
function amounts(values: Record<string, string> | undefined): string {
  const entries = Object.entries(values ?? {});
  return entries.length ? entries.map(([name, amount]) => `${name}=${amount}`).join(',') : none;
}

/**
 * One queue's row. CPU, MEMORY and GPU are `used/nominal` as the controller writes them in its
 * status columns; before its first status the quota alone is known, shown as `?/nominal`.
 */
export function queueRow(queue: DispatchQueue): string[] {
  const status = queue.status;
  const quota = (names: readonly string[]) => {
    const resource = queue.resources.find(
      (r) => names.includes(r.name) || names.some((n) => r.name.endsWith(n)),
    );
    return resource ? `?/${resource.nominal}` : '-';
  };
  return [
    queue.name,
    orNone(queue.cohort),
    status ? String(status.pendingWorkloads) : '<unknown>',
    status ? String(status.admittedWorkloads) : '<unknown>',
    status ? status.columns.cpu : quota(['cpu']),
    status ? status.columns.memory : quota(['memory']),
    status ? status.columns.gpu : quota(['/gpu']),
    status ? amounts(status.borrowed) : '<unknown>',
    status ? status.share : '<unknown>',
  ];
}

function pendingRows(items: readonly QueuedWorkload[], now: Date): string[][] {
  return items.map((item) => [
    String(item.position ?? none),
    item.kind,
    item.namespace,
    item.name,
    formatAge(item.waitingSince, now),
    orNone(item.reason),
  ]);
}

function admittedRows(items: readonly QueuedWorkload[], now: Date): string[][] {
  return items.map((item) => [
    item.kind,
    item.namespace,
    item.name,
    orNone(item.cluster),
    String(item.pods),
    formatAge(item.admittedAt, now),
  ]);
}

function indented(table: string): string {
  return table
    .split('\n')
    .map((line) => (line ? `  ${line}` : line))
    .join('\n');
}

/** A `kubectl describe`-like page for one queue: its quota and usage, then its workloads. */
export function formatQueueDetail(queue: DispatchQueueDetail, now: Date): string {
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`${`${label}:`.padEnd(13)}${value}`);
  field('Queue', queue.name);
  if (!queue.valid) field('Invalid', queue.problems.join('; '));
  field(
    'Cohort',
    queue.cohort ? `${queue.cohort} (weight ${queue.weight ?? 1})` : `${none} (weight ${queue.weight ?? 1})`,
  );
  if (queue.queueingStrategy) field('Strategy', queue.queueingStrategy);
  if (queue.preemption)
    field(
      'Preemption',
      `within queue ${queue.preemption.withinQueue}, reclaim within cohort ${queue.preemption.reclaimWithinCohort}`,
    );
  field(
    'Namespaces',
    queue.namespaceSelector
      ? JSON.stringify(queue.namespaceSelector)
      : `${none} (workloads naming it by label only)`,
  );
  const active = queue.status?.conditions.find((c) => c.type === 'Active');
  field(
    'Active',
    active
      ? `${active.status} (${active.reason}${active.message ? `: ${active.message}` : ''})`
      : '<unknown>',
  );
  field('Share', queue.status?.share ?? '<unknown>');
  field('Age', formatAge(queue.createdAt, now));
  if (queue.resources.length > 0) {
    lines.push('Quota:');
    lines.push(
      indented(
        formatTable(
          ['RESOURCE', 'USED', 'NOMINAL', 'BORROWED', 'BORROWING-LIMIT', 'LENDING-LIMIT'],
          queue.resources.map((r) => [
            r.name,
            r.used ?? '<unknown>',
            r.nominal,
            orNone(r.borrowed),
            orNone(r.borrowingLimit),
            orNone(r.lendingLimit),
          ]),
        ),
      ).trimEnd(),
    );
  }
  const hidden = (count: number) => (count > 0 ? `; ${count} more you may not list` : '');
  lines.push(`Pending (${queue.pending.length} in queue order${hidden(queue.hidden.pending)}):`);
  if (queue.pending.length > 0)
    lines.push(
      indented(
        formatTable(
          ['POSITION', 'KIND', 'NAMESPACE', 'NAME', 'WAITING', 'REASON'],
          pendingRows(queue.pending, now),
        ),
      ).trimEnd(),
    );
  lines.push(`Admitted (${queue.admitted.length}${hidden(queue.hidden.admitted)}):`);
  if (queue.admitted.length > 0)
    lines.push(
      indented(
        formatTable(
          ['KIND', 'NAMESPACE', 'NAME', 'CLUSTER', 'PODS', 'ADMITTED'],
          admittedRows(queue.admitted, now),
        ),
      ).trimEnd(),
    );
  return `${lines.join('\n')}\n`;
}

export async function queuesCommand(s: PluginSession): Promise<void> {
  const api = await s.api();
  const [name] = s.args;
  if (name) {
    const queue = await api.json<DispatchQueueDetail>('GET', `/api/v1/queues/${encodeURIComponent(name)}`);
    if (s.output !== 'table') s.printObject(queue);
    else s.out(formatQueueDetail(queue, s.now()));
    return;
  }
  const { items } = await api.json<DispatchQueueList>('GET', '/api/v1/queues');
  if (s.output !== 'table') s.printObject({ items });
  else s.table(queueHeaders, items.map(queueRow), 'No DispatchQueues.');
}
