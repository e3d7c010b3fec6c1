import type { Cluster } from '@jobrelay/api-types';
import { parseQuantity } from '@jobrelay/resources';
import { formatQuantity } from '../src/resource-quantity.ts';
import { ApiError } from './api-client.ts';
import type { PageContext } from './dashboard-state.ts';
import { h, s } from './dom.ts';
import { age, badge, errorBox, notAllowed } from './format.ts';

/** cpu, memory, then every GPU-like extended resource the cluster reports. */
function barResources(cluster: Cluster): string[] {
  const names = Object.keys(cluster.capacity?.allocatable ?? {});
  const extended = names.filter((n) => n.includes('/')).sort();
  return [...['cpu', 'memory'].filter((n) => names.includes(n)), ...extended];
}

const resourceLabel = (name: string) =>
  name === 'cpu' ? 'CPU' : name === 'memory' ? 'Memory' : name.replace(/^.*\//, '').toUpperCase();

/** One capacity bar: used (pods running), assumed (placed, pods not made yet), free; with the numbers in words. */
function capacityBar(cluster: Cluster, resource: string) {
  const allocatable = parseQuantity(cluster.capacity?.allocatable[resource] ?? '') ?? 0;
  const free = parseQuantity(cluster.capacity?.free[resource] ?? '') ?? 0;
  const assumed = parseQuantity(cluster.assumed?.[resource] ?? '0') ?? 0;
  const used = Math.max(0, allocatable - free - assumed);
  const pct = (value: number) => (allocatable > 0 ? Math.min(100, (value / allocatable) * 100) : 0);
  const usedPct = pct(used);
  const assumedPct = Math.min(100 - usedPct, pct(assumed));
  const words = `${formatQuantity(resource, used)} used, ${formatQuantity(resource, assumed)} assumed, of ${formatQuantity(resource, allocatable)} allocatable`;
  return h(
    'div',
    { class: 'capacity' },
    h('span', { class: 'capacity-name' }, resourceLabel(resource)),
    s(
      'svg',
      {
        class: 'bar',
        viewBox: '0 0 100 10',
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': `${resourceLabel(resource)}: ${words}`,
      },
      s('rect', { class: 'bar-free', x: 0, y: 0, width: 100, height: 10 }),
      s('rect', { class: 'bar-used', x: 0, y: 0, width: usedPct.toFixed(2), height: 10 }),
      s('rect', {
        class: 'bar-assumed',
        x: usedPct.toFixed(2),
        y: 0,
        width: assumedPct.toFixed(2),
        height: 10,
      }),
    ),
    h('span', { class: 'capacity-words' }, words),
  );
}

function scheduling(cluster: Cluster) {
  if (cluster.draining) return badge('Draining', 'warn', 'No new workloads; its workloads move elsewhere');
  if (cluster.cordoned) return badge('Cordoned', 'warn', 'No new workloads are placed here');
  return badge('Schedulable', 'ok');
}

async function act(
  context: PageContext,
  cluster: string,
  action: 'cordon' | 'uncordon' | 'drain',
): Promise<void> {
  const { state, client } = context;
  state.busy.add(cluster);
  state.actionError = undefined;
  state.confirmingDrain = undefined;
  context.rerender();
  try {
    const result = await client.post<Cluster | { cluster: string; remaining: number }>(
      `/api/v1/clusters/${encodeURIComponent(cluster)}/${action}`,
    );
    if ('name' in result) {
      state.clusters.set(result.name, result);
      state.clusterChanges += 1;
    }
    const done = { cordon: 'cordoned', uncordon: 'uncordoned', drain: 'draining' }[action];
    context.announce(
      'remaining' in result
        ? `${cluster} is draining: ${result.remaining} workload(s) to move`
        : `${cluster} ${done}`,
    );
    if (action === 'drain') await context.reloadClusters();
  } catch (err) {
    state.actionError = `Could not ${action} ${cluster}: ${err instanceof ApiError || err instanceof Error ? err.message : String(err)}`;
  } finally {
    state.busy.delete(cluster);
    context.rerender();
    // After a drain the confirmation is gone: the keyboard continues from the cluster's toggle.
    if (action === 'drain')
      setTimeout(
        () => document.querySelector<HTMLElement>(`[data-key="cordon-${CSS.escape(cluster)}"]`)?.focus(),
        50,
      );
  }
}

function actions(context: PageContext, cluster: Cluster) {
  const { state } = context;
  const busy = state.busy.has(cluster.name);
  const mayCordon = context.can('cordonClusters');
  const mayDrain = context.can('drainClusters');
  if (!mayCordon && !mayDrain)
    return h(
      'p',
      { class: 'help' },
      'Read-only for you: cordoning needs ',
      h('code', null, context.needs('cordonClusters')),
      '.',
    );
  if (state.confirmingDrain === cluster.name)
    return h(
      'div',
      { class: 'confirm', role: 'group', 'aria-label': `Confirm draining ${cluster.name}` },
      h(
        'p',
        null,
        `Drain ${cluster.name}? No new workloads, and its ${cluster.workloadsPlaced} unfinished workload(s) are placed elsewhere.`,
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'data-key': `confirm-drain-${cluster.name}`,
          onClick: () => void act(context, cluster.name, 'drain'),
        },
        `Drain ${cluster.name}`,
      ),
      h(
        'button',
        {
          type: 'button',
          'data-key': `cancel-drain-${cluster.name}`,
          onClick: () => {
            state.confirmingDrain = undefined;
            context.rerender();
          },
        },
        'Cancel',
      ),
    );
  const uncordonNeedsDrain = cluster.draining && !mayDrain;
  // One key for the cordon/uncordon toggle, and busy buttons stay enabled (aria-disabled, clicks
  // ignored): a disabled button loses focus, and a keyboard user would land back at the top.
  const button = (label: string, key: string, run: () => void, extra: Record<string, string> = {}) =>
    h(
      'button',
      {
        type: 'button',
        'data-key': key,
        'aria-disabled': busy ? 'true' : undefined,
        ...extra,
        onClick: () => {
          if (!state.busy.has(cluster.name)) run();
        },
      },
      label,
    );
  return h(
    'div',
    { class: 'actions' },
    mayCordon &&
      (cluster.cordoned
        ? uncordonNeedsDrain
          ? h(
              'button',
              {
                type: 'button',
                disabled: true,
                title: `Ending a drain needs ${context.needs('drainClusters')}`,
              },
              `Uncordon ${cluster.name}`,
            )
          : button(
              `Uncordon ${cluster.name}`,
              `cordon-${cluster.name}`,
              () => void act(context, cluster.name, 'uncordon'),
            )
        : button(
            `Cordon ${cluster.name}`,
            `cordon-${cluster.name}`,
            () => void act(context, cluster.name, 'cordon'),
          )),
    mayDrain &&
      !cluster.draining &&
      button(
        `Drain ${cluster.name}…`,
        `drain-${cluster.name}`,
        () => {
          state.confirmingDrain = cluster.name;
          context.rerender();
          setTimeout(
            () =>
              document
                .querySelector<HTMLElement>(`[data-key="cancel-drain-${CSS.escape(cluster.name)}"]`)
                ?.focus(),
            0,
          );
        },
        { class: 'danger-outline' },
      ),
  );
}

function card(context: PageContext, cluster: Cluster) {
  const id = `cluster-${cluster.name}`;
  const kinds = Object.entries(cluster.placedByKind)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  return h(
    'article',
    { class: 'card cluster', 'aria-labelledby': id, 'data-cluster': cluster.name },
    h(
      'header',
      null,
      h('h2', { id }, cluster.name),
      cluster.active
        ? badge('Active', 'ok', cluster.message)
        : badge(`Not active: ${cluster.reason}`, 'bad', cluster.message),
      scheduling(cluster),
    ),
    !cluster.active && h('p', { class: 'help' }, cluster.message),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Kubernetes'),
      h('dd', null, cluster.kubernetesVersion ?? 'unknown'),
      h('dt', null, 'Nodes'),
      h('dd', null, String(cluster.capacity?.nodes ?? '—')),
      h('dt', null, 'Workloads placed'),
      h(
        'dd',
        { 'data-field': 'workloads-placed' },
        `${cluster.workloadsPlaced}${kinds ? ` (${kinds})` : ''}`,
      ),
      h('dt', null, 'Placements/min'),
      h('dd', null, String(cluster.placementsPerMinute)),
      h('dt', null, 'Heartbeat'),
      h('dd', null, age(cluster.lastHeartbeatTime)),
    ),
    cluster.capacity
      ? h(
          'div',
          { class: 'capacities' },
          barResources(cluster).map((resource) => capacityBar(cluster, resource)),
        )
      : h('p', { class: 'help' }, 'Capacity not reported yet.'),
    actions(context, cluster),
  );
}

export function renderFleet(context: PageContext) {
  const { state } = context;
  const clusters = [...state.clusters.values()].sort((a, b) => a.name.localeCompare(b.name));
  const active = clusters.filter((c) => c.active).length;
  const cordoned = clusters.filter((c) => c.cordoned).length;
  return [
    h('h1', null, 'Fleet'),
    !context.can('listClusters')
      ? notAllowed('list the worker clusters', context.needs('listClusters'))
      : [
          h(
            'p',
            { class: 'summary' },
            `${clusters.length} worker cluster(s): ${active} active, ${cordoned} cordoned or draining. Bars: `,
            h('span', { class: 'key key-used' }, 'used'),
            ' ',
            h('span', { class: 'key key-assumed' }, 'assumed'),
            ' ',
            h('span', { class: 'key key-free' }, 'free'),
          ),
          state.clustersError && errorBox(state.clustersError),
          state.actionError && errorBox(state.actionError),
          clusters.length === 0 && !state.clustersError
            ? h('p', null, 'No worker clusters registered yet.')
            : h(
                'div',
                { class: 'cards' },
                clusters.map((c) => card(context, c)),
              ),
        ],
  ];
}
