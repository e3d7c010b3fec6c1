/** The dashboard's pages, from the URL's hash (#/fleet, #/jobs, #/jobs/ns/name, #/pending, #/charts). */
export type DashboardRoute =
  | { view: 'fleet' }
  | { view: 'jobs' }
  | { view: 'job'; namespace: string; name: string }
  | { view: 'pending' }
  | { view: 'charts' };

/** An unknown or empty hash is the fleet, the landing page. */
export function parseHashRoute(hash: string): DashboardRoute {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  const [first, namespace, name] = parts;
  if (first === 'jobs' && namespace && name && parts.length === 3) return { view: 'job', namespace, name };
  if (first === 'jobs' && parts.length === 1) return { view: 'jobs' };
  if (first === 'pending') return { view: 'pending' };
  if (first === 'charts') return { view: 'charts' };
  return { view: 'fleet' };
}

export function hashOf(route: DashboardRoute): string {
  if (route.view === 'job')
    return `#/jobs/${encodeURIComponent(route.namespace)}/${encodeURIComponent(route.name)}`;
  return `#/${route.view}`;
}
