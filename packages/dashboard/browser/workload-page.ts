import type { EventView, WorkloadDetail } from '@jobrelay/api-types';
import { workloadKey } from '../src/workload-filters.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, scrollableTable } from './dom.ts';
import { age, badge, clock, errorBox, notAllowed, phaseBadge } from './format.ts';

function eventsTable(events: EventView[], label: string) {
  if (events.length === 0) return h('p', { class: 'help' }, 'None.');
  return scrollableTable(
    label,
    ['When', 'Type', 'Reason', 'Message', 'Count', 'Source'],
    events.map((e) =>
      h(
        'tr',
        null,
        h('td', null, clock(e.at)),
        h('td', null, e.type === 'Warning' ? badge('Warning', 'bad') : badge(e.type, 'muted')),
        h('td', null, e.reason),
        h('td', { class: 'message' }, e.message),
        h('td', { class: 'number' }, String(e.count)),
        h('td', null, e.source ?? '—'),
      ),
    ),
  );
}

function explanation(workload: WorkloadDetail) {
  if (workload.waiting)
    return h(
      'section',
      { 'aria-labelledby': 'why' },
      h('h2', { id: 'why' }, 'Why it waits'),
      h('p', { class: 'explain' }, workload.waiting.reason),
    );
  const decision = typeof workload.placement?.decision === 'string' ? workload.placement.decision : undefined;
  const cluster = typeof workload.placement?.cluster === 'string' ? workload.placement.cluster : undefined;
  return h(
    'section',
    { 'aria-labelledby': 'why' },
    h('h2', { id: 'why' }, 'Why this cluster'),
    h('p', { class: 'explain' }, decision ?? (cluster ? `placed on ${cluster}` : 'not placed')),
  );
}

/** A status condition as Kubernetes writes them; any kind's status may carry a list of them. */
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

function conditionsOf(status: Record<string, unknown>): Condition[] {
  const list = status.conditions;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (c): c is Condition =>
      typeof c === 'object' && c !== null && typeof c.type === 'string' && typeof c.status === 'string',
  );
}

/** A condition's tone from its words alone: the dashboard knows no kind's conditions. */
function conditionTone(condition: Condition): string {
  if (condition.status !== 'True') return 'muted';
  if (/fail|error/i.test(condition.type)) return 'bad';
  if (/complete|succeed|ready|available/i.test(condition.type)) return 'ok';
  return 'info';
}

function conditions(status: Record<string, unknown>) {
  const list = conditionsOf(status);
  if (list.length === 0) return h('p', { class: 'help' }, 'No conditions yet.');
  return h(
    'ul',
    { class: 'conditions' },
    list.map((c) =>
      h(
        'li',
        null,
        badge(`${c.type}: ${c.status}`, conditionTone(c)),
        c.reason ? ` ${c.reason}` : '',
        c.message ? ` — ${c.message}` : '',
        c.lastTransitionTime ? ` (${clock(c.lastTransitionTime)})` : '',
      ),
    ),
  );
}

/** A status's plain fields (strings, numbers, booleans): what a page can say of any kind without knowing it. */
function statusFacts(status: Record<string, unknown>) {
  const plain = Object.entries(status).filter(
    ([, value]) => ['string', 'number', 'boolean'].includes(typeof value) && value !== '',
  );
  if (plain.length === 0) return h('p', { class: 'help' }, 'Nothing reported yet.');
  return h(
    'dl',
    { class: 'facts wide', 'data-field': 'status' },
    plain.flatMap(([key, value]) => [h('dt', null, key), h('dd', null, String(value))]),
  );
}

export function renderWorkload(context: PageContext, kind: string, namespace: string, name: string) {
  const { state } = context;
  const detail = state.detail;
  const workload = detail?.workload;
  const live = state.workloads.get(workloadKey({ kind, namespace, name }));
  const phase = live?.phase ?? workload?.phase;
  const header = [
    h('p', { class: 'crumbs' }, h('a', { href: '#/workloads' }, 'Workloads'), ` / ${kind} / ${namespace} /`),
    h('h1', null, name, ' ', phase ? h('span', { 'data-field': 'workload-phase' }, phaseBadge(phase)) : ''),
  ];
  if (detail?.error && !workload) return [...header, errorBox(detail.error)];
  if (!workload) return [...header, h('p', { 'aria-busy': 'true' }, 'Loading…')];
  return [
    ...header,
    detail?.error && errorBox(`Could not refresh: ${detail.error}`),
    h(
      'dl',
      { class: 'facts wide' },
      h('dt', null, 'Kind'),
      h('dd', { 'data-field': 'kind' }, `${workload.kind} (${workload.apiVersion} ${workload.objectKind})`),
      h('dt', null, 'Cluster'),
      h('dd', null, workload.cluster ?? 'not placed'),
      h('dt', null, 'Attempt'),
      h('dd', null, workload.attempt === null ? '—' : String(workload.attempt)),
      h('dt', null, 'Placed'),
      h('dd', null, workload.placedAt ? `${clock(workload.placedAt)} (${age(workload.placedAt)})` : '—'),
      h('dt', null, 'Pods'),
      h('dd', null, `${workload.pods} at once`),
      h('dt', null, 'Created'),
      h('dd', null, `${clock(workload.createdAt)} (${age(workload.createdAt)})`),
      workload.mirrorUnavailable ? [h('dt', null, 'Mirror'), h('dd', null, workload.mirrorUnavailable)] : [],
    ),
    explanation(workload),
    h(
      'section',
      { 'aria-labelledby': 'conditions' },
      h('h2', { id: 'conditions' }, 'Conditions'),
      conditions(workload.status),
    ),
    h(
      'section',
      { 'aria-labelledby': 'status' },
      h('h2', { id: 'status' }, 'Status ', h('small', null, '(as its kind reports it)')),
      statusFacts(workload.status),
    ),
    h(
      'section',
      { 'aria-labelledby': 'history' },
      h('h2', { id: 'history' }, 'Placement history'),
      eventsTable(workload.history, 'Placement history'),
    ),
    h(
      'section',
      { 'aria-labelledby': 'events' },
      h('h2', { id: 'events' }, 'Events'),
      workload.events === null
        ? notAllowed('read this namespace’s Events', context.needs('listEvents'))
        : eventsTable(workload.events, 'Events'),
    ),
    h(
      'section',
      { 'aria-labelledby': 'logs' },
      h(
        'h2',
        { id: 'logs' },
        'Pod logs ',
        h('small', null, '(last 200 lines, read from the worker through the API)'),
      ),
      !context.can('readLogs')
        ? notAllowed('read pod logs', context.needs('readLogs'))
        : [
            h(
              'button',
              {
                type: 'button',
                'data-key': 'reload-logs',
                disabled: detail?.logsLoading === true,
                onClick: () => void context.reloadLogs(),
              },
              detail?.logsLoading ? 'Reading logs…' : 'Reload logs',
            ),
            detail?.logsError
              ? h('p', { class: 'help' }, detail.logsError)
              : h(
                  'pre',
                  { class: 'logs', tabindex: '0', 'aria-label': 'Pod logs' },
                  detail?.logs === undefined ? '' : detail.logs || '(no output)',
                ),
          ],
    ),
  ];
}
