export {
  buildDashboardAssets,
  type DashboardAssets,
  dashboardAssets,
  dashboardContentSecurityPolicy,
} from './build-dashboard-assets.ts';
