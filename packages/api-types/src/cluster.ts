import { z } from 'zod';

export const clusterSchema = z
  .object({
    name: z.string(),
    labels: z.record(z.string(), z.string()),
    active: z.boolean().describe("The controller's Active condition."),
    reason: z.string().describe('Reason of the Active condition, e.g. Connected, Unreachable, Forbidden.'),
    message: z.string(),
    kubernetesVersion: z.string().nullable(),
    cordoned: z.boolean(),
    draining: z.boolean(),
    weight: z.number(),
    maxActiveWorkloads: z.number().int().nullable(),
    allowedNamespaces: z.array(z.string()),
    podRestrictions: z
      .object({
        refusePrivileged: z.boolean().optional(),
        refuseHostPath: z.boolean().optional(),
        refuseHostNamespaces: z.boolean().optional(),
        refuseNodeName: z.boolean().optional(),
        allowedServiceAccounts: z.array(z.string()).optional(),
      })
      .nullable()
      .describe(
        'What the cluster refuses beyond Pod Security (spec.podRestrictions): privileged containers, hostPath volumes, host namespaces, nodeName, service accounts not listed. null: nothing more.',
      ),
    capacity: z
      .object({
        nodes: z.number().int(),
        allocatable: z.record(z.string(), z.string()),
        free: z.record(z.string(), z.string()),
      })
      .nullable(),
    assumed: z
      .record(z.string(), z.string())
      .describe(
        'Requests of the workloads placed here whose pods do not exist yet (placement assumes them, as kube-scheduler does); capacity.free already leaves them out, so used = allocatable - free - assumed.',
      ),
    workloadsPlaced: z
      .number()
      .int()
      .describe(
        'Unfinished dispatched workloads of every kind placed on this cluster (what maxActiveWorkloads counts).',
      ),
    placedByKind: z
      .record(z.string(), z.number().int())
      .describe(
        'workloadsPlaced by kind (adapter name: job, raycluster, ...); kinds with none are left out.',
      ),
    servedKinds: z
      .array(z.string())
      .nullable()
      .describe(
        'The dispatched kinds the worker serves, as the controller last found them; null until it did. Other kinds are not placed there.',
      ),
    placementsPerMinute: z
      .number()
      .describe('Placements onto this cluster per minute, over the last 5 minutes.'),
    lastHeartbeatTime: z.string().nullable(),
    createdAt: z.string().nullable(),
  })
  .meta({ id: 'Cluster' });

export type Cluster = z.infer<typeof clusterSchema>;

export const drainSchema = z
  .object({
    cluster: z.string(),
    draining: z.boolean(),
    remaining: z
      .number()
      .int()
      .describe('Unfinished workloads of every kind still placed on the cluster, named or not.'),
    hidden: z
      .number()
      .int()
      .describe(
        'Of remaining, the workloads in namespaces where you may not list their kind: counted, not named.',
      ),
    workloads: z
      .array(
        z.object({
          namespace: z.string(),
          name: z.string(),
          kind: z.string().describe('The kind’s name in this API: job, raycluster, rayjob, ...'),
        }),
      )
      .describe(
        'The workloads still there (every kind) that you may list: their kind in their namespace, as the workload list checks it.',
      ),
  })
  .meta({ id: 'Drain' });

export type Drain = z.infer<typeof drainSchema>;

export const registerDryRunSchema = z.object({
  dryRun: z.literal(true),
  probe: z.object({ server: z.string(), kubernetesVersion: z.string() }),
});

export type RegisterDryRun = z.infer<typeof registerDryRunSchema>;
