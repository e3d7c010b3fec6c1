import { stringify } from 'yaml';
import type {
  JobDetail,
  JobEvent,
  JobSummary,
  PendingItem,
  PendingPage,
  PlacementPreview,
} from './api-types.ts';
import { integerFlag } from './command-line.ts';
import { describeApiError } from './describe-api-error.ts';
import { formatAge } from './format-age.ts';
import { formatCompletions, jobHeaders, jobRow, pendingHeaders, pendingRow } from './format-rows.ts';
import { formatTable, none, orNone } from './format-table.ts';
import { ApiError, UsageError } from './plugin-errors.ts';
import type { PluginSession } from './plugin-session.ts';

const defaultPageSize = 500;
const phases = ['pending', 'running', 'succeeded', 'failed', 'suspended'];

function jobPath(namespace: string, name: string, suffix = ''): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/jobs/${encodeURIComponent(name)}${suffix}`;
}

export async function jobsCommand(s: PluginSession): Promise<void> {
  const all = s.flag('all-namespaces');
  if (all && s.string('namespace')) throw new UsageError('-n and -A exclude each other', 'jobs');
  const phase = s.string('phase');
  if (phase !== undefined && !phases.includes(phase)) {
    throw new UsageError(`--phase must be one of ${phases.join(', ')}, not "${phase}"`, 'jobs');
  }
  const limit = integerFlag('jobs', 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const namespace = all ? undefined : s.namespace();
  const api = await s.api();
  const { items } = await api.listAll<JobSummary>(
    '/api/v1/jobs',
    { namespace, cluster: s.string('cluster'), phase, labelSelector: s.string('selector') },
    limit,
  );
  if (s.output !== 'table') {
    s.printObject({ items });
    return;
  }
  const now = s.now();
  s.table(
    jobHeaders(all),
    items.map((j) => jobRow(j, all, now)),
    all ? 'No dispatched Jobs found.' : `No dispatched Jobs found in ${namespace} namespace.`,
  );
}

export async function pendingCommand(s: PluginSession): Promise<void> {
  const limit = integerFlag('pending', 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const api = await s.api();
  const { items, last } = await api.listAll<PendingItem, PendingPage>(
    '/api/v1/pending',
    { namespace: s.string('namespace') },
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
    'No Jobs are waiting for a cluster.',
  );
}

/** Is the Job still waiting for a cluster (so a placement preview explains why)? */
export function isWaiting(job: JobDetail): boolean {
  return job.waiting !== null && job.waiting !== undefined
    ? true
    : job.cluster === null && job.phase === 'pending';
}

export async function explainCommand(s: PluginSession): Promise<void> {
  const name = s.args[0]!;
  const namespace = s.namespace();
  const api = await s.api();
  const job = await api.json<JobDetail>('GET', jobPath(namespace, name));
  let preview: PlacementPreview | null = null;
  let previewError: ApiError | undefined;
  if (isWaiting(job)) {
    try {
      preview = await api.json<PlacementPreview>('POST', '/api/v1/placement-preview', {
        body: { namespace, name },
      });
    } catch (err) {
      // The Job's own record is still worth showing; the preview's failure is reported beside it.
      if (!(err instanceof ApiError)) throw err;
      previewError = err;
    }
  }
  if (s.output !== 'table') s.printObject({ job, placementPreview: preview });
  else s.out(formatExplanation(job, preview, s.now()));
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
  if (job.cluster) {
    const attempt = job.attempt !== null ? `attempt ${job.attempt}, ` : '';
    field('Cluster', `${job.cluster} (${attempt}placed ${formatAge(job.placedAt, now)} ago)`);
  } else {
    field('Cluster', none);
  }
  field('Completions', `${formatCompletions(job)} (active ${job.active ?? 0}, failed ${job.failed ?? 0})`);
  if (job.reason && job.reason !== job.waiting?.reason) field('Reason', job.reason);
  field('Age', formatAge(job.createdAt, now));
  if (job.waiting) {
    field('Waiting', `${job.waiting.reason} (for ${formatAge(job.waiting.since ?? job.waitingSince, now)})`);
  }
  if (job.placement) lines.push('Placement:', indent(stringify(job.placement).trimEnd()));
  else field('Placement', none);
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
  if (job.history && job.history.length > 0) {
    lines.push('History:', eventTable(job.history, now));
  }
  if (job.events === null) {
    lines.push('Events:      <unknown> (you may not list Events in this namespace)');
  } else if (!job.events || job.events.length === 0) {
    lines.push(`Events:      ${none}`);
  } else {
    lines.push('Events:', eventTable(job.events, now));
  }
  return `${lines.join('\n')}\n`;
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
        orNone(e.message),
      ]),
    ).trimEnd(),
  );
}

export async function logsCommand(s: PluginSession): Promise<void> {
  if (s.output !== 'table') throw new UsageError('logs prints text; -o does not apply', 'logs');
  const name = s.args[0]!;
  const tail = integerFlag('logs', 'tail', s.string('tail'), 0);
  const namespace = s.namespace();
  const api = await s.api();
  await api.stream(
    jobPath(namespace, name, '/logs'),
    {
      follow: s.flag('follow') ? 'true' : undefined,
      container: s.string('container'),
      tailLines: tail,
      pod: s.string('pod'),
    },
    s.io.stdout,
  );
}
