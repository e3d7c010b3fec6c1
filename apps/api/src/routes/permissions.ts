import { workerClusterGroup, workerClusterPlural } from '@jobrelay/clusters';
import type { AnyWorkloadKindAdapter } from '@jobrelay/kinds';
import type { FastifyRequest } from 'fastify';
import type { Permission } from '../access-review.ts';

/** On WorkerClusters, optionally one of our subresource-style verbs (cordon, drain). */
export function onClusters(verb: string, name?: string, subresource?: string): Permission {
  return {
    verb,
    group: workerClusterGroup,
    resource: workerClusterPlural,
    ...(subresource ? { subresource } : {}),
    ...(name ? { name } : {}),
  };
}

/** DispatchQueues: cluster-scoped, in jobrelay.dev/v1alpha1 (deploy/crds/dispatchqueues.jobrelay.dev.yaml). */
export const dispatchQueueResource = {
  group: 'jobrelay.dev',
  version: 'v1alpha1',
  kind: 'DispatchQueue',
  plural: 'dispatchqueues',
} as const;

/** On DispatchQueues (cluster-scoped): every one, or the one named. */
export function onQueues(verb: string, name?: string): Permission {
  return {
    verb,
    group: dispatchQueueResource.group,
    resource: dispatchQueueResource.plural,
    ...(name ? { name } : {}),
  };
}

/**
 * On objects of one dispatched kind, as its adapter names its API (group and plural): get or
 * list on rayclusters in ray.io for a RayCluster, never batch/jobs for another kind. In one
 * namespace, or in all when none is given.
 */
export function onKind(
  adapter: Pick<AnyWorkloadKindAdapter, 'resource'>,
  verb: string,
  namespace?: string,
  name?: string,
): Permission {
  return {
    verb,
    group: adapter.resource.group,
    resource: adapter.resource.plural,
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  };
}

/** The same right on each of these kinds, in their order (the first refused is reported). */
export function onKinds(
  adapters: ReadonlyArray<Pick<AnyWorkloadKindAdapter, 'resource'>>,
  verb: string,
  namespace?: string,
): Permission[] {
  return adapters.map((adapter) => onKind(adapter, verb, namespace));
}

export function onSecrets(verb: string, namespace: string, name?: string): Permission {
  return { verb, group: '', resource: 'secrets', namespace, ...(name ? { name } : {}) };
}

/** Reading pods' logs in one namespace, or in all when none is given. */
export function podLogs(namespace?: string): Permission {
  return {
    verb: 'get',
    group: '',
    resource: 'pods',
    subresource: 'log',
    ...(namespace ? { namespace } : {}),
  };
}

/** On Events in one namespace, or in all when none is given. */
export function onEvents(verb: string, namespace?: string): Permission {
  return { verb, group: '', resource: 'events', ...(namespace ? { namespace } : {}) };
}

/** Raw (not yet validated) path parameters: authorization runs before validation. */
export function rawParams(request: FastifyRequest): Record<string, string | undefined> {
  return (request.params ?? {}) as Record<string, string | undefined>;
}

/** A raw query string value; repeated keys count as absent (validation then refuses them). */
export function rawQuery(request: FastifyRequest, key: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
