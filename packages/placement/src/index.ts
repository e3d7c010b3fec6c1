export {
  type ClusterCandidate,
  type ClusterVerdict,
  chooseWorkerCluster,
  clusterVerdicts,
  fenceRejection,
  type NamespaceLookup,
  type PlacementDecision,
  type PlacementRequest,
  type ScoredCluster,
  type ScoringPolicy,
  scoringPolicies,
  totalDemand,
} from './choose-worker-cluster.ts';
export { type PlacementPatcher, patchPlacement } from './patch-placement.ts';
export type { ClusterLoad, PlacedWorkload, PodsByOwner } from './placed-load.ts';
export { PlacedLoadIndex } from './placed-load-index.ts';
export {
  clusterCandidates,
  clusterLoad,
  type KindedWorkload,
  loadOfPlaced,
  type PlacementClusterInput,
  type PlacementRequestResult,
  type PlacementSettings,
  placedWorkload,
  placedWorkloadOf,
  placementRecordOf,
  placementRequestFor,
  sealSubjectOf,
  type Workload,
  type WorkloadFacts,
  waitingSince,
} from './placement-inputs.ts';
export {
  formatPlacementRecord,
  nothingCarried,
  type ParsedPlacement,
  type PlacementRecord,
  parsePlacementRecord,
  readPlacementRecord,
  type WorkloadProgress,
} from './placement-record.ts';
export { type PlacementOutcome, type PlacementTask, unschedulableRetryDelayMs } from './placement-task.ts';
export { HIGHEST_TURN, PlacementTurns } from './placement-turns.ts';
export type { PodGroup } from './pod-groups.ts';
export {
  describeRefusal,
  newlyRefusedAsks,
  type PodRestrictions,
  type PodRestrictionsRead,
  podRestrictionRefusal,
  podRestrictionsSchema,
  readPodRestrictions,
  refusedAsks,
} from './pod-restrictions.ts';
export {
  atLeastAsStrict,
  type PodSecurityLevel,
  podSecurityEnforceLabel,
  podSecurityLabelPatch,
  podSecurityLabelPrefix,
  podSecurityLabelsOf,
  podSecurityLevelOf,
  podSecurityLevels,
} from './pod-security.ts';
export {
  type AskedServiceAccount,
  defaultServiceAccount,
  noPodTemplateAsks,
  type PodTemplateAsks,
  podTemplateAsks,
  type WorkloadPodTemplate,
} from './pod-template-asks.ts';
export {
  currentRecordKeyField,
  loadRecordKeyring,
  type RecordKeySecrets,
  recordKeyringFromSecretData,
  recordKeySecretName,
} from './record-key-secret.ts';
export {
  canonicalJson,
  minimumRecordKeyBytes,
  RecordKeyring,
  type SealCheck,
  type SealSubject,
} from './record-seal.ts';
export {
  type HostPort,
  parseRedisUrl,
  queuePrefix,
  type RedisTarget,
  RedisUrlError,
  redisUrlProblem,
} from './redis-url.ts';
export { systemNamespaceProblem } from './system-namespaces.ts';
