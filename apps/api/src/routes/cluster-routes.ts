import { drainSchema, registerDryRunSchema } from '@jobrelay/api-types';
import {
  probeWorkerKubeconfig,
  type WorkerCluster,
  workerClusterGroup,
  workerClusterPlural,
  workerClusterVersion,
} from '@jobrelay/clusters';
import { dns1123Label, isNotFound, mergePatch } from '@jobrelay/kube';
import { podRestrictionsSchema } from '@jobrelay/placement';
import { labelKeyProblem, labelsMatch, labelValueProblem, parseLabelSelector } from '@jobrelay/resources';
import { z } from 'zod';
import type { Caller } from '../access-review.ts';
import type { ApiApp, ApiDependencies } from '../api-app.ts';
import { clusterSchema, drainStatus } from '../cluster-views.ts';
import { pageQuerySchema, paginate } from '../pagination.ts';
import { ApiProblem, problemSchema } from '../problems.ts';
import { listableKindNamespaces } from '../workload-visibility.ts';
import { onClusters, onSecrets, rawParams } from './permissions.ts';

/** Label keys and values as Kubernetes validates them, with the label selector's own messages. */
const labelKey = z.string().superRefine((key, ctx) => {
  const problem = labelKeyProblem(key);
  if (problem) ctx.addIssue({ code: 'custom', message: `invalid label key: ${problem}` });
});
const labelValue = z.string().superRefine((value, ctx) => {
  const problem = labelValueProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: `invalid label value: ${problem}` });
});

const clusterName = z
  .string()
  .min(1)
  .max(63)
  .regex(dns1123Label, 'must be a DNS-1123 label: lowercase letters, digits and -, at most 63 characters')
  .describe('The WorkerCluster name.');
const nameParams = z.object({ name: clusterName });
const errors = { '4xx': problemSchema, '5xx': problemSchema };

const labelsSchema = z
  .record(labelKey, labelValue)
  .refine((labels) => Object.keys(labels).length <= 64, 'at most 64 labels');

const settings = {
  weight: z
    .number()
    .int()
    .min(0)
    .max(100)
    .describe('Multiplies the placement score; 0 makes it a last resort.'),
  maxActiveWorkloads: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .describe('At most this many unfinished workloads (of every kind) at once.'),
  allowedNamespaces: z
    .array(z.string().max(63).regex(dns1123Label, 'must be a namespace name'))
    .max(1000)
    .describe('Only workloads of these namespaces; empty means all.'),
  podRestrictions: podRestrictionsSchema.describe(
    'What the cluster refuses beyond Pod Security: refusePrivileged, refuseHostPath, refuseHostNamespaces (hostNetwork, hostPID, hostIPC), refuseNodeName, allowedServiceAccounts (absent: any).',
  ),
};

const registerBody = z
  .object({
    name: clusterName,
    kubeconfig: z
      .string()
      .min(1)
      .max(512 * 1024)
      .describe('The worker kubeconfig (YAML or JSON). Self-contained: inline certificates and token.'),
    labels: labelsSchema.optional(),
    weight: settings.weight.optional(),
    maxActiveWorkloads: settings.maxActiveWorkloads.optional(),
    allowedNamespaces: settings.allowedNamespaces.optional(),
    podRestrictions: settings.podRestrictions.optional(),
  })
  .strict();

const updateBody = z
  .object({
    labels: z
      .record(labelKey, labelValue.nullable())
      .optional()
      .describe('Merged into the labels; null removes one.'),
    weight: settings.weight.optional(),
    maxActiveWorkloads: settings.maxActiveWorkloads.nullable().optional().describe('null removes the limit.'),
    allowedNamespaces: settings.allowedNamespaces.optional(),
    podRestrictions: settings.podRestrictions
      .nullable()
      .optional()
      .describe('Merged into the restrictions field by field (false lifts one); null removes them all.'),
  })
  .strict()
  .refine(
    (body) => Object.keys(body).length > 0,
    'give at least one of labels, weight, maxActiveWorkloads, allowedNamespaces, podRestrictions',
  );

function secretNameFor(cluster: string): string {
  return `${cluster}-kubeconfig`;
}

/** Fleet routes: list, get, register, update, cordon, uncordon, drain, deregister. */
export function registerClusterRoutes(app: ApiApp, deps: ApiDependencies): void {
  const { fleet } = deps;
  const system = deps.config.systemNamespace;
  const custom = fleet.custom;

  const existing = (name: string): WorkerCluster => {
    const wc = fleet.workerCluster(name);
    if (!wc) throw new ApiProblem('not-found', `WorkerCluster ${JSON.stringify(name)} does not exist`);
    return wc;
  };
  /** The drain status as `caller` may see it: workloads it may not list are counted, not named. */
  const drainView = async (name: string, caller: Caller) => {
    const wc = fleet.workerCluster(name);
    const placed = fleet.workloadsByCluster().get(name) ?? [];
    const mayList = await listableKindNamespaces(deps.access, caller, placed);
    return drainStatus(
      name,
      wc?.spec.drain === true,
      placed.map(({ adapter, object }) => ({
        namespace: object.metadata!.namespace!,
        name: object.metadata!.name!,
        kind: adapter.name,
      })),
      (workload) => mayList(workload.kind, workload.namespace),
    );
  };
  const patchSpec = async (name: string, body: Record<string, unknown>): Promise<WorkerCluster> =>
    (await custom.patchClusterCustomObject(
      { group: workerClusterGroup, version: workerClusterVersion, plural: workerClusterPlural, name, body },
      mergePatch,
    )) as WorkerCluster;

  app.get(
    '/api/v1/clusters',
    {
      schema: {
        tags: ['clusters'],
        summary: 'List worker clusters with health, capacity and load',
        querystring: pageQuerySchema.extend({
          labelSelector: z
            .string()
            .max(4096)
            .optional()
            .describe('Over WorkerCluster labels, e.g. region=eu,gpu'),
          active: z.enum(['true', 'false']).optional(),
        }),
        response: {
          200: z.object({ items: z.array(clusterSchema), continue: z.string().optional() }),
          ...errors,
        },
      },
      config: { permissions: () => [onClusters('list')] },
    },
    async (request) => {
      const { labelSelector, active, limit } = request.query;
      const selector = labelSelector ? parseLabelSelector(labelSelector) : undefined;
      if (selector && !selector.ok) {
        throw new ApiProblem('validation-failed', `labelSelector: ${selector.problem}`, {
          errors: [{ path: 'querystring.labelSelector', message: selector.problem }],
        });
      }
      const views = fleet
        .clusterViews()
        .filter((view) => !selector?.ok || labelsMatch(selector.selector, view.labels))
        .filter((view) => active === undefined || String(view.active) === active);
      return paginate(
        views,
        (view) => view.name,
        { limit, continue: request.query.continue },
        { labelSelector, active },
      );
    },
  );

  app.get(
    '/api/v1/clusters/:name',
    {
      schema: {
        tags: ['clusters'],
        summary: 'One worker cluster',
        params: nameParams,
        response: { 200: clusterSchema, ...errors },
      },
      config: { permissions: (request) => [onClusters('get', rawParams(request).name)] },
    },
    async (request) => fleet.clusterViewOf(existing(request.params.name)),
  );

  app.post(
    '/api/v1/clusters',
    {
      schema: {
        tags: ['clusters'],
        summary: 'Register a worker cluster from its kubeconfig (vetted and probed before anything is saved)',
        description:
          'Creates the Secret `<name>-kubeconfig` in the system namespace and the WorkerCluster. The kubeconfig is refused (422, with the reason) if it is unsafe (exec plugins, file paths, no TLS verification), malformed, or its cluster cannot be reached with it, or lacks the jobrelay-worker permissions. `?dryRun=true` only checks.',
        querystring: z.object({ dryRun: z.enum(['true', 'false']).optional() }),
        body: registerBody,
        response: {
          200: registerDryRunSchema,
          201: clusterSchema,
          ...errors,
        },
      },
      config: {
        permissions: () => [onClusters('create'), onSecrets('create', system)],
      },
    },
    async (request, reply) => {
      const body = request.body;
      const secretName = secretNameFor(body.name);
      if (fleet.workerCluster(body.name)) {
        throw new ApiProblem('already-exists', `WorkerCluster ${JSON.stringify(body.name)} already exists`);
      }
      const probe = await probeWorkerKubeconfig(body.kubeconfig, {
        kinds: fleet.kinds,
        originId: deps.config.originId,
        kubeconfigPolicy: fleet.kubeconfigPolicy,
      });
      if (!probe.ok) {
        throw new ApiProblem('kubeconfig-refused', probe.message, { reason: probe.reason });
      }
      const twin = probe.clusterUid ? fleet.registeredClusterNamed(probe.clusterUid) : undefined;
      if (twin) {
        throw new ApiProblem(
          'conflict',
          `${probe.server} is the same cluster as WorkerCluster ${twin}; two registrations of one cluster would delete each other's workloads`,
          { reason: 'DuplicateCluster' },
        );
      }
      if (request.query.dryRun === 'true') {
        return reply.code(200).send({
          dryRun: true as const,
          probe: { server: probe.server, kubernetesVersion: probe.kubernetesVersion },
        });
      }
      try {
        await fleet.core.createNamespacedSecret({
          namespace: system,
          body: {
            metadata: {
              name: secretName,
              labels: {
                'app.kubernetes.io/managed-by': 'jobrelay-api',
                'jobrelay.dev/worker-cluster': body.name,
              },
            },
            type: 'Opaque',
            stringData: { kubeconfig: body.kubeconfig },
          },
        });
      } catch (err) {
        if ((err as { code?: number }).code === 409) {
          throw new ApiProblem(
            'already-exists',
            `Secret ${system}/${secretName} already exists; deregister the old cluster or delete the Secret first`,
          );
        }
        throw err;
      }
      let created: WorkerCluster;
      try {
        created = (await custom.createClusterCustomObject({
          group: workerClusterGroup,
          version: workerClusterVersion,
          plural: workerClusterPlural,
          body: {
            apiVersion: `${workerClusterGroup}/${workerClusterVersion}`,
            kind: 'WorkerCluster',
            metadata: { name: body.name, ...(body.labels ? { labels: body.labels } : {}) },
            spec: {
              kubeconfigSecretRef: { name: secretName, key: 'kubeconfig' },
              ...(body.weight !== undefined ? { weight: body.weight } : {}),
              ...(body.maxActiveWorkloads !== undefined
                ? { maxActiveWorkloads: body.maxActiveWorkloads }
                : {}),
              ...(body.allowedNamespaces ? { allowedNamespaces: body.allowedNamespaces } : {}),
              ...(body.podRestrictions ? { podRestrictions: body.podRestrictions } : {}),
            },
          },
        })) as WorkerCluster;
      } catch (err) {
        // Nothing half-made stays behind: the Secret goes with the failed registration.
        await fleet.core.deleteNamespacedSecret({ name: secretName, namespace: system }).catch(() => {});
        throw err;
      }
      request.log.info({ cluster: body.name, server: probe.server }, 'registered a worker cluster');
      return reply.code(201).send(fleet.clusterViewOf(created));
    },
  );

  app.patch(
    '/api/v1/clusters/:name',
    {
      schema: {
        tags: ['clusters'],
        summary: 'Update labels, weight, maxActiveWorkloads, allowedNamespaces or podRestrictions',
        params: nameParams,
        body: updateBody,
        response: { 200: clusterSchema, ...errors },
      },
      config: { permissions: (request) => [onClusters('patch', rawParams(request).name)] },
    },
    async (request) => {
      const { name } = request.params;
      existing(name);
      const { labels, ...spec } = request.body;
      const updated = await patchSpec(name, {
        ...(labels ? { metadata: { labels } } : {}),
        ...(Object.keys(spec).length > 0 ? { spec } : {}),
      });
      return fleet.clusterViewOf(updated);
    },
  );

  const toggle = (action: 'cordon' | 'uncordon', spec: Record<string, unknown>, summary: string) =>
    app.post(
      `/api/v1/clusters/:name/${action}`,
      {
        schema: {
          tags: ['clusters'],
          summary,
          params: nameParams,
          response: { 200: clusterSchema, ...errors },
        },
        config: {
          permissions: (request) => {
            const name = rawParams(request).name;
            // Uncordon also ends a drain: stopping an admin's drain takes the right to drain.
            const draining =
              action === 'uncordon' && name !== undefined && fleet.workerCluster(name)?.spec.drain === true;
            return [
              onClusters('update', name, 'cordon'),
              ...(draining ? [onClusters('update', name, 'drain')] : []),
            ];
          },
        },
      },
      async (request) => {
        existing(request.params.name);
        return fleet.clusterViewOf(await patchSpec(request.params.name, { spec }));
      },
    );
  toggle(
    'cordon',
    { unschedulable: true },
    'Cordon: no new workloads are placed here; those already here stay',
  );
  toggle(
    'uncordon',
    { unschedulable: null, drain: null },
    'Uncordon: new workloads may be placed here again (ends a drain too)',
  );

  app.post(
    '/api/v1/clusters/:name/drain',
    {
      schema: {
        tags: ['clusters'],
        summary:
          "Drain: no new workloads, and this cluster's unfinished workloads (every kind) are placed elsewhere",
        params: nameParams,
        response: { 200: drainSchema, ...errors },
      },
      config: { permissions: (request) => [onClusters('update', rawParams(request).name, 'drain')] },
    },
    async (request) => {
      existing(request.params.name);
      await patchSpec(request.params.name, { spec: { drain: true } });
      return { ...(await drainView(request.params.name, request.caller!)), draining: true };
    },
  );

  app.get(
    '/api/v1/clusters/:name/drain',
    {
      schema: {
        tags: ['clusters'],
        summary: 'How a drain goes: the workloads (every kind) still on the cluster',
        description:
          'Needs get on the WorkerCluster. `remaining` counts every unfinished workload there; `workloads` names only those whose kind you may list in their namespace (as the workload list checks it), and `hidden` counts the others.',
        params: nameParams,
        response: { 200: drainSchema, ...errors },
      },
      config: { permissions: (request) => [onClusters('get', rawParams(request).name)] },
    },
    async (request) => {
      existing(request.params.name);
      return drainView(request.params.name, request.caller!);
    },
  );

  app.delete(
    '/api/v1/clusters/:name',
    {
      schema: {
        tags: ['clusters'],
        summary: 'Deregister: delete the WorkerCluster and its kubeconfig Secret',
        description:
          'Refused (409 cluster-has-workloads) while unfinished workloads (of any kind) are placed on the cluster: drain it first, or pass force=true (they are then placed elsewhere, as after a lost worker).',
        params: nameParams,
        querystring: z.object({ force: z.enum(['true', 'false']).optional() }),
        response: { 200: z.object({ deleted: z.string(), secretDeleted: z.boolean() }), ...errors },
      },
      config: {
        permissions: (request) => {
          const name = rawParams(request).name;
          const secret = name ? fleet.workerCluster(name)?.spec.kubeconfigSecretRef.name : undefined;
          return [
            onClusters('delete', name),
            onSecrets('delete', system, secret ?? (name ? secretNameFor(name) : undefined)),
          ];
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const wc = existing(name);
      const { remaining, hidden, workloads } = await drainView(name, request.caller!);
      if (remaining > 0 && request.query.force !== 'true') {
        const named = workloads.slice(0, 5).map((j) => `${j.kind} ${j.namespace}/${j.name}`);
        if (workloads.length > 5) named.push('...');
        if (hidden > 0) named.push(`${hidden} in namespaces you may not list`);
        throw new ApiProblem(
          'cluster-has-workloads',
          `${remaining} unfinished workload(s) are placed on ${name} (${named.join(', ')}): drain it first (POST /api/v1/clusters/${name}/drain, then wait until GET .../drain shows 0), or deregister with force=true`,
        );
      }
      try {
        await custom.deleteClusterCustomObject({
          group: workerClusterGroup,
          version: workerClusterVersion,
          plural: workerClusterPlural,
          name,
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const secretName = wc.spec.kubeconfigSecretRef.name;
      // A Secret another registration still uses stays.
      const shared = fleet
        .workerClusters()
        .some((other) => other.metadata.name !== name && other.spec.kubeconfigSecretRef.name === secretName);
      let secretDeleted = false;
      if (!shared) {
        try {
          await fleet.core.deleteNamespacedSecret({ name: secretName, namespace: system });
          secretDeleted = true;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      request.log.info(
        { cluster: name, secretDeleted, forcedWithJobs: remaining },
        'deregistered a worker cluster',
      );
      return { deleted: name, secretDeleted };
    },
  );
}
