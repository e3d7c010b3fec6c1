import { type DashboardRoute, parseHashRoute } from '../src/hash-route.ts';
import { emptyJobFilter, type JobFilter } from '../src/job-filters.ts';
import type { ApiClient } from './api-client.ts';
import type { Cluster, JobDetail, JobSummary, Me, PendingItem, StatsHistory } from './api-types.ts';
import type { WatchState } from './watch-stream.ts';

/** Everything the pages draw from; changed only by main.ts and the pages' actions, then re-rendered. */
export interface DashboardState {
  route: DashboardRoute;
  clusters: Map<string, Cluster>;
  clustersError: string | undefined;
  jobs: Map<string, JobSummary>;
  jobsTruncated: boolean;
  jobsError: string | undefined;
  pending: PendingItem[] | undefined;
  pendingError: string | undefined;
  history: StatsHistory | undefined;
  historyError: string | undefined;
  detail:
    | {
        key: string;
        job?: JobDetail;
        error?: string;
        logs?: string;
        logsError?: string;
        logsLoading?: boolean;
      }
    | undefined;
  filter: JobFilter;
  live: WatchState;
  liveDetail: string | undefined;
  /** The cluster whose drain waits for confirmation. */
  confirmingDrain: string | undefined;
  /** The last action's failure, shown beside the fleet. */
  actionError: string | undefined;
  busy: Set<string>;
  /**
   * Bumped by every change applied from the watch or an action: a list read that began before
   * one would overwrite it with older data, so it is read again instead.
   */
  clusterChanges: number;
  jobChanges: number;
}

export function initialState(): DashboardState {
  return {
    route: parseHashRoute(location.hash),
    clusters: new Map(),
    clustersError: undefined,
    jobs: new Map(),
    jobsTruncated: false,
    jobsError: undefined,
    pending: undefined,
    pendingError: undefined,
    history: undefined,
    historyError: undefined,
    detail: undefined,
    filter: { ...emptyJobFilter },
    live: 'connecting',
    liveDetail: undefined,
    confirmingDrain: undefined,
    actionError: undefined,
    busy: new Set(),
    clusterChanges: 0,
    jobChanges: 0,
  };
}

/** What a page needs: the state, the API, the caller's rights, and how to ask for a redraw. */
export interface PageContext {
  state: DashboardState;
  client: ApiClient;
  me: Me;
  can(action: string): boolean;
  /** The permission an action needs (the first missing one when not allowed). */
  needs(action: string): string;
  rerender(): void;
  /** Said to screen readers through the aria-live region, and shown in the status line. */
  announce(message: string): void;
  reloadClusters(): Promise<void>;
  reloadDetail(): Promise<void>;
  reloadLogs(): Promise<void>;
}

export const jobKey = (job: { namespace: string; name: string }) => `${job.namespace}/${job.name}`;
