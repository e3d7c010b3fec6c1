import type {
  EventView,
  PendingPage,
  PendingWorkload,
  PlacementPreview,
  WorkloadDetail,
  WorkloadKind,
  WorkloadQueue,
  WorkloadSummary,
} from '@jobrelay/api-types';
import { stringify } from 'yaml';
import type { JobrelayApiClient } from './api-client.ts';
import { integerFlag, type WorkloadRef, workloadRef } from './command-line.ts';
import { describeApiError } from './describe-api-error.ts';
import { formatAge } from './format-age.ts';
import { pendingHeaders, pendingRow, workloadHeaders, workloadRow } from './format-rows.ts';
import { formatTable, none, orNone } from './format-table.ts';
import { ApiError, UsageError } from './plugin-errors.ts';
import type { PluginSession } from './plugin-session.ts';

const defaultPageSize = 500;
/** The `source` of a history entry the API read from the placement record, not from an Event. */
const placementRecordSource = 'placement-record';
/** The phases of every kind (GET /api/v1/workloads). */
const workloadPhases = ['pending', 'placed', 'running', 'finished', 'suspended'];

/** A workload whose kind is known: what the API's workload routes take. */
interface KindedRef extends WorkloadRef {
  kind: string;
}

function workloadPath(ref: KindedRef, suffix = ''): string {
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

/**
 * Which kinds have a dispatched workload of this name in its namespace, from one detail read per
 * kind the API dispatches. A kind the caller may not read is left out (as kubectl get would not
 * show it); any other failure is the answer.
 */
async function kindsNamed(
  api: JobrelayApiClient,
  ref: WorkloadRef,
): Promise<{ found: Array<{ kind: string; detail: WorkloadDetail }>; forbidden: string[]; kinds: string[] }> {
  const { items } = await api.json<{ items: WorkloadKind[] }>('GET', '/api/v1/kinds');
  const kinds = items.map((kind) => kind.name);
  const answers = await Promise.all(
    kinds.map(async (kind) => {
      try {
        return { kind, detail: await api.json<WorkloadDetail>('GET', workloadPath({ ...ref, kind })) };
      } catch (err) {
        if (err instanceof ApiError && (err.status === 404 || err.status === 403))
          return { kind, refused: err.status };
        throw err;
      }
    }),
  );
  return {
    found: answers.flatMap((a) => ('detail' in a && a.detail ? [{ kind: a.kind, detail: a.detail }] : [])),
    forbidden: answers.flatMap((a) => ('refused' in a && a.refused === 403 ? [a.kind] : [])),
    kinds,
  };
}

/**
 * The workload a command names, with its kind: as given, or the one kind that has a workload of
 * that name in the namespace. None, or several, is a usage error naming what was found and how
 * to say which (`--kind`, or KIND/NAME).
 */
async function resolveRef(
  s: PluginSession,
  api: JobrelayApiClient,
  ref: WorkloadRef,
): Promise<{ ref: KindedRef; detail?: WorkloadDetail }> {
  if (ref.kind !== undefined) return { ref: { ...ref, kind: ref.kind } };
  const { found, forbidden, kinds } = await kindsNamed(api, ref);
  const what = `${ref.namespace}/${ref.name}`;
  if (found.length === 1) return { ref: { ...ref, kind: found[0]!.kind }, detail: found[0]!.detail };
  if (found.length > 1) {
    const matching = found.map((f) => f.kind);
    throw new UsageError(
      `${what} is the name of a dispatched ${matching.join(' and a ')}: say which with --kind ${matching.join('|')} (or ${matching[0]}/${ref.name})`,
      s.command.name,
    );
  }
  const unread = forbidden.length
    ? `; you may not read ${forbidden.join(', ')}, so those were not looked at`
    : '';
  throw new ApiError(404, 'Not Found', {
    status: 404,
    code: 'not-found',
    detail: `no dispatched workload ${what} of any kind (${kinds.join(', ')})${unread}`,
  });
}

/** What differs between `jobs` and `workloads`: the command's name and the kinds it lists. */
interface ListCommand {
  command: 'jobs' | 'workloads';
  kind: string | undefined;
  /** "Jobs" or "workloads", for the empty-list message. */
  noun: string;
}

/** `kubectl jobrelay workloads`, and `jobs` (the same with --kind job): the same flags, pages and table. */
async function listCommand(s: PluginSession, list: ListCommand): Promise<void> {
  const all = s.flag('all-namespaces');
  if (all && s.string('namespace')) throw new UsageError('-n and -A exclude each other', list.command);
  const phase = s.string('phase');
  if (phase !== undefined && !workloadPhases.includes(phase)) {
    throw new UsageError(`--phase must be one of ${workloadPhases.join(', ')}, not "${phase}"`, list.command);
  }
  const limit = integerFlag(list.command, 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const namespace = all ? undefined : s.namespace();
  const api = await s.api();
  const { items } = await api.listAll<WorkloadSummary>(
    '/api/v1/workloads',
    {
      namespace,
      kind: list.kind,
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
    workloadHeaders(all),
    items.map((item) => workloadRow(item, all, now)),
    all ? `No dispatched ${list.noun} found.` : `No dispatched ${list.noun} found in ${namespace} namespace.`,
  );
}

export function workloadsCommand(s: PluginSession): Promise<void> {
  return listCommand(s, { command: 'workloads', kind: s.string('kind')?.toLowerCase(), noun: 'workloads' });
}

/** `jobs`: `workloads --kind job`, the shorthand kubectl users reach for. */
export function jobsCommand(s: PluginSession): Promise<void> {
  return listCommand(s, { command: 'jobs', kind: 'job', noun: 'Jobs' });
}

export async function pendingCommand(s: PluginSession): Promise<void> {
  const limit = integerFlag('pending', 'limit', s.string('limit'), 1) ?? defaultPageSize;
  const api = await s.api();
  const { items, last } = await api.listAll<PendingWorkload, PendingPage>(
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
export function isWaiting(workload: Pick<WorkloadDetail, 'waiting' | 'cluster' | 'phase'>): boolean {
  return workload.waiting !== null && workload.waiting !== undefined
    ? true
    : workload.cluster === null && workload.phase === 'pending';
}

export async function explainCommand(s: PluginSession): Promise<void> {
  const api = await s.api();
  const resolved = await resolveRef(s, api, refOf(s));
  const { ref } = resolved;
  const detail = resolved.detail ?? (await api.json<WorkloadDetail>('GET', workloadPath(ref)));
  let preview: PlacementPreview | null = null;
  let previewError: ApiError | undefined;
  if (isWaiting(detail)) {
    try {
      preview = await api.json<PlacementPreview>('POST', '/api/v1/placement-preview', {
        body: { kind: ref.kind, namespace: ref.namespace, name: ref.name },
      });
    } catch (err) {
      // The workload's own record is still worth showing; the preview's failure is reported beside it.
      if (!(err instanceof ApiError)) throw err;
      previewError = err;
    }
  }
  if (s.output !== 'table') s.printObject({ workload: detail, placementPreview: preview });
  else s.out(formatWorkloadExplanation(detail, preview, s.now()));
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

/**
 * A `kubectl describe`-like page for a workload of any kind: where it runs and why, or why it
 * waits; its pods, its mirror's status and how its pods are found.
 */
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
  // The queue gate is named even when the waiting reason is a cluster's (quota has room there).
  if (workload.queue) field('Queue', queueLine(workload.queue, workload.cluster !== null));
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

/** Its DispatchQueue: admitted and holding its quota, or waiting at a place. */
function queueLine(queue: WorkloadQueue, admitted: boolean): string {
  if (admitted) return `${queue.name} (admitted: holds its quota)`;
  return queue.position !== null && queue.of !== null
    ? `${queue.name} (waiting, position ${queue.position} of ${queue.of})`
    : `${queue.name} (waiting)`;
}

/** Where a workload was placed, for the Cluster line of its page. */
function clusterField(detail: Pick<WorkloadDetail, 'cluster' | 'attempt' | 'placedAt'>, now: Date): string {
  if (!detail.cluster) return none;
  const attempt = detail.attempt !== null ? `attempt ${detail.attempt}, ` : '';
  return `${detail.cluster} (${attempt}placed ${formatAge(detail.placedAt, now)} ago)`;
}

/** The end of a workload's page: the placement preview, its history and its Events. */
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

function eventTable(events: EventView[], now: Date): string {
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
  const tail = integerFlag('logs', 'tail', s.string('tail'), 0);
  const api = await s.api();
  const { ref } = await resolveRef(s, api, refOf(s));
  await api.stream(
    workloadPath(ref, '/logs'),
    {
      follow: s.flag('follow') ? 'true' : undefined,
      container: s.string('container'),
      tailLines: tail,
      pod: s.string('pod'),
    },
    s.io.stdout,
  );
}
