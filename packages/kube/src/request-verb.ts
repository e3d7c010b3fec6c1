/**
 * The Kubernetes verb of a request, as the apiserver's own `apiserver_request_total` names it,
 * from its HTTP method and URL: GET is `get` on one object and `list` on a collection (`watch`
 * with ?watch=true), POST `create`, PUT `update`, PATCH `patch`, DELETE `delete`. For metrics:
 * an unknown shape is named by its method rather than guessed.
 */
export function requestVerb(method: string, url: string): string {
  const upper = method.toUpperCase();
  switch (upper) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return isCollection(new URL(url, 'http://apiserver')) ? 'deletecollection' : 'delete';
    case 'GET': {
      const parsed = new URL(url, 'http://apiserver');
      const watch = parsed.searchParams.get('watch');
      if (watch === 'true' || watch === '1') return 'watch';
      return isCollection(parsed) ? 'list' : 'get';
    }
    default:
      return upper.toLowerCase();
  }
}

/** Namespaces' own subresources: /api/v1/namespaces/<name>/<these> is not a namespaced collection. */
const namespaceSubresources = new Set(['status', 'finalize']);

/** Whether the URL names a collection (…/jobs) rather than one object (…/jobs/<name>[/status]). */
function isCollection(url: URL): boolean {
  const segments = url.pathname.split('/').filter(Boolean);
  // Past the group-version: /api/v1/… or /apis/<group>/<version>/…
  const rest =
    segments[0] === 'api' ? segments.slice(2) : segments[0] === 'apis' ? segments.slice(3) : undefined;
  if (rest === undefined || rest.length === 0) return false;
  const resource =
    rest[0] === 'namespaces' && rest.length >= 3 && !namespaceSubresources.has(rest[2]!)
      ? rest.slice(2)
      : rest;
  return resource.length === 1;
}
