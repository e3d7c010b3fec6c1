import { workerClusterGroup, workerClusterPlural } from '@jobrelay/clusters';
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

/** On batch/v1 Jobs in one namespace, or in all when none is given. */
export function onJobs(verb: string, namespace?: string, name?: string): Permission {
  return {
    verb,
    group: 'batch',
    resource: 'jobs',
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  };
}

export function onSecrets(verb: string, namespace: string, name?: string): Permission {
  return { verb, group: '', resource: 'secrets', namespace, ...(name ? { name } : {}) };
}

export function podLogs(namespace: string): Permission {
  return { verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace };
}

export function onEvents(verb: string, namespace: string): Permission {
  return { verb, group: '', resource: 'events', namespace };
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
