// DispatchQueues: every queue with its spec's summary and the status the controller's leader
// writes, and one queue with its workloads. All from caches (the queue informer, the workload
// informers of every kind); the workloads shown are those the caller may list, as
// /api/v1/workloads decides it.
import { dispatchQueueDetailSchema, dispatchQueueListSchema } from '@jobrelay/api-types';
import { dns1123Subdomain } from '@jobrelay/kube';
import { z } from 'zod';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import type { FleetView } from '../fleet-view.ts';
import { ApiProblem } from '../problems.ts';
import { queueMembers, queueView } from '../queue-views.ts';
import { listableKindNamespaces } from '../workload-visibility.ts';
import { dispatchQueueResource, onQueues, rawParams } from './permissions.ts';
import { errors } from './route-schemas.ts';

const queueName = z.string().max(253).regex(dns1123Subdomain, 'must be a DispatchQueue name');

/** Until the DispatchQueues are listed (the CRD not served yet, or the cache still syncing): 503. */
function requireQueues(fleet: FleetView): void {
  if (!fleet.queuesSynced)
    throw new ApiProblem(
      'unavailable',
      `the DispatchQueues are not listed yet (is the ${dispatchQueueResource.plural}.${dispatchQueueResource.group} CRD installed, and may the API list it?)`,
      {},
      { 'retry-after': '5' },
    );
}

export function registerDispatchQueueRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;

  app.get(
    '/api/v1/queues',
    {
      schema: {
        tags: ['queues'],
        summary:
          'DispatchQueues: cohort, weight, strategy, quota per resource (nominal, borrowing and lending limits), and their status',
        description:
          'From the API’s cache of DispatchQueues; the status is what the controller’s leader last wrote (pending and admitted counts, usage, borrowed, share, conditions). Needs list dispatchqueues.jobrelay.dev. 503 while the DispatchQueues are not listed (CRD not installed).',
        response: { 200: dispatchQueueListSchema, ...errors },
      },
      config: { permissions: () => [onQueues('list')] },
    },
    async () => {
      requireQueues(fleet);
      return { items: fleet.dispatchQueues().map(({ object, parsed }) => queueView(object, parsed)) };
    },
  );

  app.get(
    '/api/v1/queues/:name',
    {
      schema: {
        tags: ['queues'],
        summary:
          'One DispatchQueue, its pending workloads in order with their reasons, and its admitted ones',
        description:
          'Needs get on the dispatchqueue. Its workloads (every kind) are named only where the caller may list their kind (everywhere, or in their namespace), as /api/v1/workloads decides; `hidden` counts the others. A pending workload’s position is its place among all of the queue’s pending workloads, in the controller’s order (priority, then age).',
        params: z.object({ name: queueName }),
        response: { 200: dispatchQueueDetailSchema, ...errors },
      },
      config: {
        permissions: (request) => [onQueues('get', rawParams(request).name)],
      },
    },
    async (request) => {
      requireQueues(fleet);
      const { name } = request.params;
      const queue = fleet.dispatchQueue(name);
      if (!queue) throw new ApiProblem('not-found', `no DispatchQueue ${name}`);
      const inputs = fleet.queueMemberInputs();
      const members = queueMembers(name, inputs, (input) => fleet.selectQueue(input.object));
      const all = [...members.pending, ...members.admitted];
      const byUid = new Map(fleet.workloads().map((entry) => [entry.object.metadata?.uid, entry]));
      const mayList = await listableKindNamespaces(
        deps.access,
        request.caller!,
        all.flatMap((member) => {
          const entry = byUid.get(member.uid);
          return entry ? [entry] : [];
        }),
      );
      const visible = (member: { kind: string; namespace: string }) => mayList(member.kind, member.namespace);
      const pending = members.pending.filter(visible);
      const admitted = members.admitted.filter(visible);
      return {
        ...queueView(queue.object, queue.parsed),
        pending,
        admitted,
        hidden: {
          pending: members.pending.length - pending.length,
          admitted: members.admitted.length - admitted.length,
        },
      };
    },
  );
}
