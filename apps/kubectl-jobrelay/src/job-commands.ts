import { stringify } from 'yaml';
import type {
  JobDetail,
  JobEvent,
  JobSummary,
  PendingItem,
  PendingPage,
  PlacementPreview,
  WorkloadDetail,
  WorkloadSummary,
} from './api-types.ts';
import { integerFlag, type WorkloadRef, workloadRef } from './command-line.ts';
import { describeApiError } from './describe-api-error.ts';
import { formatAge } from './format-age.ts';
import {
  formatCompletions,
  jobHeaders,
  jobRow,
  pendingHeaders,
  pendingRow,
  workloadHeaders,
  workloadRow,
} from './format-rows.ts';
import { formatTable, none, orNone } from './format-table.ts';
import { ApiError, UsageError } from './plugin-errors.ts';
import type { PluginSession } from './plugin-session.ts';

const defaultPageSize = 500;
/** The `source` of a history entry the API read from the placement record, not from an Event. */
const placementRecordSource = 'placement-record';
const phases = ['pending', 'running', 'succeeded', 'failed', 'suspended'];
/** The phases of every kind (GET /api/v1/workloads). */
const workloadPhases = ['pending', 'placed', 'running', 'finished', 'suspended'];
/** The kind whose workloads the Job routes serve, in their own shape. */
const jobKind = 'job';

function jobPath(namespace: string, name: string, suffix = ''): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/jobs/${encodeURIComponent(name)}${suffix}`;
}

function workloadPath(ref: WorkloadRef, suffix = ''): string {
  return `/api/v1/workloads/${encodeURIComponent(ref.kind)}/${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}${suffix}`;
}

/** The workload the command's argument, --kind and -n name. */
function refOf(s: PluginSession): WorkloadRef {
  return workloadRef(
    s.command.name,
    s.args[0]!,
    { kind: s.string('kind'), namespace: s.string('namespace') },
    () => s.namespace(),
  );
}

/** What differs between listing Jobs and listing workloads of every kind. */
interface ListCommand<T> {
  command: 'jobs' | 'workloads';
  path: string;
  phases: readonly string[];
  /** Query parameters beyond namespace, cluster, phase and label selector. */
  extraQuery: Record<string, string | undefined>;
  headers: (all: boolean) => string[];
  row: (item: T, all: boolean, now: Date) => string[];
  /** "Jobs" or "workloads", for the empty-list message. */
  noun: string;
}

/** `kubectl jobrelay jobs` and `workloads`: the same flags, pages and table over two routes. */
async function listCommand<T>(s: PluginSession, list: ListCommand<T>): Promise<void> {
  const all = s.flag('all-namespaces');
  if (all && s.string('namespace')) throw new UsageError('-n and -A exclude each other', list.command);
  const phase = s.string('phase');
  if (phase !== undefined && !list.phases.includes(phase)) {
    throw new UsageError(`--phase must be one of ${list.phases.join(', ')}, not "${phase}"`, list.command);
  }
  const limit = integerFlag(list.command, 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const namespace = all ? undefined : s.namespace();
  const api = await s.api();
  const { items } = await api.listAll<T>(
    list.path,
    {
      namespace,
      ...list.extraQuery,
      cluster: s.string('cluster'),
      phase,
      labelSelector: s.string('selector'),
    },
    limit,
  );
  if (s.output !== 'table') {
    s.printObject({ items });
    return;
  }
  const now = s.now();
  s.table(
    list.headers(all),
    items.map((item) => list.row(item, all, now)),
    all ? `No dispatched ${list.noun} found.` : `No dispatched ${list.noun} found in ${namespace} namespace.`,
  );
}

export function workloadsCommand(s: PluginSession): Promise<void> {
  return listCommand<WorkloadSummary>(s, {
    command: 'workloads',
    path: '/api/v1/workloads',
    phases: workloadPhases,
    extraQuery: { kind: s.string('kind')?.toLowerCase() },
    headers: workloadHeaders,
    row: workloadRow,
    noun: 'workloads',
  });
}

export function jobsCommand(s: PluginSession): Promise<void> {
  return listCommand<JobSummary>(s, {
    command: 'jobs',
    path: '/api/v1/jobs',
    phases,
    extraQuery: {},
    headers: jobHeaders,
    row: jobRow,
    noun: 'Jobs',
  });
}

export async function pendingCommand(s: PluginSession): Promise<void> {
  const limit = integerFlag('pending', 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const api = await s.api();
  const { items, last } = await api.listAll<PendingItem, PendingPage>(
    '/api/v1/pending',
    { namespace: s.string('namespace'), kind: s.string('kind')?.toLowerCase() },
    limit,
  );
  if (s.output !== 'table') {
    s.printObject({ items, ...(last.total !== undefined ? { total: last.total } : {}) });
    return;
  }
  const now = s.now();
  s.table(
    pendingHeaders,
    items.map((i) => pendingRow(i, now)),
    'No workloads are waiting for a cluster.',
  );
}

/** Is the workload still waiting for a cluster (so a placement preview explains why)? */
export function isWaiting(job: Pick<JobDetail, 'waiting' | 'cluster' | 'phase'>): boolean {
  return job.waiting !== null && job.waiting !== undefined
    ? true
    : job.cluster === null && job.phase === 'pending';
}

export async function explainCommand(s: PluginSession): Promise<void> {
  const ref = refOf(s);
  const { namespace, name } = ref;
  const api = await s.api();
  // Jobs keep their own route and page (completions, counts); every other kind the generic one.
  const isJob = ref.kind === jobKind;
  const detail = isJob
    ? await api.json<JobDetail>('GET', jobPath(namespace, name))
    : await api.json<WorkloadDetail>('GET', workloadPath(ref));
  let preview: PlacementPreview | null = null;
  let previewError: ApiError | undefined;
  if (isWaiting(detail)) {
    try {
      preview = await api.json<PlacementPreview>('POST', '/api/v1/placement-preview', {
        body: isJob ? { namespace, name } : { kind: ref.kind, namespace, name },
      });
    } catch (err) {
      // The workload's own record is still worth showing; the preview's failure is reported beside it.
      if (!(err instanceof ApiError)) throw err;
      previewError = err;
    }
  }
  if (s.output !== 'table')
    s.printObject(
      isJob ? { job: detail, placementPreview: preview } : { workload: detail, placementPreview: preview },
    );
  else if (isJob) s.out(formatExplanation(detail as JobDetail, preview, s.now()));
  else s.out(formatWorkloadExplanation(detail as WorkloadDetail, preview, s.now()));
  if (previewError) {
    s.err(
      `warning: no placement preview: ${describeApiError(previewError)
        .join('\n')
        .replace(/^error: /, '')}\n`,
    );
  }
}

function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((line) => (line ? `${by}${line}` : line))
    .join('\n');
}

/** A `kubectl describe`-like page: where the Job runs and why, or why it waits. */
export function formatExplanation(job: JobDetail, preview: PlacementPreview | null, now: Date): string {
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`${`${label}:`.padEnd(13)}${value}`);
  field('Job', `${job.namespace}/${job.name}`);
  field('Phase', job.phase);
  field('Cluster', clusterField(job, now));
  field('Completions', `${formatCompletions(job)} (active ${job.active ?? 0}, failed ${job.failed ?? 0})`);
  if (job.reason && job.reason !== job.waiting?.reason) field('Reason', job.reason);
  field('Age', formatAge(job.createdAt, now));
  if (job.waiting) {
    field('Waiting', `${job.waiting.reason} (for ${formatAge(job.waiting.since ?? job.waitingSince, now)})`);
  }
  lines.push(...placementLines(job.placement));
  if (job.mirror) {
    const status = job.mirror.status ?? {};
    const counts = ['active', 'succeeded', 'failed']
      .filter((k) => typeof status[k] === 'number')
      .map((k) => `${k} ${status[k]}`);
    field(
      'Mirror',
      `on ${job.mirror.cluster}, uid ${job.mirror.uid ?? none}${counts.length ? `; ${counts.join(', ')}` : ''}`,
    );
  } else {
    field('Mirror', job.mirrorUnavailable ? `${none} (${job.mirrorUnavailable})` : none);
  }
  const attempts = job.attempts ?? [];
  if (attempts.length > 0) {
    lines.push('Attempts:');
    lines.push(
      indent(
        formatTable(
          ['ATTEMPT', 'CLUSTER', 'AGE', 'REASON', 'MESSAGE'],
          attempts.map((a) => [
            String(a.attempt),
            a.cluster,
            formatAge(a.at, now),
            orNone(a.reason),
            orNone(a.message),
          ]),
        ).trimEnd(),
      ),
    );
  }
  lines.push(...closingLines(job, preview, now));
  return `${lines.join('\n')}\n`;
}

/** Fields that say where a workload is (state, phase, jobDeploymentStatus ...) come first. */
const stateLike = /(state|status|phase)$/i;

/**
 * A status's plain fields (strings, numbers, booleans), at most six: what a page can say of any
 * kind without knowing it. Those named like a state or phase first, then by name.
 */
export function statusHighlights(status: Record<string, unknown> | undefined): string[] {
  return Object.entries(status ?? {})
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value) && value !== '')
    .sort(([a], [b]) => Number(stateLike.test(b)) - Number(stateLike.test(a)) || a.localeCompare(b))
    .slice(0, 6)
    .map(([key, value]) => {
      const text = String(value);
      return `${key} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
    });
}

/** The same page for a workload of any kind: its kind, pods, mirror status and how its pods are found. */
export function formatWorkloadExplanation(
  workload: WorkloadDetail,
  preview: PlacementPreview | null,
  now: Date,
): string {
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`${`${label}:`.padEnd(13)}${value}`);
  const object =
    workload.apiVersion && workload.objectKind ? ` (${workload.apiVersion} ${workload.objectKind})` : '';
  field('Workload', `${workload.kind} ${workload.namespace}/${workload.name}${object}`);
  field('Phase', workload.phase);
  field('Cluster', clusterField(workload, now));
  if (workload.pods !== undefined) field('Pods', `${workload.pods} at once`);
  if (workload.reason && workload.reason !== workload.waiting?.reason) field('Reason', workload.reason);
  field('Age', formatAge(workload.createdAt, now));
  if (workload.finishedAt) field('Finished', `${formatAge(workload.finishedAt, now)} ago`);
  if (workload.waiting) {
    field(
      'Waiting',
      `${workload.waiting.reason} (for ${formatAge(workload.waiting.since ?? workload.waitingSince, now)})`,
    );
  }
  lines.push(...placementLines(workload.placement));
  if (workload.mirror) {
    const highlights = statusHighlights(workload.mirror.status);
    field(
      'Mirror',
      `on ${workload.mirror.cluster}, uid ${workload.mirror.uid ?? none}${highlights.length ? `; ${highlights.join(', ')}` : ''}`,
    );
  } else {
    field('Mirror', workload.mirrorUnavailable ? `${none} (${workload.mirrorUnavailable})` : none);
  }
  const selectors = workload.podSelectors ?? [];
  if (selectors.length > 0) {
    lines.push('Pods on its cluster:');
    for (const selector of selectors) lines.push(`  ${selector.labelSelector} (${selector.description})`);
  }
  lines.push(...closingLines(workload, preview, now));
  return `${lines.join('\n')}\n`;
}

/**
 * The placement record, then its decision on a line of its own: why that cluster is what a
 * reader looks for, and in the YAML a long message would be folded over several lines.
 */
function placementLines(placement: Record<string, unknown> | null): string[] {
  if (!placement) return [`${'Placement:'.padEnd(13)}${none}`];
  const { decision, ...rest } = placement;
  const lines = ['Placement:', indent(stringify(rest).trimEnd())];
  if (typeof decision === 'string' && decision) lines.push(`${'Decision:'.padEnd(13)}${decision}`);
  return lines;
}

/** Where a Job or workload was placed, for the Cluster line of its page. */
function clusterField(detail: Pick<WorkloadDetail, 'cluster' | 'attempt' | 'placedAt'>, now: Date): string {
  if (!detail.cluster) return none;
  const attempt = detail.attempt !== null ? `attempt ${detail.attempt}, ` : '';
  return `${detail.cluster} (${attempt}placed ${formatAge(detail.placedAt, now)} ago)`;
}

/** The end of a Job's or workload's page: the placement preview, its history and its Events. */
function closingLines(
  detail: Pick<WorkloadDetail, 'history' | 'events'>,
  preview: PlacementPreview | null,
  now: Date,
): string[] {
  const lines: string[] = [];
  if (preview) {
    lines.push(`Placement preview: ${preview.decision}${preview.cluster ? ` on ${preview.cluster}` : ''}`);
    if (preview.message) lines.push(`  ${preview.message}`);
    const clusters = preview.clusters ?? [];
    if (clusters.length > 0) {
      lines.push(
        indent(
          formatTable(
            ['CLUSTER', 'ELIGIBLE', 'SCORE', 'REASON'],
            clusters.map((c) => [c.name, c.eligible ? 'True' : 'False', orNone(c.score), orNone(c.reason)]),
          ).trimEnd(),
        ),
      );
    }
  }
  if (detail.history && detail.history.length > 0) lines.push('History:', eventTable(detail.history, now));
  if (detail.events === null) {
    lines.push('Events:      <unknown> (you may not list Events in this namespace)');
  } else if (!detail.events || detail.events.length === 0) {
    lines.push(`Events:      ${none}`);
  } else {
    lines.push('Events:', eventTable(detail.events, now));
  }
  return lines;
}

function eventTable(events: JobEvent[], now: Date): string {
  return indent(
    formatTable(
      ['TYPE', 'REASON', 'AGE', 'COUNT', 'MESSAGE'],
      events.map((e) => [
        orNone(e.type),
        orNone(e.reason),
        formatAge(e.at, now),
        orNone(e.count),
        // An entry the API read from the placement record: no Event to find with kubectl.
        e.source === placementRecordSource
          ? `${orNone(e.message)} (from the placement record)`
          : orNone(e.message),
      ]),
    ).trimEnd(),
  );
}

export async function logsCommand(s: PluginSession): Promise<void> {
  if (s.output !== 'table') throw new UsageError('logs prints text; -o does not apply', 'logs');
  const ref = refOf(s);
  const tail = integerFlag('logs', 'tail', s.string('tail'), 0);
  const api = await s.api();
  await api.stream(
    ref.kind === jobKind ? jobPath(ref.namespace, ref.name, '/logs') : workloadPath(ref, '/logs'),
    {
      follow: s.flag('follow') ? 'true' : undefined,
      container: s.string('container'),
      tailLines: tail,
      pod: s.string('pod'),
    },
    s.io.stdout,
  );
}
