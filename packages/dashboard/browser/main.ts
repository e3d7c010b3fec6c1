import './dashboard.css';
import type {
  Caller,
  Cluster,
  DispatchQueue,
  DispatchQueueDetail,
  PendingWorkload,
  StatsHistory,
  WorkloadDetail,
  WorkloadSummary,
} from '@jobrelay/api-types';
import { hashOf, parseHashRoute } from '../src/hash-route.ts';
import { inNamespace } from '../src/namespace-scope.ts';
import { workloadKey } from '../src/workload-filters.ts';
import { ApiClient, ApiError } from './api-client.ts';
import { renderCharts } from './charts-page.ts';
import { type DashboardState, initialState, type PageContext } from './dashboard-state.ts';
import { h, replaceContent } from './dom.ts';
import { renderFleet } from './fleet-page.ts';
import { renderPending } from './pending-page.ts';
import { renderQueue, renderQueues } from './queues-page.ts';
import { renderSignIn, signIn } from './sign-in-page.ts';
import { watchFleet } from './watch-stream.ts';
import { renderWorkload } from './workload-page.ts';
import { renderWorkloads } from './workloads-page.ts';

/** The token lives in this tab's session storage only: closing the tab forgets it. */
const tokenKey = 'jobrelay.dashboard.token';
/** The namespace signed in to (absent: every namespace), kept beside the token. */
const namespaceKey = 'jobrelay.dashboard.namespace';
const root = document.getElementById('app')!;

const pages = [
  { view: 'fleet', label: 'Fleet' },
  { view: 'workloads', label: 'Workloads' },
  { view: 'pending', label: 'Pending' },
  { view: 'queues', label: 'Queues' },
  { view: 'charts', label: 'Charts' },
] as const;

/** Calls `run` at most once per `ms`, trailing: a burst of watch events costs one reload. */
function throttled(ms: number, run: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      run();
    }, ms);
  };
}

function message(err: unknown): string {
  return err instanceof ApiError || err instanceof Error ? err.message : String(err);
}

function start(token: string, me: Caller): void {
  sessionStorage.setItem(tokenKey, token);
  // Lists and the watch of workloads ask for this namespace only; the fleet is cluster-wide.
  const namespace = me.namespace ?? undefined;
  if (namespace) sessionStorage.setItem(namespaceKey, namespace);
  else sessionStorage.removeItem(namespaceKey);
  const client = new ApiClient(token);
  const state: DashboardState = initialState();
  const allowed = new Map<string, Caller['actions'][number]>(me.actions.map((a) => [a.action, a]));
  const can = (action: string) => allowed.get(action)?.allowed === true;
  const needs = (action: string) => allowed.get(action)?.needs ?? action;
  // The lists and the watch ask for the kinds the caller may read, so that a caller who may read
  // Jobs but not RayClusters still sees its Jobs (the API refuses a list naming a kind it may not).
  const listableKinds = me.kinds.filter((kind) => kind.list).map((kind) => kind.kind);
  const watchableKinds = me.kinds.filter((kind) => kind.watch).map((kind) => kind.kind);
  /** `path` narrowed to these kinds, unless they are every kind. */
  const ofKinds = (path: string, kinds: string[]) =>
    kinds.length === me.kinds.length
      ? path
      : `${path}${path.includes('?') ? '&' : '?'}kind=${encodeURIComponent(kinds.join(','))}`;

  const announcer = h('p', {
    class: 'visually-hidden',
    role: 'status',
    'aria-live': 'polite',
    id: 'announcer',
  });
  const liveIndicator = h('span', { class: 'live', id: 'live-state' });
  const navLinks = pages.map((page) =>
    h('a', { href: `#/${page.view}`, 'data-view': page.view }, page.label),
  );
  const main = h('main', { id: 'main', tabindex: '-1' });
  const signOut = h(
    'button',
    {
      type: 'button',
      class: 'link on-dark',
      onClick: () => {
        sessionStorage.removeItem(tokenKey);
        sessionStorage.removeItem(namespaceKey);
        location.hash = '';
        location.reload();
      },
    },
    'Sign out',
  );
  replaceContent(
    root,
    h(
      'a',
      {
        class: 'skip',
        href: '#main',
        onClick: (e: Event) => {
          e.preventDefault();
          main.focus();
        },
      },
      'Skip to content',
    ),
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'jobrelay'),
      h(
        'nav',
        { 'aria-label': 'Dashboard pages' },
        h(
          'ul',
          null,
          navLinks.map((link) => h('li', null, link)),
        ),
      ),
      h(
        'span',
        { class: 'who' },
        liveIndicator,
        h('span', { class: 'user', title: me.groups.join(', ') }, me.username),
        namespace
          ? h(
              'span',
              { class: 'scope', title: 'The Workloads and Pending pages show this namespace' },
              `in ${namespace}`,
            )
          : null,
        signOut,
      ),
    ),
    main,
    announcer,
  );

  let scheduled = false;
  const rerender = () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      draw();
    }, 0);
  };
  const announce = (text: string) => {
    announcer.textContent = text;
  };

  const reloadClusters = async () => {
    if (!can('listClusters')) return;
    const changesBefore = state.clusterChanges;
    try {
      const { items } = await client.list<Cluster>('/api/v1/clusters');
      if (state.clusterChanges !== changesBefore) {
        clustersSoon();
        return;
      }
      state.clusters = new Map(items.map((c) => [c.name, c]));
      state.clustersError = undefined;
    } catch (err) {
      state.clustersError = message(err);
    }
    rerender();
  };
  const reloadWorkloads = async () => {
    if (listableKinds.length === 0) return;
    const changesBefore = state.workloadChanges;
    try {
      const { items, truncated } = await client.list<WorkloadSummary>(
        ofKinds(inNamespace('/api/v1/workloads', namespace), listableKinds),
      );
      if (state.workloadChanges !== changesBefore) {
        workloadsSoon();
        return;
      }
      state.workloads = new Map(items.map((w) => [workloadKey(w), w]));
      state.workloadsTruncated = truncated;
      state.workloadsError = undefined;
    } catch (err) {
      state.workloadsError = message(err);
    }
    rerender();
  };
  const reloadPending = async () => {
    if (listableKinds.length === 0) return;
    try {
      state.pending = (
        await client.list<PendingWorkload>(ofKinds(inNamespace('/api/v1/pending', namespace), listableKinds))
      ).items;
      state.pendingError = undefined;
    } catch (err) {
      state.pendingError = message(err);
    }
    rerender();
  };
  const reloadQueues = async () => {
    if (!can('listQueues')) return;
    try {
      const { items } = await client.get<{ items: DispatchQueue[] }>('/api/v1/queues');
      state.queues = items;
      state.queuesError = undefined;
      state.shareHistory.record(
        Date.now(),
        items.map((queue) => ({ queue: queue.name, share: queue.status?.share })),
      );
    } catch (err) {
      state.queuesError = message(err);
    }
    rerender();
  };
  const reloadQueueDetail = async () => {
    const route = state.route;
    if (route.view !== 'queue' || !can('listQueues')) return;
    const { name } = route;
    try {
      const queue = await client.get<DispatchQueueDetail>(`/api/v1/queues/${encodeURIComponent(name)}`);
      if (state.queueDetail?.name === name) state.queueDetail = { name, queue };
      // Its share counts as a sample too: the chart on its page moves while it is open.
      state.shareHistory.record(Date.now(), [{ queue: name, share: queue.status?.share }]);
    } catch (err) {
      if (state.queueDetail?.name === name) state.queueDetail = { ...state.queueDetail, error: message(err) };
    }
    rerender();
  };
  const reloadHistory = async () => {
    if (!can('listClusters')) return;
    try {
      state.history = await client.get<StatsHistory>('/api/v1/stats/history');
      state.historyError = undefined;
    } catch (err) {
      state.historyError = message(err);
    }
    rerender();
  };
  /** The API's path of the workload the route shows, or undefined on another page. */
  const detailPath = () => {
    const route = state.route;
    if (route.view !== 'workload') return undefined;
    const path = `/api/v1/workloads/${[route.kind, route.namespace, route.name].map(encodeURIComponent).join('/')}`;
    return { key: workloadKey(route), path };
  };
  const reloadDetail = async () => {
    const at = detailPath();
    if (!at) return;
    const { key, path } = at;
    try {
      const workload = await client.get<WorkloadDetail>(path);
      if (state.detail?.key === key) state.detail = { ...state.detail, workload, error: undefined };
    } catch (err) {
      if (state.detail?.key === key) state.detail = { ...state.detail, error: message(err) };
    }
    rerender();
  };
  const reloadLogs = async () => {
    const at = detailPath();
    if (!at || !can('readLogs')) return;
    const { key, path } = at;
    if (state.detail?.key === key) state.detail = { ...state.detail, logsLoading: true };
    rerender();
    try {
      const logs = await client.text(`${path}/logs?tailLines=200`);
      if (state.detail?.key === key)
        state.detail = { ...state.detail, logs, logsError: undefined, logsLoading: false };
    } catch (err) {
      if (state.detail?.key === key)
        state.detail = { ...state.detail, logsError: message(err), logsLoading: false };
    }
    rerender();
  };

  const context: PageContext = {
    state,
    client,
    me,
    listableKinds,
    can,
    needs,
    rerender,
    announce,
    reloadClusters,
    reloadDetail,
    reloadLogs,
  };

  const clustersSoon = throttled(2_000, () => void reloadClusters());
  const workloadsSoon = throttled(2_000, () => void reloadWorkloads());
  const pendingSoon = throttled(2_000, () => {
    if (state.route.view === 'pending') void reloadPending();
  });
  const detailSoon = throttled(1_000, () => void reloadDetail());

  const liveWords = {
    connecting: 'Connecting…',
    live: 'Live',
    retrying: 'Reconnecting…',
    stopped: 'Not live',
  };
  const drawLive = () => {
    liveIndicator.textContent = liveWords[state.live];
    liveIndicator.className = `live live-${state.live}`;
    liveIndicator.title = state.liveDetail ?? 'Changes arrive through the API’s event stream';
  };

  const streams = [
    ...(watchableKinds.length > 0 ? ['workloads'] : []),
    ...(can('watchClusters') ? ['clusters'] : []),
  ];
  let wasLive = false;
  if (streams.length > 0) {
    watchFleet(
      client,
      streams,
      {
        onState: (live, detail) => {
          const previous = state.live;
          state.live = live;
          state.liveDetail = detail;
          drawLive();
          if (live === 'live' && wasLive && previous !== 'live') {
            // Back after a break: what changed meanwhile is read anew.
            void reloadClusters();
            void reloadWorkloads();
            pendingSoon();
          }
          if (live === 'live') wasLive = true;
          if (live === 'stopped') announce(`Live updates stopped: ${detail ?? ''}`);
        },
        onEvent: (event, data) => {
          const change = data as { type: string; object: unknown };
          if (event === 'workload') {
            const workload = change.object as WorkloadSummary;
            const key = workloadKey(workload);
            const before = state.workloads.get(key);
            if (change.type === 'deleted') state.workloads.delete(key);
            else state.workloads.set(key, workload);
            state.workloadChanges += 1;
            if (before && before.phase !== workload.phase && change.type !== 'deleted')
              announce(`${workload.kind} ${workload.namespace}/${workload.name} is now ${workload.phase}`);
            if (state.detail?.key === key) detailSoon();
            clustersSoon();
            pendingSoon();
            rerender();
          } else if (event === 'cluster') {
            const cluster = change.object as Cluster;
            if (change.type === 'deleted') state.clusters.delete(cluster.name);
            else state.clusters.set(cluster.name, cluster);
            state.clusterChanges += 1;
            rerender();
          }
        },
      },
      namespace,
      watchableKinds.length === me.kinds.length ? undefined : watchableKinds.join(','),
    );
  } else {
    state.live = 'stopped';
    state.liveDetail = 'your RBAC allows watching neither workloads nor clusters';
    drawLive();
  }

  // Queues have no watch: their pages poll, and the share charts are made of these polls.
  setInterval(() => {
    if (state.route.view === 'queues') void reloadQueues();
    if (state.route.view === 'queue') void reloadQueueDetail();
  }, 10_000);

  // Without a watch on one of them, or between events, a slow poll keeps pages honest.
  setInterval(() => {
    if (state.route.view === 'charts') void reloadHistory();
    if (state.route.view === 'pending') void reloadPending();
    if (!can('watchClusters')) void reloadClusters();
    if (watchableKinds.length === 0) void reloadWorkloads();
  }, 15_000);

  const onRoute = () => {
    state.route = parseHashRoute(location.hash);
    const canonical = hashOf(state.route);
    if (location.hash !== canonical) history.replaceState(null, '', canonical);
    for (const link of navLinks) {
      const view = state.route.view;
      const current =
        link.dataset.view === (view === 'workload' ? 'workloads' : view === 'queue' ? 'queues' : view);
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    state.confirmingDrain = undefined;
    if (state.route.view === 'workload') {
      const key = workloadKey(state.route);
      if (state.detail?.key !== key) state.detail = { key };
      void reloadDetail();
      void reloadLogs();
    }
    if (state.route.view === 'pending') void reloadPending();
    if (state.route.view === 'queues') void reloadQueues();
    if (state.route.view === 'queue') {
      if (state.queueDetail?.name !== state.route.name) state.queueDetail = { name: state.route.name };
      void reloadQueueDetail();
    }
    if (state.route.view === 'charts') void reloadHistory();
    const title =
      pages.find((p) => p.view === state.route.view)?.label ??
      (state.route.view === 'queue' ? `Queue ${state.route.name}` : 'Workload');
    document.title = `${title} · jobrelay`;
    draw();
  };

  const draw = () => {
    drawLive();
    const route = state.route;
    const content =
      route.view === 'fleet'
        ? renderFleet(context)
        : route.view === 'workloads'
          ? renderWorkloads(context)
          : route.view === 'workload'
            ? renderWorkload(context, route.kind, route.namespace, route.name)
            : route.view === 'pending'
              ? renderPending(context)
              : route.view === 'queues'
                ? renderQueues(context)
                : route.view === 'queue'
                  ? renderQueue(context, route.name)
                  : renderCharts(context);
    replaceContent(main, content);
  };

  window.addEventListener('hashchange', onRoute);
  onRoute();
  void reloadClusters();
  void reloadWorkloads();
}

function boot(): void {
  const token = sessionStorage.getItem(tokenKey);
  const namespace = sessionStorage.getItem(namespaceKey) ?? '';
  const signedIn = (freshToken: string, me: Caller) => start(freshToken, me);
  if (!token) {
    renderSignIn(root, signedIn);
    return;
  }
  // A stored token is checked again: it may have expired or lost its rights since.
  void signIn(token, namespace).then((result) => {
    if (result.ok) start(token, result.me);
    else {
      sessionStorage.removeItem(tokenKey);
      renderSignIn(root, signedIn, result.message, namespace);
    }
  });
}

boot();
