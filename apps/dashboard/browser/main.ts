import './dashboard.css';
import { hashOf, parseHashRoute } from '../src/hash-route.ts';
import { inNamespace } from '../src/namespace-scope.ts';
import { ApiClient, ApiError } from './api-client.ts';
import type { Cluster, JobDetail, JobSummary, Me, PendingItem, StatsHistory } from './api-types.ts';
import { renderCharts } from './charts-page.ts';
import { type DashboardState, initialState, jobKey, type PageContext } from './dashboard-state.ts';
import { h, replaceContent } from './dom.ts';
import { renderFleet } from './fleet-page.ts';
import { renderJob } from './job-page.ts';
import { renderJobs } from './jobs-page.ts';
import { renderPending } from './pending-page.ts';
import { renderSignIn, signIn } from './sign-in-page.ts';
import { watchFleet } from './watch-stream.ts';

/** The token lives in this tab's session storage only: closing the tab forgets it. */
const tokenKey = 'jobrelay.dashboard.token';
/** The namespace signed in to (absent: every namespace), kept beside the token. */
const namespaceKey = 'jobrelay.dashboard.namespace';
const root = document.getElementById('app')!;

const pages = [
  { view: 'fleet', label: 'Fleet' },
  { view: 'jobs', label: 'Jobs' },
  { view: 'pending', label: 'Pending' },
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

function start(token: string, me: Me): void {
  sessionStorage.setItem(tokenKey, token);
  // Lists and the watch of Jobs and workloads ask for this namespace only; the fleet is cluster-wide.
  const namespace = me.namespace ?? undefined;
  if (namespace) sessionStorage.setItem(namespaceKey, namespace);
  else sessionStorage.removeItem(namespaceKey);
  const client = new ApiClient(token);
  const state: DashboardState = initialState();
  const allowed = new Map(me.actions.map((a) => [a.action, a]));
  const can = (action: string) => allowed.get(action)?.allowed === true;
  const needs = (action: string) => allowed.get(action)?.needs ?? action;

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
              { class: 'scope', title: 'The Jobs and Pending pages show this namespace' },
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
  const reloadJobs = async () => {
    if (!can('listJobs')) return;
    const changesBefore = state.jobChanges;
    try {
      const { items, truncated } = await client.list<JobSummary>(inNamespace('/api/v1/jobs', namespace));
      if (state.jobChanges !== changesBefore) {
        jobsSoon();
        return;
      }
      state.jobs = new Map(items.map((j) => [jobKey(j), j]));
      state.jobsTruncated = truncated;
      state.jobsError = undefined;
    } catch (err) {
      state.jobsError = message(err);
    }
    rerender();
  };
  const reloadPending = async () => {
    if (!can('listWorkloads')) return;
    try {
      state.pending = (await client.list<PendingItem>(inNamespace('/api/v1/pending', namespace))).items;
      state.pendingError = undefined;
    } catch (err) {
      state.pendingError = message(err);
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
  const reloadDetail = async () => {
    const route = state.route;
    if (route.view !== 'job') return;
    const key = `${route.namespace}/${route.name}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(route.namespace)}/jobs/${encodeURIComponent(route.name)}`;
    try {
      const job = await client.get<JobDetail>(path);
      if (state.detail?.key === key) state.detail = { ...state.detail, job, error: undefined };
    } catch (err) {
      if (state.detail?.key === key) state.detail = { ...state.detail, error: message(err) };
    }
    rerender();
  };
  const reloadLogs = async () => {
    const route = state.route;
    if (route.view !== 'job' || !can('readLogs')) return;
    const key = `${route.namespace}/${route.name}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(route.namespace)}/jobs/${encodeURIComponent(route.name)}/logs?tailLines=200`;
    if (state.detail?.key === key) state.detail = { ...state.detail, logsLoading: true };
    rerender();
    try {
      const logs = await client.text(path);
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
    can,
    needs,
    rerender,
    announce,
    reloadClusters,
    reloadDetail,
    reloadLogs,
  };

  const clustersSoon = throttled(2_000, () => void reloadClusters());
  const jobsSoon = throttled(2_000, () => void reloadJobs());
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

  const streams = [...(can('watchJobs') ? ['jobs'] : []), ...(can('watchClusters') ? ['clusters'] : [])];
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
            void reloadJobs();
            pendingSoon();
          }
          if (live === 'live') wasLive = true;
          if (live === 'stopped') announce(`Live updates stopped: ${detail ?? ''}`);
        },
        onEvent: (event, data) => {
          const change = data as { type: string; object: unknown };
          if (event === 'job') {
            const job = change.object as JobSummary;
            const key = jobKey(job);
            const before = state.jobs.get(key);
            if (change.type === 'deleted') state.jobs.delete(key);
            else state.jobs.set(key, job);
            state.jobChanges += 1;
            if (before && before.phase !== job.phase && change.type !== 'deleted')
              announce(`Job ${key} is now ${job.phase}`);
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
    );
  } else {
    state.live = 'stopped';
    state.liveDetail = 'your RBAC allows watching neither Jobs nor clusters';
    drawLive();
  }

  // Without a watch on one of them, or between events, a slow poll keeps pages honest.
  setInterval(() => {
    if (state.route.view === 'charts') void reloadHistory();
    if (state.route.view === 'pending') void reloadPending();
    if (!can('watchClusters')) void reloadClusters();
    if (!can('watchJobs')) void reloadJobs();
  }, 15_000);

  const onRoute = () => {
    state.route = parseHashRoute(location.hash);
    const canonical = hashOf(state.route);
    if (location.hash !== canonical) history.replaceState(null, '', canonical);
    for (const link of navLinks) {
      const current = link.dataset.view === (state.route.view === 'job' ? 'jobs' : state.route.view);
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    state.confirmingDrain = undefined;
    if (state.route.view === 'job') {
      const key = `${state.route.namespace}/${state.route.name}`;
      if (state.detail?.key !== key) state.detail = { key };
      void reloadDetail();
      void reloadLogs();
    }
    if (state.route.view === 'pending') void reloadPending();
    if (state.route.view === 'charts') void reloadHistory();
    const title = pages.find((p) => p.view === state.route.view)?.label ?? 'Job';
    document.title = `${title} · jobrelay`;
    draw();
  };

  const draw = () => {
    drawLive();
    const route = state.route;
    const content =
      route.view === 'fleet'
        ? renderFleet(context)
        : route.view === 'jobs'
          ? renderJobs(context)
          : route.view === 'job'
            ? renderJob(context, route.namespace, route.name)
            : route.view === 'pending'
              ? renderPending(context)
              : renderCharts(context);
    replaceContent(main, content);
  };

  window.addEventListener('hashchange', onRoute);
  onRoute();
  void reloadClusters();
  void reloadJobs();
}

function boot(): void {
  const token = sessionStorage.getItem(tokenKey);
  const namespace = sessionStorage.getItem(namespaceKey) ?? '';
  const signedIn = (freshToken: string, me: Me) => start(freshToken, me);
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
