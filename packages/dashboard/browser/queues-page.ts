import type { DispatchQueue, DispatchQueueDetail, QueuedWorkload } from '@jobrelay/api-types';
import { linePath, niceScale } from '../src/chart-scale.ts';
import { hashOf } from '../src/hash-route.ts';
import { type ShareSample, usageBar } from '../src/queue-usage.ts';
import { formatQuantity } from '../src/resource-quantity.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, s, scrollableTable } from './dom.ts';
import { age, badge, clock, errorBox, notAllowed } from './format.ts';

const resourceLabel = (name: string) =>
  name === 'cpu'
    ? 'CPU'
    : name === 'memory'
      ? 'Memory'
      : name === 'workloads'
        ? 'Workloads'
        : name.replace(/^.*\//, '').toUpperCase();

/** One resource: held within nominal, borrowed above it, nominal's end and the borrowing limit's. */
function quotaBar(resource: DispatchQueue['resources'][number]) {
  const bar = usageBar(resource.used, resource.nominal, resource.borrowingLimit);
  const amount = (value: number) => formatQuantity(resource.name, value);
  const words =
    `${resource.used === null ? 'usage not reported yet' : `${amount(bar.used)} used`} of ${amount(bar.nominal)} nominal` +
    (bar.used > bar.nominal ? `, ${amount(bar.used - bar.nominal)} borrowed` : '') +
    (bar.limit === null ? '; borrows without limit' : `; may borrow ${amount(bar.limit)}`);
  return h(
    'div',
    { class: 'capacity', 'data-resource': resource.name },
    h('span', { class: 'capacity-name' }, resourceLabel(resource.name)),
    s(
      'svg',
      {
        class: 'bar',
        viewBox: '0 0 100 10',
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': `${resourceLabel(resource.name)}: ${words}`,
      },
      s('rect', { class: 'bar-free', x: 0, y: 0, width: 100, height: 10 }),
      bar.limitPct !== null &&
        s('rect', {
          class: 'bar-borrowable',
          x: bar.nominalPct.toFixed(2),
          y: 0,
          width: (bar.limitPct - bar.nominalPct).toFixed(2),
          height: 10,
        }),
      s('rect', { class: 'bar-used', x: 0, y: 0, width: bar.withinPct.toFixed(2), height: 10 }),
      s('rect', {
        class: 'bar-borrowed',
        x: bar.withinPct.toFixed(2),
        y: 0,
        width: bar.borrowedPct.toFixed(2),
        height: 10,
      }),
      s('line', {
        class: 'bar-nominal',
        x1: bar.nominalPct.toFixed(2),
        x2: bar.nominalPct.toFixed(2),
        y1: 0,
        y2: 10,
      }),
    ),
    h('span', { class: 'capacity-words' }, words),
  );
}

const spark = { width: 300, height: 60 };

/** The share as this page polled it: a line over the samples kept, 0 at the bottom. */
function shareChart(name: string, samples: readonly ShareSample[]) {
  const last = samples.at(-1);
  const { top } = niceScale(Math.max(1, ...samples.map((sample) => sample.share)), 2);
  const summary =
    samples.length < 2
      ? 'Share over time: collecting (the page samples it each time it reads the queues).'
      : `Share since ${clock(new Date(samples[0]!.at).toISOString())} (${samples.length} samples, scale 0 to ${top}): now ${last?.share ?? 0}, highest ${Math.max(...samples.map((x) => x.share))}.`;
  return h(
    'figure',
    { class: 'share' },
    s(
      'svg',
      {
        class: 'sparkline',
        viewBox: `0 0 ${spark.width} ${spark.height}`,
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': `${name}: ${summary}`,
      },
      s('line', { class: 'spark-axis', x1: 0, x2: spark.width, y1: spark.height, y2: spark.height }),
      samples.length >= 2 &&
        s('path', {
          class: 'spark-line',
          d: linePath(
            samples.map((sample) => sample.share),
            top,
            spark,
          ),
        }),
    ),
    h('figcaption', { class: 'help' }, summary),
  );
}

function activeBadge(queue: DispatchQueue) {
  if (!queue.valid) return badge('Invalid spec', 'bad', queue.problems.join('; '));
  const active = queue.status?.conditions.find((c) => c.type === 'Active');
  if (!active) return badge('No status yet', 'muted', 'The controller’s leader has not written its status');
  return active.status === 'True'
    ? badge('Active', 'ok', active.message)
    : badge(`Not active: ${active.reason}`, 'bad', active.message);
}

function card(context: PageContext, queue: DispatchQueue, linked: boolean) {
  const id = `queue-${queue.name}`;
  const status = queue.status;
  return h(
    'article',
    { class: 'card queue', 'aria-labelledby': id, 'data-queue': queue.name },
    h(
      'header',
      null,
      h(
        'h2',
        { id },
        linked ? h('a', { href: hashOf({ view: 'queue', name: queue.name }) }, queue.name) : queue.name,
      ),
      activeBadge(queue),
      queue.cohort ? badge(`cohort ${queue.cohort}`, 'info') : null,
    ),
    !queue.valid && h('p', { class: 'help' }, queue.problems.join('; ')),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Pending'),
      h('dd', { 'data-field': 'pending' }, status ? String(status.pendingWorkloads) : '—'),
      h('dt', null, 'Admitted'),
      h('dd', { 'data-field': 'admitted' }, status ? String(status.admittedWorkloads) : '—'),
      h('dt', null, 'Share'),
      h('dd', { 'data-field': 'share' }, status?.share ?? '—'),
      h('dt', null, 'Weight'),
      h('dd', null, queue.weight === null ? '—' : String(queue.weight)),
      h('dt', null, 'Strategy'),
      h('dd', null, queue.queueingStrategy ?? '—'),
      queue.preemption && [
        h('dt', null, 'Preemption'),
        h(
          'dd',
          null,
          `within queue ${queue.preemption.withinQueue}, reclaim ${queue.preemption.reclaimWithinCohort}`,
        ),
      ],
    ),
    queue.resources.length > 0
      ? h(
          'div',
          { class: 'capacities' },
          queue.resources.map((resource) => quotaBar(resource)),
        )
      : h('p', { class: 'help' }, 'No quota to show.'),
    shareChart(queue.name, context.state.shareHistory.samples(queue.name)),
  );
}

function workloadLink(item: QueuedWorkload) {
  return h(
    'a',
    { href: hashOf({ view: 'workload', kind: item.kind, namespace: item.namespace, name: item.name }) },
    `${item.namespace}/${item.name}`,
  );
}

const hiddenNote = (count: number, what: string) =>
  count > 0 ? h('p', { class: 'help' }, `${count} more ${what} you may not list.`) : null;

function detailTables(detail: DispatchQueueDetail) {
  return [
    h('h2', null, `Pending, in queue order (${detail.pending.length})`),
    detail.pending.length === 0
      ? h('p', null, 'Nothing you may list waits in this queue.')
      : scrollableTable(
          `Pending in ${detail.name}`,
          ['#', 'Workload', 'Kind', 'Waiting', 'Why it waits'],
          detail.pending.map((item) =>
            h(
              'tr',
              null,
              h('td', { class: 'number' }, String(item.position ?? '—')),
              h('td', null, workloadLink(item)),
              h('td', null, item.kind),
              h('td', null, age(item.waitingSince)),
              h('td', { class: 'reason' }, item.reason ?? 'not looked at by its queue yet'),
            ),
          ),
        ),
    hiddenNote(detail.hidden.pending, 'pending workload(s)'),
    h('h2', null, `Admitted (${detail.admitted.length})`),
    detail.admitted.length === 0
      ? h('p', null, 'Nothing you may list holds this queue’s quota.')
      : scrollableTable(
          `Admitted in ${detail.name}`,
          ['Workload', 'Kind', 'Cluster', 'Pods', 'Admitted'],
          detail.admitted.map((item) =>
            h(
              'tr',
              null,
              h('td', null, workloadLink(item)),
              h('td', null, item.kind),
              h('td', null, item.cluster ?? '—'),
              h('td', { class: 'number' }, String(item.pods)),
              h('td', null, age(item.admittedAt)),
            ),
          ),
        ),
    hiddenNote(detail.hidden.admitted, 'admitted workload(s)'),
  ];
}

const legend = () =>
  h(
    'p',
    { class: 'summary' },
    'Bars: ',
    h('span', { class: 'key key-used' }, 'within nominal quota'),
    ' ',
    h('span', { class: 'key key-borrowed' }, 'borrowed from the cohort'),
    ' ',
    h('span', { class: 'key key-borrowable' }, 'may still borrow'),
    ' ',
    h('span', { class: 'key key-free' }, 'unused nominal'),
    '; the dark line is where nominal quota ends.',
  );

export function renderQueues(context: PageContext) {
  const { state } = context;
  if (!context.can('listQueues'))
    return [h('h1', null, 'Queues'), notAllowed('list the DispatchQueues', context.needs('listQueues'))];
  const queues = state.queues;
  return [
    h('h1', null, 'Queues'),
    h(
      'p',
      { class: 'summary' },
      'Each DispatchQueue’s quota across the fleet, what its admitted workloads hold, and its share in its cohort.',
    ),
    legend(),
    state.queuesError && errorBox(state.queuesError),
    queues === undefined
      ? h('p', { 'aria-busy': 'true' }, 'Loading…')
      : queues.length === 0
        ? h('p', null, 'No DispatchQueues: every workload is placed as it comes, without quotas.')
        : h(
            'div',
            { class: 'cards' },
            queues.map((queue) => card(context, queue, true)),
          ),
  ];
}

export function renderQueue(context: PageContext, name: string) {
  const { state } = context;
  const back = h('p', null, h('a', { href: hashOf({ view: 'queues' }) }, '← All queues'));
  if (!context.can('listQueues'))
    return [h('h1', null, name), back, notAllowed('read the DispatchQueues', context.needs('listQueues'))];
  const at = state.queueDetail?.name === name ? state.queueDetail : undefined;
  return [
    h('h1', null, `Queue ${name}`),
    back,
    at?.error && errorBox(at.error),
    !at?.queue
      ? !at?.error && h('p', { 'aria-busy': 'true' }, 'Loading…')
      : [
          legend(),
          h('div', { class: 'cards single' }, card(context, at.queue, false)),
          detailTables(at.queue),
        ],
  ];
}
