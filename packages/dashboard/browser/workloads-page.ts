import type { WorkloadSummary } from '@jobrelay/api-types';
import { workloadPhases } from '@jobrelay/api-types/workload-phases';
import { hashOf } from '../src/hash-route.ts';
import {
  choicesOf,
  countByPhase,
  filterWorkloads,
  type WorkloadFilter,
  workloadKey,
} from '../src/workload-filters.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, scrollableTable } from './dom.ts';
import { age, errorBox, notAllowed, phaseBadge } from './format.ts';

/** More rows than this make the table slow to draw and to read; filters narrow it. */
const maxRows = 500;

function select(
  context: PageContext,
  field: keyof WorkloadFilter,
  label: string,
  choices: readonly string[],
) {
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

function row(workload: WorkloadSummary) {
  const key = workloadKey(workload);
  const { kind, namespace, name } = workload;
  return h(
    'tr',
    { 'data-workload': key, 'data-kind': kind, 'data-phase': workload.phase },
    h(
      'td',
      null,
      h(
        'a',
        { href: hashOf({ view: 'workload', kind, namespace, name }), 'data-key': `workload-${key}` },
        name,
      ),
    ),
    h('td', { 'data-field': 'kind', title: `${workload.apiVersion} ${workload.objectKind}` }, kind),
    h('td', null, namespace),
    h('td', { 'data-field': 'phase' }, phaseBadge(workload.phase)),
    h('td', null, workload.cluster ?? '—'),
    h('td', { class: 'number' }, workload.attempt === null ? '—' : String(workload.attempt)),
    h('td', { class: 'number' }, String(workload.pods)),
    h('td', { class: 'reason' }, workload.reason ?? ''),
    h('td', null, age(workload.createdAt)),
  );
}

export function renderWorkloads(context: PageContext) {
  const { state } = context;
  if (context.listableKinds.length === 0)
    return [
      h('h1', null, 'Workloads'),
      notAllowed('list dispatched workloads', context.needs('listWorkloads')),
    ];
  const all = [...state.workloads.values()];
  const shown = filterWorkloads(all, state.filter);
  const counts = countByPhase(shown);
  const filtered = Object.values(state.filter).some(Boolean);
  return [
    h('h1', null, 'Workloads'),
    h(
      'form',
      {
        class: 'filters',
        role: 'search',
        'aria-label': 'Filter workloads',
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
      select(context, 'kind', 'Kind', context.listableKinds),
      select(
        context,
        'namespace',
        'Namespace',
        choicesOf(all, (j) => j.namespace),
      ),
      select(context, 'phase', 'Status', workloadPhases),
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
      `${shown.length}${filtered ? ` of ${all.length}` : ''} workload(s)`,
      workloadPhases.filter((p) => counts[p]).map((p) => [' · ', phaseBadge(p), ` ${counts[p]}`]),
      state.workloadsTruncated ? ' (the first 5,000 only; filter by namespace to see others)' : '',
    ),
    state.workloadsError && errorBox(state.workloadsError),
    shown.length === 0
      ? h('p', null, all.length === 0 ? 'No dispatched workloads yet.' : 'No workload matches these filters.')
      : scrollableTable(
          'Workloads table',
          ['Name', 'Kind', 'Namespace', 'Status', 'Cluster', 'Attempt', 'Pods', 'Reason', 'Created'],
          shown.slice(0, maxRows).map(row),
          { class: 'workloads' },
        ),
    shown.length > maxRows &&
      h('p', { class: 'help' }, `Showing the first ${maxRows}; narrow the filters to see the rest.`),
  ];
}
