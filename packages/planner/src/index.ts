export { classifyMirror, isDeletable, type MirrorClass, type MirrorContext } from './classify-mirror.ts';
export { type EventAction, type EventReason, eventReasons } from './event-reasons.ts';
export type { MirrorRefusal, OriginAction } from './origin-actions.ts';
export type { ClusterSnapshot, OriginSnapshot } from './origin-snapshot.ts';
export {
  conflictRetryMs,
  defaultMirrorRefusalLimit,
  deletionRetryMs,
  evictionCheckMs,
  mirrorRecorded,
  type PlannerConfig,
  planEviction,
  planOrigin,
  replace,
  statusWrite,
  unavailableClusterRetryMs,
} from './plan-origin.ts';
export {
  type PlacementChoice,
  type PlacementNeed,
  type PlacementPlan,
  type PlacementPlanConfig,
  placementNeed,
  planPlacement,
} from './plan-placement.ts';
