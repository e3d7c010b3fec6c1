export { classifyMirror, isDeletable, type MirrorClass, type MirrorContext } from './classify-mirror.ts';
export { type EventAction, type EventReason, eventReasons } from './event-reasons.ts';
export type { MirrorRefusal, OriginAction } from './origin-actions.ts';
export type { ClusterSnapshot, OriginSnapshot } from './origin-snapshot.ts';
export { planOrigin } from './plan-origin.ts';
export { mirrorRecorded } from './plan-placed.ts';
export {
  type PlacementChoice,
  type PlacementNeed,
  type PlacementPlan,
  type PlacementPlanConfig,
  placementNeed,
  planPlacement,
} from './plan-placement.ts';
export {
  conflictRetryMs,
  defaultMirrorRefusalLimit,
  deletionRetryMs,
  type PlannerConfig,
  unavailableClusterRetryMs,
} from './planner-config.ts';
export { evictionCheckMs, planEviction, replace } from './re-placement.ts';
export { statusWrite } from './status-sync.ts';
