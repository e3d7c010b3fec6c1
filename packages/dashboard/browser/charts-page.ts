import type { StatsHistory } from '@jobrelay/api-types';
import { linePath, niceScale, stackedBars, timeLinePath } from '../src/chart-scale.ts';
import type { PageContext } from './dashboard-state.ts';
import { type Child, h, s } from './dom.ts';
import { clock, errorBox, notAllowed } from './format.ts';

const width = 600;
const height = 180;
const margin = { left: 44, right: 8, top: 10, bottom: 24 };
const plot = { width: width - margin.left - margin.right, height: height - margin.top - margin.bottom };
/** Series colours come from CSS classes (series-0 ...): the same cluster has the same colour in every chart. */
const seriesClass = (i: number) => `series-${i % 6}`;

function axes(top: number, ticks: number[], minutes: string[], unit: string) {
  const first = minutes[0];
  const middle = minutes[Math.floor(minutes.length / 2)];
  return [
    ticks.map((tick) => {
      const y = margin.top + plot.height - (tick / top) * plot.height;
      return s(
        'g',
        { class: 'tick' },
        s('line', { x1: margin.left, x2: width - margin.right, y1: y, y2: y }),
        s('text', { x: margin.left - 6, y: y + 4, 'text-anchor': 'end' }, `${tick}${unit}`),
      );
    }),
    s('text', { class: 'x-label', x: margin.left, y: height - 6 }, clock(first)),
    s(
      'text',
      { class: 'x-label', x: margin.left + plot.width / 2, y: height - 6, 'text-anchor': 'middle' },
      clock(middle),
    ),
    s('text', { class: 'x-label', x: width - margin.right, y: height - 6, 'text-anchor': 'end' }, 'now'),
  ];
}

function chart(id: string, title: string, summary: string, body: Child, legend: Child) {
  return h(
    'figure',
    { class: 'card chart', 'aria-labelledby': `${id}-title` },
    h(
      'figcaption',
      null,
      h('h2', { id: `${id}-title` }, title),
      h('p', { class: 'help', id: `${id}-summary` }, summary),
    ),
    s(
      'svg',
      {
        viewBox: `0 0 ${width} ${height}`,
        role: 'img',
        'aria-labelledby': `${id}-title ${id}-summary`,
        class: 'plot',
      },
      body,
    ),
    h('ul', { class: 'legend' }, legend),
  );
}

function placementsChart(history: StatsHistory) {
  const series = history.placementsPerCluster;
  const totals = series.map((c) => c.perMinute.reduce((a, b) => a + b, 0));
  const perMinuteMax = Math.max(
    0,
    ...history.minutes.map((_, i) => series.reduce((sum, c) => sum + (c.perMinute[i] ?? 0), 0)),
  );
  const { top, ticks } = niceScale(perMinuteMax);
  const bars = stackedBars(
    series.map((c) => c.perMinute),
    top,
    plot.height,
  );
  const slot = plot.width / Math.max(1, history.minutes.length);
  const total = totals.reduce((a, b) => a + b, 0);
  const summary = `${total} placement(s) in the last hour${series.length ? `: ${series.map((c, i) => `${c.cluster} ${totals[i]}`).join(', ')}` : ''}.`;
  return chart(
    'placements',
    'Placements per minute, per cluster',
    summary,
    [
      axes(top, ticks, history.minutes, ''),
      bars.map((segments, i) =>
        segments.map((segment, k) =>
          segment.height > 0
            ? s('rect', {
                class: seriesClass(k),
                x: (margin.left + i * slot + 1).toFixed(1),
                y: (margin.top + segment.y).toFixed(1),
                width: Math.max(1, slot - 2).toFixed(1),
                height: segment.height.toFixed(1),
              })
            : null,
        ),
      ),
    ],
    series.map((c, i) =>
      h('li', null, h('span', { class: `swatch ${seriesClass(i)}` }), `${c.cluster}: ${totals[i]}`),
    ),
  );
}

function queueChart(history: StatsHistory) {
  const samples = history.queueDepth.map((q) => ({
    at: Date.parse(q.at),
    pending: q.pending,
    queued: q.queued,
  }));
  const max = Math.max(0, ...samples.map((q) => Math.max(q.pending, q.queued ?? 0)));
  const { top, ticks } = niceScale(max);
  const from = Date.parse(history.minutes[0] ?? history.now);
  const to = Date.parse(history.now);
  const last = samples.at(-1);
  const pendingPath = timeLinePath(
    samples.map((q) => ({ at: q.at, value: q.pending })),
    from,
    to,
    top,
    plot,
  );
  const queuedPath = timeLinePath(
    samples.filter((q) => q.queued !== null).map((q) => ({ at: q.at, value: q.queued! })),
    from,
    to,
    top,
    plot,
  );
  const summary = last
    ? `Now ${last.pending} workload(s) waiting for a cluster, ${last.queued ?? 'unknown'} placement task(s) in Redis; at most ${max} in the hour (sampled every ${history.sampleSeconds} s since ${clock(history.since)}).`
    : 'No sample yet: the API samples the queue every 15 s after it starts.';
  return chart(
    'queue',
    'Queue depth',
    summary,
    [
      axes(top, ticks, history.minutes, ''),
      s(
        'g',
        { transform: `translate(${margin.left} ${margin.top})` },
        s('path', { class: 'line series-0', d: pendingPath }),
        s('path', { class: 'line dashed series-1', d: queuedPath }),
        // Dots too: right after the API starts, one sample is no line yet.
        samples.map((q) =>
          q.at < from || q.at > to
            ? null
            : s('circle', {
                class: 'dot series-0',
                cx: (((q.at - from) / Math.max(1, to - from)) * plot.width).toFixed(1),
                cy: (plot.height - (Math.min(q.pending, top) / top) * plot.height).toFixed(1),
                r: 2.5,
              }),
        ),
      ),
    ],
    [
      h('li', null, h('span', { class: 'swatch series-0' }), 'waiting for a cluster'),
      h('li', null, h('span', { class: 'swatch series-1' }), 'placement tasks in Redis'),
    ],
  );
}

function latencyChart(history: StatsHistory) {
  const median = history.dispatchLatency.map((m) => m.medianSeconds);
  const p95 = history.dispatchLatency.map((m) => m.p95Seconds);
  const max = Math.max(0, ...p95.map((v) => v ?? 0), ...median.map((v) => v ?? 0));
  const { top, ticks } = niceScale(max);
  const counted = history.dispatchLatency.reduce((sum, m) => sum + m.count, 0);
  const lastMinute = [...history.dispatchLatency].reverse().find((m) => m.count > 0);
  const summary = counted
    ? `${counted} first placement(s) in the hour; latest minute with any: median ${lastMinute?.medianSeconds} s, p95 ${lastMinute?.p95Seconds} s (from the workload’s creation to its placement).`
    : 'No first placement in the last hour.';
  const dots = (values: Array<number | null>, cls: string) =>
    values.map((v, i) =>
      v === null
        ? null
        : s('circle', {
            class: cls,
            cx: ((i / Math.max(1, values.length - 1)) * plot.width).toFixed(1),
            cy: (plot.height - (Math.min(v, top) / top) * plot.height).toFixed(1),
            r: 2.5,
          }),
    );
  return chart(
    'latency',
    'Dispatch latency',
    summary,
    [
      axes(top, ticks, history.minutes, 's'),
      s(
        'g',
        { transform: `translate(${margin.left} ${margin.top})` },
        s('path', { class: 'line series-2', d: linePath(median, top, plot) }),
        s('path', { class: 'line dashed series-3', d: linePath(p95, top, plot) }),
        dots(median, 'dot series-2'),
        dots(p95, 'dot series-3'),
      ),
    ],
    [
      h('li', null, h('span', { class: 'swatch series-2' }), 'median'),
      h('li', null, h('span', { class: 'swatch series-3' }), '95th percentile'),
    ],
  );
}

export function renderCharts(context: PageContext) {
  const { state } = context;
  if (!context.can('listClusters'))
    return [h('h1', null, 'Charts'), notAllowed('read the fleet’s history', context.needs('listClusters'))];
  const history = state.history;
  return [
    h('h1', null, 'Charts'),
    h(
      'p',
      { class: 'summary' },
      'The last hour, as the API has seen it (kept in its memory: a restart of the API starts the queue depth afresh). Refreshed every 15 s.',
    ),
    state.historyError && errorBox(state.historyError),
    history === undefined
      ? h('p', { 'aria-busy': 'true' }, 'Loading…')
      : h('div', { class: 'charts' }, placementsChart(history), queueChart(history), latencyChart(history)),
  ];
}
