import { hashOf } from '../src/hash-route.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, scrollableTable } from './dom.ts';
import { badge, duration, errorBox, notAllowed } from './format.ts';

export function renderPending(context: PageContext) {
  const { state } = context;
  if (context.listableKinds.length === 0)
    return [h('h1', null, 'Pending'), notAllowed('read the pending queue', context.needs('listWorkloads'))];
  const items = state.pending;
  return [
    h('h1', null, 'Pending'),
    h(
      'p',
      { class: 'summary' },
      'Workloads waiting for a cluster, in the order the one placement queue takes them, and why each waits: the DispatchQueue holding one (and its place there), its placement task in Redis.',
    ),
    state.pendingError && errorBox(state.pendingError),
    items === undefined
      ? h('p', { 'aria-busy': 'true' }, 'Loading…')
      : items.length === 0
        ? h('p', null, 'Nothing waits: every dispatched workload is placed.')
        : scrollableTable(
            'Pending queue',
            ['#', 'Workload', 'Kind', 'Waiting', 'DispatchQueue', 'Task', 'Why it waits'],
            items.map((item) =>
              h(
                'tr',
                null,
                h('td', { class: 'number' }, String(item.position)),
                h(
                  'td',
                  null,
                  h(
                    'a',
                    {
                      href: hashOf({
                        view: 'workload',
                        kind: item.kind,
                        namespace: item.namespace,
                        name: item.name,
                      }),
                    },
                    `${item.namespace}/${item.name}`,
                  ),
                ),
                h('td', null, item.kind),
                h('td', null, item.waitingSeconds === null ? '—' : duration(item.waitingSeconds)),
                h(
                  'td',
                  null,
                  item.queue
                    ? h(
                        'a',
                        { href: hashOf({ view: 'queue', name: item.queue.name }) },
                        item.queue.position !== null && item.queue.of !== null
                          ? `${item.queue.name} (${item.queue.position} of ${item.queue.of})`
                          : item.queue.name,
                      )
                    : '—',
                ),
                h('td', null, badge(item.queueState, item.queueState === 'active' ? 'info' : 'muted')),
                h('td', { class: 'reason' }, item.reason),
              ),
            ),
          ),
  ];
}
