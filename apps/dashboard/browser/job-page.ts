import type { EventView, JobDetail } from './api-types.ts';
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

function explanation(job: JobDetail) {
  if (job.waiting)
    return h(
      'section',
      { 'aria-labelledby': 'why' },
      h('h2', { id: 'why' }, 'Why it waits'),
      h('p', { class: 'explain' }, job.waiting.reason),
    );
  const decision = job.placement?.decision;
  return h(
    'section',
    { 'aria-labelledby': 'why' },
    h('h2', { id: 'why' }, 'Why this cluster'),
    h(
      'p',
      { class: 'explain' },
      decision ?? (job.placement?.cluster ? `placed on ${job.placement.cluster}` : 'not placed'),
    ),
  );
}

function conditions(job: JobDetail) {
  const list = job.status.conditions ?? [];
  if (list.length === 0) return h('p', { class: 'help' }, 'No conditions yet.');
  return h(
    'ul',
    { class: 'conditions' },
    list.map((c) =>
      h(
        'li',
        null,
        badge(
          `${c.type}: ${c.status}`,
          c.status !== 'True' ? 'muted' : c.type === 'Failed' ? 'bad' : c.type === 'Complete' ? 'ok' : 'info',
        ),
        c.reason ? ` ${c.reason}` : '',
        c.message ? ` — ${c.message}` : '',
        c.lastTransitionTime ? ` (${clock(c.lastTransitionTime)})` : '',
      ),
    ),
  );
}

export function renderJob(context: PageContext, namespace: string, name: string) {
  const { state } = context;
  const detail = state.detail;
  const job = detail?.job;
  const live = state.jobs.get(`${namespace}/${name}`);
  const phase = live?.phase ?? job?.phase;
  const header = [
    h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, 'Jobs'), ` / ${namespace} /`),
    h('h1', null, name, ' ', phase ? h('span', { 'data-field': 'job-phase' }, phaseBadge(phase)) : ''),
  ];
  if (detail?.error && !job) return [...header, errorBox(detail.error)];
  if (!job) return [...header, h('p', { 'aria-busy': 'true' }, 'Loading…')];
  const counts = live ?? job;
  return [
    ...header,
    detail?.error && errorBox(`Could not refresh: ${detail.error}`),
    h(
      'dl',
      { class: 'facts wide' },
      h('dt', null, 'Cluster'),
      h('dd', null, job.cluster ?? 'not placed'),
      h('dt', null, 'Attempt'),
      h('dd', null, job.attempt === null ? '—' : String(job.attempt)),
      h('dt', null, 'Placed'),
      h('dd', null, job.placedAt ? `${clock(job.placedAt)} (${age(job.placedAt)})` : '—'),
      h('dt', null, 'Pods'),
      h(
        'dd',
        null,
        `${counts.succeeded} succeeded, ${counts.active} active, ${counts.failed} failed (completions ${job.completions ?? 1}, parallelism ${job.parallelism ?? 1})`,
      ),
      h('dt', null, 'Created'),
      h('dd', null, `${clock(job.createdAt)} (${age(job.createdAt)})`),
      job.mirrorUnavailable ? [h('dt', null, 'Mirror'), h('dd', null, job.mirrorUnavailable)] : [],
    ),
    explanation(job),
    h(
      'section',
      { 'aria-labelledby': 'conditions' },
      h('h2', { id: 'conditions' }, 'Conditions'),
      conditions(job),
    ),
    h(
      'section',
      { 'aria-labelledby': 'history' },
      h('h2', { id: 'history' }, 'Placement history'),
      eventsTable(job.history, 'Placement history'),
    ),
    h(
      'section',
      { 'aria-labelledby': 'events' },
      h('h2', { id: 'events' }, 'Events'),
      job.events === null
        ? notAllowed('read this namespace’s Events', context.needs('listEvents'))
        : eventsTable(job.events, 'Events'),
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
