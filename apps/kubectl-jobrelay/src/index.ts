export { JobrelayApiClient } from './api-client.ts';
export { commands, parseCommandLine } from './command-line.ts';
export { describeApiError } from './describe-api-error.ts';
export { formatAge, formatDuration } from './format-age.ts';
export { formatTable } from './format-table.ts';
export { extractContextKubeconfig, kubeconfigFiles, loadKubeconfig } from './kubeconfig-files.ts';
export { ApiError, type ExitCode, exitCodes } from './plugin-errors.ts';
export type { PluginIo } from './plugin-session.ts';
export { runPlugin } from './run-plugin.ts';
