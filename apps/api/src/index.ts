export { AccessReviewer, type Caller, describePermission, type Permission } from './access-review.ts';
export type { ApiApp, ApiDependencies } from './api-app.ts';
export { type ApiConfig, apiUsage, ConfigError, loadApiConfig } from './api-config.ts';
export { ApiMetrics } from './api-metrics.ts';
export { buildApi } from './build-api.ts';
export { FleetView, type FleetViewOptions } from './fleet-view.ts';
export { chosenKinds, describeKind, servedKinds, WorkloadKinds } from './workload-kinds.ts';
export { type WorkloadPhase, workloadPhase, workloadPhases } from './workload-views.ts';
