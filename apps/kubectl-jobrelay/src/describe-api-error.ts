import type { ApiError, Problem } from './plugin-errors.ts';

/**
 * The lines printed for an API error: `error: <detail>` first, as kubectl prints its errors, then
 * whatever the problem adds that a person acts on — the permission to ask for (403), the
 * fields to fix (400), the reason the kubeconfig was refused (422).
 */
export function describeApiError(err: ApiError): string[] {
  const problem = err.problem;
  if (!problem) return [`error: ${err.message}`];
  const permission = problem.missingPermission;
  if (err.status === 403 && permission?.verb && permission.nonResourceURL) {
    const lines = [`error: forbidden: you may not ${permission.verb} ${permission.nonResourceURL}`];
    lines.push(`  (RBAC: nonResourceURLs ["${permission.nonResourceURL}"], verbs ["${permission.verb}"])`);
    if (problem.detail) lines.push(`  ${problem.detail}`);
    return lines;
  }
  if (err.status === 403 && permission?.verb && permission.resource) {
    const resource = permission.subresource
      ? `${permission.resource}/${permission.subresource}`
      : permission.resource;
    const name = permission.name ? ` "${permission.name}"` : '';
    const namespace = permission.namespace ? ` in namespace "${permission.namespace}"` : '';
    const lines = [`error: forbidden: you may not ${permission.verb} ${resource}${name}${namespace}`];
    // What an admin would put in a Role or ClusterRole to grant it.
    lines.push(
      `  (RBAC: apiGroups ["${permission.group ?? ''}"], resources ["${resource}"], verbs ["${permission.verb}"])`,
    );
    // Repeat the API's own words only when they add something to the line above.
    if (problem.detail && !lines[0]!.endsWith(problem.detail.replace(/^forbidden: /, ''))) {
      lines.push(`  ${problem.detail}`);
    }
    return lines;
  }
  const detail = problem.detail ?? problem.title ?? err.message;
  const lines = [`error: ${problem.reason ? `${problem.reason}: ${detail}` : detail}`];
  for (const e of problem.errors ?? []) lines.push(`  ${e.path ? `${e.path}: ` : ''}${e.message ?? ''}`);
  return lines;
}

/** True when a problem is about `code`, wherever the API put it (code, reason or type URI). */
export function problemIs(problem: Problem | undefined, code: string): boolean {
  if (!problem) return false;
  return problem.code === code || problem.reason === code || (problem.type ?? '').endsWith(`/${code}`);
}
