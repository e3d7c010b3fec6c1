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
import { type DashboardRoute, parseHashRoute } from '../src/hash-route.ts';
import { ShareHistory } from '../src/queue-usage.ts';
import { emptyWorkloadFilter, type WorkloadFilter } from '../src/workload-filters.ts';
import type { ApiClient } from './api-client.ts';
import type { WatchState } from './watch-stream.ts';

/** Everything the pages draw from; changed only by main.ts and the pages' actions, then re-rendered. */
export interface DashboardState {
  route: DashboardRoute;
  clusters: Map<string, Cluster>;
  clustersError: string | undefined;
  /** By workloadKey (kind/namespace/name). */
  workloads: Map<string, WorkloadSummary>;
  workloadsTruncated: boolean;
  workloadsError: string | undefined;
  pending: PendingWorkload[] | undefined;
  pendingError: string | undefined;
  history: StatsHistory | undefined;
  historyError: string | undefined;
  queues: DispatchQueue[] | undefined;
  queuesError: string | undefined;
  /** The queue its page shows. */
  queueDetail: { name: string; queue?: DispatchQueueDetail; error?: string } | undefined;
  /** Each queue's share at every poll of the queues, for its chart (the API keeps no history of it). */
  shareHistory: ShareHistory;
  detail:
    | {
        key: string;
        workload?: WorkloadDetail;
        error?: string;
        logs?: string;
        logsError?: string;
        logsLoading?: boolean;
      }
    | undefined;
  filter: WorkloadFilter;
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
  workloadChanges: number;
}

export function initialState(): DashboardState {
  return {
    route: parseHashRoute(location.hash),
    clusters: new Map(),
    clustersError: undefined,
    workloads: new Map(),
    workloadsTruncated: false,
    workloadsError: undefined,
    pending: undefined,
    pendingError: undefined,
    history: undefined,
    historyError: undefined,
    queues: undefined,
    queuesError: undefined,
    queueDetail: undefined,
    // An hour of polls every 10 s.
    shareHistory: new ShareHistory(360),
    detail: undefined,
    filter: { ...emptyWorkloadFilter },
    live: 'connecting',
    liveDetail: undefined,
    confirmingDrain: undefined,
    actionError: undefined,
    busy: new Set(),
    clusterChanges: 0,
    workloadChanges: 0,
  };
}

/** What a page needs: the state, the API, the caller's rights, and how to ask for a redraw. */
export interface PageContext {
  state: DashboardState;
  client: ApiClient;
  me: Caller;
  /** The kinds the caller may list (in the dashboard's namespace): what the lists ask for. */
  listableKinds: string[];
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
