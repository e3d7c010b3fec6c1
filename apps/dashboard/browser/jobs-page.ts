import { hashOf } from '../src/hash-route.ts';
import { choicesOf, countByPhase, filterJobs, type JobFilter } from '../src/job-filters.ts';
import type { JobSummary } from './api-types.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, scrollableTable } from './dom.ts';
import { age, errorBox, notAllowed, phaseBadge } from './format.ts';

/** More rows than this make the table slow to draw and to read; filters narrow it. */
const maxRows = 500;
const phases = ['pending', 'running', 'succeeded', 'failed', 'suspended'];

function select(context: PageContext, field: keyof JobFilter, label: string, choices: string[]) {
  const id = `filter-${field}`;
  const value = context.state.filter[field];
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h(
      'select',
      {
        id,
        'data-key': id,
        onChange: (event: Event) => {
          context.state.filter = {
            ...context.state.filter,
            [field]: (event.target as HTMLSelectElement).value,
          };
          context.rerender();
        },
      },
      h('option', { value: '', selected: value === '' }, 'All'),
      [...new Set([...choices, ...(value ? [value] : [])])].map((choice) =>
        h('option', { value: choice, selected: choice === value }, choice),
      ),
    ),
  );
}

function pods(job: JobSummary): string {
  const target = job.completions ?? (job.parallelism ? `≤${job.parallelism}` : '1');
  return `${job.succeeded}/${target} done, ${job.active} active, ${job.failed} failed`;
}

function row(job: JobSummary) {
  const key = `${job.namespace}/${job.name}`;
  return h(
    'tr',
    { 'data-job': key, 'data-phase': job.phase },
    h(
      'td',
      null,
      h(
        'a',
        { href: hashOf({ view: 'job', namespace: job.namespace, name: job.name }), 'data-key': `job-${key}` },
        job.name,
      ),
    ),
    h('td', null, job.namespace),
    h('td', { 'data-field': 'phase' }, phaseBadge(job.phase)),
    h('td', null, job.cluster ?? '—'),
    h('td', { class: 'number' }, job.attempt === null ? '—' : String(job.attempt)),
    h('td', null, pods(job)),
    h('td', { class: 'reason' }, job.reason ?? ''),
    h('td', null, age(job.createdAt)),
  );
}

export function renderJobs(context: PageContext) {
  const { state } = context;
  if (!context.can('listJobs'))
    return [h('h1', null, 'Jobs'), notAllowed('list dispatched Jobs', context.needs('listJobs'))];
  const all = [...state.jobs.values()];
  const shown = filterJobs(all, state.filter);
  const counts = countByPhase(shown);
  const filtered = Object.values(state.filter).some(Boolean);
  return [
    h('h1', null, 'Jobs'),
    h(
      'form',
      {
        class: 'filters',
        role: 'search',
        'aria-label': 'Filter Jobs',
        onSubmit: (e: Event) => e.preventDefault(),
      },
      h(
        'div',
        { class: 'field grow' },
        h('label', { for: 'filter-search' }, 'Search by name'),
        h('input', {
          id: 'filter-search',
          'data-key': 'filter-search',
          type: 'search',
          value: state.filter.search,
          placeholder: 'e.g. train 42',
          onInput: (event: Event) => {
            state.filter = { ...state.filter, search: (event.target as HTMLInputElement).value };
            context.rerender();
          },
        }),
      ),
      select(
        context,
        'namespace',
        'Namespace',
        choicesOf(all, (j) => j.namespace),
      ),
      select(context, 'phase', 'Status', phases),
      select(
        context,
        'cluster',
        'Cluster',
        choicesOf(all, (j) => j.cluster),
      ),
    ),
    h(
      'p',
      { class: 'summary', 'aria-live': 'polite' },
      `${shown.length}${filtered ? ` of ${all.length}` : ''} Job(s)`,
      phases.filter((p) => counts[p]).map((p) => [' · ', phaseBadge(p), ` ${counts[p]}`]),
      state.jobsTruncated ? ' (the first 5,000 only; filter by namespace to see others)' : '',
    ),
    state.jobsError && errorBox(state.jobsError),
    shown.length === 0
      ? h('p', null, all.length === 0 ? 'No dispatched Jobs yet.' : 'No Job matches these filters.')
      : scrollableTable(
          'Jobs table',
          ['Name', 'Namespace', 'Status', 'Cluster', 'Attempt', 'Pods', 'Reason', 'Created'],
          shown.slice(0, maxRows).map(row),
          { class: 'jobs' },
        ),
    shown.length > maxRows &&
      h('p', { class: 'help' }, `Showing the first ${maxRows}; narrow the filters to see the rest.`),
  ];
}
