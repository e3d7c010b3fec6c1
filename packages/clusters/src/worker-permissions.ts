import type { AnyWorkloadKindAdapter } from '@jobrelay/kinds';
import type { AuthorizationV1Api } from '@kubernetes/client-node';

/** One (verb, resource) the controller uses on a worker cluster. */
export interface WorkerPermission {
  /** API group; `''` is the core group. */
  group: string;
  /** Resource, with its subresource when there is one: `<plural>/status`, `pods/log`. */
  resource: string;
  verb: string;
  /** Only these objects (RBAC resourceNames); absent means any. */
  resourceNames?: string[];
  /**
   * The controller cannot work without it: the worker is not marked Active while it is
   * missing. The others degrade one feature, which then reports its own error.
   */
  required: boolean;
}

function grant(
  group: string,
  resource: string,
  verbs: string[],
  options: { required: string[]; resourceNames?: string[] },
): WorkerPermission[] {
  return verbs.map((verb) => ({
    group,
    resource,
    verb,
    required: options.required.includes(verb),
    ...(options.resourceNames ? { resourceNames: options.resourceNames } : {}),
  }));
}

/**
 * What the connection code reads of a kind's adapter: its name, where it lives, and whether
 * its mirrors' status is written (mirrorStatusSeed). Any WorkloadKindAdapter is one.
 */
export type WorkerKind = Pick<AnyWorkloadKindAdapter, 'name' | 'resource' | 'mirrorStatusSeed'>;

/**
 * The calls the controller makes on a worker for the mirrors of one kind, on its plural:
 * the label-selected watch (list, watch), the connection probe (list), create and adopt
 * (create, get), spec changes flowing down (patch, update), removal of stale or finished
 * mirrors (delete); and its status subresource, which only kinds that seed a re-placed
 * mirror's progress (`mirrorStatusSeed`) need.
 */
export function kindPermissions(kind: WorkerKind): WorkerPermission[] {
  const { group, plural } = kind.resource;
  return [
    ...grant(group, plural, ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'], {
      required: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    }),
    ...grant(group, `${plural}/status`, ['get', 'patch', 'update'], {
      required: kind.mirrorStatusSeed ? ['patch'] : [],
    }),
  ];
}

/** The calls the controller makes on a worker whatever the kinds it dispatches. */
export const clusterPermissions: readonly WorkerPermission[] = [
  // Missing namespaces, with --create-namespaces (a workload then says why it cannot be created).
  ...grant('', 'namespaces', ['create'], { required: [] }),
  // Every namespace's Pod Security labels: placement refuses a cluster whose namespace of a
  // workload's name enforces less than the management one (without them it cannot tell), and the
  // namespaces jobrelay created there have their labels kept equal to the management ones
  // (patch; without it they keep the labels they were created with, and are refused once those
  // fall behind).
  ...grant('', 'namespaces', ['list', 'watch', 'patch'], { required: ['list', 'watch'] }),
  // kube-system's UID tells two registrations of one cluster apart (without it: no detection).
  ...grant('', 'namespaces', ['get'], { required: [], resourceNames: ['kube-system'] }),
  // Capacity: nodes' allocatable and running pods' requests, list+watch.
  ...grant('', 'nodes', ['list', 'watch'], { required: ['list', 'watch'] }),
  ...grant('', 'pods', ['list', 'watch'], { required: ['list', 'watch'] }),
  // Pod logs of dispatched workloads, for the admin API.
  ...grant('', 'pods/log', ['get'], { required: [] }),
  // Optional, read-only: the worker's own Kueue's Workloads, read (list by label) only while it
  // holds a mirror suspended, so the origin says why in Kueue's words. Without it (or without
  // Kueue) the origin shows the mirror's own reason.
  ...grant('kueue.x-k8s.io', 'workloads', ['get', 'list'], { required: [] }),
];

/**
 * Every call the controller makes on a worker that serves `kinds`, and so what
 * deploy/worker/rbac.yaml grants for the kinds jobrelay ships (a unit test keeps them equal;
 * the comments there say why each one is needed).
 */
export function workerPermissions(kinds: readonly WorkerKind[]): WorkerPermission[] {
  return [...kinds.flatMap(kindPermissions), ...clusterPermissions];
}

/**
 * Which of `permissions` the worker's apiserver denies to the kubeconfig's identity, asked
 * with SelfSubjectAccessReviews (which every authenticated identity may create), so a
 * missing rule is reported by name when the cluster connects instead of leaving a watch
 * failing in the background.
 */
export async function deniedPermissions(
  authorization: Pick<AuthorizationV1Api, 'createSelfSubjectAccessReview'>,
  permissions: readonly WorkerPermission[],
): Promise<WorkerPermission[]> {
  const answers = await Promise.all(
    permissions.map(async (permission) => {
      const [resource, subresource] = permission.resource.split('/');
      const review = await authorization.createSelfSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              group: permission.group,
              resource,
              ...(subresource ? { subresource } : {}),
              verb: permission.verb,
              ...(permission.resourceNames ? { name: permission.resourceNames[0] } : {}),
            },
          },
        },
      });
      return review.status?.allowed ? undefined : permission;
    }),
  );
  return answers.filter((p): p is WorkerPermission => p !== undefined);
}

/** `list, watch nodes; patch <plural>.<group>/status`: permissions grouped by resource, kubectl style. */
export function summarizePermissions(permissions: readonly WorkerPermission[]): string {
  const byResource = new Map<string, string[]>();
  for (const p of permissions) {
    const [name, subresource] = p.resource.split('/');
    const resource = `${name}${p.group ? `.${p.group}` : ''}${subresource ? `/${subresource}` : ''}`;
    byResource.set(resource, [...(byResource.get(resource) ?? []), p.verb]);
  }
  return [...byResource].map(([resource, verbs]) => `${verbs.join(', ')} ${resource}`).join('; ');
}
