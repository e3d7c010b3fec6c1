export {
  type ClusterCandidate,
  chooseWorkerCluster,
  type PlacementDecision,
  type PlacementRequest,
} from './choose-worker-cluster.ts';
export {
  type PlacementOutcome,
  PlacementQueue,
  type PlacementQueueOptions,
  type PlacementTask,
  unschedulableRetryDelayMs,
} from './placement-queue.ts';
export {
  type CarriedProgress,
  formatPlacementRecord,
  noProgress,
  type ParsedPlacement,
  type PlacementRecord,
  parsePlacementRecord,
} from './placement-record.ts';
