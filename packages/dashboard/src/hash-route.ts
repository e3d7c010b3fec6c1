/**
 * The dashboard's pages, from the URL's hash: #/fleet, #/workloads, #/workloads/<kind>/<ns>/<name>,
 * #/pending, #/queues, #/queues/<name>, #/charts.
 */
export type DashboardRoute =
  | { view: 'fleet' }
  | { view: 'workloads' }
  | { view: 'workload'; kind: string; namespace: string; name: string }
  | { view: 'pending' }
  | { view: 'queues' }
  | { view: 'queue'; name: string }
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
  const [first, kind, namespace, name] = parts;
  if (first === 'workloads' && kind && namespace && name && parts.length === 4)
    return { view: 'workload', kind, namespace, name };
  if (first === 'workloads' && parts.length === 1) return { view: 'workloads' };
  if (first === 'pending') return { view: 'pending' };
  if (first === 'queues' && kind && parts.length === 2) return { view: 'queue', name: kind };
  if (first === 'queues' && parts.length === 1) return { view: 'queues' };
  if (first === 'charts') return { view: 'charts' };
  return { view: 'fleet' };
}

export function hashOf(route: DashboardRoute): string {
  if (route.view === 'workload')
    return `#/workloads/${[route.kind, route.namespace, route.name].map(encodeURIComponent).join('/')}`;
  if (route.view === 'queue') return `#/queues/${encodeURIComponent(route.name)}`;
  return `#/${route.view}`;
}
